// Canonical memory cases (ASTRA-sim style): a tiny inline Llama whose every byte is worked out by hand from
// the rules in src/memory/*.cpp. Model: plan_test_util.hpp (202,048 parameters, 36,992 per block).
// One micro-batch of 8 tokens keeps activations small, so which phase holds the peak is predictable;
// each test asserts that phase too, since the breakdown is taken there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ftbound/memory.hpp"
#include "memory/activations.hpp"
#include "memory/training_setup.hpp"
#include "spec/framework_profile.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

// reserved = ceil(allocated * (1 + f) / 2 MiB) * 2 MiB (caching allocator, src/memory/memory_model.cpp)
double reserved_for(double allocated, double f) { return std::ceil(allocated * (1 + f) / (2 * kMiB)) * 2 * kMiB; }

TEST(MemoryCanonical, TinyLlamaParameterCounts) {
    const MemoryResult m = plan_memory(tiny_job());
    EXPECT_EQ(m.total_params, kTinyParams);
    EXPECT_EQ(m.trainable_params, kTinyParams);   // full fine-tune: embedding, blocks, final norm, head
    EXPECT_EQ(m.params_per_gpu, kTinyParams);
    EXPECT_EQ(m.tokens_per_micro_batch, 8);
}

TEST(MemoryCanonical, PureBf16FullFineTune) {
    // Pure bf16 (weights: pure): parameters, gradients and both AdamW states in bf16 (torch.optim zeros_like):
    //   weights   202,048 x 2 =   404,096
    //   gradients 202,048 x 2 =   404,096
    //   optimizer 202,048 x 4 =   808,192   (m + v, 2 bytes each)
    // foreach AdamW's sqrt(v) intermediate: 202,048 x 2 = 404,096, + 32 MiB cuBLAS workspace = 33,958,528.
    // The optimizer step is the peak: backward at the last block adds only ~49 KB of activations, logits
    // and gradient temporaries against the 404,096-byte intermediate.
    // allocated = 404,096 + 404,096 + 808,192 + 33,958,528 = 35,574,912
    // reserved  = ceil(35,574,912 x 1.05 / 2 MiB) = ceil(17.81) = 18 x 2 MiB = 37,748,736
    // device used = 37,748,736 + 512 MiB context (no communicator on one GPU) = 574,619,648
    const MemoryResult m = plan_memory(tiny_job());
    EXPECT_EQ(m.peak_phase, MemoryPhase::optimizer_step);
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 404096);
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 808192);
    EXPECT_DOUBLE_EQ(m.breakdown.activations_bytes, 0);
    EXPECT_DOUBLE_EQ(m.breakdown.logits_bytes, 0);
    EXPECT_DOUBLE_EQ(m.breakdown.temporary_bytes, 33958528);
    EXPECT_DOUBLE_EQ(m.allocated_peak_bytes, 35574912);
    EXPECT_DOUBLE_EQ(m.reserved_peak_bytes, 37748736);
    EXPECT_DOUBLE_EQ(m.cuda_context_bytes, kH100ContextBytes);
    EXPECT_DOUBLE_EQ(m.comm_buffer_bytes, 0);
    EXPECT_DOUBLE_EQ(m.device_used_bytes, 574619648);
    EXPECT_DOUBLE_EQ(m.breakdown.overhead_bytes, 574619648 - 35574912);
    EXPECT_DOUBLE_EQ(m.capacity_bytes, 85027979264);
    EXPECT_TRUE(m.fits);
    EXPECT_DOUBLE_EQ(m.host_bytes, 0);
}

