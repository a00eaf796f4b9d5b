#include "ops/accuracy_notes.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace ftb {

const std::vector<GpuArch>& validated_gpu_architectures() {
    static const std::vector<GpuArch> archs = {GpuArch::ampere, GpuArch::ada, GpuArch::hopper};
    return archs;
}

const std::vector<std::pair<std::string, QuotedRange>>& quoted_ranges() {
    static const std::vector<std::pair<std::string, QuotedRange>> ranges = {
        {"cpu_step", {"validation/measured/cpu-vm/cases.csv", "cpu-", "", "step_seconds", -22, 29, 11, 22}},
        {"cpu_rss", {"validation/measured/cpu-vm/cases.csv", "cpu-", "", "device_used", -13, 6, 4, 22}},
        {"qlora_step_bnb", {"validation/cases.csv", "lg-", "qlora", "iteration_seconds", -23, 0, 14, 8}},
        {"qlora_memory_bnb", {"validation/cases.csv", "lg-", "qlora", "allocated_peak", -7, -3, 5, 8}},
        {"qlora_tps_torchao", {"validation/cases.csv", "tune-", "qlora", "tokens_per_second", -20, -3, 9, 3}},
        {"qlora_memory_torchao", {"validation/cases.csv", "tune-", "qlora", "allocated_peak", 4, 23, 11, 3}},
        {"qlora_step_gptq", {"validation/qwen/cases.csv", "qwen", "qlora", "step_seconds", -33, 1, 19, 12}},
        {"qlora_memory_gptq", {"validation/qwen/cases.csv", "qwen", "qlora", "device_used", -7, 7, 4, 12}},
    };
    return ranges;
}

