// Launcher environments -> rank, world size, local rank; and one clear error for each way they can be wrong.
#include <gtest/gtest.h>

#include "cluster/launcher_env.hpp"
#include "ftbound/error.hpp"

using ftb::InputError;
using ftb::cluster::Environment;
using ftb::cluster::launcher_from_environment;

namespace {

// The field (variable) and reason of the error the environment raises; empty field when none is raised.
std::pair<std::string, std::string> error_of(const Environment& env) {
    try {
        launcher_from_environment(env);
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "environment");
        return {e.field(), e.reason()};
    }
    return {};
}

}  // namespace

TEST(LauncherEnv, NoLauncher) {
    EXPECT_FALSE(launcher_from_environment({{"HOME", "/root"}, {"PATH", "/bin"}}));
}

TEST(LauncherEnv, OpenMpi) {
    auto l = launcher_from_environment({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "openmpi");
    EXPECT_EQ(l->rank, 3);
    EXPECT_EQ(l->world_size, 8);
    EXPECT_EQ(l->local_rank, 1);
    EXPECT_EQ(l->local_size, 2);
    EXPECT_FALSE(l->node_index);
}

TEST(LauncherEnv, SlurmStep) {
    auto l = launcher_from_environment({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "5"},
                                        {"SLURM_STEP_NUM_TASKS", "6"}, {"SLURM_LOCALID", "2"}, {"SLURM_NODEID", "1"},
                                        {"SLURM_NTASKS", "6"}});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "slurm");
    EXPECT_EQ(l->rank, 5);
    EXPECT_EQ(l->world_size, 6);
    EXPECT_EQ(l->local_rank, 2);
    EXPECT_EQ(l->node_index, 1);
}

TEST(LauncherEnv, TorchrunInsideSrunIsTorchrun) {
    // torchrun started by srun: one srun task per node, torchrun's processes below it; the process is torchrun's.
    auto l = launcher_from_environment({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"},
                                        {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_LOCALID", "0"},
                                        {"RANK", "11"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "3"},
                                        {"LOCAL_WORLD_SIZE", "8"}, {"GROUP_RANK", "1"}});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "torchrun");
    EXPECT_EQ(l->rank, 11);
    EXPECT_EQ(l->world_size, 16);
    EXPECT_EQ(l->local_rank, 3);
    EXPECT_EQ(l->node_index, 1);
}

TEST(LauncherEnv, MpirunInsideAnAllocationIsOpenMpi) {
    auto l = launcher_from_environment({{"SLURM_JOB_ID", "77"}, {"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"},
                                        {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}, {"SLURM_LOCALID", "0"},
                                        {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "openmpi");
    EXPECT_EQ(l->rank, 2);
}

TEST(LauncherEnv, Mpich) {
    auto l = launcher_from_environment({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "2"}});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "mpich");
    EXPECT_EQ(l->world_size, 2);
}

TEST(LauncherEnv, MissingVariableIsNamed) {
    auto [field, reason] = error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
    EXPECT_EQ(field, "LOCAL_RANK");
    EXPECT_NE(reason.find("RANK, WORLD_SIZE are set"), std::string::npos) << reason;
}

TEST(LauncherEnv, NotAnInteger) {
    auto [field, reason] = error_of({{"OMPI_COMM_WORLD_RANK", "two"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
    EXPECT_EQ(field, "OMPI_COMM_WORLD_RANK");
    EXPECT_NE(reason.find("'two' is not an integer"), std::string::npos) << reason;
    EXPECT_EQ(error_of({{"RANK", "1x"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}}).first, "RANK");
    EXPECT_EQ(error_of({{"RANK", ""}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}}).first, "RANK");
}

TEST(LauncherEnv, Inconsistent) {
    EXPECT_EQ(error_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}}).first, "RANK");
    EXPECT_EQ(error_of({{"RANK", "1"}, {"WORLD_SIZE", "0"}, {"LOCAL_RANK", "0"}}).first, "WORLD_SIZE");
    EXPECT_EQ(error_of({{"RANK", "-1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}}).first, "RANK");
    EXPECT_EQ(error_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}).first,
              "LOCAL_RANK");
    EXPECT_EQ(error_of({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "8"}}).first,
              "LOCAL_WORLD_SIZE");
    EXPECT_EQ(error_of({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}}).first, "LOCAL_RANK");
}

TEST(LauncherEnv, SlurmBatchScriptWithoutSrun) {
    // sbatch's script sees the allocation (SLURM_NTASKS=4, SLURM_PROCID=0) but is one process.
    auto [field, reason] = error_of({{"SLURM_JOB_ID", "77"}, {"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"},
                                     {"SLURM_LOCALID", "0"}, {"SLURM_NODEID", "0"}});
    EXPECT_EQ(field, "SLURM_STEP_ID");
    EXPECT_NE(reason.find("srun"), std::string::npos);
    EXPECT_EQ(error_of({{"SLURM_JOB_ID", "77"}, {"SLURM_NTASKS", "4"}}).first, "SLURM_STEP_ID");
    // salloc's shell without tasks asked for is no launcher at all.
    EXPECT_FALSE(launcher_from_environment({{"SLURM_JOB_ID", "77"}}));
}
