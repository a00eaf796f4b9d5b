// `ftbound probe [--json] [--out SYSTEM.yaml] [--dir DIR] [--quick]`: measure this machine (CONTRACT.md);
// `--cluster` under srun / mpirun / torchrun: every node and the fabric between them (docs/cluster.md).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/command.hpp"
#include "cluster/cluster_probe.hpp"
#include "cluster/launcher_env.hpp"
#include "cluster/mpi_transport.hpp"
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
    bool cluster = false;
    double timeout_s = 120;
    std::string fabric = "auto";
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

probe::ProbeOptions node_options(const ProbeArgs& a) {
    probe::ProbeOptions opt;
    opt.storage_dir = a.dir;
    opt.quick = a.quick;
    opt.gpu = !a.no_gpu;
    opt.threads = a.threads;
    opt.torch = a.torch;
    opt.python = a.python;
    return opt;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f || !(f << text) || !f.flush()) throw InputError(path, "--out", "cannot write the system file");
}

// The slow rank of the cluster tests: a delay before each of this rank's sends in the fabric measurements.
double send_delay_us() {
    const char* v = std::getenv("FTBOUND_PROBE_SEND_DELAY_US");
    if (!v || !*v) return 0;
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    if (*end || !std::isfinite(d) || d < 0 || d > 1e7)
        throw InputError("environment", "FTBOUND_PROBE_SEND_DELAY_US", std::string("'") + v + "' is not a delay in microseconds (0 to 1e7)");
    return d;
}

// The cluster tests' failing rank: "stop" hangs it, "kill" ends it, right after its node report.
std::string injected_fault() {
    const char* v = std::getenv("FTBOUND_PROBE_FAULT");
    const std::string f = v ? v : "";
    if (!f.empty() && f != "stop" && f != "kill")
        throw InputError("environment", "FTBOUND_PROBE_FAULT", "'" + f + "': give stop or kill");
    return f;
}

cluster::FabricPlan fabric_plan(const ProbeArgs& a) {
    cluster::FabricPlan p;
    p.timeout_s = a.timeout_s;
    if (a.quick) {
        p.collective_bytes = {4096, 65536, 1 << 20, 4 << 20};
        p.samples = 3;
        p.collective_reps = 3;
        p.p2p_bytes = 1 << 20;
        p.p2p_reps = 4;
        p.latency_reps = 10;
    } else {
        p.collective_bytes = {4096, 65536, 1 << 20, 16 << 20, 64 << 20};
    }
    return p;
}

// Every rank runs this; rank 0 prints the report and writes the file. A rank that failed ends the job after that.
int run_cluster_command(const ProbeArgs& a) {
    const auto launch = cluster::launcher_from_environment(cluster::current_environment());
    if (!launch)
        throw InputError("environment", "--cluster",
                         "no launcher's rank variables are set: start every rank with the job's launcher, e.g. "
                         "`mpirun -np 4 ftbound probe --cluster`, `srun ftbound probe --cluster` (docs/cluster.md)");
    if (launch->launcher == "torchrun")
        throw InputError("environment", "--cluster",
                         "torchrun starts no MPI, and the fabric is measured over MPI: start it with srun or mpirun "
                         "(docs/cluster.md)");
    cluster::ClusterProbeOptions o;
    o.node = node_options(a);
    o.plan = fabric_plan(a);
    o.timeout_s = a.timeout_s;
    o.fabric = a.fabric;
    o.send_delay_us = send_delay_us();
    o.fault = injected_fault();
    if (launch->rank == 0 && !a.out.empty()) check_writable(a.out);
    const std::unique_ptr<cluster::Transport> t = cluster::open_mpi_transport();
    if (t->rank() != launch->rank || t->size() != launch->world_size)
        throw InputError("environment", launch->rank_variable,
                         "the launcher says rank " + std::to_string(launch->rank) + " of " + std::to_string(launch->world_size) +
                             ", MPI says rank " + std::to_string(t->rank()) + " of " + std::to_string(t->size()) +
                             ": was ftbound started by another launcher than the one whose variables these are?");
    const cluster::ClusterProbeOutcome r = cluster::run_cluster_probe(o, *launch, *t);
    if (r.rank0) {
        std::string text = a.json ? r.json : r.text;
        if (!a.out.empty() && !r.system_yaml.empty()) {
            write_file(a.out, r.system_yaml);
            if (!a.json) text += "cluster system file written to " + a.out + "\n";
        }
        std::cout << text << std::flush;
    }
    for (const auto& e : r.errors) std::cerr << "error: " << e << "\n";
    std::cerr.flush();
    if (r.failed) t->abort_job(2);
    if (r.rank0_ends_job) {
        // Rank 0 ends the job (MPI_Abort) once its file is written; MPI_Finalize would wait for the failed rank.
        std::this_thread::sleep_for(std::chrono::seconds(60));
        std::_Exit(2);
    }
    t->finish();
    return 0;
}

int run_probe_command(const ProbeArgs& a) {
    if (a.cluster) return run_cluster_command(a);
    if (!a.out.empty()) check_writable(a.out);
    probe::ProbeReport report = probe::run_probe(node_options(a));
    std::string text = a.json ? probe::to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : probe::to_text(report);
    if (!a.out.empty()) {
        write_file(a.out, probe::to_system_yaml(report));
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
        sub.add_flag("--cluster", args->cluster,
                     "run as a job of srun/mpirun (every rank): measure every node and the fabric between them; rank 0 "
                     "writes one cluster system file (docs/cluster.md)");
        sub.add_option("--timeout", args->timeout_s,
                       "with --cluster: seconds a rank may take to report, and each fabric wait (default 120)")
            ->check(CLI::Range(1.0, 86400.0));
        sub.add_option("--fabric", args->fabric,
                       "with --cluster: auto (NCCL when every rank has a GPU of its own, else MPI), mpi or nccl")
            ->check(CLI::IsMember({"auto", "mpi", "nccl"}));
        sub.add_option("--threads", args->threads, "threads for the host benchmarks (default: every CPU)")->check(CLI::Range(0, 4096));
        return [args] { return run_probe_command(*args); };
    }}};

}  // namespace
}  // namespace ftb::cli
