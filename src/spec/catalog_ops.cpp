// The operations side of the catalog: storage tiers (data/storage/) and node prices (data/prices/).
#include <cmath>
#include <filesystem>

#include "spec/catalog.hpp"

namespace fs = std::filesystem;

namespace ftb {

StorageTier Catalog::storage(const std::string& name, const InputSite& site) const {
    const std::string path = resolve("storage", name, site, "storage tier");
    const Fields f(document(path), path, "");
    f.reject_unknown({"name", "node_local", "durable", "write_GBps_per_node", "read_GBps_per_node",
                      "aggregate_write_GBps", "aggregate_read_GBps", "sources", "notes"});
    StorageTier t;
    t.name = f.get_string("name").value_or(name);
    t.node_local = f.get_bool("node_local").value_or(false);
    t.durable = f.get_bool("durable").value_or(!t.node_local);
    t.write_GBps_per_node = f.get_number("write_GBps_per_node", 0, 1e6).value_or(0);
    t.read_GBps_per_node = f.get_number("read_GBps_per_node", 0, 1e6).value_or(0);
    t.aggregate_write_GBps = f.get_number("aggregate_write_GBps", 0, 1e9).value_or(0);
    t.aggregate_read_GBps = f.get_number("aggregate_read_GBps", 0, 1e9).value_or(0);
    t.sources = f.get_string_list("sources");
    if (!t.node_local && (t.write_GBps_per_node <= 0 || t.read_GBps_per_node <= 0))
        f.fail(t.write_GBps_per_node <= 0 ? "write_GBps_per_node" : "read_GBps_per_node",
               "shared storage needs its per-node rate (> 0)");
    if (t.sources.empty()) f.fail("sources", "every storage figure needs its source");
    return t;
}

std::optional<NodePrice> Catalog::price(const std::string& system_name) const {
    if (system_name.empty() || looks_like_path(system_name) || system_name.find("..") != std::string::npos)
        return std::nullopt;
    const std::string path = path_of("prices", system_name);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    const Fields f(document(path), path, "");
    f.reject_unknown({"system", "currency", "basis", "per_node_hour", "includes_power", "purchase_price", "years",
                      "comparable", "date", "sources", "notes"});
    NodePrice p;
    const std::string basis = *f.get_choice("basis", {"hourly", "amortised"});
    if (basis == "hourly") {
        auto h = f.get_number("per_node_hour", 1e-9, 1e7);
        if (!h) f.fail("per_node_hour", "missing (currency units per node-hour)");
        p.per_node_hour = *h;
        p.basis = "hourly list price";
        p.includes_power = f.get_bool("includes_power").value_or(true);
    } else {
        auto price = f.get_number("purchase_price", 1e-9, 1e12);
        auto years = f.get_number("years", 0.1, 50);
        if (!price) f.fail("purchase_price", "missing (currency units for one node)");
        if (!years) f.fail("years", "missing (years of service the purchase is spread over)");
        p.per_node_hour = *price / (*years * 8760.0);
        p.basis = "amortised purchase";
        p.includes_power = f.get_bool("includes_power").value_or(false);
    }
    p.currency = f.get_string("currency").value_or("USD");
    p.date = f.get_string("date").value_or("");
    p.comparable = f.get_string("comparable").value_or("");
    p.sources = f.get_string_list("sources");
    if (p.date.empty()) f.fail("date", "every price needs the date it was listed");
    if (p.sources.empty()) f.fail("sources", "every price needs its source");
    return p;
}

}  // namespace ftb
