// Memory model invariants over realistic jobs: memory never falls as micro-batch or sequence grows, full
// recompute never costs more than none, ZeRO-3 never more than ZeRO-0, and the limits search agrees with
// `fits` at its boundary (the largest value fits, one step more does not).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

struct Case {
    std::string name;
    std::string job_json;
};

// Catalog models and devices; each case stresses a different part of the walk.
std::vector<Case> cases() {
    return {
        {"full_amp_8b_one_h100", R"({"model": "meta-llama/Llama-3.1-8B",
            "train": {"method": "full", "weights": "mixed", "micro_batch": 1, "global_batch": 8, "seq_len": 2048},
            "hardware": {"gpu": "h100-sxm", "gpus_per_node": 1}})"},
        {"lora_hf_8b_rtx4090", R"({"model": "meta-llama/Llama-3.1-8B",
            "train": {"method": "lora", "framework": "hf", "weights": "pure", "micro_batch": 1, "global_batch": 16,
                      "seq_len": 2048, "activation_checkpointing": "full", "loss": "chunked"},
            "hardware": {"gpu": "rtx-4090", "gpus_per_node": 1}})"},
        {"qlora_70b_a100", R"({"model": "meta-llama/Llama-3.1-70B",
            "train": {"method": "qlora", "framework": "hf", "micro_batch": 1, "global_batch": 8, "seq_len": 1024,
                      "optimizer": "paged_adamw_8bit", "activation_checkpointing": "full"},
            "hardware": {"gpu": "a100-sxm-80gb", "gpus_per_node": 1}})"},
        {"fsdp_8b_8xh100", R"({"model": "meta-llama/Llama-3.1-8B",
            "train": {"method": "full", "micro_batch": 1, "global_batch": 64, "seq_len": 4096},
            "parallel": {"zero": 3}, "hardware": {"system": "hgx-h100-8x"}})"},
        {"megatron_tp_pp_70b", R"({"model": "meta-llama/Llama-3.1-70B",
            "train": {"method": "full", "framework": "megatron", "micro_batch": 1, "global_batch": 64, "seq_len": 4096,
                      "activation_checkpointing": "selective"},
            "parallel": {"tp": 4, "pp": 4, "zero": 1, "sequence_parallel": true},
            "hardware": {"system": "dgx-h100", "nodes": 2, "inter_node": "ib-ndr-400"}})"},
        {"eager_attention_gpt2", R"({"model": "openai-community/gpt2",
            "train": {"method": "full", "attention": "eager", "micro_batch": 1, "global_batch": 8, "seq_len": 512},
            "hardware": {"gpu": "l4", "gpus_per_node": 1}})"},
    };
}

Job load_case(const Case& c) { return job_from_document(Json::parse(c.job_json), c.name + ".json"); }

TEST(MemoryMonotonic, NeverFallsAsMicroBatchGrowsAtConstantAccumulation) {
    for (const Case& c : cases()) {
        Job job = load_case(c);
        const int64_t ga = job.spec.grad_accumulation();
        double prev_alloc = 0, prev_used = 0;
        for (int64_t mb = 1; mb <= 64; mb *= 2) {
            job.spec.train.micro_batch = mb;
            job.spec.train.global_batch = mb * job.spec.parallel.dp * ga;
            const MemoryResult m = plan_memory(job);
            EXPECT_GE(m.allocated_peak_bytes, prev_alloc) << c.name << " micro_batch " << mb;
            EXPECT_GE(m.device_used_bytes, prev_used) << c.name << " micro_batch " << mb;
            prev_alloc = m.allocated_peak_bytes;
            prev_used = m.device_used_bytes;
        }
    }
}

TEST(MemoryMonotonic, NeverFallsAsMicroBatchGrowsAtFixedGlobalBatch) {
    // What the limits search varies: micro_batch with the global batch held (accumulation shrinks).
    for (const Case& c : cases()) {
        Job job = load_case(c);
        job.spec.train.global_batch = 64 * job.spec.parallel.dp;
        double prev = 0;
        for (int64_t mb = 1; mb <= 64; mb *= 2) {
            job.spec.train.micro_batch = mb;
            const MemoryResult m = plan_memory(job);
            EXPECT_GE(m.device_used_bytes, prev) << c.name << " micro_batch " << mb << " (accumulation "
                                                 << job.spec.grad_accumulation() << ")";
            prev = m.device_used_bytes;
        }
    }
}

