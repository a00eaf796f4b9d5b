// `probe --cluster` under a real Slurm on this host (the slow tier: -DFTBOUND_SLOW_TESTS=ON, `ctest -L slow`): a
// one-node slurmctld + slurmd of Debian's slurm-wlm with a configuration of this test's own (no munge: auth/none),
// then srun, an sbatch script as docs/cluster.md shows it, and a batch script that forgets srun. Runs as root;
// skipped without slurm-wlm.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace {

std::string capture(const std::string& command, int* code = nullptr) {
    std::string out;
    FILE* p = popen(command.c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    const int status = pclose(p);
    if (code) *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
    const pid_t pid = fork();
    if (pid == 0) {
        freopen(log.c_str(), "w", stdout);
        freopen(log.c_str(), "a", stderr);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    return pid;
}

// A one-node Slurm of this test: its own ports, state and spool folders; the daemons end with the fixture.
class Slurm : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0 || std::system("command -v slurmctld >/dev/null && command -v slurmd >/dev/null") != 0)
            GTEST_SKIP() << "needs root and slurm-wlm (apt-get install slurm-wlm)";
        dir_ = fs::path(::testing::TempDir()) / ("ftb_slurm_" + std::to_string(getpid()));
        for (const char* d : {"state", "spool"}) fs::create_directories(dir_ / d);
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        const std::string short_host = std::string(host).substr(0, std::string(host).find('.'));
        const int port = 20000 + getpid() % 20000;
        conf_ = dir_ / "slurm.conf";
        std::ofstream(conf_) << "ClusterName=ftbtest\nSlurmctldHost=" << short_host << "\nSlurmctldPort=" << port
                             << "\nSlurmdPort=" << port + 1
                             << "\nAuthType=auth/none\nCredType=cred/none\nSlurmUser=root\nSlurmdUser=root\n"
                                "StateSaveLocation=" << (dir_ / "state").string() << "\nSlurmdSpoolDir=" << (dir_ / "spool").string()
                             << "\nSlurmctldPidFile=" << (dir_ / "ctld.pid").string() << "\nSlurmdPidFile=" << (dir_ / "d.pid").string()
                             << "\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
                                "SchedulerType=sched/builtin\nSelectType=select/linear\nReturnToService=2\n"
                                "NodeName=" << short_host << " CPUs=" << std::thread::hardware_concurrency()
                             << " State=UNKNOWN\nPartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
        setenv("SLURM_CONF", conf_.c_str(), 1);
        ctld_ = spawn({"slurmctld", "-D", "-f", conf_.string()}, dir_ / "ctld.log");
        slurmd_ = spawn({"slurmd", "-D", "-f", conf_.string()}, dir_ / "slurmd.log");
        for (int i = 0; i < 100; ++i) {
            if (capture("sinfo -h -o %T 2>/dev/null").find("idle") != std::string::npos) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        FAIL() << "the test's Slurm did not come up: " << slurp(dir_ / "ctld.log") << slurp(dir_ / "slurmd.log");
    }
    void TearDown() override {
        for (pid_t p : {slurmd_, ctld_})
            if (p > 0) {
                kill(p, SIGTERM);
                waitpid(p, nullptr, 0);
            }
        unsetenv("SLURM_CONF");
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    std::string probe(const fs::path& out) const {
        return std::string(FTBOUND_BINARY) + " probe --cluster --quick --no-gpu --timeout 30 --dir " + dir_.string() +
               " --out " + out.string();
    }

    fs::path dir_, conf_;
    pid_t ctld_ = -1, slurmd_ = -1;
};

}  // namespace

TEST_F(Slurm, SrunStepAndSbatchScript) {
    const fs::path out = dir_ / "srun.yaml";
    int code = -1;
    const std::string text = capture("timeout 180 srun --mpi=pmix --overcommit -n 3 " + probe(out) + " 2>&1", &code);
    ASSERT_EQ(code, 0) << text;
    YAML::Node c = YAML::LoadFile(out.string())["cluster"];
    EXPECT_EQ(c["launcher"].as<std::string>(), "slurm");
    EXPECT_EQ(c["ranks_answered"].as<int>(), 3);
    EXPECT_EQ(c["failed"].size(), 0u);

    // docs/cluster.md's sbatch script, with srun starting the ranks.
    const fs::path script = dir_ / "probe.sbatch", batch_out = dir_ / "batch.yaml";
    std::ofstream(script) << "#!/bin/bash\n#SBATCH --job-name=ftbound-probe\n#SBATCH --ntasks=2\n"
                          << "srun --mpi=pmix " << probe(batch_out) << "\n";
    capture("timeout 180 sbatch --wait --overcommit -o " + (dir_ / "batch.log").string() + " " + script.string(), &code);
    ASSERT_EQ(code, 0) << slurp(dir_ / "batch.log");
    EXPECT_EQ(YAML::LoadFile(batch_out.string())["cluster"]["ranks_answered"].as<int>(), 2);
}

TEST_F(Slurm, BatchScriptWithoutSrunIsOneError) {
    const fs::path script = dir_ / "nosrun.sbatch";
    std::ofstream(script) << "#!/bin/bash\n" << probe(dir_ / "x.yaml") << "\n";
    int code = -1;
    capture("timeout 120 sbatch --wait -n 2 --overcommit -o " + (dir_ / "nosrun.log").string() + " " + script.string(), &code);
    EXPECT_NE(code, 0);
    const std::string log = slurp(dir_ / "nosrun.log");
    EXPECT_NE(log.find("error: environment: SLURM_STEP_ID: missing: this is a Slurm batch script"), std::string::npos) << log;
}
