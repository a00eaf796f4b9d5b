// `ftbound plan` on bad job files, end to end through the real binary (CONTRACT.md "The job file",
// "Exit codes and errors"): every class of bad input must give exit 2, nothing on stdout, and an
// `error: FILE: FIELD: REASON` line on stderr naming the file, the dotted field and what is wrong.
//
// The table breaks tests/data/spec/jobs/base.yaml (valid: Llama 3.1 8B LoRA on the 4x H100 PCIe R760xa,
// 32 heads / 8 KV heads / 32 layers / FFN 14336, dp auto = 4, micro_batch 2, global_batch 16, seq_len 2048)
// one thing at a time, either with --set overrides or with a whole job text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace {

using spec_test::CliResult;
using spec_test::data_path;
using spec_test::describe;
using spec_test::run_ftbound;
using spec_test::write_scratch;

struct BadJob {
    const char* name;
    std::string yaml;                 // whole job text; empty = tests/data/spec/jobs/base.yaml
    std::vector<std::string> sets;    // --set overrides
    std::string field;                // expected dotted field ("" = the error is about the whole file)
    std::string reason;               // expected substring of the reason
    std::string file = "";            // expected file in the message; "" = the job file itself
};

// A composed node, for cases that need a GPU count the catalog systems do not have.
std::string composed(const std::string& model, int gpus, const std::string& train_extra = "",
                     const std::string& parallel = "{}", const std::string& gpu = "h100-sxm") {
    return "model: " + model + "\ntrain: {method: full, micro_batch: 1, seq_len: 2048" + train_extra +
           "}\nparallel: " + parallel + "\nhardware: {gpu: " + gpu + ", gpus_per_node: " + std::to_string(gpus) + "}\n";
}

const std::string kLlama = "meta-llama/Llama-3.1-8B";
// An inline llama without its closing brace (and without intermediate_size), for cases to extend.
const std::string kTinyInline =
    "{model_type: llama, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 1000";

