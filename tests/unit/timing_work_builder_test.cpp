// The work builder alone: the shape a micro-batch computes on, the FLOPs and kernels of one block and of a
// pipeline stage, counted by hand for the tiny Llama of plan_test_util.hpp (hidden 64, 2 blocks, q 64, kv 32,
// FFN 128, vocab 1000) on one H100 SXM.
#include <gtest/gtest.h>

#include <cmath>

#include "memory/stage_params.hpp"
#include "timing/attention_work.hpp"
#include "timing/eager_host.hpp"
#include "timing/work_builder.hpp"
#include "work_test_util.hpp"

namespace ftb {
namespace {

using plan_test::BuiltWork;
using plan_test::build_work;

// Per block and token: q 64x64 + k 64x32 + v 64x32 + o 64x64 + gate/up/down 3 x 64x128 = 36,864 weights.
constexpr double kBlockWeights = 36864;
constexpr double kHeadWeights = 64000;   // 64 x 1000
// H100 SXM HBM 3350 GB/s at 750/900 for streaming kernels (kGpuStreamFraction).
constexpr double kH100StreamBps = 3350e9 * 750.0 / 900.0;

TEST(TimingWorkBuilder, PackedMicroBatchRunsOnTheWholeSequenceSplitOverContextRanks) {
    const BuiltWork b = build_work({{"train.seq_len", "64"}, {"train.micro_batch", "2"}, {"parallel.cp", "2"}}, 2);
    const MicroBatchShape s = micro_batch_shape(b.job);
    EXPECT_DOUBLE_EQ(s.compute_seq, 64);
    EXPECT_DOUBLE_EQ(s.real_tokens_per_seq, 64);
    EXPECT_DOUBLE_EQ(s.tokens_per_gpu, 2 * 64 / 2.0);
}

TEST(TimingWorkBuilder, PaddedMicroBatchRunsOnItsExpectedLongestSequence) {
    // 4 sequences of mean 100 tokens, lengths uniform on [0, 200]: expected longest 2*100*4/5 = 160.
    const BuiltWork b = build_work({{"train.seq_len", "1000"}, {"train.micro_batch", "4"}, {"train.packing", "false"},
                           {"train.avg_seq_len", "100"}, {"train.global_batch", "4"}});
    const MicroBatchShape s = micro_batch_shape(b.job);
    EXPECT_DOUBLE_EQ(s.compute_seq, 160);
    EXPECT_DOUBLE_EQ(s.real_tokens_per_seq, 100);
    EXPECT_DOUBLE_EQ(s.tokens_per_gpu, 640);
}

TEST(TimingWorkBuilder, BlockFlopsAreTwoPerWeightPerTokenForwardAndFourBackward) {
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const LayerSpec& l = b.job.model.layers[0];
    const double T = 8;
    const LayerWork w = layer_work(l, b.job.model, c, T, 8, true, true);
    // Causal flash attention: 4 * T * keys * q_dim / 2 forward, 2.5x that backward.
    const double attention = 4.0 * T * 8 * 64 * 0.5;
    EXPECT_DOUBLE_EQ(w.forward.flops, 2 * T * kBlockWeights + attention);
    EXPECT_DOUBLE_EQ(w.backward.flops, 4 * T * kBlockWeights + 2.5 * attention);
    EXPECT_DOUBLE_EQ(w.recompute.flops, 0);
    // A frozen block below every trainable one runs forward only.
    const LayerWork frozen = layer_work(l, b.job.model, c, T, 8, false, false);
    EXPECT_DOUBLE_EQ(frozen.forward.flops, w.forward.flops);
    EXPECT_DOUBLE_EQ(frozen.backward.gpu_seconds(), 0);
    EXPECT_DOUBLE_EQ(frozen.backward.kernels, 0);
}

TEST(TimingWorkBuilder, RecomputeRepeatsTheForwardOrOnlyTheAttention) {
    const BuiltWork full = build_work({{"train.activation_checkpointing", "full"}});
    const WorkContext cf = make_work_context(full.job, full.set, full.rates, full.scale);
    const LayerWork wf = layer_work(full.job.model.layers[0], full.job.model, cf, 8, 8, true, true);
    EXPECT_DOUBLE_EQ(wf.recompute.flops, wf.forward.flops);
    EXPECT_DOUBLE_EQ(wf.recompute.gpu_seconds(), wf.forward.gpu_seconds());
    const BuiltWork sel = build_work({{"train.activation_checkpointing", "selective"}});
    const WorkContext cs = make_work_context(sel.job, sel.set, sel.rates, sel.scale);
    const LayerWork ws = layer_work(sel.job.model.layers[0], sel.job.model, cs, 8, 8, true, true);
    EXPECT_DOUBLE_EQ(ws.recompute.flops, 4.0 * 8 * 8 * 64 * 0.5);
    EXPECT_DOUBLE_EQ(ws.recompute.attention_s, ws.forward.attention_s);
    EXPECT_DOUBLE_EQ(ws.recompute.kernels, 1);
}

// FlashAttention-3 paper, H100, FlashAttention-2: forward (causal) 191 TFLOP/s at 512 keys, 260 at 1k, 335 at 16k;
// backward 214, 260, 322. Attention seconds per FLOP scale by the 16k figure over the figure at the job's keys.
TEST(TimingWorkBuilder, AttentionRunsBelowItsLongSequenceRateOnShortSequences) {
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const LayerSpec& l = b.job.model.layers[0];
    auto per_key = [&](double keys, bool backward) {
        const LayerWork w = layer_work(l, b.job.model, c, 8, keys, true, true);
        return (backward ? w.backward.attention_s : w.forward.attention_s) / keys;
    };
    EXPECT_NEAR(per_key(512, false) / per_key(16384, false), 335.0 / 191, 1e-12);
    EXPECT_NEAR(per_key(512, true) / per_key(16384, true), 322.0 / 214, 1e-12);
    EXPECT_NEAR(per_key(512 * std::sqrt(2.0), false) / per_key(16384, false), 335.0 / ((191 + 260) / 2.0), 1e-12);
    EXPECT_DOUBLE_EQ(per_key(65536, false), per_key(16384, false));   // long sequences: the plateau
}

// Transformer Engine runs cuDNN's fused attention on Hopper (FlashAttention-3 paper, H100, cuDNN: forward (causal)
// 315 TFLOP/s at 512 keys, 539 at 16k; backward 305, 516) and FlashAttention-2 on Ampere.
TEST(TimingWorkBuilder, TransformerEngineAttentionRunsCudnnOnHopperAndFlashAttention2Before) {
    BuiltWork b = build_work();
    const LayerSpec& l = b.job.model.layers[0];
    auto seconds = [&](AttentionKernel kernel, double keys, bool backward) {
        b.job.framework.attention_kernel = kernel;
        const LayerWork w = layer_work(l, b.job.model, b.work(), 8, keys, true, true);
        return backward ? w.backward.attention_s : w.forward.attention_s;
    };
    const auto te = AttentionKernel::transformer_engine, fa2 = AttentionKernel::flash2;
    EXPECT_NEAR(seconds(fa2, 16384, false) / seconds(te, 16384, false), 539.0 / 335, 1e-12);
    EXPECT_NEAR(seconds(fa2, 16384, true) / seconds(te, 16384, true), 516.0 / 322, 1e-12);
    EXPECT_NEAR(seconds(te, 512, false) / 512 / (seconds(te, 16384, false) / 16384), 539.0 / 315, 1e-12);
    EXPECT_NEAR(seconds(te, 512, true) / 512 / (seconds(te, 16384, true) / 16384), 516.0 / 305, 1e-12);
    EXPECT_DOUBLE_EQ(attention_efficiency(GpuArch::ampere, te), attention_efficiency(GpuArch::ampere, fa2));
    EXPECT_DOUBLE_EQ(attention_efficiency(GpuArch::hopper, te, true), 516.0 / 989.4);
}

// A load-balanced ring over cp = 2 runs its first step over the rank's own seq / 2 keys (half the FLOPs) and its
// later step over seq / 4 keys: at seq 4096 on H100, FlashAttention-2 forward (causal) 298 TFLOP/s at 2k keys and
// 260 at 1k against 319 at 4k. The all-gather exchange's calls are long: the sequence's rate.
TEST(TimingWorkBuilder, ContextParallelRingRunsAttentionOnShorterCalls) {
    auto forward_seconds = [](const std::string& cp, const std::string& exchange) {
        const BuiltWork b = build_work({{"parallel.cp", cp}, {"parallel.dp", "1"}, {"parallel.cp_exchange", exchange}},
                                       std::stoi(cp));
        return layer_work(b.job.model.layers[0], b.job.model, b.work(), 8, 4096, true, true).forward.attention_s;
    };
    EXPECT_NEAR(forward_seconds("2", "ring") / forward_seconds("1", "ring"), 319.0 * (0.5 / 298 + 0.5 / 260), 1e-12);
    EXPECT_DOUBLE_EQ(forward_seconds("2", "all_gather"), forward_seconds("1", "all_gather"));
    // All-to-all: one call over the whole sequence for half the heads, at the whole sequence's rate.
    EXPECT_DOUBLE_EQ(forward_seconds("2", "all_to_all"), forward_seconds("1", "all_to_all"));
}

// The FlashAttention-3 paper's H100 figures carry to another part in proportion of its best measured GEMM rate
// (mamf-finder rows: B200 1745, GB200 1822 TFLOP/s bf16); both Blackwell, same kernel table.
TEST(TimingWorkBuilder, AttentionFiguresCarryToAnotherPartByItsBestGemmRate) {
    auto attention_seconds = [](const char* gpu) {
        const BuiltWork b = build_work({{"hardware.gpu", gpu}, {"train.framework", "megatron"}});
        const LayerWork w = layer_work(b.job.model.layers[0], b.job.model, b.work(), 8, 4096, true, true);
        return w.forward.attention_s + w.backward.attention_s;
    };
    EXPECT_NEAR(attention_seconds("gb200") / attention_seconds("b200"), 1745.0 / 1822.0, 1e-12);
    // The H100 SXM itself runs the figures as measured (its own row is the reference): cuDNN's 539 TFLOP/s forward
    // at 16k keys, on 8 queries x 16,384 keys x q 64, causal.
    const BuiltWork h = build_work({{"train.framework", "megatron"}});
    const WorkContext c = h.work();
    const LayerWork w = layer_work(h.job.model.layers[0], h.job.model, c, 8, 16384, true, false);
    const double flops = 4.0 * 8 * 16384 * 64 * 0.5;
    const double rate = c.rates.peak_flops[size_t(Dtype::bf16)] * 539.0 / 989.4;
    EXPECT_NEAR(w.forward.attention_s, flops / rate, flops / rate * 1e-12);
}

TEST(TimingWorkBuilder, MemoryBoundKernelsStreamAtTheAchievableBandwidth) {
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    Work w;
    add_memory_bound(w, c, 1e9, 3);
    EXPECT_DOUBLE_EQ(w.memory_s, 1e9 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(w.kernels, 3);
    ResourceScale twice;
    twice.factor[size_t(Resource::memory_bandwidth)] = 2;
    const WorkContext c2 = make_work_context(b.job, b.set, b.rates, twice);
    Work w2;
    add_memory_bound(w2, c2, 1e9, 3);
    EXPECT_DOUBLE_EQ(w2.memory_s, w.memory_s / 2);
}

// Trainable biases cost one reduction of the output gradient per biased linear in backward (autograd's reduce_grad);
// the forward add rides in the GEMM. Tiny Llama with biases on q, k, v, o, gate, up, down: outputs 64 + 32 + 32 + 64
// + 128 + 128 + 64 = 512 per token, bf16 gradients: 8 tokens x 512 x 2 B = 8,192 bytes in 7 kernels.
TEST(TimingWorkBuilder, TrainableBiasesAddOneGradientReductionPerLinearInBackward) {
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    ASSERT_FALSE(c.fused_qkv);
    ASSERT_DOUBLE_EQ(c.act_bytes, 2);
    LayerSpec biased = b.job.model.layers[0];
    biased.qkv_bias = biased.o_bias = biased.mlp_bias = true;
    const LayerWork plain = layer_work(b.job.model.layers[0], b.job.model, c, 8, 8, true, true);
    const LayerWork with = layer_work(biased, b.job.model, c, 8, 8, true, true);
    EXPECT_NEAR(with.backward.memory_s - plain.backward.memory_s, 8192 / kH100StreamBps, 1e-18);
    EXPECT_DOUBLE_EQ(with.backward.kernels - plain.backward.kernels, 7);
    EXPECT_DOUBLE_EQ(with.forward.memory_s, plain.forward.memory_s);
    // Frozen biases (the block's weights do not train) have no gradient to reduce.
    const LayerWork frozen_plain = layer_work(b.job.model.layers[0], b.job.model, c, 8, 8, false, true);
    const LayerWork frozen_with = layer_work(biased, b.job.model, c, 8, 8, false, true);
    EXPECT_DOUBLE_EQ(frozen_with.backward.memory_s, frozen_plain.backward.memory_s);
    EXPECT_DOUBLE_EQ(frozen_with.backward.kernels, frozen_plain.backward.kernels);
}

// QLoRA dequantisation of one block's 36,864 base weights, per library (hand-counted bytes per element):
// bitsandbytes NF4 without double quantisation reads 0.5 + 4/64 and writes 2 bytes, in forward and in backward;
// the <= 0.47 kernel takes 1.68x that; auto-gptq moves 16.5 bytes once (backward reuses the saved weight).
TEST(TimingWorkBuilder, QloraDequantisesEveryBaseWeightAtItsLibrarysCost) {
    const auto dequant = [](const std::string& kernel) {
        const BuiltWork b = build_work({{"train.method", "qlora"}, {"train.qlora.double_quant", "false"},
                               {"train.qlora.kernel", kernel}});
        const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
        return layer_work(b.job.model.layers[0], b.job.model, c, 8, 8, false, true);
    };
    const double bnb_s = kBlockWeights * (0.5 + 4.0 / 64 + 2) / kH100StreamBps;
    const LayerWork bnb = dequant("bitsandbytes");
    EXPECT_NEAR(bnb.forward.dequant_s, bnb_s, 1e-15);
    EXPECT_NEAR(bnb.backward.dequant_s, bnb_s, 1e-15);
    const LayerWork old = dequant("bitsandbytes-0.47");
    EXPECT_NEAR(old.forward.dequant_s, 1.68 * bnb_s, 1e-15);
    const LayerWork gptq = dequant("auto-gptq");
    EXPECT_NEAR(gptq.forward.dequant_s, kBlockWeights * 16.5 / kH100StreamBps, 1e-15);
    EXPECT_DOUBLE_EQ(gptq.backward.dequant_s, 0);
    // 7 weight matrices (q, k, v, o, gate, up, down): 1 kernel each for bitsandbytes, 9 for auto-gptq.
    EXPECT_DOUBLE_EQ(gptq.forward.kernels - bnb.forward.kernels, 7 * (9 - 1));
}

TEST(TimingWorkBuilder, PipelineStagesSplitBlocksAndTheLastCarriesTheHead) {
    // Two stages, one block each: the first runs a block (+ embedding, no FLOPs), the last a block and the head.
    const BuiltWork b = build_work({{"parallel.pp", "2"}, {"train.global_batch", "2"}}, 2);
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const StageWork s = critical_stage_work(c, micro_batch_shape(b.job));
    const double T = 8, attention = 4.0 * T * 8 * 64 * 0.5;
    const double block = 6 * T * kBlockWeights + 3.5 * attention;
    EXPECT_DOUBLE_EQ(s.first_stage_flops, block);
    EXPECT_DOUBLE_EQ(s.last_stage_flops, block + 6 * T * kHeadWeights);
    // The head makes the last stage the slower one: it is the critical stage.
    EXPECT_DOUBLE_EQ(s.forward.flops + s.backward.flops, s.last_stage_flops);
    ASSERT_EQ(s.layer_forward_s.size(), 1u);
    EXPECT_GE(s.wall_s, s.gpu_s);
    EXPECT_DOUBLE_EQ(s.gpu_s, s.forward.gpu_seconds() + s.backward.gpu_seconds() + s.recompute.gpu_seconds());
}

// FSDP1 post-backward work per unit (llm-foundry: fsdp1_flat_gradients) under Composer's mixed_precision DEFAULT
// (fp32 reduce) and PURE (train.reduce_dtype: bf16) with bf16 compute, per element of a unit before sharding:
// DEFAULT writes the flat gradient (2 + 2), casts it to fp32 (2 + 4) and pre-divides it (4 + 4): 18 B;
// PURE writes it (2 + 2), pre-divides it in bf16 (2 + 2) and casts the reduced 1/dp shard back to fp32 ((2 + 4) / 8).
TEST(TimingWorkBuilder, Fsdp1ReduceDtypeSetsThePostBackwardCastsAndTheReduceBytes) {
    const std::vector<std::pair<std::string, std::string>> fsdp = {
        {"train.framework", "llm-foundry"}, {"train.weights", "mixed"}, {"parallel.zero", "3"}, {"train.global_batch", "8"}};
    const BuiltWork fp32 = build_work(fsdp, 8);
    auto pure_sets = fsdp;
    pure_sets.push_back({"train.reduce_dtype", "bf16"});
    const BuiltWork pure = build_work(pure_sets, 8);
    EXPECT_DOUBLE_EQ(fp32.set.reduce_bytes, 4);
    EXPECT_DOUBLE_EQ(pure.set.reduce_bytes, 2);
    EXPECT_DOUBLE_EQ(pure.set.grad_bytes, fp32.set.grad_bytes);   // the sharded gradient stays fp32 for the optimizer
    const StageWork a = critical_stage_work(make_work_context(fp32.job, fp32.set, fp32.rates, fp32.scale), micro_batch_shape(fp32.job));
    const StageWork b = critical_stage_work(make_work_context(pure.job, pure.set, pure.rates, pure.scale), micro_batch_shape(pure.job));
    const ModelSpec& m = fp32.job.model;
    const double elements = double(m.layers[0].params() + m.layers[1].params() + m.embedding_params() + m.lm_head_params());
    EXPECT_NEAR(a.backward.memory_s - b.backward.memory_s, elements * (18 - (8 + 6.0 / 8)) / kH100StreamBps, 1e-15);
    EXPECT_DOUBLE_EQ(a.backward.kernels, b.backward.kernels);   // one cast before the reduce, or one after
}

TEST(TimingWorkBuilder, AShortStepWaitsForTheHostToIssueEveryKernel) {
    // The tiny job's kernels last microseconds: the micro-batch takes as long as the host needs to issue them.
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const StageWork s = critical_stage_work(c, micro_batch_shape(b.job));
    // Issued op by op from Python (eager_host.hpp); full fine-tuning gives the 2 x 9 block tensors, the embedding,
    // the final norm and the untied head a gradient: 21 AccumulateGrad nodes.
    EXPECT_NEAR(s.host_issue_s, s.forward.kernels * kEagerForwardKernelSeconds +
                                    s.backward.kernels * kEagerBackwardKernelSeconds + 21 * kAccumulateGradSeconds,
                1e-15);
    EXPECT_GT(s.host_issue_s, s.gpu_s);
    EXPECT_NEAR(s.wall_s, s.host_issue_s, 1e-15);
    EXPECT_NEAR(s.launch_idle_s(), s.host_issue_s - s.gpu_s, 1e-15);
}

// A host-bound phase stretches every block's share of the compute stream alike: a collective or copy on another
// stream runs while the stream waits for the host, so the per-block windows it hides under are the stretched ones.
TEST(TimingWorkBuilder, AHostBoundPhaseStretchesEveryBlocksShareOfTheStream) {
    const BuiltWork b = build_work();
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const MicroBatchShape shape = micro_batch_shape(b.job);
    const StageWork s = critical_stage_work(c, shape);
    ASSERT_GT(s.forward_wall_s, s.forward.gpu_seconds());   // the tiny job waits for the host
    const LayerSpec& l = b.job.model.layers[0];
    const LayerWork one = layer_work(l, b.job.model, c, shape.tokens_per_gpu, shape.compute_seq, true, true);
    ASSERT_EQ(s.layer_forward_s.size(), 2u);
    EXPECT_NEAR(s.layer_forward_s[0], one.forward.gpu_seconds() * s.forward_wall_s / s.forward.gpu_seconds(), 1e-18);
    const double gpu_backward_s = s.backward.gpu_seconds() + s.recompute.gpu_seconds();
    EXPECT_NEAR(s.layer_backward_s[1], one.backward.gpu_seconds() * s.backward_wall_s / gpu_backward_s, 1e-18);
    EXPECT_NEAR(s.wall_s, s.forward_wall_s + s.backward_wall_s, 1e-18);
}

// The forward's Python issues its kernels as it goes; autograd's engine issues the backward's. A host-bound forward
// followed by a GPU-bound backward adds up: the host's forward plus the GPU's backward, more than either total.
TEST(TimingWorkBuilder, AHostBoundForwardThenAGpuBoundBackwardAddUp) {
    BuiltWork b = build_work();
    b.scale.factor[size_t(Resource::compute)] = 1e-6;   // matmuls a million times slower: the GPU bounds both phases
    const StageWork gpu_bound = critical_stage_work(make_work_context(b.job, b.set, b.rates, b.scale),
                                                    micro_batch_shape(b.job));
    const double gpu_forward_s = gpu_bound.forward.gpu_seconds();
    const double gpu_backward_s = gpu_bound.backward.gpu_seconds() + gpu_bound.recompute.gpu_seconds();
    ASSERT_GT(gpu_backward_s, 1.5 * gpu_forward_s);
    // Python worth 1.5x the forward's kernel time over the two blocks: the forward now waits for the host.
    b.job.framework.host_overhead_per_block_us = 1.5 * gpu_forward_s / 2 * 1e6;
    const StageWork s = critical_stage_work(make_work_context(b.job, b.set, b.rates, b.scale), micro_batch_shape(b.job));
    const double host_forward_s = s.forward.kernels * kEagerForwardKernelSeconds + 1.5 * gpu_forward_s;
    EXPECT_NEAR(s.wall_s, host_forward_s + gpu_backward_s, 1e-9 * s.wall_s);
    EXPECT_GT(s.wall_s, std::max(s.host_issue_s, s.gpu_s));
}

// Full recompute re-enters each block's forward in Python: the per-block host overhead is paid twice.
TEST(TimingWorkBuilder, FullRecomputeRunsTheBlocksPythonAgain) {
    BuiltWork b = build_work({{"train.activation_checkpointing", "full"}});
    b.job.framework.host_overhead_per_block_us = 1000;
    const StageWork s = critical_stage_work(make_work_context(b.job, b.set, b.rates, b.scale), micro_batch_shape(b.job));
    ASSERT_GT(s.recompute.kernels, 0);   // the recomputed forward is Python again: forward cost per kernel
    const double issue_s = (s.forward.kernels + s.recompute.kernels) * kEagerForwardKernelSeconds +
                           s.backward.kernels * kEagerBackwardKernelSeconds + 21 * kAccumulateGradSeconds;
    EXPECT_NEAR(s.host_issue_s, issue_s + 2 * 2 * 1000e-6, 1e-12);
}

// FSDP1 units mixing frozen and LoRA weights (LitGPT wraps whole blocks) run on views of a FlatParameter that
// requires grad: backward computes the frozen weights' gradients too, 2 x tokens x weights FLOPs per block, and
// writes them into the unit's flat gradient. DDP (ZeRO 0) of the same job computes only the adapters'.
TEST(TimingWorkBuilder, FsdpUnitsMixingFrozenWeightsComputeTheirGradients) {
    const auto backward = [](const std::string& zero) {
        const BuiltWork b = build_work({{"train.method", "lora"}, {"train.framework", "litgpt"}, {"parallel.zero", zero},
                               {"train.global_batch", "2"}}, 2);
        return critical_stage_work(make_work_context(b.job, b.set, b.rates, b.scale), micro_batch_shape(b.job)).backward;
    };
    const Work fsdp = backward("3"), ddp = backward("0");
    const double T = 8;
    EXPECT_DOUBLE_EQ(fsdp.flops - ddp.flops, 2 * 2 * T * kBlockWeights);
    EXPECT_GT(fsdp.memory_s + fsdp.matmul_s, ddp.memory_s + ddp.matmul_s);
}

// FSDP1 full training (llm-foundry: amp, bf16 compute, fp32 reduce): per unit and syncing micro-batch the flat
// gradient is written from the views' (2 + 2 B), cast to fp32 (2 + 4 B) and pre-divided in place (4 + 4 B):
// 18 B per block weight (36,864 + 2 x 64 norm weights), 3 kernels; the root unit likewise for the embedding and
// the untied head (2 x 64,000). The same job on one GPU has none of it.
TEST(TimingWorkBuilder, Fsdp1UnitsWriteCastAndPredivideTheirFlatGradientEverySyncingBackward) {
    const auto backward = [](int gpus) {
        const BuiltWork b = build_work({{"train.framework", "llm-foundry"}, {"train.weights", "mixed"}, {"parallel.zero", "3"},
                               {"train.global_batch", std::to_string(gpus)}}, gpus);
        return critical_stage_work(make_work_context(b.job, b.set, b.rates, b.scale), micro_batch_shape(b.job)).backward;
    };
    const Work fsdp = backward(2), zero2 = backward(1);   // one GPU: nothing to reduce-scatter
    const double block_params = kBlockWeights + 2 * 64;
    EXPECT_NEAR(fsdp.memory_s - zero2.memory_s, (2 * block_params + 2 * kHeadWeights) * 18 / kH100StreamBps, 1e-15);
    EXPECT_DOUBLE_EQ(fsdp.kernels - zero2.kernels, 3 * 3);
}

}  // namespace
}  // namespace ftb

namespace ftb {
namespace {

TEST(TimingWorkBuilder, CpuStepPaysPerOpTimeAndTheThreadPoolsTakingTurnsPerGemmCall) {
    // The tiny Llama on a probed CPU: 10 us per op, 3000 us per GEMM call made between OpenMP ops.
    BuiltWork b = build_work({{"train.attention", "eager"}});
    b.job.system.cpu_only = true;
    b.job.system.device.kind = DeviceKind::cpu;
    b.job.system.device.op_overhead_us = 10;
    b.job.system.device.blas_switch_us = 3000;
    b.rates = device_rates(b.job.system.device);
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const StageWork s = critical_stage_work(c, micro_batch_shape(b.job));
    // Per block, full fine-tuning: 7 linears forward and 14 backward (dgrad + wgrad), eager attention 2 batched
    // calls forward and 4 backward; the head 1 forward and 2 backward: 2 x 27 + 3 = 57 GEMM calls.
    EXPECT_DOUBLE_EQ(s.forward.gemm_ops + s.backward.gemm_ops, 57);
    EXPECT_DOUBLE_EQ(s.pool_switch_s, 57 * 3000e-6);
    const double kernels = s.forward.kernels + s.backward.kernels + s.recompute.kernels;
    EXPECT_DOUBLE_EQ(s.host_issue_s, kernels * 10e-6 + 2 * b.job.framework.host_overhead_per_block_us * 1e-6);
    EXPECT_DOUBLE_EQ(s.wall_s, s.gpu_s + s.host_issue_s + s.pool_switch_s);
}

TEST(TimingWorkBuilder, EmbeddingAndHeadCountedAsLayersLeaveTheEdgeStagesOneBlockFewer) {
    // Llama 3 405B: 126 blocks + embedding + head = 128 units over 16 stages of 8 (arXiv 2407.21783 §3.3.2).
    const StageSplit first = stage_split(126, 16, 0, true), second = stage_split(126, 16, 1, true);
    const StageSplit before_last = stage_split(126, 16, 14, true), last = stage_split(126, 16, 15, true);
    EXPECT_EQ(first.first, 0);
    EXPECT_EQ(first.blocks(), 7);
    EXPECT_EQ(second.first, 7);
    EXPECT_EQ(second.blocks(), 8);
    EXPECT_EQ(before_last.last, 119);
    EXPECT_EQ(before_last.blocks(), 8);
    EXPECT_EQ(last.first, 119);
    EXPECT_EQ(last.last, 126);
    EXPECT_TRUE(first.has_embedding);
    EXPECT_TRUE(last.has_head);
    // The plain split gives the remainder to the first stages: 14 stages of 8, then 2 of 7.
    EXPECT_EQ(stage_split(126, 16, 0).blocks(), 8);
    EXPECT_EQ(stage_split(126, 16, 15).blocks(), 7);
    // One stage holds everything either way.
    EXPECT_EQ(stage_split(126, 1, 0, true).blocks(), 126);
}

TEST(TimingWorkBuilder, WithTheEdgesCountedAsLayersAMiddleStageSetsThePace) {
    // 6 blocks + embedding + head over 4 stages: 1, 2, 2, 1 blocks; the middle stages run 2 blocks per micro-batch.
    // A 64-token vocabulary keeps the head smaller than a block.
    const BuiltWork b = build_work({{"model.num_hidden_layers", "6"}, {"model.vocab_size", "64"}, {"parallel.pp", "4"},
                           {"parallel.pp_edges_as_layers", "true"}, {"train.global_batch", "4"}}, 4);
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    const StageWork s = critical_stage_work(c, micro_batch_shape(b.job));
    EXPECT_EQ(s.layer_forward_s.size(), 2u);
    // Model FLOPs per replica: first + 2 middle + last = all 6 blocks, the embedding and the head once.
    const double block = s.middle_stage_flops / 2;
    EXPECT_GT(s.last_stage_flops, block);   // one block plus the head
    EXPECT_NEAR(s.first_stage_flops, block, block * 0.01);   // one block (the embedding lookup has no FLOPs)
}

// Megatron-Core's SwiGLUFunction under activation_func_fp8_input_store casts its input to fp8 after the forward and
// back before the backward (megatron/core/fusions/fused_bias_swiglu.py).
TEST(TimingWorkBuilder, SwigluInputStoredInFp8CastsForwardAndBack) {
    const auto nemo = [](const char* store) {
        return build_work({{"train.framework", "nemo"}, {"train.method", "lora"}, {"train.precision", "fp8"},
                           {"train.activation_func_fp8_input_store", store}});
    };
    const BuiltWork plain = nemo("false"), stored = nemo("true");
    const LayerSpec& l = plain.job.model.layers[0];
    const LayerWork a = layer_work(l, plain.job.model, plain.work(), 8, 8, true, true);
    const LayerWork b = layer_work(l, stored.job.model, stored.work(), 8, 8, true, true);
    EXPECT_DOUBLE_EQ(b.forward.kernels - a.forward.kernels, 1);
    EXPECT_DOUBLE_EQ(b.backward.kernels - a.backward.kernels, 1);
    // Each cast moves 2 x 128 elements of 8 tokens: 2 bytes read and 1 written forward, the reverse backward.
    const double cast_s = 8 * 2 * 128 * (2 + 1) / kH100StreamBps;
    EXPECT_NEAR(b.forward.memory_s - a.forward.memory_s, cast_s, cast_s * 1e-9);
    EXPECT_NEAR(b.backward.memory_s - a.backward.memory_s, cast_s, cast_s * 1e-9);
    EXPECT_DOUBLE_EQ(b.forward.flops, a.forward.flops);
}

}  // namespace
}  // namespace ftb
