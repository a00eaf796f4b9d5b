#include "ops/accuracy_notes.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace ftb {

const std::vector<GpuArch>& validated_gpu_architectures() {
    static const std::vector<GpuArch> archs = {GpuArch::ampere, GpuArch::ada, GpuArch::hopper};
    return archs;
}

namespace {

void cpu_notes(const Job& job, std::vector<std::string>& out) {
    const SystemSpec& sys = job.system;
    const DeviceSpec& dev = sys.device;
    const bool probed = dev.tflops_measured && dev.op_overhead_us > 0 && dev.first_touch_GBps > 0;
    out.push_back(fmt::format(
        "CPU server: against our own PyTorch 1.13 runs on a 2-core AMD EPYC VM (validation/measured/cpu-vm/, "
        "Llama models, full and LoRA, fp32, 1-2 threads; `ftbound validate validation/measured/cpu-vm/cases.csv`) "
        "with the rates `ftbound probe --torch` measured there, step times of 22 configurations (23M-0.9B "
        "parameters) are within -22% to +29% (MAPE 11%) and their peak RSS within -12% to +17% (MAPE 6%; what "
        "glibc's heap keeps is an assumption, src/memory/host_heap.cpp). {}",
        probed ? fmt::format("This plan uses probed rates of {} ({} cores)", dev.name, dev.cores)
               : fmt::format("On {} x {} ({} cores each) the rates are datasheet peaks times efficiencies measured "
                             "on 1-2 cores, and PyTorch's per-op time, fresh-page writes and thread-pool waits are "
                             "not measured: run `ftbound probe --torch --out system.yaml` on the server for them",
                             sys.sockets, dev.name, dev.cores)));
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
    if (js.train.method == Method::qlora)
        out.push_back("QLoRA: in validation steps ran 4-28% slower than predicted with bitsandbytes 0.41 (LitGPT) and "
                      "up to 50% slower at short sequences with auto-gptq (Qwen); peak memory was 11-14% above the "
                      "prediction with bitsandbytes 0.41, 5-16% below it with torchao (torchtune), and GPU memory from "
                      "7% below to 9% above it with auto-gptq");
    if (job.model.is_moe())
        out.push_back("mixture-of-experts: no measured case in validation/ (routing balance, expert GEMM shapes and "
                      "all-to-all traffic are modelled, not checked)");
    return out;
}

}  // namespace ftb
