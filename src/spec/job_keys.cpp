#include "spec/job_keys.hpp"

#include "ftbound/error.hpp"

namespace ftb {

const std::vector<JobKeySection>& job_key_sections() {
    static const std::vector<JobKeySection> sections = {
        {"", {"model", "train", "parallel", "offload", "hardware", "data", "ops"}},
        {"train",
         {"method", "lora", "oft", "qlora", "freeze", "precision", "weights", "fp8_weights", "activation_func_fp8_input_store", "reduce_dtype", "optimizer", "optimizer_impl",
          "optimizer_in_backward", "micro_batch", "global_batch", "gradient_accumulation", "seq_len", "packing",
          "avg_seq_len", "activation_checkpointing", "recompute_layers", "attention", "loss", "compile", "framework", "encoder", "blocks"}},
        {"train.lora", {"rank", "alpha", "targets", "dropout"}},
        {"train.oft", {"block_size", "rank", "targets"}},
        {"train.qlora", {"bits", "double_quant", "kernel"}},
        {"train.freeze", {"trainable_layers"}},
        {"parallel", {"tp", "pp", "cp", "ep", "dp", "sequence_parallel", "zero", "pp_schedule", "virtual_stages", "pp_edges_as_layers", "cp_exchange", "tp_comm_overlap"}},
        {"offload", {"optimizer", "params", "activations", "activation_layers"}},
        {"hardware", {"system", "gpu", "gpus_per_node", "intra_node", "host", "nodes", "inter_node"}},
        // A device mapping: the fields a catalog device file holds (data/README.md). The descriptive ones
        // (architecture, form_factor, memory_type, released, notes, sources, ...) are accepted and not used.
        {"hardware.gpu",
         {"base", "name", "aliases", "kind", "vendor", "memory", "memory_bandwidth_GBps", "tflops", "matmul_ceiling", "sm_count", "tdp_w", "idle_w",
          "host_link", "cuda_context_bytes", "cores", "base_ghz", "all_core_turbo_ghz", "memory_channels", "pcie_lanes",
          "pcie_gen", "op_overhead_us", "first_touch_GBps", "core_memory_bandwidth_GBps", "runtime_rss", "blas_switch_us", "architecture", "memory_type", "form_factor", "nvlink_GBps", "boost_ghz", "l2_cache_bytes",
          "released", "sources", "notes"}},
        {"hardware.gpu.tflops", {"fp32", "tf32", "fp16", "bf16", "fp8"}},
        {"hardware.gpu.matmul_ceiling", {"bf16", "fp8"}},
        {"hardware.gpu.matmul_ceiling.bf16", {"measured_tflops", "peak_tflops", "row"}},
        {"hardware.gpu.matmul_ceiling.fp8", {"measured_tflops", "peak_tflops", "row"}},
        {"hardware.host", {"cpu", "sockets", "memory"}},
        {"hardware.intra_node",
         {"name", "aliases", "bandwidth_GBps", "latency_us", "achievable_fraction", "lanes", "generation", "count", "sources",
          "notes"}},
        {"data", {"tokens", "epochs", "max_sample_tokens"}},
        {"ops",
         {"price_per_gpu_hour", "price_per_node_hour", "electricity_per_kwh", "pue", "checkpoint_storage",
          "data_storage", "failures_per_gpu_hour", "restart_seconds"}},
        {"ops.checkpoint_storage", {"tier", "write_GBps", "read_GBps", "aggregate_write_GBps", "aggregate_read_GBps"}},
        {"ops.data_storage", {"tier", "write_GBps", "read_GBps", "aggregate_write_GBps", "aggregate_read_GBps"}},
    };
    return sections;
}

const std::vector<std::string>& job_keys(const std::string& path) {
    for (const auto& s : job_key_sections())
        if (s.path == path) return s.keys;
    throw InternalError("no job-file key list for '" + path + "'");
}

}  // namespace ftb