namespace {

const QuotedRange& quoted(const std::string& name) {
    for (const auto& [n, r] : quoted_ranges())
        if (n == name) return r;
    throw std::logic_error("accuracy note quotes an unknown range: " + name);
}

// "-29% to -5%" (signed, whole percent)
std::string span(const std::string& name) {
    const QuotedRange& r = quoted(name);
    return fmt::format("{:+d}% to {:+d}%", r.low_pct, r.high_pct);
}

std::string qlora_note() {
    return fmt::format(
        "QLoRA: in validation (errors as (predicted - measured) / measured; negative: predicted too low) step times "
        "were {} with bitsandbytes 0.41 (LitGPT, {} runs) and {} with auto-gptq (Qwen, {} runs); "
        "tokens/s {} with torchao (torchtune); peak memory {} with bitsandbytes 0.41, {} with "
        "torchao, and GPU memory {} with auto-gptq",
        span("qlora_step_bnb"), quoted("qlora_step_bnb").cases, span("qlora_step_gptq"),
        quoted("qlora_step_gptq").cases, span("qlora_tps_torchao"), span("qlora_memory_bnb"),
        span("qlora_memory_torchao"), span("qlora_memory_gptq"));
}

void cpu_notes(const Job& job, std::vector<std::string>& out) {
    const SystemSpec& sys = job.system;
    const DeviceSpec& dev = sys.device;
    const bool probed = dev.tflops_measured && dev.op_overhead_us > 0 && dev.first_touch_GBps > 0;
    out.push_back(fmt::format(
        "CPU server: against our own PyTorch 1.13 runs on a 2-core AMD EPYC VM (validation/measured/cpu-vm/, "
        "Llama models, full and LoRA, fp32, 1-2 threads; `ftbound validate validation/measured/cpu-vm/cases.csv`) "
        "with the rates `ftbound probe --torch` measured there, step times of {} configurations (23M-0.9B "
        "parameters) are off by {} (MAPE {}%) and their peak RSS by {} (MAPE {}%; what glibc's heap holds is a "
        "replay of the step's allocations, src/memory/cpu_step_heap.cpp). {}",
        quoted("cpu_step").cases, span("cpu_step"), quoted("cpu_step").mape_pct, span("cpu_rss"),
        quoted("cpu_rss").mape_pct,
        probed ? fmt::format("This plan uses probed rates of {} ({} cores)", dev.name, dev.cores)
               : fmt::format("On {} x {} ({} cores each) the rates are datasheet peaks times efficiencies measured "
                             "on 1-2 cores, and PyTorch's per-op time, fresh-page writes and thread-pool waits are "
                             "not measured: run `ftbound probe --torch --out system.yaml` on the server for them",
                             sys.sockets, dev.name, dev.cores)));
}

// Unpacked data padded per batch: a padding collator pads to the batch's longest sample (torchtune
// padded_collate_sft, Hugging Face DataCollatorWithPadding), so the run peaks at the longest batch it meets. With
// data.max_sample_tokens the memory walk holds every sequence at that length (JobSpec::padded_seq_len); without
// it, at seq_len, the bound a batch padded to seq_len reaches (torchtune's Llama 3.2 3B unpacked baseline:
// 25.5 GiB measured against 61 GiB planned at max_seq_len 4096, validation/cases.csv).
std::string unpacked_note(const JobSpec& js) {
    const TrainSpec& tr = js.train;
    const std::string avg = tr.avg_seq_len > 0 ? fmt::format("avg_seq_len {:.0f} of seq_len {}", tr.avg_seq_len, tr.seq_len)
                                               : fmt::format("seq_len {}", tr.seq_len);
    if (js.data.max_sample_tokens > 0)
        return fmt::format("unpacked data (train.packing: false, {}): peak memory is planned with every sequence padded "
                           "to {} tokens, the longest sample (data.max_sample_tokens {}), as a batch padded to its "
                           "longest sample reaches; step time uses avg_seq_len",
                           avg, js.padded_seq_len(), js.data.max_sample_tokens);
    return fmt::format("unpacked data (train.packing: false, {}): peak memory is planned with every sequence padded to "
                       "seq_len, an upper bound; batches padded only to their longest sample peak lower, at the longest "
                       "batch of the run (give data.max_sample_tokens, the longest tokenized sample, to plan it there; "
                       "step time uses avg_seq_len)",
                       avg);
}

// A multimodal checkpoint: what of its encoder trains, and that the encoder's compute is not planned (a job states no
// number of images or audio frames per sequence, which sets the encoder's tokens: Qwen-VL's patches grow with each
// image's pixels, mllama's with its tiles).
std::string encoder_note(const Job& job) {
    const EncoderSpec& e = job.model.encoder;
    const TrainSpec& t = job.spec.train;
    const bool text_trains = t.method == Method::full;
    const bool tower_adapters = (t.method == Method::lora || t.method == Method::qlora) && t.encoder == EncoderTraining::adapters;
    const std::string trains = tower_adapters ? "frozen with LoRA adapters on its blocks (train.encoder: adapters)"
                               : !text_trains ? "frozen (only the text model's " +
                                                  std::string(t.method == Method::freeze ? "last blocks" : "adapters") + " train)"
                               : t.encoder == EncoderTraining::trained   ? "trained with the text model (train.encoder: trained)"
                               : t.encoder == EncoderTraining::projector ? "frozen but its projector trains (train.encoder: projector)"
                                                                         : "frozen with its projector (train.encoder: frozen)";
    const bool audio = e.modality == "audio";
    return fmt::format("{} encoder ({}, {} blocks, {:.2f}M parameters + {:.2f}M projector) is {}: its weights{} are in "
                       "the memory plan, but its forward and backward per {} are not in the step time, FLOPs or "
                       "activation peak (the job does not say how many {} a sequence carries); the "
                       "text model is planned on seq_len tokens, {} tokens included",
                       e.modality, e.kind, e.layers, double(e.params) / 1e6, double(e.projector_params) / 1e6, trains,
                       (text_trains && t.encoder != EncoderTraining::frozen) || tower_adapters
                           ? ", gradients and optimizer state"
                           : "",
                       audio ? "audio clip" : "image", audio ? "audio clips" : "images", audio ? "audio" : "image") +
           // MllamaCrossAttentionDecoderLayer: keys and values come from the image states, not the text tokens.
           (e.kind == "mllama" ? "; its cross-attention blocks are costed as self-attention over the text tokens (their "
                                 "keys and values are the image tokens' in the model)"
                               : "");
}

}  // namespace

std::vector<std::string> accuracy_notes(const Job& job) {
    std::vector<std::string> out;
    const SystemSpec& sys = job.system;
    const JobSpec& js = job.spec;
    if (sys.cpu_only) cpu_notes(job, out);
    else {
        const GpuArch arch = gpu_arch(sys.device);
        const auto& ok = validated_gpu_architectures();
        if (std::find(ok.begin(), ok.end(), arch) == ok.end())
            out.push_back(fmt::format("no measured case on a {} GPU ({}) in validation/: its rates are datasheet peaks "
                                      "with the efficiencies measured on other generations",
                                      to_string(arch), sys.device.name));
    }
    if (quantised_base(js.train.method)) out.push_back(qlora_note());   // qoft's base runs QLoRA's kernels
    if (oft_adapters(js.train.method))
        out.push_back("OFT: no measured case in validation/; its rotation (batched b x b GEMMs, the Cayley-Neumann "
                      "blocks, the casts PEFT 0.18 makes) is counted from PEFT's source, not checked against a run");
    const bool shorter_avg = js.train.avg_seq_len > 0 && js.train.avg_seq_len < double(js.train.seq_len);
    if (!js.train.packing && (shorter_avg || js.padded_seq_len() < js.train.seq_len)) out.push_back(unpacked_note(js));
    if (job.model.encoder.present()) out.push_back(encoder_note(job));
    if (job.model.is_moe())
        out.push_back("mixture-of-experts: no measured case in validation/ (routing balance, expert GEMM shapes and "
                      "all-to-all traffic are modelled, not checked)");
    return out;
}

}  // namespace ftb
