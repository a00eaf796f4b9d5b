// Which rank this process is, as the user's launcher says it: srun (Slurm), mpirun/mpiexec (Open MPI, MPICH and
// Intel MPI's Hydra) or torchrun. Pure: takes the environment as a map, so tests give tiny ones.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace ftb::cluster {

using Environment = std::map<std::string, std::string>;

struct LaunchInfo {
    std::string launcher;             // slurm | openmpi | mpich | torchrun
    int rank = 0;                     // in [0, world_size)
    int world_size = 1;
    int local_rank = 0;               // rank among the processes on this node
    std::optional<int> local_size;    // processes on this node, where the launcher says
    std::optional<int> node_index;    // which node, where the launcher says (SLURM_NODEID, GROUP_RANK)
    std::string rank_variable;        // the variable the rank came from, for messages
};

// The launcher that started this process, or nullopt when none did (no rank variables at all).
// When several launchers' variables are present the innermost wins: torchrun's inside srun, mpirun's inside an
// allocation (Slurm's then describe the allocation, not this process).
// Throws InputError("environment", VARIABLE, reason) for a launcher's variables that are missing, not integers, or
// inconsistent (rank outside the world, local rank outside the node), and for a Slurm batch script that runs
// ftbound without srun (SLURM_JOB_ID set, no step).
std::optional<LaunchInfo> launcher_from_environment(const Environment& env);

// This process's environment as a map.
Environment current_environment();

}  // namespace ftb::cluster
