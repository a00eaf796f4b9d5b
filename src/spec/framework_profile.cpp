#include "spec/framework_profile.hpp"

#include <algorithm>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/document.hpp"

namespace ftb {
namespace {

void read_defaults(const Fields& d, FrameworkProfile& p) {
    d.reject_unknown({"weights", "attention", "loss", "optimizer", "lora_dropout", "lora_targets", "optimizer_impl",
                      "activation_checkpointing", "offload_activations", "qlora_kernel"});
    p.default_qlora_kernel = d.get_choice("qlora_kernel", {"bitsandbytes", "bitsandbytes-0.47", "torchao", "auto-gptq"}).value_or(p.default_qlora_kernel);
    p.default_weights = d.get_string("weights").value_or(p.default_weights);
    p.default_attention = d.get_string("attention").value_or(p.default_attention);
    p.default_loss = d.get_string("loss").value_or(p.default_loss);
    p.default_optimizer = d.get_string("optimizer").value_or(p.default_optimizer);
    p.default_lora_dropout = d.get_number("lora_dropout", 0, 1).value_or(p.default_lora_dropout);
    if (d.has("lora_targets")) p.default_lora_targets = d.get_string_list("lora_targets");
    p.default_optimizer_impl = d.get_choice("optimizer_impl", {"foreach", "fused", "for_loop"}).value_or(p.default_optimizer_impl);
    p.default_activation_checkpointing =
        d.get_choice("activation_checkpointing", {"none", "selective", "full", "op"}).value_or(p.default_activation_checkpointing);
    p.default_activation_offload =
        d.get_choice("offload_activations", {"none", "cpu", "checkpoints"}).value_or(p.default_activation_offload);
}

void read_memory(const Fields& m, FrameworkProfile& p) {
    m.reject_unknown({"mixed_style", "mixed_grad_bytes", "mixed_state_bytes", "mixed_master_bytes", "ddp_gradient_buckets", "fused_qkv",
                      "fused_norm", "zero3_live_layers", "zero_bucket_elements", "allocator_overhead_fraction",
                      "nccl_buffer_bytes", "cross_entropy_live_copies", "qlora_quantizes_lm_head", "qlora_unadapted_attention_unquantised", "kbit_training_upcasts_fp32",
                      "fsdp_unit_mixes_frozen", "fsdp_no_sync_accumulation", "fsdp1_flat_gradients", "fsdp2_holds_reduce_scatter_input", "zero2_shards_params", "zero3_max_reuse_elements", "quantized_linear_saves_input",
                      "selective_recompute", "chunked_loss_output_chunks", "logits_freed_after_loss", "output_upcast_fp32",
                      "rmsnorm_upcast", "fused_swiglu", "qkv_split_views", "lora_qkv_zero_pad", "zero_contiguous_gradients",
                      "zero3_offload_stages_partition", "zero3_single_rank_gathers", "zero3_linear_saves_input",
                      "zero_shards_over_cp", "fsdp2_root_unit", "fsdp2_stream_pools", "pp_fsdp_accumulates_unsharded",
                      "pp_last_stage_keeps_outputs", "compile_loss", "tp_loss_parallel", "loss_shift_copy"});
    if (auto v = m.get_choice("mixed_style", {"amp", "master"})) p.mixed_style = *v == "master" ? MixedStyle::master : MixedStyle::amp;
    p.mixed_grad_bytes = m.get_number("mixed_grad_bytes", 1, 8).value_or(p.mixed_grad_bytes);
    p.mixed_state_bytes = m.get_number("mixed_state_bytes", 1, 8).value_or(p.mixed_state_bytes);
    p.mixed_master_bytes = m.get_number("mixed_master_bytes", 0, 8).value_or(p.mixed_master_bytes);
    p.ddp_gradient_buckets = m.get_bool("ddp_gradient_buckets").value_or(p.ddp_gradient_buckets);
    p.fused_qkv = m.get_bool("fused_qkv").value_or(p.fused_qkv);
    p.fused_norm = m.get_bool("fused_norm").value_or(p.fused_norm);
    p.rmsnorm_upcast = m.get_bool("rmsnorm_upcast").value_or(p.rmsnorm_upcast);
    p.fused_swiglu = m.get_bool("fused_swiglu").value_or(p.fused_swiglu);
    p.qkv_split_views = m.get_bool("qkv_split_views").value_or(p.qkv_split_views);
    p.lora_qkv_zero_pad = m.get_bool("lora_qkv_zero_pad").value_or(p.lora_qkv_zero_pad);
    p.zero3_live_layers = static_cast<int>(m.get_int("zero3_live_layers", 0, 64).value_or(p.zero3_live_layers));
    p.zero_bucket_elements = m.get_number("zero_bucket_elements", 0, 1e12).value_or(p.zero_bucket_elements);
    p.zero_contiguous_gradients = m.get_bool("zero_contiguous_gradients").value_or(p.zero_contiguous_gradients);
    p.zero3_offload_stages_partition =
        m.get_bool("zero3_offload_stages_partition").value_or(p.zero3_offload_stages_partition);
    p.zero3_single_rank_gathers = m.get_bool("zero3_single_rank_gathers").value_or(p.zero3_single_rank_gathers);
    p.allocator_overhead_fraction = m.get_number("allocator_overhead_fraction", 0, 1).value_or(p.allocator_overhead_fraction);
    p.nccl_buffer_bytes = m.get_size_bytes("nccl_buffer_bytes").value_or(p.nccl_buffer_bytes);
    p.cross_entropy_live_copies = m.get_number("cross_entropy_live_copies", 1, 8).value_or(p.cross_entropy_live_copies);
    p.chunked_loss_output_chunks =
        static_cast<int>(m.get_int("chunked_loss_output_chunks", 0, 1024).value_or(p.chunked_loss_output_chunks));
    p.logits_freed_after_loss = m.get_bool("logits_freed_after_loss").value_or(p.logits_freed_after_loss);
    p.output_upcast_fp32 = m.get_bool("output_upcast_fp32").value_or(p.output_upcast_fp32);
    p.qlora_quantizes_lm_head = m.get_bool("qlora_quantizes_lm_head").value_or(p.qlora_quantizes_lm_head);
    p.qlora_unadapted_attention_unquantised =
        m.get_bool("qlora_unadapted_attention_unquantised").value_or(p.qlora_unadapted_attention_unquantised);
    p.kbit_training_upcasts_fp32 = m.get_bool("kbit_training_upcasts_fp32").value_or(p.kbit_training_upcasts_fp32);
    p.fsdp_unit_mixes_frozen = m.get_bool("fsdp_unit_mixes_frozen").value_or(p.fsdp_unit_mixes_frozen);
    p.fsdp_no_sync_accumulation = m.get_bool("fsdp_no_sync_accumulation").value_or(p.fsdp_no_sync_accumulation);
    p.zero3_max_reuse_elements = m.get_number("zero3_max_reuse_elements", 0, 1e13).value_or(p.zero3_max_reuse_elements);
    p.zero2_shards_params = m.get_bool("zero2_shards_params").value_or(p.zero2_shards_params);
    p.fsdp1_flat_gradients = m.get_bool("fsdp1_flat_gradients").value_or(p.fsdp1_flat_gradients);
    p.fsdp2_holds_reduce_scatter_input =
        m.get_bool("fsdp2_holds_reduce_scatter_input").value_or(p.fsdp2_holds_reduce_scatter_input);
    p.quantized_linear_saves_input = m.get_bool("quantized_linear_saves_input").value_or(p.quantized_linear_saves_input);
    p.zero3_linear_saves_input = m.get_bool("zero3_linear_saves_input").value_or(p.zero3_linear_saves_input);
    p.selective_recompute = m.get_choice("selective_recompute", {"attention", "op"}).value_or(p.selective_recompute);
    p.zero_shards_over_cp = m.get_bool("zero_shards_over_cp").value_or(p.zero_shards_over_cp);
    p.fsdp2_root_unit = m.get_bool("fsdp2_root_unit").value_or(p.fsdp2_root_unit);
    p.fsdp2_stream_pools = m.get_bool("fsdp2_stream_pools").value_or(p.fsdp2_stream_pools);
    p.pp_fsdp_accumulates_unsharded = m.get_bool("pp_fsdp_accumulates_unsharded").value_or(p.pp_fsdp_accumulates_unsharded);
    p.pp_last_stage_keeps_outputs = m.get_bool("pp_last_stage_keeps_outputs").value_or(p.pp_last_stage_keeps_outputs);
    p.compile_loss = m.get_bool("compile_loss").value_or(p.compile_loss);
    p.tp_loss_parallel = m.get_bool("tp_loss_parallel").value_or(p.tp_loss_parallel);
    p.loss_shift_copy = m.get_bool("loss_shift_copy").value_or(p.loss_shift_copy);
}

void read_time(const Fields& t, FrameworkProfile& p) {
    t.reject_unknown({"host_overhead_per_kernel_us", "attention_kernel", "host_overhead_per_block_us", "matmul_time_factor",
                      "qlora_dequant_dtype", "host_overhead_per_fsdp_unit_us", "cpu_optimizer_threads_per_rank",
                      "cpu_optimizer_threads_split_host", "context_parallel_exchange", "fp8_linear_casts", "pipeline_p2p_overlap",
                      "tp_all_gather_fp8"});
    p.qlora_dequant_dtype = t.get_choice("qlora_dequant_dtype", {"fp32", "fp16", "bf16"}).value_or(p.qlora_dequant_dtype);
    if (t.has("matmul_time_factor")) {
        Fields mf = t.child("matmul_time_factor");
        mf.reject_unknown({"volta", "ampere", "ada", "hopper", "blackwell", "cdna3", "cdna4", "gaudi", "other"});
        for (auto it = mf.node().begin(); it != mf.node().end(); ++it) {
            const double factor = *mf.get_number(it.key(), 0.5, 5);
            auto& list = p.matmul_time_factor;
            auto same = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == it.key(); });
            if (same != list.end()) same->second = factor;
            else list.emplace_back(it.key(), factor);
        }
    }
    p.host_overhead_per_block_us = t.get_number("host_overhead_per_block_us", 0, 1e6).value_or(p.host_overhead_per_block_us);
    p.host_overhead_per_fsdp_unit_us =
        t.get_number("host_overhead_per_fsdp_unit_us", 0, 1e6).value_or(p.host_overhead_per_fsdp_unit_us);
    p.host_overhead_per_kernel_us = t.get_number("host_overhead_per_kernel_us", 0, 1e4).value_or(p.host_overhead_per_kernel_us);
    if (auto v = t.get_choice("attention_kernel", {"flash1", "flash2", "flash3", "transformer_engine"}))
        p.attention_kernel = *v == "flash1"   ? AttentionKernel::flash1
                             : *v == "flash2" ? AttentionKernel::flash2
                             : *v == "flash3" ? AttentionKernel::flash3
                                              : AttentionKernel::transformer_engine;
    p.context_parallel_exchange =
        t.get_choice("context_parallel_exchange", {"ring", "all_gather", "pass_kv", "all_to_all"}).value_or(p.context_parallel_exchange);
    p.pipeline_p2p_overlap = t.get_bool("pipeline_p2p_overlap").value_or(p.pipeline_p2p_overlap);
    p.tp_all_gather_fp8 = t.get_bool("tp_all_gather_fp8").value_or(p.tp_all_gather_fp8);
    p.fp8_linear_casts = t.get_choice("fp8_linear_casts", {"fused", "torchao_tensorwise", "te_delayed", "te_current"}).value_or(p.fp8_linear_casts);
    p.cpu_optimizer_threads_per_rank =
        static_cast<int>(t.get_int("cpu_optimizer_threads_per_rank", 0, 4096).value_or(p.cpu_optimizer_threads_per_rank));
    p.cpu_optimizer_threads_split_host =
        t.get_bool("cpu_optimizer_threads_split_host").value_or(p.cpu_optimizer_threads_split_host);
}

