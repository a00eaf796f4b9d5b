// OFT (orthogonal fine-tuning, method oft / qoft) against hand computations from PEFT's source (v0.18.1, the version
// LLaMA-Factory ff6d4d12 pins: peft>=0.18.0,<=0.18.1): each adapted linear of in_features inputs gets r = in / b
// rotation blocks of b x b, each stored as the strict upper triangle of a skew-symmetric matrix (OFTLayer.update_layer:
// n_elements = b (b - 1) / 2; OFTRotationModule.weight has shape (r, n_elements)). The tiny Llama of
// plan_test_util.hpp: hidden 64, FFN 128, q 64 wide, k/v 32 wide, 2 blocks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "memory/activations.hpp"
#include "memory/stage_activations.hpp"
#include "plan_test_util.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

using namespace plan_test;

TEST(Oft, ParametersOfOneLinearArePeftsUpperTriangles) {
    // A 4096-wide linear with oft_block_size 32: 4096 / 32 = 128 blocks of 32 * 31 / 2 = 496 parameters.
    EXPECT_EQ(oft_params_per_linear(4096, 32), 128 * 496);
    // Llama-3-8B's down_proj (in 14,336): 448 blocks of 496.
    EXPECT_EQ(oft_params_per_linear(14336, 32), 448 * 496);
    // By rank: r = 8 blocks of a 4096-wide input are 512 wide: 8 * 512 * 511 / 2.
    OftConfig by_rank;
    by_rank.block_size = 0, by_rank.rank = 8;
    EXPECT_EQ(oft_block_size_for(by_rank, 4096), 512);
    EXPECT_EQ(oft_params_per_linear(4096, oft_block_size_for(by_rank, 4096)), 8 * 130816);
}

// All seven linears of both blocks, block size 8. q, k, v, o, gate, up read 64 inputs (8 blocks of 28 parameters:
// 224 each), down 128 (16 blocks: 448): 6 * 224 + 448 = 1,792 per block, 3,584 in the model. LoRA rank 8 on the same
// linears adds 8 * (in + out): q 1,024, k 768, v 768, o 1,024, gate/up/down 1,536 each = 8,192 per block.
TEST(Oft, TrainableParametersOfTheTinyModel) {
    const Job oft = tiny_job({{"train.method", "oft"}, {"train.oft", "{block_size: 8}"}});
    EXPECT_EQ(oft.spec.train.method, Method::oft);
    EXPECT_EQ(plan_memory(oft).trainable_params, 2 * 1792);
    const Job lora = tiny_job({{"train.method", "lora"}, {"train.lora", "{rank: 8}"}});
    EXPECT_EQ(plan_memory(lora).trainable_params, 2 * 8192);
    // Only q and v adapted: 2 * 224 per block.
    const Job qv = tiny_job({{"train.method", "oft"}, {"train.oft", "{block_size: 8, targets: [q_proj, v_proj]}"}});
    EXPECT_EQ(plan_memory(qv).trainable_params, 2 * 2 * 224);
}

// Saved tensors per token of one block, pure bf16 (no autocast, 2-byte activations), frozen base:
//   OFT: every rotation keeps its own copy of its input (einsum's reshape of x, kept by the bmm): q, k, v, o, gate, up
//        64 * 2 B each, down 128 * 2 B: 6 * 128 + 256 = 1,024 B.
//   LoRA rank 8, no dropout: adapters on one input share it and each keeps lora_A's output (8 * 2 B): q/k/v 128 + 48,
//        o 128 + 16, gate/up 128 + 32, down 256 + 16 = 752 B.
// OFT's Cayley-Neumann terms add, per block and whatever the tokens, Q, Q^2, Q^3 and R: 4 tensors of in x b elements
// per adapted linear: (6 * 64 + 128) * 8 * 4 * 2 B = 32,768 B.
TEST(Oft, SavedTensorsAgainstLora) {
    const Job oft = tiny_job({{"train.method", "oft"}, {"train.oft", "{block_size: 8}"}});
    const Job lora = tiny_job({{"train.method", "lora"}, {"train.lora", "{rank: 8}"}});
    const TrainingSetup so = derive_setup(oft), sl = derive_setup(lora);
    ASSERT_FALSE(so.bytes.autocast);
    const LayerSpec& l = oft.model.layers[0];
    const LayerActivation ao = layer_activation(l, oft.model, oft, so, false, true, oft.spec.train.seq_len);
    const LayerActivation al = layer_activation(l, lora.model, lora, sl, false, true, lora.spec.train.seq_len);
    EXPECT_DOUBLE_EQ(ao.per_token.projections_in, 1024);
    EXPECT_DOUBLE_EQ(al.per_token.projections_in, 752);
    EXPECT_DOUBLE_EQ(ao.per_block_bytes, 32768);
    EXPECT_DOUBLE_EQ(al.per_block_bytes, 0);
    // Everything else a block keeps is the same; the walk's block is the per-token total over the 8 tokens plus
    // the per-block term.
    EXPECT_DOUBLE_EQ(ao.per_token.total() - al.per_token.total(), 1024 - 752);
    const double block = stage_activations(oft, so, stage_split(2, 1, 0), 0).per_block.at(0);
    EXPECT_DOUBLE_EQ(block, ao.per_token.total() * 8 + 32768);
}

