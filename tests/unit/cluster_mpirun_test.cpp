// `ftbound probe --cluster` under Debian's Open MPI on this host (the fast tier, so CI runs it): four ranks with one
// slowed down finish in under a minute, write a cluster system file `plan` takes and name the slow rank; a rank
// that hangs or dies is named in an `error:` line and the others finish; bad launcher environments get one error.
// Skipped where mpirun or the MPI transport is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "test_paths.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    fs::path p = fs::path(::testing::TempDir()) / ("ftb_mpirun_" + std::to_string(getpid())) / name;
    fs::create_directories(p.parent_path());
    return p;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct ShellRun {
    int code = -1;
    std::string out, err;
    double seconds = 0;
};

// A shell command with stderr kept apart; `timeout` ends it (and its job) if it runs away.
ShellRun shell(const std::string& command, const std::string& tag) {
    const fs::path err = scratch(tag + ".err");
    ShellRun r;
    const auto t0 = std::chrono::steady_clock::now();
    FILE* p = popen(("timeout -k 5 120 " + command + " 2>" + err.string()).c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(err);
    return r;
}

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }
bool have_transport() { return fs::exists(fs::path(ftb_test::binary()).parent_path() / "libftbound_mpi.so"); }

// Open MPI refuses root without these (CI runs as root); --oversubscribe: more ranks than this host's cores.
// Open MPI's own allocations outlive MPI_Finalize: the LeakSanitizer suppressions name its libraries only.
std::string mpirun() {
    const std::string supp = std::string(ftb_test::source_dir()) + "/tests/lsan_openmpi.supp";
    // The slow unwinder: Open MPI is built without frame pointers, and a leak's stack must reach its libraries.
    return "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
           "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=" + supp +
           " mpirun --bind-to none -x LSAN_OPTIONS -x ASAN_OPTIONS";
}

std::string probe_args(const fs::path& out, int timeout_s) {
    return std::string(ftb_test::binary()) + " probe --cluster --quick --no-gpu --dir " + out.parent_path().string() +
           " --timeout " + std::to_string(timeout_s) + " --out " + out.string();
}

}  // namespace

TEST(ClusterMpirun, FourRanksSlowRankNamedPlanTakesTheFile) {
    if (!have_mpirun() || !have_transport()) GTEST_SKIP() << "mpirun or libftbound_mpi.so missing (scripts/setup.sh)";
    const fs::path out = scratch("cluster.yaml");
    // MPMD: ranks 0-1, then rank 2 with a 3 ms delay before each of its sends, then rank 3.
    const std::string args = probe_args(out, 30);
    ShellRun r = shell(mpirun() + " -np 2 " + args + " : -np 1 env FTBOUND_PROBE_SEND_DELAY_US=3000 " + args + " : -np 1 " + args,
                  "four");
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_LT(r.seconds, 60.0);
    EXPECT_NE(r.out.find("cluster: 4 ranks on 1 nodes (openmpi)"), std::string::npos) << r.out;
    YAML::Node y = YAML::LoadFile(out.string());
    const YAML::Node c = y["cluster"];
    EXPECT_EQ(c["ranks_answered"].as<int>(), 4);
    EXPECT_EQ(c["failed"].size(), 0u);
    EXPECT_EQ(c["tiers"]["intra_node"]["p2p_GBps"]["count"].as<int>(), 4);
    EXPECT_EQ(c["collectives"].size(), 16u);  // 4 ops x 4 sizes
    for (const auto& coll : c["collectives"]) EXPECT_GT(coll["busbw_GBps"].as<double>(), 0) << coll["op"];
    bool slow_named = false;
    for (const auto& o : c["outliers"]) {
        EXPECT_EQ(o["rank"].as<int>(), 2) << "only the slowed rank is an outlier: " << o["link"];
        slow_named |= o["rank"].as<int>() == 2 && o["figure"].as<std::string>() == "p2p_GBps";
    }
    EXPECT_TRUE(slow_named) << slurp(out);
    // The planner takes the file; bf16 on this CPU is planned (converted, slowly), not refused.
    const fs::path job = scratch("job.yaml");
    std::ofstream(job) << "model: {model_type: llama, vocab_size: 32000, hidden_size: 384, intermediate_size: 1024,\n"
                          "        num_hidden_layers: 6, num_attention_heads: 6, num_key_value_heads: 6}\n"
                          "train: {method: full, precision: bf16, optimizer: adamw, micro_batch: 1, global_batch: 1, seq_len: 256}\n"
                          "hardware: {system: " << out.string() << ", nodes: 1}\n";
    ShellRun plan = shell(std::string(ftb_test::binary()) + " plan " + job.string() + " --json", "plan");
    EXPECT_EQ(plan.code, 0) << plan.err;
    EXPECT_NE(plan.out.find("\"step\""), std::string::npos);
}