std::vector<BadJob> bad_jobs() {
    return {
        // --- the file itself ---
        {"malformed_yaml", "model: [a, b\ntrain: {seq_len: 1\n", {}, "", "malformed YAML/JSON at line"},
        {"tab_indentation", "train:\n\tseq_len: 5\n", {}, "", "malformed YAML/JSON"},
        {"malformed_json", "{\"model\": \"meta-llama/Llama-3.1-8B\", \"train\": {\"seq_len\": 2048}", {}, "",
         "malformed YAML/JSON"},
        {"a_list_document", "- model\n- train\n", {}, "", "must be a mapping"},
        {"a_scalar_document", "just some words\n", {}, "", "must be a mapping"},
        {"blank_document", " \n", {}, "", "must be a mapping"},
        {"comment_only_document", "# nothing here\n", {}, "", "must be a mapping"},
        {"nul_bytes", std::string("model: x\0\ntrain: {}\n", 20), {}, "", "NUL"},
        {"duplicate_key", "train: {seq_len: 1}\ntrain: {seq_len: 2}\n", {}, "train", "key appears twice"},
        {"self_referencing_alias", "model: &a [1, *a]\n", {}, "", "is inside the node its anchor names"},
        {"undefined_alias", "model: *nowhere\n", {}, "", "its anchor is not defined before it"},
        {"non_scalar_key", "? [a, b]\n: 1\n", {}, "", "mapping key is not a plain name"},
        // --- unknown keys at each level, with a did-you-mean where close ---
        {"unknown_root_key", "", {"trian.seq_len=5"}, "trian", "unknown key (did you mean 'train'?)"},
        {"unknown_root_key_no_hint", "", {"xyzzyplugh=1"}, "xyzzyplugh", "unknown key"},
        {"unknown_train_key", "", {"train.micro_bach=8"}, "train.micro_bach", "did you mean 'micro_batch'?"},
        {"unknown_parallel_key", "", {"parallel.tpp=2"}, "parallel.tpp", "did you mean 'tp'?"},
        {"unknown_hardware_key", "", {"hardware.sytem=dgx-h100"}, "hardware.sytem", "did you mean 'system'?"},
        {"unknown_offload_key", "", {"offload.optimiser=cpu"}, "offload.optimiser", "did you mean 'optimizer'?"},
        {"unknown_data_key", "", {"data.token=5"}, "data.token", "did you mean 'tokens'?"},
        {"unknown_ops_key", "", {"ops.price_per_gpu_hr=2"}, "ops.price_per_gpu_hr", "did you mean 'price_per_gpu_hour'?"},
        {"unknown_lora_key", "", {"train.lora.rnk=8"}, "train.lora.rnk", "did you mean 'rank'?"},
        {"unknown_qlora_key", "", {"train.method=qlora", "train.qlora={bit: 4}"}, "train.qlora.bit", "did you mean 'bits'?"},
        {"unknown_freeze_key", "", {"train.method=freeze", "train.lora=null", "train.freeze={layers: 2}"},
         "train.freeze.layers", "unknown key"},
        {"unknown_gpu_variant_key", "", {"hardware={gpu: {base: h100-sxm, memroy: 96GiB}, gpus_per_node: 4}"},
         "hardware.gpu.memroy", "did you mean 'memory'?"},
        {"unknown_tflops_key", "", {"hardware={gpu: {base: h100-sxm, tflops: {bf61: 900}}, gpus_per_node: 4}"},
         "hardware.gpu.tflops.bf61", "did you mean 'bf16'?"},
        {"unknown_host_key", "", {"hardware={gpu: h100-sxm, gpus_per_node: 4, host: {cpus: xeon-8480}}"},
         "hardware.host.cpus", "did you mean 'cpu'?"},
        {"unknown_checkpoint_storage_key", "", {"ops.checkpoint_storage={write_gbps: 5}"},
         "ops.checkpoint_storage.write_gbps", "did you mean 'write_GBps'?"},
        // --- missing sections and fields ---
        {"missing_model", "train: {seq_len: 2048}\nhardware: {system: dgx-h100}\n", {}, "model", "missing"},
        {"missing_train", "model: " + kLlama + "\nhardware: {system: dgx-h100}\n", {}, "train", "missing"},
        {"missing_hardware", "model: " + kLlama + "\ntrain: {seq_len: 2048}\n", {}, "hardware", "missing"},
        {"missing_seq_len", "", {"train.seq_len=null"}, "train.seq_len", "missing"},
        {"hardware_without_system_or_gpu", "", {"hardware={nodes: 1}"}, "hardware.system", "missing"},
        {"checkpoint_storage_mapping_without_rate", "", {"ops.checkpoint_storage={}"},
         "ops.checkpoint_storage.write_GBps", "missing"},
        // --- wrong types ---
        {"int_given_a_word", "", {"train.micro_batch=four"}, "train.micro_batch", "expected a whole number, found a string 'four'"},
        {"int_given_a_fraction", "", {"train.micro_batch=2.5"}, "train.micro_batch", "expected a whole number"},
        {"int_given_a_list", "", {"train.seq_len=[1, 2]"}, "train.seq_len", "expected a whole number, found a list"},
        {"bool_given_yes", "", {"train.packing=yes"}, "train.packing", "expected true or false"},
        {"bool_given_a_number", "", {"train.compile=1"}, "train.compile", "expected true or false"},
        {"number_given_a_word", "", {"data.tokens=many"}, "data.tokens", "expected a number"},
        {"quoted_number_is_a_string", "", {"train.seq_len='2048'"}, "train.seq_len", "expected a whole number, found a string"},
        {"train_is_a_number", "", {"train=5"}, "train", "must be a mapping, found a number"},
        {"parallel_is_a_list", "", {"parallel=[1]"}, "parallel", "must be a mapping, found a list"},
        {"hardware_is_a_string", "", {"hardware=dgx-h100"}, "hardware", "must be a mapping, found a string"},
        {"model_is_a_list", "", {"model=[a, b]"}, "model", "must be a mapping, found a list"},
        {"lora_is_a_string", "", {"train.lora=big"}, "train.lora", "must be a mapping"},
        {"targets_a_number", "", {"train.lora.targets=5"}, "train.lora.targets", "expected a list of names, found a number"},
        {"targets_entry_a_number", "", {"train.lora.targets=[q_proj, 5]"}, "train.lora.targets", "an entry is a number"},
        {"enum_given_a_bool", "", {"train.activation_checkpointing=true"}, "train.activation_checkpointing",
         "expected a string, found a boolean"},
        {"nodes_a_word", "", {"hardware.nodes=two"}, "hardware.nodes", "expected a whole number"},
        // --- out of range ---
        {"micro_batch_zero", "", {"train.micro_batch=0"}, "train.micro_batch", "out of range: 0 (allowed 1 to"},
        {"seq_len_negative", "", {"train.seq_len=-5"}, "train.seq_len", "out of range: -5"},
        {"zero_stage_4", "", {"parallel.zero=4"}, "parallel.zero", "out of range: 4 (allowed 0 to 3)"},
        {"tp_overlap_without_sequence_parallel", "", {"parallel.tp_comm_overlap=true"}, "parallel.tp_comm_overlap",
         "needs sequence_parallel: true"},
        {"pue_below_one", "", {"ops.pue=0.5"}, "ops.pue", "out of range"},
        {"lora_dropout_above_one", "", {"train.lora.dropout=1.5"}, "train.lora.dropout", "out of range"},
        {"lora_rank_zero", "", {"train.lora.rank=0"}, "train.lora.rank", "out of range"},
        {"qlora_bits_6", "", {"train.method=qlora", "train.qlora={bits: 6}"}, "train.qlora.bits", "must be 4 (NF4) or 8"},
        {"qlora_bits_3", "", {"train.method=qlora", "train.qlora={bits: 3}"}, "train.qlora.bits", "out of range"},
        {"nodes_zero", "", {"hardware.nodes=0"}, "hardware.nodes", "out of range"},
        {"tp_zero", "", {"parallel.tp=0"}, "parallel.tp", "out of range"},
        {"dp_zero", "", {"parallel.dp=0"}, "parallel.dp", "out of range"},
        {"epochs_negative", "", {"data.epochs=-1"}, "data.epochs", "out of range"},
        {"failure_rate_above_one", "", {"ops.failures_per_gpu_hour=2"}, "ops.failures_per_gpu_hour", "out of range"},
        {"gpus_per_node_2000", "", {"hardware={gpu: h100-sxm, gpus_per_node: 2000}"}, "hardware.gpus_per_node", "out of range"},
        // --- bad enum values ---
        {"method", "", {"train.method=lroa"}, "train.method", "'lroa' is not one of full | lora | qlora | freeze | oft | qoft (did you mean 'lora'?)"},
        {"precision", "", {"train.precision=bf61"}, "train.precision", "(did you mean 'bf16'?)"},
        {"precision_case", "", {"train.precision=BF16"}, "train.precision", "(did you mean 'bf16'?)"},
        {"weights", "", {"train.weights=half"}, "train.weights", "is not one of mixed | pure"},
        {"optimizer", "", {"train.optimizer=adamw8bit"}, "train.optimizer", "(did you mean 'adamw_8bit'?)"},
        {"attention", "", {"train.attention=flash2"}, "train.attention", "(did you mean 'flash'?)"},
        {"loss", "", {"train.loss=fused_ce"}, "train.loss", "is not one of standard | fp32_upcast | chunked | fused"},
        {"recompute", "", {"train.activation_checkpointing=partial"}, "train.activation_checkpointing",
         "is not one of none | selective | full"},
        {"framework", "", {"train.framework=deepspeeed"}, "train.framework", "unknown framework 'deepspeeed' (did you mean 'deepspeed'?)"},
        {"pp_schedule", "", {"parallel.pp_schedule=1F1B"}, "parallel.pp_schedule", "(did you mean '1f1b'?)"},
        {"cp_exchange", "", {"parallel.cp_exchange=allgather"}, "parallel.cp_exchange", "(did you mean 'all_gather'?)"},
        {"offload_optimizer", "", {"offload.optimizer=gpu"}, "offload.optimizer", "is not one of none | cpu | nvme"},
        {"offload_params", "", {"offload.params=disk"}, "offload.params", "is not one of none | cpu | nvme"},
        {"offload_activations_nvme", "", {"offload.activations=nvme"}, "offload.activations", "'nvme' is not one of none | cpu"},
        {"checkpoint_storage", "", {"ops.checkpoint_storage=s3"}, "ops.checkpoint_storage", "is not one of nvme | nfs | object-store"},
        // --- sizes ---
        {"size_bad_unit", "", {"hardware={gpu: {base: h100-sxm, memory: 80 GX}, gpus_per_node: 4}"}, "hardware.gpu.memory",
         "expected a size such as 80GiB"},
        {"size_negative_text", "", {"hardware={gpu: {base: h100-sxm, memory: -80GiB}, gpus_per_node: 4}"},
         "hardware.gpu.memory", "expected a size"},
        {"size_negative_number", "", {"hardware={gpu: {base: h100-sxm, memory: -5}, gpus_per_node: 4}"},
         "hardware.gpu.memory", "expected a size"},
        {"size_a_list", "", {"hardware={gpu: h100-sxm, gpus_per_node: 4, host: {memory: [1]}}"}, "hardware.host.memory",
         "expected a size"},
        {"size_zero", "", {"hardware={gpu: {base: h100-sxm, memory: 0GiB}, gpus_per_node: 4}"}, "hardware.gpu.memory",
         "must be positive"},
        // --- unknown catalog names, with suggestions ---
        {"unknown_model", "", {"model=meta-llama/Llama-3.1-8", "train.lora=null", "train.method=full"}, "model",
         "unknown model 'meta-llama/Llama-3.1-8' (did you mean 'meta-llama/Llama-3.1-8B'?)"},
        {"unknown_system", "", {"hardware.system=dgx-h10"}, "hardware.system", "unknown system 'dgx-h10' (did you mean 'dgx-h100'?)"},
        {"unknown_gpu", "", {"hardware={gpu: h100-sxn, gpus_per_node: 4}"}, "hardware.gpu", "unknown GPU 'h100-sxn' (did you mean 'h100-sxm'?)"},
        {"unknown_gpu_base", "", {"hardware={gpu: {base: a100-sxm-80g}, gpus_per_node: 4}"}, "hardware.gpu.base",
         "(did you mean 'a100-sxm-80gb'?)"},
        {"unknown_inter_node", "", {"hardware.nodes=2", "hardware.inter_node=ib-ndr-40"}, "hardware.inter_node",
         "unknown network fabric 'ib-ndr-40' (did you mean 'ib-ndr-400'?)"},
        {"unknown_intra_node", "", {"hardware={gpu: h100-sxm, gpus_per_node: 4, intra_node: nvlnk4}"}, "hardware.intra_node",
         "unknown link 'nvlnk4' (did you mean 'nvlink4'?)"},
        {"unknown_host_cpu", "", {"hardware={gpu: h100-sxm, gpus_per_node: 4, host: {cpu: xeon-848}}"}, "hardware.host.cpu",
         "(did you mean 'xeon-8480'?)"},
        {"missing_model_config_path", "", {"model=./no-such-config.json"}, "model", "not found"},
        {"missing_system_file", "", {"hardware.system=./no-such-system.yaml"}, "hardware.system", "not found"},
        // --- impossible layouts ---
        {"tp_not_dividing_heads", composed(kLlama, 3, "", "{tp: 3}"), {}, "parallel.tp", "tp=3 does not divide the 32 attention heads"},
        {"dp_product_mismatch", "", {"parallel.dp=3"}, "parallel", "tp*pp*cp*dp = 1*1*1*3 = 3, but the hardware has 4 GPUs"},
        {"dp_auto_not_divisible", "", {"parallel.tp=3"}, "parallel.dp", "4 GPUs are not divisible by tp*pp*cp = 3"},
        {"cp_not_dividing_seq_len", "", {"parallel.cp=4", "train.seq_len=2050", "train.global_batch=2"}, "parallel.cp",
         "cp=4 does not divide seq_len 2050"},
        {"ep_without_moe", "", {"parallel.ep=2"}, "parallel.ep", "ep>1 needs a mixture-of-experts model"},
        {"ep_not_dividing_experts",
         composed("mistralai/Mixtral-8x7B-v0.1", 6, "", "{ep: 3}"), {}, "parallel.ep", "ep=3 does not divide the 8 experts"},
        {"global_batch_not_multiple", "", {"train.global_batch=17"}, "train.global_batch",
         "17 is not a multiple of micro_batch*dp = 8"},
        {"sequence_parallel_tp1", "", {"parallel.sequence_parallel=true"}, "parallel.sequence_parallel", "needs tp > 1"},
        {"pp_exceeds_layers", composed(kLlama, 64, "", "{pp: 64}"), {}, "parallel.pp", "pp=64 exceeds the 32 layers"},
        {"tp_not_dividing_kv_heads", composed("{model_type: llama, hidden_size: 96, intermediate_size: 96, num_hidden_layers: 2, "
                                             "num_attention_heads: 12, num_key_value_heads: 4, vocab_size: 10}", 6, "", "{tp: 6}"),
         {}, "parallel.tp", "neither divides the other"},
        {"tp_not_dividing_ffn", composed(kTinyInline + ", intermediate_size: 162}", 4, "", "{tp: 4}"), {}, "parallel.tp",
         "does not divide the FFN width 162"},
        {"virtual_stages_exceed_layers", composed(kLlama, 8, "", "{pp: 8, pp_schedule: interleaved, virtual_stages: 8}"), {},
         "parallel.virtual_stages", "exceeds the layer count"},
        {"freeze_more_layers_than_model", "", {"train.method=freeze", "train.lora=null", "train.freeze={trainable_layers: 40}"},
         "train.freeze.trainable_layers", "more than the model's 32 layers"},
        {"fp8_on_a100", composed(kLlama, 1, ", precision: fp8", "{}", "a100-sxm-80gb"), {}, "train.precision", "no fp8"},
        {"swiglu_fp8_store_unfused", "", {"train.activation_func_fp8_input_store=true"},
         "train.activation_func_fp8_input_store", "the generic profile runs an unfused SwiGLU"},
        {"swiglu_fp8_store_without_swiglu",
         composed(kTinyInline + ", intermediate_size: 128, hidden_act: gelu}", 1,
                  ", framework: nemo, activation_func_fp8_input_store: true"),
         {}, "train.activation_func_fp8_input_store", "has no SwiGLU FFN"},
        {"cp_all_to_all_splits_kv_heads", "", {"parallel.tp=2", "parallel.cp=8", "parallel.cp_exchange=all_to_all",
                                               "train.micro_batch=1", "train.global_batch=1",
                                               "hardware.system=dgx-h100", "hardware.nodes=2"},
         "parallel.cp_exchange", "tp*cp = 16 ranks whole heads, but the 32 query heads or 8 key/value heads"},
        {"bf16_on_v100", composed(kLlama, 1, ", precision: bf16", "{}", "v100-sxm-32gb"), {}, "train.precision", "no bf16"},
        {"param_offload_without_zero3", "", {"offload.params=cpu"}, "offload.params", "needs ZeRO-3"},
        {"tp_on_cpu_server", "", {"hardware.system=dell-poweredge-r760-2x-xeon-8480", "parallel.tp=2", "train.global_batch=2",
                                  "train.precision=fp32"},
         "parallel", "data parallel only"},
        {"lora_block_with_full", "", {"train.method=full"}, "train.lora", "given, but method is 'full'"},
        {"qlora_block_with_lora", "", {"train.qlora={bits: 4}"}, "train.qlora", "given, but method is 'lora'"},
        {"lora_target_unknown", "", {"train.lora.targets=[q_proj, foo_layer]"}, "train.lora.targets",
         "'foo_layer' is not a linear layer name"},
        {"lora_target_typo", "", {"train.lora.targets=[q_prj]"}, "train.lora.targets", "(did you mean 'q_proj'?)"},
        {"avg_seq_len_above_seq_len", "", {"train.packing=false", "train.avg_seq_len=4096"}, "train.avg_seq_len",
         "larger than seq_len (2048)"},
        {"max_sample_tokens_zero", "", {"data.max_sample_tokens=0"}, "data.max_sample_tokens", "out of range: 0"},
        {"max_sample_tokens_fraction", "", {"data.max_sample_tokens=1.5"}, "data.max_sample_tokens",
         "expected a whole number"},
        {"max_sample_tokens_text", "", {"data.max_sample_tokens=long"}, "data.max_sample_tokens", "expected a whole number"},
        {"max_sample_tokens_below_avg_seq_len", "", {"train.packing=false", "train.avg_seq_len=1000", "data.max_sample_tokens=500"},
         "data.max_sample_tokens", "shorter than train.avg_seq_len (1000)"},
        {"nodes_without_inter_node", "", {"hardware={gpu: h100-sxm, gpus_per_node: 4, nodes: 2}"}, "hardware.inter_node",
         "missing: 2 nodes need the fabric"},
        {"system_and_intra_node", "", {"hardware.intra_node=nvlink4"}, "hardware.intra_node", "give either a system or a composed node"},
        {"system_and_too_many_gpus_per_node", "", {"hardware.gpus_per_node=8"}, "hardware.gpus_per_node", "GPUs per node; give at most that"},
        {"gpu_on_cpu_only_system", "", {"hardware.system=dell-poweredge-r760-2x-xeon-8480", "hardware.gpu=h100-sxm"},
         "hardware.gpu", "CPU-only server"},
        // --- inline models ---
        {"inline_model_missing_hidden_size",
         composed("{model_type: llama, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 10}", 1),
         {}, "model.hidden_size", "missing (required for the cost model"},
        {"inline_model_missing_layers",
         composed("{model_type: gpt2, n_embd: 64, n_head: 4, vocab_size: 10}", 1), {}, "model.n_layer", "give n_layer or num_hidden_layers"},
        {"inline_model_missing_model_type", composed("{hidden_size: 64}", 1), {}, "model.model_type", "missing"},
        // MOSS-VL's cross-attention layers must be named, and be layers of the text model.
        {"inline_model_moss_vl_cross_layer_out_of_range",
         composed("{model_type: moss_vl, text_config: {hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
                  " num_attention_heads: 4, vocab_size: 10, cross_attention_layers: [5]}, vision_config: {depth: 1,"
                  " hidden_size: 16, intermediate_size: 32, out_hidden_size: 64, patch_size: 2,"
                  " num_position_embeddings: 4}}", 1),
         {}, "model.text_config.cross_attention_layers", "layer 5 is not one of the 2 layers"},
        {"inline_model_moss_vl_without_cross_layers",
         composed("{model_type: moss_vl, text_config: {hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
                  " num_attention_heads: 4, vocab_size: 10}, vision_config: {depth: 1, hidden_size: 16,"
                  " intermediate_size: 32, out_hidden_size: 64, patch_size: 2, num_position_embeddings: 4}}", 1),
         {}, "model.text_config.cross_attention_layers", "missing (the layers that attend to the vision states)"},
        // BTLM positions are GPT-2's learned table or ALiBi; anything else is no position scheme modeling_btlm.py has.
        {"inline_model_btlm_rotary_positions",
         composed("{model_type: btlm, n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 10, position_embedding_type: rotary}", 1),
         {}, "model.position_embedding_type", "'rotary' is not a position embedding btlm has; expected learned | alibi"},
        // The duplicate is inside `model`, so the message must give its dotted path.
        {"inline_model_duplicate_key", composed(kTinyInline + ", intermediate_size: 160, model_type: llama3}", 1), {},
         "model.model_type", "key appears twice"},
        {"inline_model_unknown_family",
         composed("{model_type: lama, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4, "
                  "vocab_size: 10}", 1),
         {}, "model.model_type", "unsupported family 'lama' (did you mean 'llama'?)"},
        {"inline_model_unsupported_family", composed("{model_type: rwkv, hidden_size: 64}", 1), {}, "model.model_type",
         "unsupported family 'rwkv'"},
        {"inline_model_kv_not_dividing", composed(kTinyInline + ", intermediate_size: 160, num_key_value_heads: 3}", 1), {}, "model.num_key_value_heads",
         "3 key/value heads do not divide 4 attention heads"},
        {"inline_model_hidden_not_divisible", composed("{model_type: llama, hidden_size: 65, intermediate_size: 160, "
                                                      "num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 10}", 1),
         {}, "model.num_attention_heads", "not divisible by 4 heads; give head_dim"},
        {"inline_model_layers_zero", "", {"model=" + kTinyInline + ", intermediate_size: 160}", "model.num_hidden_layers=0"},
         "model.num_hidden_layers", "out of range"},
        {"inline_model_hidden_word", "", {"model=" + kTinyInline + ", intermediate_size: 160}", "model.hidden_size=big"}, "model.hidden_size",
         "expected a whole number"},
        {"inline_model_mlp_only_layers_not_list", composed("{model_type: qwen2_moe, hidden_size: 64, num_hidden_layers: 2, "
                                                          "num_attention_heads: 4, vocab_size: 10, mlp_only_layers: 3}", 1),
         {}, "model.mlp_only_layers", "expected a list of layer indices"},
        {"config_json_path_not_a_model", "", {"model=" + data_path("jobs/base.json")}, "model_type", "missing",
         data_path("jobs/base.json")},
        // --- --set itself ---
        {"set_without_equals", "", {"foo"}, "foo", "expected KEY=VALUE", "--set"},
        {"set_empty_key", "", {"=5"}, "=5", "expected KEY=VALUE", "--set"},
        {"set_empty_component", "", {"train..seq_len=5"}, "train..seq_len", "empty component", "--set"},
        {"set_through_a_scalar", "", {"model.hidden_size=5"}, "model.hidden_size", "'model' is a string, not a mapping", "--set"},
        {"set_through_a_list", "", {"train.lora.targets.x=1"}, "train.lora.targets.x", "'targets' is a list, not a mapping", "--set"},
        {"set_malformed_value", "", {"train.seq_len=["}, "", "malformed YAML/JSON", "--set train.seq_len"},
    };
}

