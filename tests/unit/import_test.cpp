// `ftbound import` and `plan --from` on configs in each tool's real format (tests/data/import/, each naming the
// published example whose keys it uses): the fields land where docs/import.md says, assumptions and unused
// fields are reported on stderr, and every imported job plans.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spec_test_util.hpp"
#include "test_paths.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

std::string fixture(const std::string& name) { return std::string(ftb_test::test_data()) + "/import/" + name; }

struct Imported {
    nlohmann::json job;
    std::string err;
};

Imported import_json(std::vector<std::string> args) {
    args.insert(args.begin(), "import");
    args.push_back("--json");
    spec_test::CliResult r = run_ftbound(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    if (r.exit_code != 0) return {};
    return {nlohmann::json::parse(r.out), r.err};
}

// The YAML form plans as a job file, and plan --from plans the config directly.
void expect_plans(const std::vector<std::string>& import_args) {
    std::vector<std::string> args = {"import"};
    args.insert(args.end(), import_args.begin(), import_args.end());
    spec_test::CliResult yaml = run_ftbound(args);
    ASSERT_EQ(yaml.exit_code, 0) << describe(yaml);
    const std::string job = spec_test::write_scratch("imported_" + std::to_string(std::hash<std::string>{}(import_args[0])) + ".yaml", yaml.out);
    spec_test::CliResult plan = run_ftbound({"plan", job, "--json"});
    ASSERT_EQ(plan.exit_code, 0) << describe(plan);
    EXPECT_GT(nlohmann::json::parse(plan.out)["step"]["seconds"].get<double>(), 0);
    std::vector<std::string> from = {"plan", "--from"};
    from.insert(from.end(), import_args.begin(), import_args.end());
    from.push_back("--json");
    spec_test::CliResult direct = run_ftbound(from);
    ASSERT_EQ(direct.exit_code, 0) << describe(direct);
    EXPECT_EQ(nlohmann::json::parse(direct.out)["memory"], nlohmann::json::parse(plan.out)["memory"]);
    EXPECT_NE(direct.err.find("import: "), std::string::npos) << direct.err;
}

TEST(Import, AxolotlQlora) {
    const Imported i = import_json({fixture("axolotl_llama3_qlora.yml")});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "NousResearch/Meta-Llama-3-8B");
    EXPECT_EQ(t["method"], "qlora");
    EXPECT_EQ(t["qlora"]["bits"], 4);
    EXPECT_EQ(t["lora"]["rank"], 32);
    EXPECT_EQ(t["lora"]["alpha"], 16);
    EXPECT_EQ(t["lora"]["dropout"], 0.05);
    EXPECT_EQ(t["lora"]["targets"], "all-linear");
    EXPECT_EQ(t["seq_len"], 4096);
    EXPECT_EQ(t["packing"], true);
    EXPECT_EQ(t["micro_batch"], 2);
    EXPECT_EQ(t["gradient_accumulation"], 4);
    EXPECT_EQ(t["optimizer"], "paged_adamw");   // optimizer: paged_adamw_32bit
    EXPECT_EQ(t["precision"], "bf16");
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["attention"], "flash");
    EXPECT_EQ(t["framework"], "axolotl");
    EXPECT_EQ(i.job["data"]["epochs"], 4);
    EXPECT_EQ(i.job["hardware"]["gpu"], "h100-sxm");   // assumed, and said so
    EXPECT_NE(i.err.find("assumed: hardware.gpu: h100-sxm"), std::string::npos) << i.err;
    EXPECT_NE(i.err.find("adapter: qlora"), std::string::npos) << i.err;
    // Unused fields are warnings, by name; empty ones are not listed.
    EXPECT_NE(i.err.find("warning: "), std::string::npos);
    EXPECT_NE(i.err.find("learning_rate"), std::string::npos);
    EXPECT_NE(i.err.find("datasets"), std::string::npos);
    EXPECT_EQ(i.err.find("lora_model_dir"), std::string::npos);
    expect_plans({fixture("axolotl_llama3_qlora.yml")});
}

