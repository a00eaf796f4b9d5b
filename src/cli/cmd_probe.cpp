// `ftbound probe [--json] [--out SYSTEM.yaml] [--dir DIR] [--quick]`: measure this machine (CONTRACT.md).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "probe/probe.hpp"

namespace ftb::cli {
namespace {

struct ProbeArgs {
    bool json = false;
    bool quick = false;
    bool no_gpu = false;
    bool torch = false;
    std::string python = "python3";
    std::string out;
    std::string dir = ".";
    int threads = 0;
};

// Refuses an unwritable destination before spending half a minute measuring: opens it for appending (which
// changes nothing in an existing file) and removes it again if the check created it.
void check_writable(const std::string& out) {
    namespace fs = std::filesystem;
    const fs::path parent = fs::path(out).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec)) throw InputError(out, "--out", "its folder does not exist");
    if (fs::is_directory(out, ec)) throw InputError(out, "--out", "is a folder; give a file name such as system.yaml");
    const bool existed = fs::exists(out, ec);
    {
        std::ofstream f(out, std::ios::binary | std::ios::app);
        if (!f) throw InputError(out, "--out", "cannot write there (permissions or a read-only file system)");
    }
    if (!existed) fs::remove(out, ec);
}

int run_probe_command(const ProbeArgs& a) {
    if (!a.out.empty()) check_writable(a.out);
    probe::ProbeOptions opt;
    opt.storage_dir = a.dir;
    opt.quick = a.quick;
    opt.gpu = !a.no_gpu;
    opt.threads = a.threads;
    opt.torch = a.torch;
    opt.python = a.python;
    probe::ProbeReport report = probe::run_probe(opt);
    std::string text = a.json ? probe::to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : probe::to_text(report);
    if (!a.out.empty()) {
        std::string yaml = probe::to_system_yaml(report);
        std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
        if (!f || !(f << yaml) || !f.flush()) throw InputError(a.out, "--out", "cannot write the system file");
        if (!a.json) text += "system file written to " + a.out + "\n";
    }
    std::cout << text;
    return 0;
}

const Register reg{Command{
    "probe", "measure this machine (host, storage, PCIe, GPUs) and write a calibrated system file",
    [](CLI::App& sub) -> std::function<int()> {
        auto args = std::make_shared<ProbeArgs>();
        sub.add_flag("--json", args->json, "print one JSON document");
        sub.add_option("--out", args->out, "write a system file (data/README.md systems/ format) with the measured figures");
        sub.add_option("--dir", args->dir, "folder whose storage is measured (default: the current folder)");
        sub.add_flag("--quick", args->quick, "smaller problems and fewer repetitions");
        sub.add_flag("--no-gpu", args->no_gpu, "skip NVML and the CUDA measurements");
        sub.add_flag("--torch", args->torch,
                     "also time PyTorch's per-op host cost on this CPU (runs python3 with torch; the CPU step-time model uses it)");
        sub.add_option("--python", args->python, "with --torch: the Python interpreter that has torch (default: python3)");
        sub.add_option("--threads", args->threads, "threads for the host benchmarks (default: every CPU)")->check(CLI::Range(0, 4096));
        return [args] { return run_probe_command(*args); };
    }}};

}  // namespace
}  // namespace ftb::cli
