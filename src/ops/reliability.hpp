// Reliability of a whole job (DESIGN.md §5 "Reliability"): failure rates by category, job MTBF,
// checkpoint size and write time, the optimum checkpoint interval (Young 1974 / Daly 2006), expected
// interruptions, goodput and what the lost work costs. Pure functions, no I/O. See docs/operations.md.
#pragma once
#include <string>
#include <vector>

namespace ftb {

// One root-cause category of unexpected job interruptions.
struct FailureCategory {
    std::string name;           // e.g. "Faulty GPU"
    std::string component;      // GPU | Host | Network | Dependency | Unplanned Maintenance | Unknown
    double per_gpu_hour = 0;    // interruptions per GPU-hour of the job
};

struct FailureModel {
    std::vector<FailureCategory> categories;
    std::string source;         // where the rates come from, for reports
    double per_gpu_hour() const;  // sum over categories
};

// Default: the 419 unexpected interruptions of Llama 3 405B pre-training (54 days, 16,384 H100),
// per category, each as count / (16,384 GPUs x 54 x 24 h).
FailureModel llama3_failure_model();
// The same category mix scaled to a total rate (the job's `ops.failures_per_gpu_hour` override).
FailureModel scaled_failure_model(const FailureModel& base, double per_gpu_hour);

// What a checkpoint holds, per parameter. Full fine-tuning saves every parameter with its optimizer
// state; LoRA saves the adapters (and their optimizer state) only, the frozen base is never rewritten.
struct CheckpointContents {
    double trainable_params = 0;          // parameters with optimizer state
    double frozen_params_saved = 0;       // frozen parameters written too (0 for adapter-only checkpoints)
    double weight_bytes_per_param = 2;    // the model copy as saved (bf16: 2)
    double master_bytes_per_param = 4;    // fp32 master copy of trainable params (mixed precision; 0 if pure)
    double optimizer_bytes_per_param = 8; // optimizer state of trainable params (AdamW m, v in fp32: 8)
};
double checkpoint_bytes(const CheckpointContents& c);

// The path a checkpoint takes: each GPU copies its shard to host memory over its host link (all GPUs
// in parallel), each node writes its share to storage, and shared storage may cap all nodes together.
// The stages stream (large checkpoints are written in chunks), so the slowest stage sets the time.
// Restoring runs the same path the other way with the storage's read figures.
struct CheckpointPath {
    double bytes_per_node = 0;
    int gpus_per_node = 1;                  // 0 for a CPU server: no device-to-host stage
    double host_link_GBps = 0;              // achievable device<->host, per GPU (0 = no such stage)
    double storage_write_GBps_per_node = 0;
    int nodes = 1;
    double storage_aggregate_GBps = 0;      // shared storage's total write bandwidth (0 = no shared cap)
    double storage_read_GBps_per_node = 0;  // for restores (0 = as the write figures)
    double storage_aggregate_read_GBps = 0;
};
struct CheckpointWrite {
    double seconds = 0;                     // max of the stages below
    double device_to_host_seconds = 0;      // (host to device when restoring)
    double host_to_storage_seconds = 0;     // (storage to host when restoring)
    double shared_storage_seconds = 0;
    std::string bound_by;                   // "pcie" | "storage" | "shared_storage"
};
CheckpointWrite checkpoint_write(const CheckpointPath& path);
CheckpointWrite checkpoint_read(const CheckpointPath& path);
double checkpoint_write_seconds(const CheckpointPath& path);

// Optimum compute time between checkpoints for write time C and mean time between failures M.
double young_interval_seconds(double checkpoint_seconds, double mtbf_seconds);  // sqrt(2 C M)
double daly_interval_seconds(double checkpoint_seconds, double mtbf_seconds);   // Daly's higher-order form

struct CategoryContribution {
    std::string name;
    double expected_interruptions = 0;
    double lost_seconds = 0;          // rework + restarts this category causes
};

struct ReliabilityResult {
    double failures_per_gpu_hour = 0;
    double job_mtbf_seconds = 0;               // 1 / (gpus x rate)
    double checkpoint_bytes = 0;
    double checkpoint_write_seconds = 0;
    double restart_seconds = 0;
    double young_interval_seconds = 0;         // first-order optimum, for reference
    double checkpoint_interval_seconds = 0;    // Daly's optimum, capped at the job's length; never shorter than a
                                               // checkpoint write, a whole number of steps (at least one)
    double checkpoints = 0;                    // written over the job (useful time / interval)
    double expected_interruptions = 0;         // over the job's wall time
    double wall_seconds = 0;                   // useful time + checkpoint writes + rework + restarts
    double checkpoint_overhead_seconds = 0;    // time spent writing checkpoints
    double lost_seconds = 0;                   // wall - useful: checkpoint writes, rework and restarts
    double lost_seconds_per_interruption = 0;  // rework + restart per failure (about interval/2 + restart)
    double goodput = 1;                        // useful time / wall time
    double lost_cost = 0;                      // lost_seconds x price_per_second
    bool progresses = true;                    // false: failures come faster than a checkpoint and restart;
                                               // wall/lost figures are then +infinity and goodput 0
    std::vector<CategoryContribution> categories;
};

// `job_seconds`: useful (failure-free) training time of the whole job. `price_per_second`: what the
// whole job's machines cost per second (0 when unknown). `step_seconds`: one optimizer step (0 = unknown);
// a checkpoint can only be taken between steps. Failures are Poisson (exponential inter-arrival), and may
// strike during checkpoint writes and restarts too (Daly 2006).
ReliabilityResult reliability(const FailureModel& model, int gpus, double job_seconds, double checkpoint_bytes,
                              double checkpoint_write_seconds, double restart_seconds, double price_per_second,
                              double step_seconds = 0);

// The sanity rules on the interval: at least one checkpoint write long (a shorter interval would spend all
// its time writing), and a whole number of steps, at least one (checkpoints are taken between steps).
double checkpoint_interval_rules(double interval_seconds, double checkpoint_seconds, double step_seconds);

}  // namespace ftb
