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
    out.push_back(fmt::format(
        "CPU server: read the step time as a lower bound. Against our own PyTorch 1.13 runs on a 2-core AMD EPYC "
        "VM (validation/measured/cpu-vm/, 23M-58M-parameter models, 1-2 threads; `ftbound validate "
        "validation/measured/cpu-vm/cases.csv`) the CPU model predicts steps 2-3x too short (per-op CPU costs "
        "are under-counted); on {} x {} ({} cores each) the matrix rates are the vendor peaks times efficiencies "
        "measured on 1-2 cores, and thread scaling over a socket is not measured",
        sys.sockets, sys.device.name, sys.device.cores));
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
        out.push_back("QLoRA: in validation (LitGPT with bitsandbytes 0.41) steps ran 30-48% slower than predicted "
                      "(dequantisation below memory bandwidth) and memory 11-14% above");
    if (job.model.is_moe())
        out.push_back("mixture-of-experts: no measured case in validation/ (routing balance, expert GEMM shapes and "
                      "all-to-all traffic are modelled, not checked)");
    return out;
}

}  // namespace ftb