TEST(MemoryMonotonic, NeverFallsAsSequenceGrows) {
    for (const Case& c : cases()) {
        Job job = load_case(c);
        double prev_alloc = 0, prev_used = 0;
        for (int64_t seq = 128; seq <= 65536; seq *= 2) {
            job.spec.train.seq_len = seq;
            const MemoryResult m = plan_memory(job);
            EXPECT_GE(m.allocated_peak_bytes, prev_alloc) << c.name << " seq_len " << seq;
            EXPECT_GE(m.device_used_bytes, prev_used) << c.name << " seq_len " << seq;
            prev_alloc = m.allocated_peak_bytes;
            prev_used = m.device_used_bytes;
        }
    }
}

TEST(MemoryMonotonic, FullRecomputeNeverCostsMore) {
    for (const Case& c : cases()) {
        Job job = load_case(c);
        for (int64_t seq : {512, 4096}) {
            job.spec.train.seq_len = seq;
            job.spec.train.recompute = Recompute::none;
            const double none = plan_memory(job).allocated_peak_bytes;
            job.spec.train.recompute = Recompute::selective;
            const double selective = plan_memory(job).allocated_peak_bytes;
            job.spec.train.recompute = Recompute::full;
            const double full = plan_memory(job).allocated_peak_bytes;
            EXPECT_LE(full, none) << c.name << " seq " << seq;
            EXPECT_LE(selective, none) << c.name << " seq " << seq;
        }
    }
}

TEST(MemoryMonotonic, ZeroStagesNeverCostMoreWithDataParallel) {
    for (const Case& c : cases()) {
        Job job = load_case(c);
        if (job.spec.parallel.dp <= 1) continue;
        job.spec.parallel.zero = 0;
        const double z0 = plan_memory(job).device_used_bytes;
        job.spec.parallel.zero = 1;
        const double z1 = plan_memory(job).device_used_bytes;
        job.spec.parallel.zero = 3;
        const double z3 = plan_memory(job).device_used_bytes;
        EXPECT_LE(z1, z0) << c.name;
        EXPECT_LE(z3, z0) << c.name;
        EXPECT_LT(z3, z0) << c.name << ": sharding parameters over dp=" << job.spec.parallel.dp << " saved nothing";
    }
}

// Limits bisect on the central figure (margin >= 0); at the boundary the verdict is tight, never a plain fit.
TEST(MemoryMonotonic, LimitsAgreeWithFitsAtTheBoundary) {
    for (const Case& c : cases()) {
        const Job job = load_case(c);
        const int64_t mb = max_micro_batch(job);
        Job trial = job;
        if (mb > 0) {
            trial.spec.train.micro_batch = mb;
            EXPECT_TRUE(within_capacity(plan_memory(trial))) << c.name << " max_micro_batch " << mb;
        }
        if (mb > 0) {
            EXPECT_NE(plan_memory(trial).verdict, MemoryVerdict::does_not_fit) << c.name;
        }
        trial.spec.train.micro_batch = mb + 1;
        EXPECT_FALSE(within_capacity(plan_memory(trial))) << c.name << " max_micro_batch " << mb << " but " << mb + 1 << " fits";

        const int64_t step = job.spec.parallel.cp;
        const int64_t seq = max_seq_len(job);
        trial = job;
        if (seq > 0) {
            trial.spec.train.seq_len = seq;
            EXPECT_TRUE(within_capacity(plan_memory(trial))) << c.name << " max_seq_len " << seq;
            EXPECT_EQ(seq % step, 0) << c.name;
        }
        trial.spec.train.seq_len = seq + step;
        EXPECT_FALSE(within_capacity(plan_memory(trial))) << c.name << " max_seq_len " << seq << " but " << seq + step << " fits";
    }
}

}  // namespace
}  // namespace ftb
