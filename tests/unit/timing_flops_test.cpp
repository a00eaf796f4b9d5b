// Utilisation FLOPs (src/timing/flops.hpp): the tiny Llama of plan_test_util.hpp counted by hand, and HFU >= MFU
// on every plan we can make from the repository's job files and method variations of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "spec/job_file.hpp"
#include "timing/flops.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

// Per block: q 64x64 + k 64x32 + v 64x32 + o 64x64 + gate/up/down 3 x 64x128 = 36,864 weights; causal attention
// forward over 8 tokens: 4 * 8 keys * q_dim 64 / 2 = 1,024 FLOPs per token. Head 64 x 1000 = 64,000.
TEST(TimingFlops, FullTrainingIsSixPerWeightWithCausalAttention) {
    const Job job = plan_test::tiny_job();
    const TrainingSetup set = derive_setup(job);
    // per block: forward 2*36,864 + 1,024; input gradients 2*36,864 + 2*1,024; weight gradients 2*36,864
    // = 224,256; head: forward, input and weight gradients 3 * 2 * 64,000 = 384,000.
    EXPECT_DOUBLE_EQ(method_flops_per_token(job, set, 8), 2 * 224256.0 + 384000);
    // 6N counts full (not causal) attention at 12 * q_dim * seq per block.
    EXPECT_DOUBLE_EQ(six_n_flops_per_token(job.model, 8), 6.0 * (2 * 36864 + 64000) + 2 * 12.0 * 64 * 8);
}

TEST(TimingFlops, LoraCountsAdaptersAndInputGradientsButNoBaseWeightGradients) {
    const Job job = plan_test::tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"}});
    const TrainingSetup set = derive_setup(job);
    // Adapters r(in + out) on every linear: q 1,024 + k 768 + v 768 + o 1,024 + gate/up/down 3 x 1,536 = 8,192.
    // per block: forward 2(36,864 + 8,192) + 1,024; input gradients 2(36,864 + 8,192) + 2,048; adapter weight
    // gradients 2 * 8,192 = 199,680. Head: forward and input gradient 2 * 2 * 64,000 (frozen).
    EXPECT_DOUBLE_EQ(method_flops_per_token(job, set, 8), 2 * 199680.0 + 256000);
}

TEST(TimingFlops, FreezeNeedsNoGradientBelowTheLowestTrainableBlock) {
    const Job job = plan_test::tiny_job({{"train.method", "freeze"}, {"train.freeze.trainable_layers", "1"}});
    const TrainingSetup set = derive_setup(job);
    ASSERT_EQ(set.first_trainable_layer, 1);
    // block 0 forward only: 74,752; block 1 as in full training: 224,256; head 384,000.
    EXPECT_DOUBLE_EQ(method_flops_per_token(job, set, 8), 74752.0 + 224256 + 384000);
}

void expect_hfu_at_least_mfu(const Job& job, const std::string& what) {
    const MemoryResult mem = plan_memory(job);
    const TimeResult t = plan_time(job, mem);
    ASSERT_GT(t.step_seconds, 0) << what;
    EXPECT_GT(t.mfu, 0) << what;
    EXPECT_GE(t.hfu, t.mfu * (1 - 1e-12)) << what << ": MFU " << t.mfu << " HFU " << t.hfu;
    EXPECT_GE(t.hardware_flops_per_step, t.model_flops_per_step * (1 - 1e-12)) << what;
}

TEST(TimingFlops, HfuIsAtLeastMfuOnEveryPlan) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const char* dir : {"validation/jobs", "validation/qwen/jobs", "examples", "tests/data/plan", "tests/data/bottlenecks"})
        for (const auto& e : fs::directory_iterator(fs::path(ftb_test::source_dir()) / dir))
            if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    ASSERT_GT(files.size(), 100u);
    const std::vector<std::vector<std::string>> variations = {
        {}, {"train.method=lora"}, {"train.method=qlora"}, {"train.method=freeze"},
        {"train.activation_checkpointing=full"}, {"train.activation_checkpointing=selective"},
        {"train.packing=false", "train.avg_seq_len=100"}, {"train.attention=eager"}};
    int planned = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        // Every file as written; every seventh with each variation too (the variations are what differ).
        for (size_t v = 0; v < (i % 7 == 0 ? variations.size() : 1); ++v) {
            std::optional<Job> job;
            try {
                job = load_job(files[i], variations[v]);
            } catch (const InputError&) {
                continue;   // a variation the job cannot take (e.g. QLoRA on a CPU server, avg_seq_len > seq_len)
            }
            std::string what = files[i];
            for (const auto& s : variations[v]) what += " --set " + s;
            expect_hfu_at_least_mfu(*job, what);
            ++planned;
        }
    }
    EXPECT_GT(planned, 300);
}

}  // namespace
}  // namespace ftb
