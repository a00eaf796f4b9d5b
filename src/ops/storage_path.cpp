#include "ops/storage_path.hpp"

#include <algorithm>

#include "spec/catalog.hpp"
#include "system/storage_path.hpp"

namespace ftb {

const char* default_storage_tier(int nodes) { return nodes > 1 ? "parallel-fs" : "local-nvme"; }

StorageTier resolve_storage(const StorageChoice& choice, const SystemSpec& sys) {
    StorageTier t;
    if (!choice.tier.empty() || !choice.explicit_figures()) {
        const std::string name = choice.tier.empty() ? default_storage_tier(sys.nodes) : choice.tier;
        t = Catalog::instance().storage(name, {"", "ops storage tier"});
    } else {
        t.name = "custom";
        t.sources = {"the job's ops figures"};
    }
    if (t.node_local) {
        // The drives' own rate, or less when their links (socket link, PCIe switch uplinks) bind.
        const double array_write_GBps = nvme_array_write(sys).write_GBps;
        if (array_write_GBps > 0) t.write_GBps_per_node = array_write_GBps;
        if (sys.local_storage.read_GBps > 0) t.read_GBps_per_node = sys.local_storage.read_GBps;
    }
    if (choice.write_GBps_per_node) t.write_GBps_per_node = *choice.write_GBps_per_node;
    if (choice.read_GBps_per_node) t.read_GBps_per_node = *choice.read_GBps_per_node;
    if (choice.aggregate_write_GBps) t.aggregate_write_GBps = *choice.aggregate_write_GBps;
    if (choice.aggregate_read_GBps) t.aggregate_read_GBps = *choice.aggregate_read_GBps;
    // Figures given for writing only: reads are taken to run as fast (a stated assumption of the job).
    if (t.read_GBps_per_node <= 0) t.read_GBps_per_node = t.write_GBps_per_node;
    if (t.aggregate_read_GBps <= 0) t.aggregate_read_GBps = t.aggregate_write_GBps;
    return t;
}

namespace {
double shared(double per_node, double aggregate, int nodes) {
    return aggregate > 0 ? std::min(per_node, aggregate / std::max(1, nodes)) : per_node;
}
}  // namespace

double write_GBps_per_node_sharing(const StorageTier& t, int nodes) {
    return shared(t.write_GBps_per_node, t.aggregate_write_GBps, nodes);
}

double read_GBps_per_node_sharing(const StorageTier& t, int nodes) {
    return shared(t.read_GBps_per_node, t.aggregate_read_GBps, nodes);
}

double token_bytes_on_storage(int64_t vocab) { return vocab < 65500 ? 2.0 : 4.0; }

}  // namespace ftb
