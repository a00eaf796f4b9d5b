// The server catalog (data/systems): every link, NIC and supply of a system file is used by a model,
// entries carry their sources, and two servers with the same GPUs and GPU fabric plan the same step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "ftbound/plan.hpp"
#include "ops/power.hpp"
#include "plan_test_util.hpp"
#include "spec/catalog.hpp"
#include "system/nic_share.hpp"
#include "system/ring_packing.hpp"
#include "system/storage_path.hpp"
#include "system/topology.hpp"

namespace ftb {
namespace {

SystemSpec catalog_system(const std::string& name) { return Catalog::instance().system(name, {"test", "system"}); }

// Links a model routes traffic over: NCCL rings, GPU-to-NIC paths, GPU-to-host paths (offload,
// checkpoint staging) and host-to-drive paths (checkpoint writes).
std::set<int> links_used_by_models(const SystemSpec& s) {
    std::set<int> used;
    const int gpus = s.cpu_only ? 0 : s.devices_per_node;
    if (gpus >= 2)
        for (int l : pack_rings(s, gpus).links_used) used.insert(l);
    for (int l : nic_share(s, gpus).links_used) used.insert(l);
    for (int l : nvme_array_write(s).links_used) used.insert(l);
    const Topology topo(s);
    for (int g = 0; g < gpus; ++g) {
        const int gc = topo.gpu(g);
        for (const LinkDirection& hop : topo.route(gc, topo.host_memory_near(gc)).hops) used.insert(hop.link);
    }
    return used;
}

TEST(SystemCatalog, EveryLinkNicAndSupplyIsUsed) {
    for (const std::string& name : Catalog::instance().names("systems")) {
        SCOPED_TRACE(name);
        const SystemSpec s = catalog_system(name);
        const std::set<int> used = links_used_by_models(s);
        for (int l = 0; l < static_cast<int>(s.links.size()); ++l)
            EXPECT_TRUE(used.count(l)) << "link " << s.components[s.links[l].a].id << "-" << s.components[s.links[l].b].id
                                       << " (" << s.links[l].link.name << ") is used by no model";
        // Every NIC serves some GPU.
        const NicShare nics = nic_share(s, s.cpu_only ? 0 : s.devices_per_node);
        for (int c = 0; c < static_cast<int>(s.components.size()); ++c) {
            if (s.components[c].kind != ComponentKind::nic) continue;
            EXPECT_NE(std::find(nics.nic_of_gpu.begin(), nics.nic_of_gpu.end(), c), nics.nic_of_gpu.end())
                << s.components[c].id << " serves no GPU";
        }
        // The supplies enter the power model.
        EXPECT_TRUE(node_power(s, 1.0, 1.0, 0.0).psu_known);
        EXPECT_GT(s.node_base_power_w, 0);
        EXPECT_FALSE(s.form_factor.empty());
    }
}

// The NVLink recommendation passes over servers on their file's tree (Catalog::system_lists_component): for every
// catalog system that answer must be what the composed system says.
TEST(SystemCatalog, ListedComponentsMatchTheComposedSystem) {
    for (const std::string& name : Catalog::instance().names("systems")) {
        SCOPED_TRACE(name);
        const SystemSpec s = catalog_system(name);
        for (const auto& [kind, text] : {std::pair{ComponentKind::nvswitch, "nvswitch"}, {ComponentKind::nic, "nic"}}) {
            const bool composed = std::any_of(s.components.begin(), s.components.end(),
                                              [kind = kind](const Component& c) { return c.kind == kind; });
            EXPECT_EQ(Catalog::instance().system_lists_component(name, text), composed) << text;
        }
    }
    EXPECT_TRUE(Catalog::instance().system_lists_component("dell-poweredge-xe9680-8x-h100-sxm", "nvswitch"));
    EXPECT_FALSE(Catalog::instance().system_lists_component("dell-poweredge-xe8640-4x-h100-sxm", "nvswitch"));
}

TEST(SystemCatalog, EntriesAreFactsWithSources) {
    for (const std::string& name : Catalog::instance().names("systems")) {
        SCOPED_TRACE(name);
        const SystemSpec s = catalog_system(name);
        ASSERT_GE(s.sources.size(), 4u);
        for (const std::string& line : s.sources)
            for (const char* banned : {"NOT VERIFIED", "UNSOURCED", "ASSUMPTION", "VERIFICATION STATUS", "APPROXIMATE"})
                EXPECT_EQ(line.find(banned), std::string::npos) << line;
        // A vendor document is named, with a year.
        const bool dated = std::any_of(s.sources.begin(), s.sources.end(), [](const std::string& l) {
            return l.find("(") != std::string::npos && std::any_of(l.begin(), l.end(), ::isdigit) &&
                   (l.find("20") != std::string::npos);
        });
        EXPECT_TRUE(dated);
    }
}

// The LoRA job of the R760xa example (global batch 576: divides among 4, 8 and 72 GPUs) on `hardware`.
double step_seconds_with(const std::string& hardware) {
    Json doc = Json::parse(R"({
      "model": "meta-llama/Llama-3.1-8B",
      "train": {"method": "lora", "lora": {"rank": 16, "alpha": 32, "targets": "all-linear"}, "precision": "bf16",
                "weights": "mixed", "optimizer": "adamw", "micro_batch": 2, "global_batch": 576, "seq_len": 4096,
                "activation_checkpointing": "full", "attention": "flash", "framework": "hf"},
      "parallel": {"dp": "auto", "zero": 0},
      "hardware": )" + hardware + R"(
    })");
    return make_plan(job_from_document(doc, "same.yaml")).time.step_seconds;
}

double step_seconds_on(const std::string& system) { return step_seconds_with(R"({"system": ")" + system + R"("})"); }

TEST(SystemCatalog, SameGpusAndFabricPlanTheSameStep) {
    // Different hosts, supplies and vendors; the same GPUs on the same GPU fabric.
    const std::pair<const char*, const char*> pairs[] = {
        {"hgx-h100-8x", "dell-poweredge-xe9680-8x-h100-sxm"},
        {"hgx-h200-8x", "dgx-h200"},
        {"hgx-b200-8x", "dell-poweredge-xe9680l-8x-b200"},
        {"dell-poweredge-xe9680l-8x-b200", "dell-poweredge-xe9685l-8x-b200"},
        {"dell-poweredge-xe7745-8x-h200-nvl", "dell-poweredge-xe7740-8x-h200-nvl"},
        {"gb200-nvl72", "dell-poweredge-xe9712-gb200-nvl72"},
    };
    for (const auto& [a, b] : pairs) {
        SCOPED_TRACE(std::string(a) + " vs " + b);
        const double ta = step_seconds_on(a), tb = step_seconds_on(b);
        EXPECT_GT(ta, 0);
        EXPECT_NEAR(ta / tb, 1.0, 1e-9);
    }
}

TEST(SystemCatalog, Xe8640MatchesAnInlineNvlinkBoard) {
    // The XE8640's 4-GPU NVLink mesh (6 links to each peer, no NVSwitch) carries NCCL's rings at the GPU's
    // whole NVLink bandwidth, as a board composed with intra_node nvlink4 does; measured runs on the two
    // differ by 4% (issue 15), the plans must agree within 2%.
    const double mesh = step_seconds_on("dell-poweredge-xe8640-4x-h100-sxm");
    const double inline_board = step_seconds_with(R"({"gpu": "h100-sxm", "gpus_per_node": 4, "intra_node": "nvlink4"})");
    EXPECT_NEAR(mesh / inline_board, 1.0, 0.02);
}

TEST(SystemCatalog, CatalogSystemsJsonHoldsTheBuyersViewAndTopology) {
    const auto r = spec_test::run_ftbound({"catalog", "systems", "--json"});
    ASSERT_EQ(r.exit_code, 0) << spec_test::describe(r);
    const Json j = Json::parse(r.out);
    ASSERT_FALSE(j["systems"].empty());
    for (const Json& e : j["systems"]) {
        const std::string name = e["name"].get<std::string>();
        SCOPED_TRACE(name);
        const SystemSpec s = catalog_system(name);
        EXPECT_EQ(e["topology"]["components"].size(), s.components.size());
        EXPECT_EQ(e["topology"]["links"].size(), s.links.size());
        EXPECT_EQ(e["power"]["psu_count"].get<int>(), s.power.count);
        EXPECT_FALSE(e["sources"].empty());
        if (!s.cpu_only) {
            EXPECT_GT(e["fabric"]["ring_bus_GBps"].get<double>(), 0);
            EXPECT_GT(e["nics"]["per_gpu_GBps"].get<double>(), 0);
        }
    }
    // The XE8640's mesh and an NVSwitch board of the same GPUs give the same ring bandwidth.
    auto ring = [&](const std::string& name) {
        for (const Json& e : j["systems"])
            if (e["name"] == name) return e["fabric"]["ring_bus_GBps"].get<double>();
        return 0.0;
    };
    EXPECT_NEAR(ring("dell-poweredge-xe8640-4x-h100-sxm") / ring("dell-poweredge-xe9680-8x-h100-sxm"), 1.0, 0.01);
}

}  // namespace
}  // namespace ftb