TEST(MemoryCanonical, MixedAmpFullFineTuneKeepsBf16WeightCopies) {
    // torch.amp (generic framework, weights: mixed): fp32 parameters, fp32 gradients, fp32 m + v,
    // plus a bf16 copy of every matmul weight made by autocast and kept for backward.
    // A fused optimizer step (no foreach intermediate) moves the peak into backward, at the last block
    // (the bottom one, walking down), where every gradient has been formed and the top block's copies are freed.
    //   fp32 weights 202,048 x 4 = 808,192
    //   bf16 copies: block matrices 2 x 36,864 + lm_head 64,000 = 137,728 params x 2 = 275,456;
    //                half freed with the top block -> 137,728     weights at the peak = 945,920
    //   gradients 202,048 x 4 = 808,192;  optimizer 202,048 x 8 = 1,616,384
    // Activations per token of one block (autocast: residual stream fp32, matmul inputs bf16):
    //   2 eager RMSNorms x (x.float() 4*64 + rstd 4 + normalised fp32 4*64) = 2 x 516 = 1,032
    //   projection inputs: q,k,v each cast its own copy 3 x 2*64 + o 2*64 + gate,up 2 x 2*64 + down 2*128 = 1,024
    //   flash attention: q, k, v, out = 2*(64 + 32 + 32 + 64) + fp32 LSE 4*4 = 400
    //   SwiGLU internals 3 x 2*128 = 768                            -> 3,224 per token, 25,792 per block (8 tokens)
    //   head input: final norm 516 + bf16 matmul input 128 = 644 per token -> 5,152
    // at the bottom block: one block + head = 30,944
    // logits held through backward: 1000 x 2 x 8 = 16,000
    // temporaries: down-proj/SwiGLU grads 3 x 2*128*8 = 6,144 + residual grads 2 x 4*64*8 = 4,096 + 32 MiB cuBLAS
    // allocated = 945,920 + 808,192 + 1,616,384 + 30,944 + 16,000 + 33,564,672 = 36,982,112
    // reserved  = ceil(36,982,112 x 1.05 / 2 MiB) = ceil(18.52) = 19 x 2 MiB = 39,845,888
    Job job = tiny_job({{"train.weights", "mixed"}});
    job.spec.train.optimizer_impl = OptimizerImpl::fused;
    const MemoryResult m = plan_memory(job);
    EXPECT_EQ(m.peak_phase, MemoryPhase::backward);
    EXPECT_DOUBLE_EQ(m.layer_activation_per_token.norms, 1032);
    EXPECT_DOUBLE_EQ(m.layer_activation_per_token.projections_in, 1024);
    EXPECT_DOUBLE_EQ(m.layer_activation_per_token.attention, 400);
    EXPECT_DOUBLE_EQ(m.layer_activation_per_token.ffn, 768);
    EXPECT_DOUBLE_EQ(m.layer_activation_per_token.dropout_masks, 0);
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 945920);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 808192);
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 1616384);
    EXPECT_DOUBLE_EQ(m.breakdown.activations_bytes, 30944);
    EXPECT_DOUBLE_EQ(m.breakdown.logits_bytes, 16000);
    EXPECT_DOUBLE_EQ(m.breakdown.temporary_bytes, 10240 + kHopperCublasBytes);
    EXPECT_DOUBLE_EQ(m.allocated_peak_bytes, 36982112);
    EXPECT_DOUBLE_EQ(m.reserved_peak_bytes, 39845888);
    EXPECT_DOUBLE_EQ(m.device_used_bytes, 39845888 + kH100ContextBytes);
}

TEST(MemoryCanonical, MegatronMasterStyleIs2Plus4Plus12) {
    // Megatron (mixed_style: master): bf16 parameters (2 B), fp32 main_grad (4 B), fp32 master copy + m + v
    // (12 B) inside the optimizer: 202,048 x {2, 4, 12} = {404,096, 808,192, 2,424,576}.
    // The fused step has no intermediate; the peak holds every gradient (bottom block or the step itself).
    const MemoryResult m = plan_memory(tiny_job({{"train.framework", "megatron"}, {"train.weights", "mixed"}}));
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 808192);
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 2424576);
}

