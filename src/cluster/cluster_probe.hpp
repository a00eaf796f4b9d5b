// `ftbound probe --cluster`, run as a job of the user's launcher: local rank 0 of each node measures the node (the
// single-machine probe), every rank reports to rank 0 within a timeout, rank 0 then directs the fabric
// measurements (pair tests one at a time, then the collectives over every rank that answered) and puts everything
// together. A rank that does not answer in time is named and left out; nothing waits without a deadline.
#pragma once
#include <string>
#include <vector>

#include "cluster/fabric_bench.hpp"
#include "cluster/launcher_env.hpp"
#include "cluster/transport.hpp"
#include "probe/probe.hpp"

namespace ftb::cluster {

struct ClusterProbeOptions {
    probe::ProbeOptions node;  // what local rank 0 of each node measures
    FabricPlan plan;           // rank 0's is the one every rank runs
    double timeout_s = 120;    // the longest a rank may take to report its node, and each wait of the fabric phase
    double send_delay_us = 0;  // this rank's injected delay before each send (FTBOUND_PROBE_SEND_DELAY_US)
    std::string fabric = "auto";  // auto (NCCL when every rank has a GPU of its own, else MPI) | mpi | nccl
    std::string fault;         // tests: "stop" (hang) or "kill" (die) right after the node report (FTBOUND_PROBE_FAULT)
};

struct ClusterProbeOutcome {
    bool rank0 = false;
    std::string text;          // rank 0: the report (text form)
    std::string json;          // rank 0: the report (JSON)
    std::string system_yaml;   // rank 0: the cluster system file; empty when no node was measured
    std::vector<std::string> errors;  // one line each, naming the rank (and its host) that failed
    bool failed = false;       // a rank failed: end the job (Transport::abort_job) once the outputs are written
    bool rank0_ends_job = false;  // not rank 0: a rank failed, and rank 0 ends the job (wait for it, do not finalize)
};

ClusterProbeOutcome run_cluster_probe(const ClusterProbeOptions& options, const LaunchInfo& launch, Transport& t);

}  // namespace ftb::cluster