// The job file a case runs: the base file, or its own text written to a scratch file.
std::string job_path(const BadJob& c) {
    return c.yaml.empty() ? data_path("jobs/base.yaml") : write_scratch(std::string(c.name) + ".yaml", c.yaml);
}

void expect_input_error(const std::string& label, const CliResult& r, const std::string& file, const std::string& field,
                        const std::string& reason) {
    SCOPED_TRACE(label);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << "stdout must stay empty on failure: " << describe(r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << describe(r);
    const std::string where = "error: " + file + (field.empty() ? "" : ": " + field) + ": ";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected '" << where << "' in: " << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << "expected reason '" << reason << "' in: " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

TEST(SpecJobErrors, BaseJobIsValid) {
    for (const std::string job : {"jobs/base.yaml", "jobs/base.json", "jobs/relative_config.yaml"}) {
        CliResult r = run_ftbound({"plan", data_path(job), "--json"});
        ASSERT_EQ(r.exit_code, 0) << job << ": " << describe(r);
        EXPECT_TRUE(r.err.empty()) << r.err;
        auto j = nlohmann::json::parse(r.out);   // exactly one JSON document
        EXPECT_EQ(j["gpus"], job == "jobs/relative_config.yaml" ? 1 : 4) << job;
    }
}

TEST(SpecJobErrors, EveryBadInputGivesExitTwoNamingFileFieldAndReason) {
    for (const BadJob& c : bad_jobs()) {
        const std::string path = job_path(c);
        std::vector<std::string> args{"plan", path};
        // A field a --set gave is reported against that --set, not the file (the user typed it there).
        std::string file = c.file.empty() ? path : c.file;
        size_t longest = 0;
        for (const auto& s : c.sets) {
            args.insert(args.end(), {"--set", s});
            const std::string key = s.substr(0, s.find('='));
            if (c.file.empty() && (c.field == key || c.field.rfind(key + ".", 0) == 0) && key.size() >= longest)
                file = "--set " + s, longest = key.size();
        }
        expect_input_error(c.name, run_ftbound(args), file, c.field, c.reason);
    }
}

TEST(SpecJobErrors, UnreadableJobFiles) {
    const std::string missing = spec_test::scratch_dir() + "/no-such-job.yaml";
    expect_input_error("missing file", run_ftbound({"plan", missing}), missing, "", "cannot open");
    // A folder is not a job file; the reason must not claim it is too large.
    CliResult dir = run_ftbound({"plan", spec_test::scratch_dir()});
    expect_input_error("a folder", dir, spec_test::scratch_dir(), "", "");
    EXPECT_EQ(dir.err.find("larger than 16 MiB"), std::string::npos)
        << "BUG: a folder is reported as a file larger than 16 MiB: " << dir.err;
    const std::string empty = write_scratch("empty.yaml", "");
    expect_input_error("0-byte file", run_ftbound({"plan", empty}), empty, "", "must be a mapping");
    // Over the 16 MiB input limit.
    const std::string big = write_scratch("big.yaml", "# " + std::string(17u << 20, 'x') + "\n");
    expect_input_error("17 MiB file", run_ftbound({"plan", big}), big, "", "larger than 16 MiB");
}

// Valid spellings the contract promises; each must change what the plan reads.
TEST(SpecJobErrors, SizesAndOverridesAreRead) {
    const std::string base = data_path("jobs/base.yaml");
    struct Size { const char* text; double bytes; };
    for (const Size& s : {Size{"96GiB", 96.0 * (1ull << 30)}, Size{"80GB", 80e9}, Size{"85899345920", 85899345920.0},
                          Size{"80 GiB", 80.0 * (1ull << 30)}, Size{"1.5e11", 1.5e11}}) {
        CliResult r = run_ftbound({"plan", base, "--json", "--set",
                                   std::string("hardware={gpu: {base: h100-sxm, memory: ") + s.text + "}, gpus_per_node: 4}"});
        ASSERT_EQ(r.exit_code, 0) << s.text << ": " << describe(r);
        auto j = nlohmann::json::parse(r.out);
        EXPECT_DOUBLE_EQ(j["memory"]["capacity_bytes"].get<double>(), s.bytes) << s.text;
    }
    CliResult r = run_ftbound({"plan", base, "--json", "--set", "train.micro_batch=4", "--set", "parallel.tp=2"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["memory"]["tokens_per_micro_batch"], 4 * 2048);
    // A later --set of the same key wins.
    CliResult twice = run_ftbound({"plan", base, "--json", "--set", "train.micro_batch=8", "--set", "train.micro_batch=1"});
    ASSERT_EQ(twice.exit_code, 0) << describe(twice);
    EXPECT_EQ(nlohmann::json::parse(twice.out)["memory"]["tokens_per_micro_batch"], 2048);
    // --set can create a section the file lacks.
    CliResult created = run_ftbound({"plan", base, "--json", "--set", "data=null", "--set", "data.tokens=2e7"});
    EXPECT_EQ(created.exit_code, 0) << describe(created);
}

// Numbers a YAML reader sees as floats but a double cannot hold: the file is bad input (exit 2), never an
// internal error. (std::stod throws std::out_of_range on overflow and on underflow.)
TEST(SpecJobErrors, NumbersBeyondDoubleAreInputErrors) {
    const std::string base = data_path("jobs/base.yaml");
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"epochs_1e400", {"data.epochs=1e400"}},
        {"epochs_1e-400", {"data.epochs=1e-400"}},
        {"tokens_400_digits", {"data.tokens=" + std::string(400, '9')}},
        {"gpu_memory_text_1e400", {"hardware={gpu: {base: h100-sxm, memory: 1e400GiB}, gpus_per_node: 4}"}},
    };
    for (const auto& [name, sets] : cases) {
        std::vector<std::string> args{"plan", base};
        for (const auto& s : sets) args.insert(args.end(), {"--set", s});
        CliResult r = run_ftbound(args);
        EXPECT_EQ(r.exit_code, 2) << "BUG (document.cpp: std::stod out_of_range escapes): " << name << ": " << describe(r);
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << name << ": " << r.err;
    }
    // The same number in the job file itself.
    std::string text = spec_test::slurp(base);
    text.replace(text.find("epochs: 1}"), 10, "epochs: 1e400}");
    CliResult r = run_ftbound({"plan", write_scratch("huge_number.yaml", text)});
    EXPECT_EQ(r.exit_code, 2) << "BUG: 1e400 in a job file: " << describe(r);
}

// Products of in-range fields must not overflow int64 in the layout check (job_file.cpp check_job):
// 65536^3 * 2^30 = 2^78 wraps to 0, and the message then prints a wrong product.
TEST(SpecJobErrors, LayoutProductDoesNotOverflow) {
    CliResult r = run_ftbound({"plan", data_path("jobs/base.yaml"), "--set", "parallel.tp=65536", "--set",
                               "parallel.pp=65536", "--set", "parallel.cp=65536", "--set", "parallel.dp=1073741824"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(r.err.find(" = 0, but"), std::string::npos) << "BUG: tp*pp*cp*dp overflowed int64: " << r.err;
}

// The expansion up to the limit takes 0.7 s in a Release build and 5.9 s under AddressSanitizer on the 2-core
// CI machine: the time bound allows for the sanitizer's slowdown.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kAliasBombSeconds = 40;
#else
constexpr int kAliasBombSeconds = 5;
#endif

// Aliases let a few hundred bytes stand for 10^8 nodes ("billion laughs"). Expanding them must stop
// early with an input error, not run for tens of seconds and exhaust memory (here capped at 1 GiB and kAliasBombSeconds).
TEST(SpecJobErrors, AliasExpansionBombIsRejectedQuickly) {
    std::string text = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
    for (char c = 'b'; c <= 'h'; ++c) {
        std::string prev(1, char(c - 1));
        text += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 10; ++i) text += (i ? ", *" : "*") + prev;
        text += "]\n";
    }
    const std::string path = write_scratch("alias_bomb.yaml", text);
    CliResult r = run_ftbound({"plan", path}, kAliasBombSeconds, rlim_t(1) << 30);
    EXPECT_EQ(r.exit_code, 2) << "BUG: alias expansion (yaml_source.cpp) is unbounded: " << describe(r);
    EXPECT_LT(r.seconds, double(kAliasBombSeconds)) << describe(r);
    EXPECT_TRUE(r.out.empty());
}

// The same with few values but long ones (spec_reader_fuzz, 2026-12-07: one input peaked at 1.7 GB): an 8 KB file
// whose aliases repeat an 8,000-character string 900,000 times, under the value cap, took 8 GB and 50 s. The
// expanded text is capped too.
TEST(SpecJobErrors, AliasExpansionOfLongTextIsRejectedQuickly) {
    std::string text = "a: &a \"" + std::string(8000, 'x') + "\"\n";
    for (char c = 'b'; c <= 'g'; ++c) {
        std::string prev(1, char(c - 1));
        text += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < (c == 'g' ? 9 : 10); ++i) text += (i ? ", *" : "*") + prev;
        text += "]\n";
    }
    const std::string path = write_scratch("alias_text_bomb.yaml", text);
    CliResult r = run_ftbound({"plan", path}, kAliasBombSeconds, rlim_t(1) << 30);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("MiB of text once aliases are expanded"), std::string::npos) << describe(r);
    EXPECT_LT(r.seconds, double(kAliasBombSeconds)) << describe(r);
}