// ZeRO over 4 data-parallel GPUs, pure bf16 (2 + 2 + 4 bytes per parameter; 202,048 / 4 = 50,512 per shard).
TEST(MemoryCanonical, ZeroStagesShardByDataParallel) {
    // ZeRO-0 (DDP, generic framework keeps flat bucket copies of the gradients): optimizer step holds
    //   weights 404,096 + gradients 404,096 + buckets 404,096 + states 808,192 + sqrt(v) 404,096 (+ cuBLAS)
    {
        const MemoryResult m = plan_memory(tiny_job({{"parallel.zero", "0"}}, 4));
        EXPECT_EQ(m.peak_phase, MemoryPhase::optimizer_step);
        EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
        EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 2 * 404096);
        EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 808192);
        EXPECT_DOUBLE_EQ(m.breakdown.temporary_bytes, 404096 + kHopperCublasBytes);
        EXPECT_DOUBLE_EQ(m.comm_buffer_bytes, kGenericNcclBytes);   // one communicator: data parallel
    }
    // ZeRO-1: states and the step's intermediate sharded: 808,192 / 4 = 202,048; 404,096 / 4 = 101,024.
    {
        const MemoryResult m = plan_memory(tiny_job({{"parallel.zero", "1"}}, 4));
        EXPECT_EQ(m.peak_phase, MemoryPhase::optimizer_step);
        EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
        EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 404096);
        EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 202048);
        EXPECT_DOUBLE_EQ(m.breakdown.temporary_bytes, 101024 + kHopperCublasBytes);
    }
    // ZeRO-2: gradients sharded too (101,024); the reduce bucket (10,000 elements x 2 B here) lives only
    // through backward. Step: 404,096 + 101,024 + 202,048 + 101,024 = 808,192 > backward 776,160.
    // (DeepSpeed's stage 2: whole parameters stay; the generic profile's FSDP SHARD_GRAD_OP is below.)
    {
        Job job = tiny_job({{"parallel.zero", "2"}}, 4);
        job.framework.zero2_shards_params = false;
        job.framework.zero_bucket_elements = 10000;
        const MemoryResult m = plan_memory(job);
        EXPECT_EQ(m.peak_phase, MemoryPhase::optimizer_step);
        EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
        EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 101024);
        EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 202048);
    }
    // ZeRO-3: parameters sharded (101,024) + two gathered blocks in bf16 (FSDP prefetch: 2 x 36,992 x 2 =
    // 147,968) + the head's weight, gathered while the logits and the loss form (64,000 x 2 = 128,000) = 376,992.
    // Peak at the loss: no gradient formed yet (one micro-batch); states 202,048; activations of both blocks
    // (2,584 B/token pure bf16 x 8 = 20,672 each) + head input (516 x 8 = 4,128) = 45,472; logits 64,000.
    {
        const MemoryResult m = plan_memory(tiny_job({{"parallel.zero", "3"}}, 4));
        EXPECT_EQ(m.peak_phase, MemoryPhase::loss);
        EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 376992);
        EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 0);
        EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 202048);
        EXPECT_DOUBLE_EQ(m.breakdown.activations_bytes, 45472);
        EXPECT_DOUBLE_EQ(m.breakdown.logits_bytes, 64000);
        EXPECT_DOUBLE_EQ(m.breakdown.temporary_bytes, kHopperCublasBytes);
        EXPECT_DOUBLE_EQ(m.params_per_gpu, kTinyParams / 4);
        EXPECT_DOUBLE_EQ(m.allocated_peak_bytes, 376992 + 202048 + 45472 + 64000 + kHopperCublasBytes);
        // In backward, at the bottom block, the head is released again: shards + prefetched blocks (248,992),
        // gradients 101,024 + one block's unsharded gradient 73,984 = 175,008.
        MemoryWalk walk;
        plan_memory(tiny_job({{"parallel.zero", "3"}}, 4), &walk);
        ASSERT_FALSE(walk.points.empty());
        const MemoryWalkPoint& bottom = walk.points[walk.points.size() - 2];
        ASSERT_EQ(bottom.phase, MemoryPhase::backward);
        EXPECT_DOUBLE_EQ(bottom.live.weights_bytes, 248992);
        EXPECT_DOUBLE_EQ(bottom.live.gradients_bytes, 175008);
    }
}

TEST(MemoryCanonical, DeepSpeedReuseDistanceKeepsTheLastBlocksGatheredAcrossTheTurn) {
    // stage3_max_reuse_distance: block k from the end stays gathered when 2 x head (64,000) + 2 x (k - 1) blocks
    // (36,992) + one block lie within it. 200,000 elements: the last block (164,992) but not the one below
    // (238,976); 300,000: both. Without prefetched blocks (zero3_live_layers 0), at the loss: shards 101,024 + the
    // head and the kept blocks in bf16.
    for (const auto& [reuse, kept] : {std::pair{200000.0, 1.0}, std::pair{300000.0, 2.0}}) {
        Job job = tiny_job({{"parallel.zero", "3"}}, 4);
        job.framework.zero3_live_layers = 0;
        job.framework.zero3_max_reuse_elements = reuse;
        const MemoryResult m = plan_memory(job);
        EXPECT_EQ(m.peak_phase, MemoryPhase::loss);
        EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 101024 + (64000 + kept * 36992) * 2);
    }
}