// `depth` bounds a chain of bases (a profile naming itself, or a cycle).
FrameworkProfile load_profile(const std::string& name, const std::string& file, const std::string& field, int depth) {
    const Catalog& cat = Catalog::instance();
    const std::vector<std::string> known = cat.names("frameworks");
    if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string hint = did_you_mean(name, known);
        throw InputError(file, field, "unknown framework '" + name + "'" +
                                          (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    const std::string path = cat.path_of("frameworks", name);
    Json doc = load_document(path);
    Fields f(doc, path, "");
    f.reject_unknown({"name", "base", "defaults", "memory", "time", "supports", "sources", "notes"});
    FrameworkProfile p;
    if (auto base = f.get_string("base")) {
        if (depth >= 8) f.fail("base", "profiles inherit more than 8 levels deep (a cycle?)");
        p = load_profile(*base, path, "base", depth + 1);
    }
    p.name = name;
    if (f.has("defaults")) read_defaults(f.child("defaults"), p);
    if (f.has("memory")) read_memory(f.child("memory"), p);
    if (f.has("time")) read_time(f.child("time"), p);
    for (const auto& s : f.get_string_list("sources")) p.sources.push_back(s);
    return p;
}

}  // namespace

FrameworkProfile load_framework(const std::string& name, const std::string& file, const std::string& field) {
    return load_profile(name, file, field, 0);
}

}  // namespace ftb
