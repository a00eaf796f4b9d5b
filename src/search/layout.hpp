// One point of the search space: everything `ftbound search` may change about a job (the hardware, the
// parallel layout, the micro-batch, recompute, offload, loss kernel, torch.compile and, when allowed, changes
// that alter the training). The model, data, global batch and the rest of the job stay as the user wrote them.
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ftbound/job.hpp"

namespace ftb {

struct Layout {
    int system = 0;                    // index into the search's systems
    int nodes = 1;
    int64_t tp = 1, pp = 1, cp = 1, dp = 1, ep = 1;
    bool sequence_parallel = false;
    int zero = 0;
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int64_t virtual_stages = 1;
    int64_t micro_batch = 1;
    Recompute recompute = Recompute::none;
    OffloadTarget offload_optimizer = OffloadTarget::none;
    OffloadTarget offload_params = OffloadTarget::none;
    OffloadTarget offload_activations = OffloadTarget::none;
    LossImpl loss = LossImpl::standard;
    bool compile = false;
    // Changes that alter the training (only with --allow).
    Precision precision = Precision::bf16;
    Method method = Method::full;
    Optimizer optimizer = Optimizer::adamw;

    // A total order: ties between equally good configurations are broken the same way on every run.
    auto operator<=>(const Layout&) const = default;
};

// The job's own layout on its own system (index `system`).
Layout layout_of(const Job& job, int system);

// Layouts the model treats identically collapse to one: without a pipeline the schedule does not exist
// (1f1b, one virtual stage); one virtual stage is plain 1F1B; only the interleaved schedule has virtual stages.
Layout canonical(Layout l);

// Writes the layout's parallelism, micro-batch, recompute, loss, compile, precision, method, optimizer and
// offload into `spec` (the search reuses one job and rewrites these per candidate).
void write_layout(const Layout& l, JobSpec& spec);

// `base` with the layout applied; `system` is the server (its node count is set from the layout). The result
// still has to pass check_job.
Job apply_layout(const Job& base, const Layout& l, const SystemSpec& system);

// The job-file fields that differ between two layouts, as --set style dotted paths and values, in job-file order.
// `system_name` is what hardware.system would say for `to` when the server changes.
std::vector<std::pair<std::string, std::string>> layout_changes(const Layout& from, const Layout& to,
                                                                const std::string& system_name);

// Short one-line form for tables: "tp8 pp16/i2 cp1 dp128 sp z1 mb1 rc=full off=opt loss=fused compile".
std::string layout_summary(const Layout& l);

}  // namespace ftb