// Deep nesting: the reader's depth limit (64) must turn it into an input error before the stack runs out.
TEST(SpecJobErrors, DeepNestingIsAnInputError) {
    const std::vector<std::pair<std::string, std::string>> docs = {
        {"flow_lists", std::string(100000, '[') + std::string(100000, ']')},
        {"flow_maps", "a: " + [] { std::string s; for (int i = 0; i < 5000; ++i) s += "{b: "; s += "1"; return s + std::string(5000, '}'); }()},
        {"block_maps", [] { std::string s; for (int i = 0; i < 3000; ++i) s += std::string(i, ' ') + "k:\n"; return s; }()},
        {"seventy_levels", "model: " + std::string(70, '[') + std::string(70, ']')},
    };
    for (const auto& [name, text] : docs) {
        const std::string path = write_scratch("deep_" + name + ".yaml", text);
        CliResult r = run_ftbound({"plan", path}, 20, rlim_t(2) << 30);
        expect_input_error(name, r, path, "", "");
    }
}

// File names are bytes on Linux; a job path that is not UTF-8 must not turn `--json` output into an
// internal error (nlohmann::json::dump throws type_error 316 on invalid UTF-8).
TEST(SpecJobErrors, NonUtf8JobPathWithJson) {
    const std::string path = write_scratch("job\xff.yaml", spec_test::slurp(data_path("jobs/base.yaml")));
    CliResult r = run_ftbound({"plan", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << "BUG: non-UTF-8 job path breaks plan --json: " << describe(r);
}

}  // namespace

// A framework profile's default LoRA targets apply when the job names none, and a job's own targets win.
TEST(SpecJobErrors, ProfileLoraTargetsApplyUnlessTheJobNamesItsOwn) {
    const std::string job = std::string(ftb_test::source_dir()) + "/validation/pretrain/jobs/nemo2412-h100-l2-7b-lora-g8.yaml";
    auto trainable = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"plan", job, "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        CliResult r = run_ftbound(args);
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        return nlohmann::json::parse(r.out)["memory"]["params"]["trainable"].get<int64_t>();
    };
    const int64_t profile_default = trainable({});
    // nemo-2407-lora: q, k and v of 32 Llama-2-7B blocks, rank 32: 32 x 3 x 32 x (4096 + 4096).
    EXPECT_EQ(profile_default, int64_t(32) * 3 * 32 * (4096 + 4096));
    EXPECT_EQ(trainable({"--set", "train.lora.targets=[q_proj,k_proj,v_proj]"}), profile_default);
    EXPECT_GT(trainable({"--set", "train.lora.targets=all-linear"}), profile_default);
    EXPECT_GT(trainable({"--set", "train.framework=nemo"}), profile_default);   // nemo.yaml: all linear layers
}