TEST(Import, LlamaFactoryLora) {
    const Imported i = import_json({fixture("llama_factory_llama3_lora_sft.yaml")});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "meta-llama/Meta-Llama-3-8B-Instruct");
    EXPECT_EQ(t["method"], "lora");
    EXPECT_EQ(t["lora"]["rank"], 8);
    EXPECT_EQ(t["lora"]["targets"], "all-linear");
    EXPECT_EQ(t["seq_len"], 2048);
    EXPECT_EQ(t["packing"], false);
    EXPECT_EQ(t["micro_batch"], 1);
    EXPECT_EQ(t["gradient_accumulation"], 8);
    EXPECT_EQ(t["precision"], "bf16");
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["framework"], "llama-factory");
    EXPECT_EQ(i.job["data"]["epochs"], 3.0);
    EXPECT_NE(i.err.find("avg_seq_len"), std::string::npos) << i.err;
    expect_plans({fixture("llama_factory_llama3_lora_sft.yaml")});
}

TEST(Import, TorchtuneLoraRecipe) {
    // The recipe leaves the sequence length to the data (max_seq_len null): for the Alpaca builders, the length
    // torchtune documented as their default (512) is planned, and the report says it was assumed and how to change it.
    const Imported a = import_json({fixture("torchtune_llama3_1_8B_lora_single_device.yaml")});
    EXPECT_EQ(a.job["train"]["seq_len"], 512);
    EXPECT_NE(a.err.find("assumed: train.seq_len: 512 (tokenizer.max_seq_len: null"), std::string::npos) << a.err;
    EXPECT_NE(a.err.find("--set train.seq_len=N"), std::string::npos) << a.err;
    // Any other data set states no length: a clear error that says how to give it.
    std::string other = spec_test::slurp(fixture("torchtune_llama3_1_8B_lora_single_device.yaml"));
    other.replace(other.find("alpaca_cleaned_dataset"), 22, "slimorca_dataset");
    spec_test::CliResult r = run_ftbound({"import", spec_test::write_scratch("torchtune_slimorca.yaml", other)});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find("tokenizer.max_seq_len"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--set train.seq_len="), std::string::npos) << r.err;
    // Packing needs a length: torchtune's builders refuse to pack without one, so no length is assumed.
    std::string packed = spec_test::slurp(fixture("torchtune_llama3_1_8B_lora_single_device.yaml"));
    packed.replace(packed.find("packed: False"), 13, "packed: True");
    spec_test::CliResult p = run_ftbound({"import", spec_test::write_scratch("torchtune_packed_null.yaml", packed)});
    EXPECT_EQ(p.exit_code, 2) << describe(p);
    EXPECT_NE(p.err.find("tokenizer.max_seq_len: null with dataset.packed: true"), std::string::npos) << p.err;

    const Imported i = import_json({fixture("torchtune_llama3_1_8B_lora_single_device.yaml"), "--set", "train.seq_len=2048"});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "Meta-Llama-3.1-8B-Instruct");   // the download folder, resolved to Llama 3.1 8B
    EXPECT_EQ(t["method"], "lora");
    EXPECT_EQ(t["lora"]["rank"], 8);
    EXPECT_EQ(t["lora"]["targets"], nlohmann::json({"q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
    EXPECT_EQ(t["seq_len"], 2048);
    EXPECT_EQ(t["micro_batch"], 2);
    EXPECT_EQ(t["gradient_accumulation"], 8);
    EXPECT_EQ(t["precision"], "bf16");
    EXPECT_EQ(t["weights"], "pure");
    EXPECT_EQ(t["loss"], "chunked");
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["framework"], "torchtune");
    expect_plans({fixture("torchtune_llama3_1_8B_lora_single_device.yaml"), "--set", "train.seq_len=2048"});
}

// torchtune's Llama 3.2 Vision QLoRA recipe (the corpus copy of recipes/configs/llama3_2_vision/11B_qlora.yaml):
// decoder frozen, encoder and fusion LoRA -> adapters on the cross-attention blocks and on the vision tower's blocks,
// with the recipe's attention modules and MLP; the checkpoint folder names the catalog's 11B Vision.
TEST(Import, TorchtuneLlamaVisionQlora) {
    const std::string config = fixture("corpus/torchtune/configs__llama3_2_vision__11B_qlora.yaml");
    const Imported i = import_json({config});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "Llama-3.2-11B-Vision-Instruct");
    EXPECT_EQ(t["method"], "qlora");
    EXPECT_EQ(t["blocks"], "cross_attention");
    EXPECT_EQ(t["encoder"], "adapters");
    EXPECT_EQ(t["lora"]["rank"], 8);
    EXPECT_EQ(t["lora"]["alpha"], 16);
    EXPECT_EQ(t["lora"]["targets"], nlohmann::json({"q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
    EXPECT_EQ(t["seq_len"], 8192);
    EXPECT_EQ(t["micro_batch"], 2);
    EXPECT_EQ(t["gradient_accumulation"], 8);
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["framework"], "torchtune");
    EXPECT_NE(i.err.find("6404 encoder tokens per image"), std::string::npos) << i.err;
    expect_plans({config});
    // An image size the catalog checkpoint's positional tables do not have is named.
    std::string other = spec_test::slurp(config);
    other.replace(other.find("image_size: 560 # Make"), 14, "image_size: 448");
    spec_test::CliResult r = run_ftbound({"import", spec_test::write_scratch("tt_vision_448.yaml", other)});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("model.image_size: 448"), std::string::npos) << r.err;
}

// spec_reader_fuzz's first finding: a byte that is not UTF-8 in a value the import report prints ended in
// "internal error (a bug in ftbound)", exit 1. Now one error line naming the byte and where it is, exit 2.
TEST(Import, BytesThatAreNotUtf8AreAnInputError) {
    const std::string path = spec_test::write_scratch(
        "not_utf8.yaml", "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_target_modules: [q_proj, \"v\xFB\"]\n");
    spec_test::CliResult r = run_ftbound({"import", path});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("not UTF-8 text (invalid leading UTF-8 octet 0xFB at line 3, column 33)"), std::string::npos)
        << r.err;
}

// An accelerate config's deepspeed_config_file that is not where the config runs: --deepspeed FILE replaces it, as
// the error line asks, and the import says so.
TEST(Import, AccelerateDeepSpeedFileReplacedByTheOption) {
    const std::string acc = spec_test::write_scratch(
        "acc_ds_file.yaml", "distributed_type: DEEPSPEED\nnum_processes: 2\n"
                            "deepspeed_config:\n  deepspeed_config_file: elsewhere/zero3.json\n");
    spec_test::CliResult missing = run_ftbound({"import", fixture("hf_training_args_zero3.json"), "--accelerate", acc});
    EXPECT_EQ(missing.exit_code, 2) << describe(missing);
    EXPECT_NE(missing.err.find("deepspeed_config.deepspeed_config_file:"), std::string::npos) << missing.err;
    const Imported i = import_json({fixture("hf_training_args_zero3.json"), "--accelerate", acc, "--deepspeed",
                                    fixture("ds_config_zero3.json")});
    EXPECT_EQ(i.job["parallel"]["zero"], 3);
    EXPECT_EQ(i.job["hardware"]["gpus_per_node"], 2);
    EXPECT_NE(i.err.find("'elsewhere/zero3.json' replaced by --deepspeed"), std::string::npos) << i.err;
}

// A config that sets model parallelism but no GPU count gets the fewest GPUs its degrees need, said on an
// `assumed:` line (before: one GPU, and the layout check failed: "1 GPUs are not divisible by tp*pp*cp = 4").
TEST(Import, GpuCountFromTheParallelDegrees) {
    const std::string cp4 = spec_test::write_scratch(
        "axolotl_cp4.yaml", "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 8192\nmicro_batch_size: 1\n"
                            "context_parallel_size: 4\n");
    const Imported i = import_json({cp4});
    EXPECT_EQ(i.job["parallel"]["cp"], 4);
    EXPECT_EQ(i.job["hardware"]["gpus_per_node"], 4);
    EXPECT_NE(i.err.find("tp x pp x cp = 4"), std::string::npos) << i.err;
    expect_plans({cp4});
}

TEST(Import, HfTrainingArgumentsWithDeepSpeedZero3) {
    const Imported i = import_json({fixture("hf_training_args_zero3.json")});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(t["seq_len"], 4096);
    EXPECT_EQ(t["micro_batch"], 2);
    EXPECT_EQ(t["gradient_accumulation"], 8);
    EXPECT_EQ(t["precision"], "bf16");
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["framework"], "deepspeed");
    EXPECT_EQ(i.job["parallel"]["zero"], 3);
    EXPECT_EQ(i.job["offload"]["optimizer"], "cpu");
    EXPECT_FALSE(i.job.contains("offload") && i.job["offload"].contains("params"));   // device "none"
    EXPECT_NE(i.err.find("ds_config_zero3.json: zero_optimization.stage: 3 -> parallel.zero: 3"), std::string::npos) << i.err;
    // The accelerate config gives the GPUs (8 on one machine).
    const Imported a = import_json({fixture("hf_training_args_zero3.json"), "--accelerate", fixture("accelerate_deepspeed_8gpu.yaml")});
    EXPECT_EQ(a.job["hardware"]["gpus_per_node"], 8);
    EXPECT_NE(a.err.find("num_processes 8"), std::string::npos) << a.err;
    expect_plans({fixture("hf_training_args_zero3.json"), "--hardware", "xe9680"});
}