TEST(MemoryCanonical, FsdpShardGradOpKeepsTheStageGatheredUntilBackwardEnds) {
    // Generic zero 2 = FSDP SHARD_GRAD_OP over 4 GPUs, pure bf16: parameters sharded at rest (404,096 / 4 =
    // 101,024), every unit unsharded from its forward until after its backward (202,048 x 2 = 404,096): 505,120 in
    // backward. Gradients: the shard (101,024) + one unit's unsharded gradient being reduce-scattered (36,992 x 2 =
    // 73,984), not DeepSpeed's 5e8-element bucket. States 202,048. At the optimizer step only the shards remain.
    const MemoryResult m = plan_memory(tiny_job({{"parallel.zero", "2"}}, 4));
    EXPECT_EQ(m.peak_phase, MemoryPhase::backward);
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 505120);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 101024 + 73984);
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 202048);
    EXPECT_DOUBLE_EQ(m.params_per_gpu, kTinyParams / 4);
    // Under torch.amp (weights: mixed) FSDP's MixedPrecision gathers bf16 copies of fp32 shards: no autocast
    // casts; shards 202,048 x 4 / 4 = 202,048 + gathered 404,096.
    const MemoryResult amp = plan_memory(tiny_job({{"parallel.zero", "2"}, {"train.weights", "mixed"}}, 4));
    EXPECT_DOUBLE_EQ(amp.breakdown.weights_bytes, 202048 + 404096);
}

TEST(MemoryCanonical, LoraTrainableCountsAreRankTimesInPlusOut) {
    // r x (in + out) per targeted linear, per block:
    //   q 8*(64+64) = 1,024  k 8*(64+32) = 768  v 768  o 1,024  gate/up/down 8*(64+128) = 1,536 each
    //   all-linear: 8,192 per block -> 16,384; q_proj + v_proj: 1,792 per block -> 3,584
    const MemoryResult all = plan_memory(tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"},
                                                   {"train.lora.targets", "all-linear"}}));
    EXPECT_DOUBLE_EQ(all.trainable_params, 16384);
    EXPECT_DOUBLE_EQ(all.total_params, kTinyParams);
    const MemoryResult qv = plan_memory(tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"},
                                                  {"train.lora.targets", "[q_proj, v_proj]"}}));
    EXPECT_DOUBLE_EQ(qv.trainable_params, 3584);
    // lm_head as a target adds 8 x (64 + 1000) = 8,512.
    const MemoryResult head = plan_memory(tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"},
                                                    {"train.lora.targets", "[q_proj, v_proj, lm_head]"}}));
    EXPECT_DOUBLE_EQ(head.trainable_params, 3584 + 8512);
}

TEST(MemoryCanonical, LoraMixedKeepsFrozenBaseInBf16) {
    // LoRA rank 8 all-linear under torch.amp: frozen base in bf16, fp32 adapters.
    //   weights 202,048 x 2 + 16,384 x 4 = 469,632; gradients 16,384 x 4 = 65,536; AdamW 16,384 x 8 = 131,072
    // Two micro-batches per step keep the gradients alive in every phase, so these hold wherever the peak is.
    const MemoryResult m = plan_memory(tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"},
                                                 {"train.weights", "mixed"}, {"train.global_batch", "2"}}));
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 469632);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 65536);
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 131072);
}

TEST(MemoryCanonical, DeepSpeedContiguousGradientBucketIsAllocatedWhole) {
    // DeepSpeed (zero_contiguous_gradients): ZeRO-3 allocates one flat bucket of reduce_bucket_size elements in the
    // parameters' dtype at init and keeps it (stage3.py __ipg_bucket_flat_buffer), in place of FSDP's one unsharded
    // block gradient. Bucket 10,000 elements x 2 B = 20,000. At the backward peak: sharded gradients 404,096 / 4 =
    // 101,024 + 20,000 = 121,024 (FSDP-style it was 101,024 + 73,984). In forward, one micro-batch per step, nothing
    // else is a gradient yet: the bucket alone, 20,000.
    Job job = tiny_job({{"parallel.zero", "3"}}, 4);
    job.framework.zero_contiguous_gradients = true;
    job.framework.zero_bucket_elements = 10000;
    MemoryWalk walk;
    plan_memory(job, &walk);
    ASSERT_FALSE(walk.points.empty());
    double gradients_in_backward = 0;
    for (const auto& pt : walk.points)
        if (pt.phase == MemoryPhase::backward) gradients_in_backward = std::max(gradients_in_backward, pt.live.gradients_bytes);
    EXPECT_DOUBLE_EQ(gradients_in_backward, 121024);
    ASSERT_EQ(walk.points.front().phase, MemoryPhase::forward);
    EXPECT_DOUBLE_EQ(walk.points.front().live.gradients_bytes, 20000);
    // A LoRA run's few gradients do not shrink it: ZeRO-2 allocates the whole bucket at every backward
    // (stage_1_and_2.py backward); 100,000 elements x 2 B = 200,000 in backward, none in forward.
    Job lora = tiny_job({{"parallel.zero", "2"}, {"train.method", "lora"}, {"train.lora.rank", "8"}}, 4);
    lora.framework.zero_contiguous_gradients = true;
    lora.framework.zero_bucket_elements = 100000;
    MemoryWalk lora_walk;
    plan_memory(lora, &lora_walk);
    double backward_max = 0;
    for (const auto& pt : lora_walk.points) {
        if (pt.phase == MemoryPhase::forward) {
            EXPECT_DOUBLE_EQ(pt.live.gradients_bytes, 0);
        }
        if (pt.phase == MemoryPhase::backward) backward_max = std::max(backward_max, pt.live.gradients_bytes);
    }
    EXPECT_GE(backward_max, 200000);
    EXPECT_LT(backward_max, 200000 + 16384 * 2);   // + at most the adapters' own bf16 gradients
}

