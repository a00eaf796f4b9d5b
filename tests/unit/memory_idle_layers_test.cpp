// Modules the model holds but its forward never runs (ModelSpec::idle_layers: MiMo's multi-token-prediction layer).
// The tiny inline model of plan_test_util.hpp as qwen2 (q/k/v biases) against the same shapes as mimo with one MTP
// layer: a qwen2 block (attention 12,288 + biases 128, MLP 24,576, 2 RMSNorms 128) + input_proj 2*64 x 64 = 8,192 +
// token/hidden/final RMSNorms 192 = 45,504 parameters, of which 45,184 are linear weights and 320 norm weights. The
// MTP layer changes what is stored, never the activations, the gradients of what runs or the step's FLOPs. Every
// difference is worked out by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

constexpr double kMtpLinears = 12288 + 128 + 24576 + 8192;   // 45,184
constexpr double kMtpNorms = 128 + 192;                       // 320

Job tiny(const std::string& model_type, std::vector<std::pair<std::string, std::string>> sets, int gpus = 1) {
    sets.insert(sets.begin(), {"model.model_type", model_type});
    if (model_type == "mimo") sets.insert(sets.begin() + 1, {"model.num_nextn_predict_layers", "1"});
    return tiny_job(sets, gpus);
}

const MemoryWalkPoint& loss_point(const MemoryWalk& w) {
    for (const MemoryWalkPoint& p : w.points)
        if (p.phase == MemoryPhase::loss) return p;
    ADD_FAILURE() << "no loss point";
    return w.points.front();
}

struct Both {
    MemoryResult qwen2, mimo;
    MemoryBreakdown qwen2_loss, mimo_loss;
};

Both plan_both(const std::vector<std::pair<std::string, std::string>>& sets, int gpus = 1) {
    Both b;
    MemoryWalk w1, w2;
    b.qwen2 = plan_memory(tiny("qwen2", sets, gpus), &w1);
    b.mimo = plan_memory(tiny("mimo", sets, gpus), &w2);
    b.qwen2_loss = loss_point(w1).live;
    b.mimo_loss = loss_point(w2).live;
    return b;
}

// QLoRA under the Hugging Face profile (bitsandbytes NF4 without double quantisation, 0.5 + 4/64 = 0.5625 B a
// weight; PEFT's kbit preparation keeps the unquantised weights in fp32), rank 8 on every linear: the MTP layer's
// linears are quantised, its norms stored in fp32, and PEFT's all-linear adapts its block's linears (q 8*128 + k/v
// 2*8*96 + o 8*128 + gate/up/down 3*8*192 = 8,192) and input_proj (8*(128 + 64) = 1,536), fp32 adapters that never
// receive a gradient: 9,728 x 4 B. No gradient, optimizer state or activation changes.
TEST(MemoryIdleLayers, QloraQuantisesTheMtpLayerAndHoldsItsAdaptersWithoutGradients) {
    const Both b = plan_both({{"train.framework", "hf"}, {"train.method", "qlora"}, {"train.lora.rank", "8"},
                              {"train.qlora.double_quant", "false"}, {"train.weights", "mixed"},
                              {"train.activation_checkpointing", "full"}});
    const double added = kMtpLinears * 0.5625 + kMtpNorms * 4 + 9728 * 4;
    EXPECT_DOUBLE_EQ(b.mimo_loss.weights_bytes - b.qwen2_loss.weights_bytes, added);
    EXPECT_DOUBLE_EQ(b.mimo_loss.activations_bytes, b.qwen2_loss.activations_bytes);
    EXPECT_DOUBLE_EQ(b.mimo_loss.gradients_bytes, b.qwen2_loss.gradients_bytes);
    EXPECT_DOUBLE_EQ(b.mimo_loss.optimizer_bytes, b.qwen2_loss.optimizer_bytes);
    EXPECT_DOUBLE_EQ(b.mimo.trainable_params, b.qwen2.trainable_params);
    EXPECT_DOUBLE_EQ(b.mimo.total_params - b.qwen2.total_params, kMtpLinears + kMtpNorms);
}

