// Reliability model: see reliability.hpp and docs/operations.md ("Reliability").
#include "ops/reliability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ftbound/error.hpp"

namespace ftb {
namespace {

// Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783 (2024), §3.3.4 and Table 5: in a 54-day
// snapshot of 405B pre-training on 16,384 H100 GPUs, 466 job interruptions: 47 planned (maintenance,
// with a checkpoint first: no lost work), 419 unexpected, by root cause as below (counts as printed;
// they sum to 419).
constexpr double kLlama3Gpus = 16384;
constexpr double kLlama3Hours = 54 * 24;
struct Llama3Row {
    const char* name;
    const char* component;
    int interruptions;
};
constexpr Llama3Row kLlama3Table5[] = {
    {"Faulty GPU", "GPU", 148},
    {"GPU HBM3 Memory", "GPU", 72},
    {"Software Bug", "Dependency", 54},
    {"Network Switch/Cable", "Network", 35},
    {"Host Maintenance", "Unplanned Maintenance", 32},
    {"GPU SRAM Memory", "GPU", 19},
    {"GPU System Processor", "GPU", 17},
    {"NIC", "Host", 7},
    {"NCCL Watchdog Timeouts", "Unknown", 7},
    {"Silent Data Corruption", "GPU", 6},
    {"GPU Thermal Interface + Sensor", "GPU", 6},
    {"SSD", "Host", 3},
    {"Power Supply", "Host", 3},
    {"Server Chassis", "Host", 2},
    {"IO Expansion Board", "Host", 2},
    {"Dependency", "Dependency", 2},
    {"CPU", "Host", 2},
    {"System Memory", "Host", 2},
};

bool finite_positive(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

double FailureModel::per_gpu_hour() const {
    double sum = 0;
    for (const FailureCategory& c : categories) sum += c.per_gpu_hour;
    return sum;
}

FailureModel llama3_failure_model() {
    FailureModel m;
    m.source = "Llama 3 (arXiv:2407.21783) Table 5: 419 unexpected interruptions, 54 days, 16,384 H100";
    for (const Llama3Row& r : kLlama3Table5)
        m.categories.push_back({r.name, r.component, r.interruptions / (kLlama3Gpus * kLlama3Hours)});
    return m;
}

FailureModel scaled_failure_model(const FailureModel& base, double per_gpu_hour) {
    FailureModel m = base;
    const double total = base.per_gpu_hour();
    m.source = "ops.failures_per_gpu_hour, split like: " + base.source;
    for (FailureCategory& c : m.categories)
        c.per_gpu_hour = total > 0 ? c.per_gpu_hour / total * per_gpu_hour : 0;
    if (total <= 0 && !m.categories.empty()) m.categories.front().per_gpu_hour = per_gpu_hour;
    return m;
}

double checkpoint_bytes(const CheckpointContents& c) {
    const double trainable = c.trainable_params *
                             (c.weight_bytes_per_param + c.master_bytes_per_param + c.optimizer_bytes_per_param);
    return trainable + c.frozen_params_saved * c.weight_bytes_per_param;
}

namespace {

// The slowest of the three stages for `bytes_per_node`, with the per-node and shared storage rates given.
CheckpointWrite slowest_stage(const CheckpointPath& p, double per_node_GBps, double aggregate_GBps) {
    CheckpointWrite w;
    const double bytes = std::max(0.0, p.bytes_per_node);
    // A stage whose bandwidth is 0 is not part of the path (a CPU server has no device-to-host copy).
    if (p.gpus_per_node > 0 && finite_positive(p.host_link_GBps))
        w.device_to_host_seconds = bytes / p.gpus_per_node / (p.host_link_GBps * 1e9);
    if (finite_positive(per_node_GBps)) w.host_to_storage_seconds = bytes / (per_node_GBps * 1e9);
    if (finite_positive(aggregate_GBps))
        w.shared_storage_seconds = bytes * std::max(1, p.nodes) / (aggregate_GBps * 1e9);
    w.seconds = std::max({w.device_to_host_seconds, w.host_to_storage_seconds, w.shared_storage_seconds});
    w.bound_by = w.seconds == w.shared_storage_seconds && w.seconds > 0 ? "shared_storage"
                 : w.seconds == w.host_to_storage_seconds               ? "storage"
                                                                        : "pcie";
    return w;
}

}  // namespace

CheckpointWrite checkpoint_write(const CheckpointPath& p) {
    return slowest_stage(p, p.storage_write_GBps_per_node, p.storage_aggregate_GBps);
}

CheckpointWrite checkpoint_read(const CheckpointPath& p) {
    return slowest_stage(p, p.storage_read_GBps_per_node > 0 ? p.storage_read_GBps_per_node : p.storage_write_GBps_per_node,
                         p.storage_aggregate_read_GBps > 0 ? p.storage_aggregate_read_GBps : p.storage_aggregate_GBps);
}

double checkpoint_write_seconds(const CheckpointPath& path) { return checkpoint_write(path).seconds; }

double young_interval_seconds(double checkpoint_seconds, double mtbf_seconds) {
    // Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974.
    return std::sqrt(2 * std::max(0.0, checkpoint_seconds) * std::max(0.0, mtbf_seconds));
}

double daly_interval_seconds(double checkpoint_seconds, double mtbf_seconds) {
    // Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", Future
    // Generation Computer Systems 22(3), 2006 (perturbation solution): for C < 2M,
    //   tau = sqrt(2CM) [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C;  otherwise tau = M.
    const double c = std::max(0.0, checkpoint_seconds), m = mtbf_seconds;
    if (!(m > 0)) return 0;
    if (std::isinf(m)) return m;
    if (c >= 2 * m) return m;
    const double x = c / (2 * m);
    return std::sqrt(2 * c * m) * (1 + std::sqrt(x) / 3 + x / 9) - c;
}

double checkpoint_interval_rules(double interval_seconds, double checkpoint_seconds, double step_seconds) {
    double tau = std::max(interval_seconds, checkpoint_seconds);
    if (step_seconds > 0) tau = std::max(1.0, std::ceil(tau / step_seconds - 1e-9)) * step_seconds;
    return tau;
}

ReliabilityResult reliability(const FailureModel& model, int gpus, double job_seconds, double ckpt_bytes,
                              double ckpt_seconds, double restart_seconds, double price_per_second,
                              double step_seconds) {
    FTB_ASSERT(gpus >= 0 && job_seconds >= 0 && ckpt_seconds >= 0 && restart_seconds >= 0);
    ReliabilityResult r;
    r.failures_per_gpu_hour = model.per_gpu_hour();
    r.checkpoint_bytes = ckpt_bytes;
    r.checkpoint_write_seconds = ckpt_seconds;
    r.restart_seconds = restart_seconds;
    const double rate_per_second = gpus * r.failures_per_gpu_hour / 3600.0;
    const double inf = std::numeric_limits<double>::infinity();
    r.job_mtbf_seconds = rate_per_second > 0 ? 1 / rate_per_second : inf;
    const double m = r.job_mtbf_seconds, c = ckpt_seconds, ts = job_seconds;

    r.young_interval_seconds = young_interval_seconds(c, m);
    // Daly's optimum (at most the job), then the rules; a job shorter than the rules' interval checkpoints once, at its end.
    r.checkpoint_interval_seconds = checkpoint_interval_rules(std::min(daly_interval_seconds(c, m), ts), c, step_seconds);

    if (ts <= 0) {  // nothing to run, nothing to lose
        r.checkpoint_interval_seconds = 0;
        r.categories.reserve(model.categories.size());
        for (const FailureCategory& cat : model.categories) r.categories.push_back({cat.name, 0, 0});
        return r;
    }

    // Daly 2006 (complete cost model): expected wall time of a job of useful time Ts, checkpointing every tau at
    // cost C, restarting in R after each failure, failures Poisson with mean M (they can strike during
    // writes and restarts too):  Tw = M e^(R/M) (e^((tau + C)/M) - 1) Ts / tau.
    const double tau = r.checkpoint_interval_seconds;
    double wall;
    if (std::isinf(m)) {
        wall = tau > 0 ? (tau + c) * ts / tau : ts;
    } else if (tau > 0) {
        wall = m * std::exp(restart_seconds / m) * std::expm1((tau + c) / m) * ts / tau;
    } else {  // free checkpoints (C = 0): the limit tau -> 0 of the same expression
        wall = ts * std::exp(restart_seconds / m);
    }
    r.checkpoints = tau > 0 ? ts / tau : 0;
    r.checkpoint_overhead_seconds = r.checkpoints * c;

    r.progresses = std::isfinite(wall);
    if (!r.progresses) {
        r.wall_seconds = r.lost_seconds = r.expected_interruptions = r.lost_seconds_per_interruption = inf;
        r.lost_cost = price_per_second > 0 ? inf : 0;
        r.goodput = 0;
    } else {
        r.wall_seconds = wall;
        r.lost_seconds = std::max(0.0, wall - ts);
        r.expected_interruptions = std::isinf(m) ? 0 : wall / m;
        const double failure_lost = std::max(0.0, r.lost_seconds - r.checkpoint_overhead_seconds);
        r.lost_seconds_per_interruption = r.expected_interruptions > 0 ? failure_lost / r.expected_interruptions : 0;
        r.goodput = ts / wall;
        r.lost_cost = r.lost_seconds * std::max(0.0, price_per_second);
    }

    const double total_rate = r.failures_per_gpu_hour;
    const double failure_lost = r.progresses ? std::max(0.0, r.lost_seconds - r.checkpoint_overhead_seconds) : inf;
    r.categories.reserve(model.categories.size());
    for (const FailureCategory& cat : model.categories) {
        const double share = total_rate > 0 ? cat.per_gpu_hour / total_rate : 0;
        r.categories.push_back({cat.name, share > 0 ? r.expected_interruptions * share : 0,
                                share > 0 ? failure_lost * share : 0});
    }
    return r;
}

}  // namespace ftb