TEST(MemoryCanonical, LoraUnderAutocastKeepsTheStreamInTheComputeDtype) {
    // torch.amp over a frozen bf16 base (LoRA, weights: mixed): the bf16 embedding output and bf16 frozen norms
    // promote nothing, so the residual stream and the norms' output stay bf16; only the adapters are fp32. Full
    // recompute then keeps each block's input in bf16: 64 x 2 = 128 bytes per token (not 256, the fp32 stream of a
    // full fine-tune under amp, whose fp32 embedding promotes every residual add).
    const Job lora = tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"}, {"train.lora.dropout", "0.1"},
                               {"train.weights", "mixed"}});
    const TrainingSetup s = derive_setup(lora);
    ASSERT_TRUE(s.bytes.autocast);
    EXPECT_DOUBLE_EQ(s.bytes.residual, 2);
    EXPECT_DOUBLE_EQ(s.bytes.norm_out, 2);
    EXPECT_DOUBLE_EQ(s.trainable_storage_bytes, 4);
    const LayerSpec& l = lora.model.layers[0];
    const LayerActivation a = layer_activation(l, lora.model, lora, s, false, true, 8);
    EXPECT_DOUBLE_EQ(a.layer_input_per_token, 128);
    // Each adapter keeps its dropout mask (1 B) and the bf16 cast of its dropped input that lora_A saves (2 B), and
    // lora_B keeps lora_A's bf16 output (2 x 8): q, k, v 3 x (3 x 64 + 16) = 624, o 3 x 64 + 16 = 208, gate and up
    // 2 x 208 = 416, down 3 x 128 + 16 = 400 -> 1,648 per token.
    EXPECT_DOUBLE_EQ(a.per_token.projections_in, 1648);
    const Job full = tiny_job({{"train.weights", "mixed"}});
    const TrainingSetup f = derive_setup(full);
    EXPECT_DOUBLE_EQ(f.bytes.residual, 4);
    EXPECT_DOUBLE_EQ(f.bytes.norm_out, 4);
    EXPECT_DOUBLE_EQ(layer_activation(l, full.model, full, f, true, true, 8).layer_input_per_token, 256);
}

TEST(MemoryCanonical, DeepSpeed08Zero3FrozenLinearsKeepTheirInputs) {
    // DeepSpeed before 0.9 leaves F.linear replaced by LinearFunctionForZeroStage3 after zero.Init, and its forward
    // saves the input whatever needs a gradient (zero/linear.py), so under ZeRO-3 the frozen base linears of a LoRA
    // block keep their inputs too. fp32, adapters on q and v with dropout: the q/k/v input (the norm's output, 64 x 4
    // = 256; the adapters keep only their dropped copies), o's (64 x 4), gate/up's shared input (64 x 4) and down's
    // (128 x 4) -> 256 + 256 + 256 + 512 = 1,280 bytes per token more.
    const std::vector<std::pair<std::string, std::string>> sets = {
        {"train.method", "lora"}, {"train.lora.rank", "8"}, {"train.lora.targets", "[q_proj, v_proj]"},
        {"train.lora.dropout", "0.1"}, {"train.precision", "fp32"}, {"train.weights", "pure"}, {"parallel.zero", "3"}};
    const Job stock = tiny_job(sets);
    Job patched = stock;
    patched.framework.zero3_linear_saves_input = true;
    const LayerSpec& l = stock.model.layers[0];
    auto projections = [&](const Job& job) {
        return layer_activation(l, job.model, job, derive_setup(job), false, true, 8).per_token.projections_in;
    };
    EXPECT_DOUBLE_EQ(projections(patched) - projections(stock), 1280);
    // Without dropout the adapters read the q/k/v input itself, which the base linear now keeps as well: 1,024.
    Job stock_nodrop = stock, patched_nodrop = patched;
    stock_nodrop.spec.train.lora.dropout = patched_nodrop.spec.train.lora.dropout = 0;
    EXPECT_DOUBLE_EQ(projections(patched_nodrop) - projections(stock_nodrop), 1024);
    // Without ZeRO-3 no zero.Init runs and F.linear is the stock one.
    Job zero2 = patched;
    zero2.spec.parallel.zero = 2;
    Job zero2_stock = stock;
    zero2_stock.spec.parallel.zero = 2;
    EXPECT_DOUBLE_EQ(projections(zero2), projections(zero2_stock));
}