TEST(Import, TorchtitanToml) {
    const Imported i = import_json({fixture("torchtitan_llama3_8b.toml")});
    const auto& t = i.job["train"];
    EXPECT_EQ(i.job["model"], "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(t["method"], "full");
    EXPECT_EQ(t["seq_len"], 8192);
    EXPECT_EQ(t["micro_batch"], 1);
    EXPECT_EQ(t["activation_checkpointing"], "selective");
    EXPECT_EQ(t["framework"], "torchtitan");
    EXPECT_EQ(i.job["parallel"]["zero"], 3);
    EXPECT_EQ(i.job["hardware"]["gpus_per_node"], 8);
    EXPECT_NE(i.err.find("NGPU=8"), std::string::npos) << i.err;
    EXPECT_NE(i.err.find("profiling.profile_freq"), std::string::npos) << i.err;   // unused, by section
    expect_plans({fixture("torchtitan_llama3_8b.toml")});
}

TEST(Import, Errors) {
    const std::string other = spec_test::write_scratch("not_a_trainer.yaml", "foo: 1\nbar: [1, 2]\n");
    spec_test::CliResult r = run_ftbound({"import", other});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not a config ftbound can import"), std::string::npos) << r.err;
    const std::string bad_model = spec_test::write_scratch("bad_model.yml", "base_model: acme/NoSuchModel-7B\nsequence_len: 512\n");
    r = run_ftbound({"import", bad_model});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("base_model: unknown model 'acme/NoSuchModel-7B'"), std::string::npos) << r.err;
    const std::string bad_toml = spec_test::write_scratch("bad.toml", "[training\nseq_len = 1\n");
    r = run_ftbound({"import", bad_toml});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("malformed TOML"), std::string::npos) << r.err;
    r = run_ftbound({"plan", "--from", fixture("axolotl_llama3_qlora.yml"), fixture("axolotl_llama3_qlora.yml")});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
}

// The unknown-model error says "give --set model=NAME": doing so plans, and the import report says the config's
// model was not looked up.
TEST(Import, SetModelReplacesAnUnknownBaseModel) {
    const std::string bad_model = spec_test::write_scratch("bad_model_set.yml", "base_model: acme/NoSuchModel-7B\nsequence_len: 512\n");
    spec_test::CliResult r = run_ftbound({"plan", "--from", bad_model, "--set", "model=meta-llama/Llama-3.1-8B", "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.err.find("acme/NoSuchModel-7B is not looked up: --set model replaces it"), std::string::npos) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["model"], "meta-llama/Llama-3.1-8B");
    r = run_ftbound({"import", bad_model, "--set", "model=meta-llama/Llama-3.1-8B"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
}

}  // namespace