// Under autocast with fp32 adapters (weights: mixed), each bmm casts its fp32 operands: 7 saved tensors of in x b
// bf16 elements per adapted linear instead of 4.
TEST(Oft, AutocastKeepsTheCastsOfTheBlocks) {
    const Job oft = tiny_job({{"train.method", "oft"}, {"train.oft", "{block_size: 8}"}, {"train.weights", "mixed"}});
    const TrainingSetup s = derive_setup(oft);
    ASSERT_TRUE(s.bytes.autocast);
    ASSERT_GE(s.trainable_storage_bytes, 4);
    const LayerActivation a = layer_activation(oft.model.layers[0], oft.model, oft, s, false, true, 8);
    EXPECT_DOUBLE_EQ(a.per_block_bytes, (6 * 64 + 128) * 8 * 7 * 2);
}

// The step's kernels (8 tokens, both blocks): LoRA rank 8 runs six GEMMs per linear, 6 * T * r * (in + out) =
// 384 * 1,024 = 393,216 FLOPs per block. OFT with b = 8 runs, per rotation block (64 per model block: 6 * 8 + 16),
// three b x b x b bmm of the Cayley-Neumann terms forward and six backward, 9 * 2 * 512 = 9,216, and the rotation
// forward, its input gradient and R's gradient, 3 * 2 * T * b * b = 3,072: 12,288 per rotation block, 786,432 per
// model block. Model FLOPs count the rotation per token (in x b weights:
// 4,096 per block against LoRA's 8 * 1,024 = 8,192), forward, input and weight gradient: 6 x.
TEST(Oft, StepCountsTheRotation) {
    const Job oft = tiny_job({{"train.method", "oft"}, {"train.oft", "{block_size: 8}"}});
    const Job lora = tiny_job({{"train.method", "lora"}, {"train.lora", "{rank: 8}"}});
    const TimeResult to = plan_time(oft, plan_memory(oft)), tl = plan_time(lora, plan_memory(lora));
    EXPECT_DOUBLE_EQ(to.hardware_flops_per_step - tl.hardware_flops_per_step, 2 * (786432.0 - 393216.0));
    EXPECT_DOUBLE_EQ(to.model_flops_per_step - tl.model_flops_per_step, 2 * 8 * 6 * (4096.0 - 8192.0));
}

InputError oft_error(const std::vector<std::pair<std::string, std::string>>& sets) {
    try {
        tiny_job(sets);
    } catch (const InputError& e) {
        return e;
    }
    ADD_FAILURE() << "no error";
    return InputError("", "", "");
}

TEST(Oft, BadBlockSizeNamesTheField) {
    // 48 does not divide the 64-wide inputs; PEFT would move it to the nearer divisor, 32 (16 below, 16 above: the
    // lower on a tie).
    InputError e = oft_error({{"train.method", "oft"}, {"train.oft", "{block_size: 48}"}});
    EXPECT_EQ(e.field(), "train.oft.block_size");
    EXPECT_NE(e.reason().find("does not divide"), std::string::npos) << e.reason();
    EXPECT_NE(e.reason().find("to 32"), std::string::npos) << e.reason();
    e = oft_error({{"train.method", "oft"}, {"train.oft", "{block_size: 0}"}});
    EXPECT_EQ(e.field(), "train.oft.block_size");
    e = oft_error({{"train.method", "oft"}, {"train.oft", "{block_size: -4}"}});
    EXPECT_EQ(e.field(), "train.oft.block_size");
    e = oft_error({{"train.method", "oft"}, {"train.oft", "{block_size: 8, rank: 4}"}});
    EXPECT_EQ(e.field(), "train.oft.rank");
    // A rank of 3 divides neither 64 nor 128.
    e = oft_error({{"train.method", "oft"}, {"train.oft", "{rank: 3}"}});
    EXPECT_EQ(e.field(), "train.oft.rank");
    e = oft_error({{"train.method", "lora"}, {"train.oft", "{block_size: 8}"}});
    EXPECT_EQ(e.field(), "train.oft");
}

// LLaMA-Factory's OFT examples: finetuning_type oft -> method oft, oft_block_size -> train.oft.block_size, the
// targets from lora_target (default all: adapter.py builds OFT's target_modules from it). The GPTQ and AWQ bases
// plan as qoft (their quantization_config).
TEST(Oft, LlamaFactoryImport) {
    const std::string corpus = std::string(ftb_test::test_data()) + "/import/corpus/llama_factory/";
    spec_test::CliResult r = spec_test::run_ftbound({"import", corpus + "extras__qoft__llama3_oft_sft_gptq.yaml", "--json"});
    ASSERT_EQ(r.exit_code, 0) << spec_test::describe(r);
    const nlohmann::json t = nlohmann::json::parse(r.out)["train"];
    EXPECT_EQ(t["method"], "oft");
    EXPECT_EQ(t["oft"]["block_size"], 32);
    EXPECT_EQ(t["oft"]["targets"], "all-linear");
    EXPECT_FALSE(t.contains("lora"));
    r = spec_test::run_ftbound({"plan", "--from", corpus + "extras__qoft__llama3_oft_sft_gptq.yaml"});
    ASSERT_EQ(r.exit_code, 0) << spec_test::describe(r);
    EXPECT_NE(r.out.find("method  qoft /"), std::string::npos) << r.out.substr(0, 600);
    // oft_rank beside the default oft_block_size: PEFT's OFTConfig raises; so does the import, naming the field.
    const std::string both = spec_test::write_scratch(
        "oft_both.yaml", "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: oft\n"
                         "oft_rank: 8\ncutoff_len: 1024\nper_device_train_batch_size: 1\nbf16: true\n");
    r = spec_test::run_ftbound({"import", both});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("oft_rank: 8 with oft_block_size 32 (the default)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ftb