TEST(MemoryCanonical, QloraNf4BytesPerWeight) {
    // NF4 with double quantisation: 0.5 + 1/64 (8-bit absmax per 64 weights) + 4/(64*256) (fp32 per 256
    // absmax blocks) = 0.515869140625 B per weight; without double quantisation 0.5 + 4/64 = 0.5625.
    // The quantised weights are the block matrices: 2 x 36,864 = 73,728 ->
    //   double quant 73,728 x 0.515869140625 = 38,034 (36,864 + 1,152 + 18); plain 41,472; 8-bit 73,728.
    // Nothing else changes between the three, so the peak's weights differ by exactly those amounts.
    // Two micro-batches per step: gradients live in every phase.
    auto weights_with = [](const std::string& bits, const std::string& dq) {
        return plan_memory(tiny_job({{"train.method", "qlora"}, {"train.lora.rank", "8"}, {"train.weights", "mixed"},
                                     {"train.qlora.bits", bits}, {"train.qlora.double_quant", dq},
                                     {"train.global_batch", "2"}}));
    };
    const MemoryResult nf4_dq = weights_with("4", "true");
    const MemoryResult nf4 = weights_with("4", "false");
    const MemoryResult int8 = weights_with("8", "true");
    ASSERT_EQ(nf4_dq.peak_phase, nf4.peak_phase);
    ASSERT_EQ(nf4_dq.peak_phase, int8.peak_phase);
    EXPECT_DOUBLE_EQ(nf4.breakdown.weights_bytes - nf4_dq.breakdown.weights_bytes, 41472 - 38034);
    EXPECT_DOUBLE_EQ(int8.breakdown.weights_bytes - nf4_dq.breakdown.weights_bytes, 73728 - 38034);
    // Adapters train exactly as in LoRA: 16,384 fp32 gradients and 8-byte AdamW states.
    EXPECT_DOUBLE_EQ(nf4_dq.trainable_params, 16384);
    EXPECT_DOUBLE_EQ(nf4_dq.breakdown.gradients_bytes, 65536);
    EXPECT_DOUBLE_EQ(nf4_dq.breakdown.optimizer_bytes, 131072);
    // Stored weights: adapters 65,536 + 16-bit embedding, head and norms (64,000 + 64,000 + 2 x 128 + 64 =
    // 128,320 params x 2 = 256,640) + NF4 38,034 = 360,210; a dequantisation buffer may come on top.
    EXPECT_GE(nf4_dq.breakdown.weights_bytes, 360210);
}

TEST(MemoryCanonical, QloraDequantBufferIsTheLargestQuantisedMatrix) {
    // bitsandbytes dequantises one 4-bit weight at a time into the compute dtype (F.dequantize_4bit in
    // MatMul4Bit): the buffer is the largest *quantised* matrix, here gate/up/down 64 x 128 -> 16,384 bytes.
    // The head stays in 16-bit (generic/hf: qlora_quantizes_lm_head false) and is never dequantised, so its
    // 1000 x 64 matrix must not size the buffer. Weights at a forward/backward peak: 360,210 + 16,384 = 376,594.
    const MemoryResult m = plan_memory(tiny_job({{"train.method", "qlora"}, {"train.lora.rank", "8"},
                                                 {"train.weights", "mixed"}, {"train.global_batch", "2"}}));
    ASSERT_NE(m.peak_phase, MemoryPhase::optimizer_step);   // the buffer exists only around matmuls
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 376594) << "dequantisation buffer sized by a matrix that is not quantised";
}

