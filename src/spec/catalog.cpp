#include "spec/catalog.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ftbound/error.hpp"
#include "spec/catalog_names.hpp"
#include "spec/hf_config.hpp"
#include "spec/job_keys.hpp"
#include "spec/power_capped_peaks.hpp"

namespace fs = std::filesystem;

namespace ftb {
namespace {

std::string section_dir(const std::string& section) {
    if (section == "gpus") return "devices/gpus";
    if (section == "cpus") return "devices/cpus";
    return section;
}

// A probed system file names the figures `ftbound probe` measured (probe_report.cpp writes host_cpu.tflops.fp32,
// host_cpu.memory_bandwidth_GBps): those are achieved rates, and the timing model takes them as they are.
void mark_measured_rates(SystemSpec& s) {
    auto measured = [&](const char* field) {
        return std::find(s.measured_fields.begin(), s.measured_fields.end(), field) != s.measured_fields.end();
    };
    s.host_cpu.tflops_measured = measured("host_cpu.tflops.fp32");
    s.host_cpu.bandwidth_measured = measured("host_cpu.memory_bandwidth_GBps");
    if (s.cpu_only) s.device = s.host_cpu;
}

std::string section_ext(const std::string& section) { return section == "models" ? ".json" : ".yaml"; }

std::string exe_relative_data_dir() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    buf[n] = 0;
    fs::path exe(buf);
    return (exe.parent_path().parent_path() / "share" / "ftbound" / "data").string();
}

// Rates not given keep `t` (zeros for a new device, the base's for a variant).
PeakTflops read_tflops(const Fields& f, PeakTflops t) {
    f.reject_unknown(job_keys("hardware.gpu.tflops"));
    t.fp32 = f.get_number("fp32", 0, 1e6).value_or(t.fp32);
    t.tf32 = f.get_number("tf32", 0, 1e6).value_or(t.tf32);
    t.fp16 = f.get_number("fp16", 0, 1e6).value_or(t.fp16);
    t.bf16 = f.get_number("bf16", 0, 1e6).value_or(t.bf16);
    t.fp8 = f.get_number("fp8", 0, 1e6).value_or(t.fp8);
    return t;
}

// One dtype's measured matmul ceiling (MatmulCeiling): both rates or neither, measured at most the peak.
MatmulCeiling read_matmul_ceiling(const Fields& f, const std::string& dtype, MatmulCeiling c) {
    f.reject_unknown(job_keys("hardware.gpu.matmul_ceiling." + dtype));
    c.measured_tflops = f.get_number("measured_tflops", 0, 1e6).value_or(c.measured_tflops);
    c.peak_tflops = f.get_number("peak_tflops", 0, 1e6).value_or(c.peak_tflops);
    c.row = f.get_string("row").value_or(c.row);
    if (!(c.peak_tflops > 0) || c.measured_tflops > c.peak_tflops)
        f.fail("peak_tflops", "must be > 0 and at least measured_tflops");
    return c;
}

void read_matmul_ceilings(const Fields& f, DeviceSpec& d) {
    f.reject_unknown(job_keys("hardware.gpu.matmul_ceiling"));
    if (f.has("bf16")) d.matmul_ceiling_bf16 = read_matmul_ceiling(f.child("bf16"), "bf16", d.matmul_ceiling_bf16);
    if (f.has("fp8")) d.matmul_ceiling_fp8 = read_matmul_ceiling(f.child("fp8"), "fp8", d.matmul_ceiling_fp8);
}

ComponentKind parse_component_kind(const Fields& f) {
    auto k = f.get_choice("kind", {"gpu", "cpu_socket", "pcie_switch", "nic", "nvswitch", "nvme"});
    if (!k) f.fail("kind", "missing");
    if (*k == "gpu") return ComponentKind::gpu;
    if (*k == "cpu_socket") return ComponentKind::cpu_socket;
    if (*k == "pcie_switch") return ComponentKind::pcie_switch;
    if (*k == "nic") return ComponentKind::nic;
    if (*k == "nvswitch") return ComponentKind::nvswitch;
    return ComponentKind::nvme;
}

// cache[key], made by make() the first time (outside the lock: make may look up other entries). A make that
// throws leaves nothing behind.
template <class Key, class Value, class Make>
Value remembered(std::mutex& mutex, std::map<Key, Value>& cache, const Key& key, Make make) {
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    Value made = make();
    std::lock_guard<std::mutex> lock(mutex);
    return cache.emplace(key, std::move(made)).first->second;
}

}  // namespace