// QOFT (OFT on the same bitsandbytes base), block size 32 on the default targets (the block's seven linears; they do
// not name input_proj): the MTP layer's linears are quantised as under QLoRA, and each adapted linear holds in / 32
// rotation blocks of 32 * 31 / 2 = 496 parameters (15.5 an input): q, k, v, gate, up 5 * 64 + o 128 + down 192 = 640
// inputs, 9,920 fp32 parameters that never receive a gradient, x 4 B.
TEST(MemoryIdleLayers, QoftQuantisesTheMtpLayerAndHoldsItsRotations) {
    const Both b = plan_both({{"train.framework", "hf"}, {"train.method", "qoft"}, {"train.oft.block_size", "32"},
                              {"train.qlora.double_quant", "false"}, {"train.weights", "mixed"},
                              {"train.activation_checkpointing", "full"}});
    EXPECT_DOUBLE_EQ(b.mimo_loss.weights_bytes - b.qwen2_loss.weights_bytes,
                     kMtpLinears * 0.5625 + kMtpNorms * 4 + 9920 * 4);
    EXPECT_DOUBLE_EQ(b.mimo.trainable_params, b.qwen2.trainable_params);
}

// An adapter target list that names the block linears alone leaves input_proj without one: 8,192 x 4 B.
TEST(MemoryIdleLayers, NamedTargetsAdaptOnlyTheLinearsTheyName) {
    const Both b = plan_both({{"train.framework", "hf"}, {"train.method", "qlora"}, {"train.lora.rank", "8"},
                              {"train.qlora.double_quant", "false"}, {"train.weights", "mixed"},
                              {"train.lora.targets", "[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]"},
                              {"train.activation_checkpointing", "full"}});
    EXPECT_DOUBLE_EQ(b.mimo_loss.weights_bytes - b.qwen2_loss.weights_bytes,
                     kMtpLinears * 0.5625 + kMtpNorms * 4 + 8192 * 4);
}

// Full fine-tuning without ZeRO (pure bf16, AdamW): torch.optim skips a parameter whose gradient stays None, so the
// MTP layer costs its bf16 weights alone, 45,504 x 2 B.
TEST(MemoryIdleLayers, FullFineTuningWithoutZeroStoresTheMtpLayerWithoutGradientOrState) {
    const Both b = plan_both({});
    EXPECT_DOUBLE_EQ(b.mimo_loss.weights_bytes - b.qwen2_loss.weights_bytes, (kMtpLinears + kMtpNorms) * 2);
    EXPECT_DOUBLE_EQ(b.mimo_loss.activations_bytes, b.qwen2_loss.activations_bytes);
    EXPECT_DOUBLE_EQ(b.mimo.trainable_params, b.qwen2.trainable_params);
    const TimeResult t1 = plan_time(tiny("qwen2", {}), b.qwen2);
    const TimeResult t2 = plan_time(tiny("mimo", {}), b.mimo);
    EXPECT_DOUBLE_EQ(t2.model_flops_per_step, t1.model_flops_per_step);
    EXPECT_DOUBLE_EQ(t2.hardware_flops_per_step, t1.hardware_flops_per_step);
}

// ZeRO flattens every parameter that requires a gradient into the partitions it gives gradients and optimizer
// state: the MTP layer trains as far as memory is concerned.
TEST(MemoryIdleLayers, ZeroCountsTheMtpLayerAmongTheTrainableParameters) {
    const Both b = plan_both({{"parallel.zero", "1"}}, 2);
    EXPECT_DOUBLE_EQ(b.mimo.trainable_params - b.qwen2.trainable_params, kMtpLinears + kMtpNorms);
}

}  // namespace
}  // namespace ftb