TEST(ClusterMpirun, HungRankIsNamedAndTheOthersFinish) {
    if (!have_mpirun() || !have_transport()) GTEST_SKIP() << "mpirun or libftbound_mpi.so missing (scripts/setup.sh)";
    const fs::path out = scratch("hung.yaml");
    const std::string args = probe_args(out, 4);
    // Rank 2 stops (SIGSTOP) right after its node report: it answers nothing more, as a stuck process.
    ShellRun r = shell(mpirun() + " -np 2 " + args + " : -np 1 env FTBOUND_PROBE_FAULT=stop " + args + " : -np 1 " + args, "hung");
    EXPECT_NE(r.code, 0);
    EXPECT_LT(r.seconds, 60.0);
    EXPECT_NE(r.err.find("error: rank 2 ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did not report within"), std::string::npos) << r.err;
    YAML::Node c = YAML::LoadFile(out.string())["cluster"];  // the others' measurements, written all the same
    ASSERT_EQ(c["failed"].size(), 1u);
    EXPECT_EQ(c["failed"][0]["rank"].as<int>(), 2);
    EXPECT_EQ(c["ranks_answered"].as<int>(), 3);
    EXPECT_GT(c["collectives"].size(), 0u);  // ranks 0, 1, 3 without rank 2
    EXPECT_EQ(c["collectives"][0]["ranks"].as<int>(), 3);
}

TEST(ClusterMpirun, DeadRankIsNamedAndTheOthersFinish) {
    if (!have_mpirun() || !have_transport()) GTEST_SKIP() << "mpirun or libftbound_mpi.so missing (scripts/setup.sh)";
    const fs::path out = scratch("dead.yaml");
    const std::string args = probe_args(out, 4);
    // Open MPI 4's mpirun ends the whole job when a process dies, unless told to let the others go on.
    ShellRun r = shell(mpirun() + " --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0 -np 2 " + args +
                      " : -np 1 env FTBOUND_PROBE_FAULT=kill " + args,
                  "dead");
    // (Under those two settings mpirun's own exit status does not follow MPI_Abort's: the error line and the file say.)
    EXPECT_LT(r.seconds, 60.0);
    EXPECT_NE(r.err.find("error: rank 2 ("), std::string::npos) << r.err;
    YAML::Node c = YAML::LoadFile(out.string())["cluster"];
    ASSERT_EQ(c["failed"].size(), 1u);
    EXPECT_EQ(c["failed"][0]["rank"].as<int>(), 2);
    EXPECT_EQ(c["ranks_answered"].as<int>(), 2);
}

TEST(ClusterMpirun, BadLauncherEnvironmentsGetOneError) {
    const std::string bin = ftb_test::binary();
    const std::pair<std::string, std::string> cases[] = {
        {"env -u OMPI_COMM_WORLD_RANK", "error: environment: --cluster: no launcher's rank variables are set"},
        {"env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4", "error: environment: OMPI_COMM_WORLD_LOCAL_RANK: missing"},
        {"env RANK=4 WORLD_SIZE=4 LOCAL_RANK=0", "error: environment: RANK: 4 is not below WORLD_SIZE = 4"},
        {"env SLURM_JOB_ID=7 SLURM_NTASKS=4 SLURM_PROCID=0 SLURM_LOCALID=0", "error: environment: SLURM_STEP_ID: missing"},
        {"env FTBOUND_PROBE_SEND_DELAY_US=soon OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0",
         "error: environment: FTBOUND_PROBE_SEND_DELAY_US:"},
    };
    for (const auto& [env, want] : cases) {
        ShellRun r = shell(env + " " + bin + " probe --cluster --quick", "badenv");
        EXPECT_EQ(r.code, 2) << env;
        EXPECT_TRUE(r.out.empty()) << env;
        EXPECT_EQ(r.err.rfind(want, 0), 0u) << env << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}
