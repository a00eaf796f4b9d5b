#include "cluster/launcher_env.hpp"

#include <unistd.h>

#include <charconv>
#include <vector>

#include "ftbound/error.hpp"

extern char** environ;

namespace ftb::cluster {
namespace {

// The variables one launcher sets in every process it starts, innermost launcher first.
// torchrun: torch/distributed/run.py ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK").
// Open MPI: mpirun(1) "Environment variables" (OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE}).
// MPICH / Intel MPI Hydra: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS.
// Slurm: srun(1) "OUTPUT ENVIRONMENT VARIABLES" (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_NODEID).
struct LauncherVars {
    const char* launcher;
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;  // nullptr: the launcher does not say
    const char* node_index;  // nullptr: the launcher does not say
};

constexpr LauncherVars kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr},
    {"slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", nullptr, "SLURM_NODEID"},
};

const std::string* find(const Environment& env, const char* name) {
    if (!name) return nullptr;
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
}

int integer(const Environment& env, const char* name, int min) {
    const std::string* v = find(env, name);
    int x = 0;
    const char* end = v->data() + v->size();
    auto [p, ec] = std::from_chars(v->data(), end, x);
    if (ec != std::errc() || p != end || v->empty())
        throw InputError("environment", name, "'" + *v + "' is not an integer");
    if (x < min) throw InputError("environment", name, std::to_string(x) + " is below " + std::to_string(min));
    return x;
}

// A launcher counts as present when any of its rank variables is set; then all of them must be.
bool present(const Environment& env, const LauncherVars& l) {
    return find(env, l.rank) || find(env, l.size) || find(env, l.local_rank);
}

void require_all(const Environment& env, const LauncherVars& l) {
    std::vector<std::string> set, missing;
    for (const char* v : {l.rank, l.size, l.local_rank}) (find(env, v) ? set : missing).push_back(v);
    if (missing.empty()) return;
    std::string have;
    for (auto& s : set) have += (have.empty() ? "" : ", ") + s;
    throw InputError("environment", missing.front(),
                     "missing, while " + have + " " + (set.size() == 1 ? "is" : "are") + " set: " + l.launcher +
                         " sets " + l.rank + ", " + l.size + " and " + l.local_rank + " together");
}

LaunchInfo read(const Environment& env, const LauncherVars& l) {
    require_all(env, l);
    LaunchInfo info;
    info.launcher = l.launcher;
    info.rank_variable = l.rank;
    info.world_size = integer(env, l.size, 1);
    info.rank = integer(env, l.rank, 0);
    info.local_rank = integer(env, l.local_rank, 0);
    if (find(env, l.local_size)) info.local_size = integer(env, l.local_size, 1);
    if (find(env, l.node_index)) info.node_index = integer(env, l.node_index, 0);
    if (info.rank >= info.world_size)
        throw InputError("environment", l.rank, std::to_string(info.rank) + " is not below " + l.size + " = " +
                                                    std::to_string(info.world_size));
    if (info.local_size && *info.local_size > info.world_size)
        throw InputError("environment", l.local_size, std::to_string(*info.local_size) + " processes on this node is more than " +
                                                          l.size + " = " + std::to_string(info.world_size));
    const int node_limit = info.local_size.value_or(info.world_size);
    if (info.local_rank >= node_limit)
        throw InputError("environment", l.local_rank, std::to_string(info.local_rank) + " is not below " +
                                                          (info.local_size ? l.local_size : l.size) + " = " +
                                                          std::to_string(node_limit));
    if (info.local_rank > info.rank)
        throw InputError("environment", l.local_rank, std::to_string(info.local_rank) + " is above the rank " +
                                                          l.rank + " = " + std::to_string(info.rank));
    return info;
}

// A batch script sees the allocation's SLURM_NTASKS (and SLURM_PROCID=0) but is one process, not a step of them:
// taking it for rank 0 of N would wait for N-1 ranks that never start.
void refuse_batch_script(const Environment& env) {
    if (find(env, "SLURM_STEP_ID") || find(env, "SLURM_STEPID")) return;
    throw InputError("environment", "SLURM_STEP_ID",
                     "missing: this is a Slurm batch script, not a job step; start ftbound with srun "
                     "(`srun ftbound probe --cluster ...`) so that every task gets its rank");
}

}  // namespace

std::optional<LaunchInfo> launcher_from_environment(const Environment& env) {
    for (const LauncherVars& l : kLaunchers) {
        if (!present(env, l)) continue;
        if (std::string(l.launcher) == "slurm") refuse_batch_script(env);
        return read(env, l);
    }
    if (find(env, "SLURM_JOB_ID") && find(env, "SLURM_NTASKS")) refuse_batch_script(env);
    return std::nullopt;
}

Environment current_environment() {
    Environment env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        const auto eq = kv.find('=');
        if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return env;
}

}  // namespace ftb::cluster
