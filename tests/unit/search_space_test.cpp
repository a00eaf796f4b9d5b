// The search space (src/search/search_space.cpp) on small jobs: which meshes exist, which layouts collapse to
// one, what the framework's `supports:` section allows, and that the job as written is always a point of it.
#include <gtest/gtest.h>

#include <algorithm>

#include "ftbound/error.hpp"
#include "plan_test_util.hpp"
#include "search/search_space.hpp"
#include "spec/catalog.hpp"
#include "spec/framework_support.hpp"

namespace ftb {
namespace {

using plan_test::tiny_job;

SearchRequest request_for(const Job& job, FrameworkSupport support = {}) {
    SearchRequest r;
    r.systems = {{job.system.name, job.system, true}};
    r.support = std::move(support);
    return r;
}

TEST(SearchSpace, DivisorsAscending) {
    EXPECT_EQ(divisors(1), (std::vector<int64_t>{1}));
    EXPECT_EQ(divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
    EXPECT_EQ(divisors(126), (std::vector<int64_t>{1, 2, 3, 6, 7, 9, 14, 18, 21, 42, 63, 126}));
}

TEST(SearchSpace, CanonicalCollapsesScheduleWithoutPipeline) {
    Layout l;
    l.pp = 1, l.schedule = PipelineSchedule::interleaved, l.virtual_stages = 4;
    const Layout c = canonical(l);
    EXPECT_EQ(c.schedule, PipelineSchedule::one_f_one_b);
    EXPECT_EQ(c.virtual_stages, 1);
    l.pp = 4, l.virtual_stages = 1;   // one virtual stage is plain 1F1B
    EXPECT_EQ(canonical(l).schedule, PipelineSchedule::one_f_one_b);
    l.schedule = PipelineSchedule::gpipe, l.virtual_stages = 3;   // only interleaving has virtual stages
    EXPECT_EQ(canonical(l).virtual_stages, 1);
    EXPECT_EQ(canonical(l).schedule, PipelineSchedule::gpipe);
}

// Tiny Llama (2 layers, 4 heads, 2 kv heads) on 8 GPUs of one node, global batch 8, seq 8.
// tp in {1, 2, 4, 8} (divisors of 8 GPUs per node; check_job later drops tp 8 > heads), pp in {1, 2},
// cp in {1, 2, 4} (seq 8 divisible by 2*cp), dp = 8/(tp*pp*cp) dividing 8.
TEST(SearchSpace, MeshesOfOneNode) {
    const Job job = tiny_job({{"train.global_batch", "8"}}, 8);
    const SearchRequest req = request_for(job);
    const SearchSpace space(job, req);
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> got;
    for (const Mesh& m : space.meshes()) got.emplace_back(m.tp, m.pp, m.cp, m.dp);
    std::sort(got.begin(), got.end());
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> want;
    for (int64_t tp : {1, 2, 4, 8})
        for (int64_t pp : {1, 2})
            for (int64_t cp : {1, 2, 4})
                if (8 % (tp * pp * cp) == 0) want.emplace_back(tp, pp, cp, 8 / (tp * pp * cp));
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
}

TEST(SearchSpace, GlobalBatchMustSplitOverDataParallelRanks) {
    // Global batch 2 on 8 GPUs: dp may be 1 or 2 only, so tp*pp*cp is 4 or 8.
    const Job job = tiny_job({{"train.global_batch", "8"}}, 8);
    Job small = job;
    small.spec.train.global_batch = 2;
    small.spec.parallel.dp = 2, small.spec.parallel.tp = 4;
    const SearchRequest req = request_for(small);
    const SearchSpace space(small, req);
    ASSERT_FALSE(space.meshes().empty());
    for (const Mesh& m : space.meshes()) EXPECT_EQ(2 % m.dp, 0) << m.tp << " " << m.pp << " " << m.cp << " " << m.dp;
}

TEST(SearchSpace, FrameworkWithoutModelParallelismSearchesDataParallelOnly) {
    const Job job = tiny_job({{"train.global_batch", "8"}}, 8);
    const FrameworkSupport hf = load_framework_support("hf");
    EXPECT_FALSE(hf.tensor_parallel);
    EXPECT_TRUE(hf.pipeline.empty());
    const SearchRequest req = request_for(job, hf);
    const SearchSpace space(job, req);
    ASSERT_EQ(space.meshes().size(), 1u);
    EXPECT_EQ(space.meshes()[0].dp, 8);
    // ZeRO 0-3 over 8 ranks, the job's loss and Liger's fused loss, compile off (the job's) and on.
    EXPECT_EQ(space.variants(space.meshes()[0]).size(), 4u * 2u * 2u);
    // hf: gradient checkpointing only (no selective recompute); offload optimizer, then parameters with ZeRO-3,
    // only where no offload does not fit.
    EXPECT_EQ(space.recompute_chain(), (std::vector<Recompute>{Recompute::none, Recompute::full}));
    Layout z0 = layout_of(job, 0), z3 = z0;
    z3.zero = 3;
    EXPECT_EQ(space.offload_choices(z0).always.size(), 1u);
    EXPECT_EQ(space.offload_choices(z0).when_needed.size(), 1u);
    EXPECT_EQ(space.offload_choices(z3).when_needed.size(), 2u);
    EXPECT_EQ(space.offload_choices(z3).when_needed.back().params, OffloadTarget::cpu);
    EXPECT_EQ(space.offload_choices(z3).least_memory, std::vector<OffloadLevel>{space.offload_choices(z3).when_needed.back()});
    // Paged optimizer states are not device memory: every offload setting is a least-memory candidate.
    z3.optimizer = Optimizer::paged_adamw_8bit;
    EXPECT_EQ(space.offload_choices(z3).least_memory.size(), 3u);
}

TEST(SearchSpace, JobAsWrittenIsAPoint) {
    // Values the framework's list does not offer (sequence parallel off with tp > 1, gpipe) are still tried.
    Job job = tiny_job({{"train.global_batch", "8"}, {"parallel.tp", "2"}, {"parallel.pp", "2"},
                        {"parallel.pp_schedule", "gpipe"}, {"train.micro_batch", "2"}}, 8);
    const SearchRequest req = request_for(job);
    const SearchSpace space(job, req);
    EXPECT_TRUE(space.contains(layout_of(job, 0)));
    Layout other = layout_of(job, 0);
    other.micro_batch = 3;   // 3 does not divide global_batch / dp = 4
    EXPECT_FALSE(space.contains(other));
}

TEST(SearchSpace, ZeroStagesOnlyWithSeveralDataParallelRanks) {
    const Job job = tiny_job({{"train.global_batch", "8"}}, 8);
    const SearchRequest req = request_for(job);
    const SearchSpace space(job, req);
    for (const Mesh& m : space.meshes())
        for (const Layout& v : space.variants(m)) {
            if (m.dp == 1) {
                EXPECT_EQ(v.zero, 0);
            }
            if (m.tp == 1) {
                EXPECT_FALSE(v.sequence_parallel);
            }
            if (m.pp == 1) {
                EXPECT_EQ(v.schedule, PipelineSchedule::one_f_one_b);
            }
        }
}

TEST(SearchSpace, NodesWithoutFabricAreNotSearched) {
    // A composed node without hardware.inter_node cannot span nodes.
    const Job job = tiny_job({{"train.global_batch", "16"}}, 8);
    SearchRequest req = request_for(job);
    req.nodes = {1, 2};
    const SearchSpace space(job, req);
    for (const Mesh& m : space.meshes()) EXPECT_EQ(m.nodes, 1);
}

TEST(SearchSpace, MaxGpusDropsLargerMeshes) {
    const Job job = tiny_job({{"train.global_batch", "16"}, {"hardware.inter_node", "ib-ndr-400"}}, 8);
    SearchRequest req = request_for(job);
    req.nodes = {1, 2};
    req.max_gpus = 8;
    const SearchSpace space(job, req);
    ASSERT_FALSE(space.meshes().empty());
    for (const Mesh& m : space.meshes()) EXPECT_EQ(m.nodes, 1);
    EXPECT_GT(space.meshes_over_gpu_limit(), 0);
}

TEST(FrameworkSupport, EveryProfileStatesIt) {
    for (const std::string& fw : Catalog::instance().names("frameworks")) {
        SCOPED_TRACE(fw);
        const FrameworkSupport s = load_framework_support(fw);
        EXPECT_FALSE(s.sources.empty());
        EXPECT_FALSE(s.zero.empty());
        EXPECT_FALSE(s.losses.empty());
        EXPECT_FALSE(s.activation_checkpointing.empty());
    }
    EXPECT_EQ(load_framework_support("megatron").zero, (std::vector<int>{0, 1}));
    EXPECT_FALSE(load_framework_support("megatron").compile);
}

TEST(FrameworkSupport, RejectsUnknownEntries) {
    const Json doc = Json::parse(R"({"tensor_parallel": true, "zero": [0, 4]})");
    EXPECT_THROW(read_framework_support(Fields(doc, "fw.yaml", "supports")), InputError);
    const Json typo = Json::parse(R"({"tensor_paralel": true})");
    EXPECT_THROW(read_framework_support(Fields(typo, "fw.yaml", "supports")), InputError);
    const Json loss = Json::parse(R"({"loss": ["fast"]})");
    EXPECT_THROW(read_framework_support(Fields(loss, "fw.yaml", "supports")), InputError);
}

}  // namespace
}  // namespace ftb