bool looks_like_path(const std::string& s) {
    return s.find(".yaml") != std::string::npos || s.find(".yml") != std::string::npos ||
           s.find(".json") != std::string::npos || s.rfind("./", 0) == 0 || s.rfind("/", 0) == 0 ||
           s.rfind("../", 0) == 0;
}

const Catalog& Catalog::instance() {
    // Never destroyed: freeing its caches at exit cost `ftbound plan` ~2% of its instructions, for nothing.
    static const Catalog& cat = *new Catalog([] {
        if (const char* env = std::getenv("FTBOUND_DATA"); env && *env) return std::string(env);
        // An installed binary uses its own catalog (cmake --install puts it in ../share/ftbound/data), never
        // the build machine's source tree; a binary in the build tree falls back to that tree's data/.
        std::error_code ec;
        if (const std::string installed = exe_relative_data_dir(); !installed.empty() && fs::is_directory(installed, ec))
            return installed;
        return std::string(FTBOUND_DATA_DIR);
    }());
    return cat;
}

Catalog::Catalog(std::string data_dir) : data_dir_(std::move(data_dir)) {}

const Json& Catalog::document(const std::string& path) const {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(path);
    if (it != cache_.end()) return it->second;
    return cache_.emplace(path, load_document(path)).first->second;   // std::map nodes stay put
}

const std::vector<std::string>& Catalog::names(const std::string& section) const {
    // An unknown name's suggestions and alias lookups list a section on every call; a folder walk is ~100 system calls.
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = names_cache_.find(section);
    if (it != names_cache_.end()) return it->second;
    return names_cache_.emplace(section, list_names(section)).first->second;   // std::map nodes stay put
}