TEST(MemoryCanonical, EightBitAdam) {
    // bitsandbytes blockwise 8-bit Adam: two uint8 states + one fp32 absmax per 2,048-element block per state:
    // 2 + 8/2048 = 2.00390625 B/param -> 202,048 x 2.00390625 = 404,885.25 (pure bf16, full fine-tune).
    const MemoryResult m = plan_memory(tiny_job({{"train.optimizer", "adamw_8bit"}}));
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 404885.25);
    EXPECT_DOUBLE_EQ(m.breakdown.weights_bytes, 404096);
    EXPECT_DOUBLE_EQ(m.breakdown.gradients_bytes, 404096);
}

TEST(MemoryCanonical, PagedEightBitAdamIsShownApartFromDeviceMemory) {
    // Paged optimizers live in CUDA unified memory, outside the caching allocator; the driver evicts them to
    // host RAM under pressure, so they never cause an OOM: the 404,885.25 bytes are shown apart (paged_bytes)
    // and count neither in allocated nor in device used.
    const MemoryResult paged = plan_memory(tiny_job({{"train.optimizer", "paged_adamw_8bit"}}));
    const MemoryResult plain = plan_memory(tiny_job({{"train.optimizer", "adamw_8bit"}}));
    EXPECT_DOUBLE_EQ(paged.breakdown.optimizer_bytes, 0);
    EXPECT_DOUBLE_EQ(paged.allocated_peak_bytes, plain.allocated_peak_bytes - 404885.25);
    EXPECT_DOUBLE_EQ(paged.paged_bytes, 404885.25);
    EXPECT_DOUBLE_EQ(paged.device_used_bytes - paged.reserved_peak_bytes - paged.cuda_context_bytes, 0);
}

TEST(MemoryCanonical, OptimizerOffloadMovesStateToHost) {
    // ZeRO-Offload under torch.amp: fp32 master (here the fp32 parameter itself: +4), m + v (8) and fp32
    // gradients (4) in host RAM: 202,048 x 16 = 3,232,768 bytes for the one GPU of the node.
    const MemoryResult m = plan_memory(tiny_job({{"train.weights", "mixed"}, {"offload.optimizer", "cpu"}}));
    EXPECT_DOUBLE_EQ(m.breakdown.optimizer_bytes, 0);
    EXPECT_DOUBLE_EQ(m.host_bytes, 3232768);
    // Four GPUs on the node with ZeRO-1: each holds a quarter, the node holds the whole state once.
    const MemoryResult four = plan_memory(tiny_job({{"train.weights", "mixed"}, {"offload.optimizer", "cpu"},
                                                    {"parallel.zero", "1"}}, 4));
    EXPECT_DOUBLE_EQ(four.host_bytes, 3232768);
    EXPECT_DOUBLE_EQ(four.breakdown.optimizer_bytes, 0);
}

TEST(MemoryCanonical, AllocatorContextAndCommunicatorOverheads) {
    // tp 2 x dp 4 on 8 GPUs: two communicators (tensor, data) x 288 MiB. reserved rounds allocated x 1.05 up
    // to 2 MiB; device_used = reserved + context + communicators.
    for (const auto& sets : std::vector<std::vector<std::pair<std::string, std::string>>>{
             {{"parallel.tp", "2"}}, {{"parallel.tp", "2"}, {"parallel.zero", "3"}}, {{"parallel.zero", "1"}}}) {
        const Job job = tiny_job(sets, 8);
        const MemoryResult m = plan_memory(job);
        const int communicators = (job.spec.parallel.tp > 1) + (job.spec.parallel.dp > 1);
        EXPECT_DOUBLE_EQ(m.comm_buffer_bytes, communicators * kGenericNcclBytes);
        EXPECT_DOUBLE_EQ(m.reserved_peak_bytes, reserved_for(m.allocated_peak_bytes, 0.05));
        EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, 0.05 * m.allocated_peak_bytes);
        EXPECT_DOUBLE_EQ(m.device_used_bytes, m.reserved_peak_bytes + kH100ContextBytes + m.comm_buffer_bytes);
        EXPECT_DOUBLE_EQ(m.breakdown.overhead_bytes, m.device_used_bytes - m.allocated_peak_bytes);
        EXPECT_NEAR(m.allocated_peak_bytes, m.breakdown.allocated(), 1e-6);
    }
    // tp 2 halves every block matrix and the vocabulary-sized embedding and head (norms replicated): pure bf16
    // weights of one GPU = (2 x (36,864/2 + 128) + 64,000/2 + 64,000/2 + 64) = 101,184 params x 2 = 202,368 bytes.
    const MemoryResult tp2 = plan_memory(tiny_job({{"parallel.tp", "2"}}, 2));
    EXPECT_DOUBLE_EQ(tp2.breakdown.weights_bytes, 202368);
}

