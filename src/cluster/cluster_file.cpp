#include "cluster/cluster_file.hpp"

#include <ctime>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ftbound/error.hpp"
#include "probe/probe_types.hpp"

namespace ftb::cluster {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, sep);) out.push_back(part);
    return out;
}

// The scalar a measured field names in one node's system file; an undefined node when that file lacks it.
// (Node::reset rebinds the handle: assigning a node would overwrite the one it refers to.)
YAML::Node field_at(const YAML::Node& root, const std::vector<std::string>& path) {
    YAML::Node n;
    n.reset(root);
    for (size_t i = 0; i < path.size(); ++i) {
        const YAML::Node& here = n;  // const lookups: operator[] on a non-const node inserts the key
        YAML::Node next;
        bool found = false;
        if (i == 1 && path[0] == "links") {
            const auto ends = split(path[i], '-');
            for (const YAML::Node& link : here)
                if (ends.size() == 2 && link["a"].as<std::string>("") == ends[0] && link["b"].as<std::string>("") == ends[1]) {
                    next.reset(link);
                    found = true;
                }
        } else if (here.IsMap() && here[path[i]]) {
            next.reset(here[path[i]]);
            found = true;
        }
        if (!found) return YAML::Node(YAML::NodeType::Undefined);
        n.reset(next);
    }
    return n.IsScalar() ? n : YAML::Node(YAML::NodeType::Undefined);
}

// Each measured figure of the first node's file replaced by its median over the nodes that measured it.
void typical_node(YAML::Node base, const std::vector<YAML::Node>& nodes) {
    for (const auto& field : base["measured_fields"]) {
        const auto path = measured_field_path(field.as<std::string>());
        if (path.empty()) continue;
        std::vector<double> values;
        for (const auto& n : nodes)
            if (YAML::Node v = field_at(n, path)) values.push_back(v.as<double>());
        YAML::Node target = field_at(base, path);
        if (target && !values.empty()) target = fmt::format("{}", probe::measurement_of(values).median());
    }
}

// A figure as the file shows it: 6 significant digits (the samples do not hold more).
std::string number_text(double v) { return fmt::format("{:.6g}", v); }

// nlohmann JSON -> YAML node; arrays of plain numbers in flow style so that samples stay on one line.
YAML::Node yaml_of(const nlohmann::ordered_json& j) {
    YAML::Node n;
    if (j.is_object()) {
        n = YAML::Node(YAML::NodeType::Map);
        for (auto& [k, v] : j.items()) n[k] = yaml_of(v);
    } else if (j.is_array()) {
        n = YAML::Node(YAML::NodeType::Sequence);
        bool numbers = true;
        for (const auto& v : j) {
            n.push_back(yaml_of(v));
            numbers &= v.is_number();
        }
        if (numbers) n.SetStyle(YAML::EmitterStyle::Flow);
    } else if (j.is_string()) {
        n = j.get<std::string>();
    } else if (j.is_boolean()) {
        n = j.get<bool>();
    } else if (j.is_number_integer()) {
        n = j.get<long long>();
    } else if (j.is_number()) {
        n = number_text(j.get<double>());
    } else {
        n = YAML::Node(YAML::NodeType::Null);
    }
    return n;
}

std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

const TierFigures* tier(const ClusterSummary& s, const std::string& name) {
    for (const auto& t : s.tiers)
        if (t.tier == name) return &t;
    return nullptr;
}

}  // namespace

std::vector<std::string> measured_field_path(const std::string& field) {
    std::vector<std::string> p = split(field, '.');
    if (p.size() < 2) return {};
    if (p[0] == "host_cpu") p[0] = "cpu";
    else if (p[0] == "device") p[0] = "gpu";
    else if (p[0] == "local_storage") p[0] = "storage";
    else if (p[0] == "links" && p.size() == 3) p.insert(p.begin() + 2, "link");
    else if (p[0] != "inter_node") return {};
    return p;
}

std::string cluster_system_yaml(const ClusterInput& in, const ClusterSummary& s) {
    if (in.nodes.empty()) throw InternalError("a cluster file needs at least one measured node");
    std::vector<YAML::Node> nodes;
    for (const auto& n : in.nodes) nodes.push_back(YAML::Load(n.system_yaml));
    YAML::Node doc = YAML::Clone(nodes.front());
    typical_node(doc, nodes);
    doc["name"] = fmt::format("probed-cluster-{}-{}-nodes", in.layout.hosts.front(), in.layout.hosts.size());
    if (const TierFigures* t = tier(s, "inter_node")) {
        YAML::Node net(YAML::NodeType::Map);
        net["name"] = "measured-" + in.transport.substr(0, in.transport.find(' '));
        net["bandwidth_GBps"] = number_text(t->p2p_GBps.median);
        net["latency_us"] = number_text(t->latency_us.median);
        net["achievable_fraction"] = 1.0;  // measured: the achieved rate itself
        net.SetStyle(YAML::EmitterStyle::Flow);
        doc["inter_node"] = net;
        doc["measured_fields"].push_back("inter_node.bandwidth_GBps");
        doc["measured_fields"].push_back("inter_node.latency_us");
    }
    YAML::Node sources(YAML::NodeType::Sequence);
    sources.push_back(fmt::format("ftbound probe --cluster on {} ranks of {} nodes, {}: measured fields are the medians over "
                                  "the nodes; inter_node is the median point-to-point rate between nodes over {}",
                                  in.world_size, in.layout.hosts.size(), today(), in.transport));
    for (const auto& src : doc["sources"]) sources.push_back(src);
    doc["sources"] = sources;
    doc["cluster"] = yaml_of(to_json(s, in));
    YAML::Emitter y;
    y.SetDoublePrecision(6);
    y << doc;
    return std::string("# Written by `ftbound probe --cluster --out`. Use it as `hardware.system: ./THIS_FILE.yaml`;\n"
                       "# `cluster:` holds the per-tier rates, the spread across nodes and the outliers (docs/cluster.md).\n") +
           y.c_str() + "\n";
}

}  // namespace ftb::cluster