std::vector<std::string> Catalog::list_names(const std::string& section) const {
    std::vector<std::string> out;
    fs::path dir = fs::path(data_dir_) / section_dir(section);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    const std::string ext = section_ext(section);
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (!it->is_regular_file() || it->path().extension() != ext) continue;
        // Lexical: the iterator's paths start with `dir` (fs::relative would readlink every component of both, for
        // every file: ~500 system calls per plan).
        std::string rel = it->path().lexically_relative(dir).string();
        out.push_back(rel.substr(0, rel.size() - ext.size()));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string Catalog::path_of(const std::string& section, const std::string& name) const {
    return (fs::path(data_dir_) / section_dir(section) / (name + section_ext(section))).string();
}

std::vector<std::string> Catalog::aliases_of(const std::string& section, const std::string& name) const {
    if (section == "models") return {};   // a model file is its config.json, verbatim
    const std::string p = path_of(section, name);
    return Fields(document(p), p, "").get_string_list("aliases");
}

std::string Catalog::resolve(const std::string& section, const std::string& name, const InputSite& site,
                             const char* what) const {
    return remembered(cache_mutex_, resolved_, {section, name}, [&] { return find_entry(section, name, site, what); });
}

std::string Catalog::find_entry(const std::string& section, const std::string& name, const InputSite& site,
                                const char* what) const {
    if (name.find("..") == std::string::npos) {
        std::string p = path_of(section, name);
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p;
    }
    const auto all = names(section);
    // Same name up to case and separators (models: also without organisation and variant words), then aliases.
    const bool model = section == "models";
    const std::string key = model ? model_key(name) : folded_name(name);
    std::vector<std::string> hits;
    for (const auto& n : all)
        if ((model ? model_key(n) : folded_name(n)) == key) hits.push_back(n);
    // A model named with words in front (Meta-Llama-3.1-8B, as torchtune's download folders are) or without them:
    // one key ends the other, and the shorter still names a size.
    if (hits.empty() && model) {
        auto ends_with = [](const std::string& a, const std::string& b) {
            return a.size() > b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0 && a[a.size() - b.size() - 1] == '-';
        };
        for (const auto& n : all) {
            const std::string k = model_key(n);
            const std::string& shorter = k.size() < key.size() ? k : key;
            if ((ends_with(key, k) || ends_with(k, key)) && model_name_parts(shorter).size > 0) hits.push_back(n);
        }
    }
    if (hits.empty() && !model)
        for (const auto& n : all)
            for (const auto& a : aliases_of(section, n))
                if (folded_name(a) == key) hits.push_back(n);
    if (hits.size() == 1) return path_of(section, hits.front());
    if (hits.size() > 1) {
        std::string list;
        for (const auto& h : hits) list += (list.empty() ? "" : ", ") + h;
        throw InputError(site.file, site.field, "'" + name + "' could be any of " + list + "; give the full name");
    }
    std::vector<std::string> suggestions;
    if (model) {
        suggestions = suggest_models(name, all);
    } else {
        std::vector<std::string> candidates = all;
        std::vector<std::string> owner = all;
        for (const auto& n : all)
            for (const auto& a : aliases_of(section, n)) candidates.push_back(folded_name(a)), owner.push_back(n);
        const std::string hint = did_you_mean(folded_name(name), candidates);
        if (!hint.empty()) suggestions.push_back(owner[size_t(std::find(candidates.begin(), candidates.end(), hint) - candidates.begin())]);
    }
    throw InputError(site.file, site.field,
                     std::string("unknown ") + what + " '" + name + "'" + did_you_mean_phrase(suggestions) +
                         "; `ftbound catalog " + (section == "cpus" || section == "links" ? "" : section) +
                         "` lists the known names");
}

ModelSpec Catalog::model(const std::string& name_or_path, const InputSite& site) const {
    std::string path;
    std::error_code ec;
    if (looks_like_path(name_or_path) && fs::is_regular_file(name_or_path, ec)) path = name_or_path;
    else if (looks_like_path(name_or_path) && name_or_path.find(".json") != std::string::npos)
        throw InputError(site.file, site.field, "model config '" + name_or_path + "' not found");
    else path = resolve("models", name_or_path, site, "model");
    const Json& doc = document(path);
    return model_from_hf_config(Fields(doc, path, ""), name_or_path);
}

DeviceSpec Catalog::read_device(const Fields& f, DeviceKind kind, const DeviceSpec* base) const {
    // The same fields as an inline hardware.gpu in a job file.
    f.reject_unknown(job_keys("hardware.gpu"));
    DeviceSpec d = base ? *base : DeviceSpec{};
    d.kind = kind;
    d.name = f.get_string("name").value_or(d.name);
    d.vendor = f.get_string("vendor").value_or(d.vendor);
    if (auto m = f.get_size_bytes("memory")) {
        if (*m <= 0) f.fail("memory", "must be positive");
        d.memory_bytes = *m;
    }
    d.memory_bandwidth_GBps = f.get_number("memory_bandwidth_GBps", 0, 1e6).value_or(d.memory_bandwidth_GBps);
    if (f.has("tflops")) d.peak_tflops = read_tflops(f.child("tflops"), d.peak_tflops);
    if (f.has("matmul_ceiling")) read_matmul_ceilings(f.child("matmul_ceiling"), d);
    d.sm_count = static_cast<int>(f.get_int("sm_count", 0, 100000).value_or(d.sm_count));
    d.tdp_w = f.get_number("tdp_w", 0, 1e5).value_or(d.tdp_w);
    // A variant that lowers its base's power limit and states no peaks of its own runs at the clocks the limit
    // sustains (spec/power_capped_peaks.hpp).
    // The plan reports the rating and the clock fraction (rated_tdp_w, power_clock_fraction); stated peaks carry none.
    if (f.has("tflops")) d.rated_tdp_w = 0, d.power_clock_fraction = 1;
    if (base && kind == DeviceKind::gpu && !f.has("tflops") && d.tdp_w < base->tdp_w) {
        d.peak_tflops = power_capped_peaks(*base, d.tdp_w);
        d.rated_tdp_w = base->rated_tdp_w > 0 ? base->rated_tdp_w : base->tdp_w;
        d.power_clock_fraction = base->power_clock_fraction * power_capped_clock_fraction(*base, d.tdp_w);
    }
    d.idle_w = f.get_number("idle_w", 0, 1e5).value_or(d.idle_w);
    d.host_link = f.get_string("host_link").value_or(base ? d.host_link : (kind == DeviceKind::gpu ? "pcie5" : ""));
    d.cuda_context_bytes = f.get_size_bytes("cuda_context_bytes").value_or(d.cuda_context_bytes);
    d.cores = static_cast<int>(f.get_int("cores", 0, 100000).value_or(d.cores));
    d.base_ghz = f.get_number("all_core_turbo_ghz", 0, 20).value_or(f.get_number("base_ghz", 0, 20).value_or(d.base_ghz));
    d.memory_channels = static_cast<int>(f.get_int("memory_channels", 0, 64).value_or(d.memory_channels));
    d.op_overhead_us = f.get_number("op_overhead_us", 0, 1e6).value_or(d.op_overhead_us);
    d.first_touch_GBps = f.get_number("first_touch_GBps", 0, 1e6).value_or(d.first_touch_GBps);
    d.core_memory_bandwidth_GBps = f.get_number("core_memory_bandwidth_GBps", 0, 1e4).value_or(d.core_memory_bandwidth_GBps);
    d.runtime_rss_bytes = f.get_size_bytes("runtime_rss").value_or(d.runtime_rss_bytes);
    d.blas_switch_us = f.get_number("blas_switch_us", 0, 1e7).value_or(d.blas_switch_us);
    if (kind == DeviceKind::gpu) {
        if (d.memory_bytes <= 0) f.fail("memory", "a GPU needs its memory size (e.g. 80GiB)");
        if (d.memory_bandwidth_GBps <= 0) f.fail("memory_bandwidth_GBps", "a GPU needs its memory bandwidth");
    } else {
        if (d.cores <= 0) f.fail("cores", "a CPU needs its core count");
        if (d.memory_bandwidth_GBps <= 0) f.fail("memory_bandwidth_GBps", "a CPU needs its DDR bandwidth");
    }
    return d;
}

LinkSpec Catalog::read_link(const Fields& f) const {
    f.reject_unknown(job_keys("hardware.intra_node"));   // the same fields as an inline link in a job file
    LinkSpec l;
    l.name = f.get_string("name").value_or("inline");
    auto bw = f.get_number("bandwidth_GBps", 0, 1e6);
    if (!bw) f.fail("bandwidth_GBps", "missing (GB/s per direction)");
    l.bandwidth_GBps = *bw;
    l.latency_us = f.get_number("latency_us", 0, 1e6).value_or(0);
    l.achievable_fraction = f.get_number("achievable_fraction", 0, 1).value_or(1.0);
    return l;
}

NetworkSpec Catalog::read_network(const Fields& f) const {
    LinkSpec l = read_link(f);
    return NetworkSpec{l.name, l.bandwidth_GBps, l.latency_us, l.achievable_fraction};
}

DeviceSpec Catalog::gpu(const std::string& name, const InputSite& site) const {
    std::string p = resolve("gpus", name, site, "GPU");
    const Json& doc = document(p);
    return read_device(Fields(doc, p, ""), DeviceKind::gpu);
}

DeviceSpec Catalog::cpu(const std::string& name, const InputSite& site) const {
    std::string p = resolve("cpus", name, site, "CPU");
    const Json& doc = document(p);
    return read_device(Fields(doc, p, ""), DeviceKind::cpu);
}

LinkSpec Catalog::link(const std::string& name, const InputSite& site) const {
    const std::string p = resolve("links", name, site, "link");
    return remembered(cache_mutex_, links_, p, [&] { return read_link(Fields(document(p), p, "")); });
}

NetworkSpec Catalog::network(const std::string& name, const InputSite& site) const {
    std::string p = resolve("networks", name, site, "network fabric");
    const Json& doc = document(p);
    return read_network(Fields(doc, p, ""));
}

SystemSpec Catalog::system(const std::string& name_or_path, const InputSite& site) const {
    std::string path;
    std::error_code ec;
    if (looks_like_path(name_or_path)) {
        if (!fs::is_regular_file(name_or_path, ec))
            throw InputError(site.file, site.field, "system file '" + name_or_path + "' not found");
        path = name_or_path;
    } else {
        path = resolve("systems", name_or_path, site, "system");
    }
    return remembered(cache_mutex_, systems_, {path, name_or_path}, [&] {
        SystemSpec s = read_system(Fields(document(path), path, ""));
        if (s.name.empty()) s.name = name_or_path;
        return s;
    });
}

bool Catalog::system_lists_component(const std::string& name, const std::string& kind) const {
    const Json& doc = document(path_of("systems", name));
    if (!doc.is_object() || !doc.contains("components") || !doc["components"].is_array()) return false;
    for (const Json& c : doc["components"])
        if (c.is_object() && c.contains("kind") && c["kind"] == kind) return true;
    return false;
}

namespace {

void read_local_storage(const Fields& f, SystemSpec& s) {
    if (!f.has("storage")) return;
    Fields st = f.child("storage");
    st.reject_unknown({"read_GBps", "write_GBps", "drives", "notes", "sources"});
    s.local_storage.read_GBps = st.get_number("read_GBps", 0, 1e5).value_or(0);
    s.local_storage.write_GBps = st.get_number("write_GBps", 0, 1e5).value_or(0);
}

void read_power_supplies(const Fields& f, SystemSpec& s) {
    if (!f.has("power")) return;
    Fields p = f.child("power");
    p.reject_unknown({"psu_count", "psu_watts", "redundancy", "notes", "sources"});
    s.power.count = static_cast<int>(p.get_int("psu_count", 1, 64).value_or(0));
    s.power.watts_each = p.get_number("psu_watts", 1, 1e5).value_or(0);
    s.power.redundancy = p.get_choice("redundancy", {"none", "n+1", "n+2", "n+n"}).value_or("none");
    s.power.redundant = s.power.redundancy == "n+1"   ? 1
                        : s.power.redundancy == "n+2" ? 2
                        : s.power.redundancy == "n+n" ? s.power.count / 2
                                                      : 0;
    if (s.power.redundant >= s.power.count && s.power.count > 0) p.fail("redundancy", "leaves no supply to carry the load");
}

std::vector<Component> read_components(const Fields& f) {
    std::vector<Component> out;
    const Json* comps = f.raw("components");
    if (!comps) return out;
    if (!comps->is_array()) f.fail("components", "expected a list of {id, kind, socket}");
    for (size_t i = 0; i < comps->size(); ++i) {
        Fields c((*comps)[i], f.file(), f.path_of("components") + "[" + std::to_string(i) + "]");
        c.reject_unknown({"id", "kind", "socket", "notes"});
        Component comp;
        auto id = c.get_string("id");
        if (!id) c.fail("id", "missing");
        for (const auto& other : out)
            if (other.id == *id) c.fail("id", "'" + *id + "' appears twice");
        comp.id = *id;
        comp.kind = parse_component_kind(c);
        comp.socket = static_cast<int>(c.get_int("socket", 0, 63).value_or(0));
        out.push_back(comp);
    }
    return out;
}

// The GPU components, when listed, are gpu0..gpuN-1 with N = gpus_per_node.
void check_gpu_components(const Fields& f, const SystemSpec& s) {
    int gpus = 0;
    for (const auto& c : s.components) gpus += c.kind == ComponentKind::gpu;
    if (!s.cpu_only && !s.components.empty() && gpus != s.devices_per_node)
        f.fail("components", std::to_string(gpus) + " gpu components but gpus_per_node is " +
                                 std::to_string(s.devices_per_node));
    for (int i = 0; i < gpus; ++i)
        if (s.gpu_component(i) < 0) f.fail("components", "GPU ids must be gpu0..gpu" + std::to_string(gpus - 1));
}

}  // namespace

// The CPU, and the GPUs unless the system is CPU-only (then each socket is a device).
void Catalog::read_system_devices(const Fields& f, SystemSpec& s) const {
    auto device_field = [&](const char* key, DeviceKind kind) -> DeviceSpec {
        const Json* v = f.raw(key);
        if (!v) f.fail(key, "missing");
        if (v->is_string())
            return kind == DeviceKind::gpu ? gpu(v->get<std::string>(), {f.file(), f.path_of(key)})
                                           : cpu(v->get<std::string>(), {f.file(), f.path_of(key)});
        return read_device(f.child(key), kind);
    };
    s.host_cpu = device_field("cpu", DeviceKind::cpu);
    if (s.cpu_only) {
        if (f.has("gpu")) f.fail("gpu", "a cpu_only system has no GPUs");
        s.device = s.host_cpu;
        s.devices_per_node = s.sockets;
        return;
    }
    s.device = device_field("gpu", DeviceKind::gpu);
    auto n = f.get_int("gpus_per_node", 1, 1024);
    if (!n) f.fail("gpus_per_node", "missing");
    s.devices_per_node = static_cast<int>(*n);
}

// Links between the listed components (by id), each a catalog link or an inline mapping, times its count.
std::vector<TopologyLink> Catalog::read_topology_links(const Fields& f, const std::vector<Component>& components) const {
    std::vector<TopologyLink> out;
    const Json* links = f.raw("links");
    if (!links) return out;
    if (!links->is_array()) f.fail("links", "expected a list of {a, b, link}");
    for (size_t i = 0; i < links->size(); ++i) {
        Fields lf((*links)[i], f.file(), f.path_of("links") + "[" + std::to_string(i) + "]");
        lf.reject_unknown({"a", "b", "link", "count", "notes"});
        TopologyLink tl;
        for (const char* end : {"a", "b"}) {
            auto id = lf.get_string(end);
            if (!id) lf.fail(end, "missing");
            auto it = std::find_if(components.begin(), components.end(), [&](const Component& c) { return c.id == *id; });
            if (it == components.end()) lf.fail(end, "no component with id '" + *id + "'");
            (end[0] == 'a' ? tl.a : tl.b) = static_cast<int>(it - components.begin());
        }
        const Json* l = lf.raw("link");
        if (!l) lf.fail("link", "missing");
        tl.link = l->is_string() ? link(l->get<std::string>(), {lf.file(), lf.path_of("link")}) : read_link(lf.child("link"));
        const int64_t count = lf.get_int("count", 1, 64).value_or(1);
        tl.link.bandwidth_GBps *= static_cast<double>(count);
        out.push_back(tl);
    }
    return out;
}

SystemSpec Catalog::read_system(const Fields& f) const {
    f.reject_unknown({"name", "aliases", "vendor", "gpu", "gpus_per_node", "cpu", "sockets", "cpu_only", "host_memory",
                      "inter_node", "storage", "power", "node_base_power_w", "components", "links", "sources",
                      "notes", "measured_fields", "samples", "form_factor", "cluster"});
    SystemSpec s;
    s.name = f.get_string("name").value_or("");
    s.vendor = f.get_string("vendor").value_or("");
    s.form_factor = f.get_string("form_factor").value_or("");
    s.cpu_only = f.get_bool("cpu_only").value_or(false);
    s.sockets = static_cast<int>(f.get_int("sockets", 1, 64).value_or(1));
    read_system_devices(f, s);
    s.host_memory_bytes = f.get_size_bytes("host_memory").value_or(0);
    if (s.host_memory_bytes <= 0) f.fail("host_memory", "missing (host RAM per node, e.g. 1024GiB)");
    if (f.has("inter_node")) {
        const Json* v = f.raw("inter_node");
        s.inter_node = v->is_string() ? network(v->get<std::string>(), {f.file(), f.path_of("inter_node")})
                                      : read_network(f.child("inter_node"));
    }
    read_local_storage(f, s);
    read_power_supplies(f, s);
    s.node_base_power_w = f.get_number("node_base_power_w", 0, 1e5).value_or(0);
    s.measured_fields = f.get_string_list("measured_fields");
    mark_measured_rates(s);
    s.sources = f.get_string_list("sources");
    s.components = read_components(f);
    s.links = read_topology_links(f, s.components);
    check_gpu_components(f, s);
    return s;
}

int SystemSpec::gpu_component(int local_rank) const {
    const std::string id = "gpu" + std::to_string(local_rank);
    for (size_t i = 0; i < components.size(); ++i)
        if (components[i].id == id && components[i].kind == ComponentKind::gpu) return static_cast<int>(i);
    return -1;
}

}  // namespace ftb