TEST(MemoryCanonical, FreezeTrainsTheTopBlocksAndHead) {
    // freeze.trainable_layers 1: the top block (36,992), the final norm (64) and the head (64,000) train.
    const MemoryResult m = plan_memory(tiny_job({{"train.method", "freeze"}, {"train.freeze.trainable_layers", "1"}}));
    EXPECT_DOUBLE_EQ(m.trainable_params, 36992 + 64 + 64000);
}


// The most weight bytes any point of the loss phase holds (the head's gather and the logits' points).
double loss_phase_weight_bytes(const Job& job) {
    MemoryWalk walk;
    plan_memory(job, &walk);
    double most = 0;
    for (const auto& pt : walk.points)
        if (pt.phase == MemoryPhase::loss) most = std::max(most, pt.live.weights_bytes);
    return most;
}

TEST(MemoryCanonical, DeepSpeedOffloadStagesTheHeadPartitionWhileGathering) {
    // ZeRO-3 with parameters on the host: gathering the head allocates its full buffer and copies this rank's host
    // partition to the device beside it (partition_parameters.py all_gather_coalesced). The tiny head is 64,000
    // weights in bf16 = 128,000 bytes. On 4 GPUs the staged share is 128,000 / 4 = 32,000 (every DeepSpeed).
    const std::vector<std::pair<std::string, std::string>> offload = {
        {"parallel.zero", "3"}, {"offload.params", "cpu"}, {"offload.optimizer", "cpu"}};
    Job four = tiny_job(offload, 4), four_staged = four;
    four_staged.framework.zero3_offload_stages_partition = true;
    EXPECT_DOUBLE_EQ(loss_phase_weight_bytes(four_staged) - loss_phase_weight_bytes(four), 32000);
    // On one GPU DeepSpeed 0.9.0 and later only move the partition (_no_gather_coalesced): nothing more; before
    // 0.9.0 (deepspeed-0.8: zero3_single_rank_gathers) the whole weight is staged beside the buffer: 128,000.
    Job one = tiny_job(offload, 1), one_staged = one;
    one_staged.framework.zero3_offload_stages_partition = true;
    EXPECT_DOUBLE_EQ(loss_phase_weight_bytes(one_staged), loss_phase_weight_bytes(one));
    one_staged.framework.zero3_single_rank_gathers = true;
    EXPECT_DOUBLE_EQ(loss_phase_weight_bytes(one_staged) - loss_phase_weight_bytes(one), 128000);
    // Parameters kept on the device: `.to(device)` of a device partition copies nothing.
    Job resident = tiny_job({{"parallel.zero", "3"}}, 1), resident_staged = resident;
    resident_staged.framework.zero3_offload_stages_partition = true;
    resident_staged.framework.zero3_single_rank_gathers = true;
    EXPECT_DOUBLE_EQ(loss_phase_weight_bytes(resident_staged), loss_phase_weight_bytes(resident));
}

TEST(MemoryCanonical, DeepSpeedProfilesSayWhetherOneRankGathers) {
    // data/frameworks/deepspeed.yaml: current DeepSpeed stages offloaded partitions, and skips the gather on one
    // rank; deepspeed-0.8.yaml (base: deepspeed) gathers on one rank too.
    const FrameworkProfile now = load_framework("deepspeed", "test", "train.framework");
    EXPECT_TRUE(now.zero3_offload_stages_partition);
    EXPECT_FALSE(now.zero3_single_rank_gathers);
    const FrameworkProfile old = load_framework("deepspeed-0.8", "test", "train.framework");
    EXPECT_TRUE(old.zero3_offload_stages_partition);
    EXPECT_TRUE(old.zero3_single_rank_gathers);
    EXPECT_FALSE(now.zero3_linear_saves_input);
    EXPECT_TRUE(old.zero3_linear_saves_input);
    EXPECT_DOUBLE_EQ(old.zero_bucket_elements, now.zero_bucket_elements);
}

}  // namespace
}  // namespace ftb
