// The space `ftbound search` walks, dimension by dimension (docs/search.md, "The space"):
//   meshes    server x node count x tp x pp x cp x dp x ep, with tp*pp*cp*dp = the GPUs and dp dividing the
//             global batch (the global batch is kept; micro-batch x accumulation fill it)
//   variants  sequence parallel, ZeRO stage, pipeline schedule and virtual stages, loss kernel, torch.compile,
//             and the training changes the user allowed (fp8, LoRA, QLoRA, 8-bit AdamW)
//   micro-batches   the divisors of global_batch / dp, smallest first
//   memory savers   every recompute variant x offload: none and the job's own setting, the framework's
//                   offloads (optimizer, + parameters, + activations) only where those do not fit
// Each dimension offers what the framework supports (FrameworkSupport) plus the job's own value, so the job
// as written is always a point of the space.
#pragma once
#include <cstdint>
#include <vector>

#include "ftbound/job.hpp"
#include "search/layout.hpp"
#include "search/search.hpp"

namespace ftb {

struct Mesh {
    int system = 0;
    int nodes = 1;
    int64_t tp = 1, pp = 1, cp = 1, dp = 1, ep = 1;
};

// One offload setting (optimizer, params, activations); levels are ordered lightest first.
struct OffloadLevel {
    OffloadTarget optimizer = OffloadTarget::none;
    OffloadTarget params = OffloadTarget::none;
    OffloadTarget activations = OffloadTarget::none;
    bool operator==(const OffloadLevel&) const = default;
};

// Offload settings of one ZeRO stage: `always` tried at every micro-batch (none, and the job's own setting);
// `when_needed` (lightest first) only where nothing in `always` fits, up to the first level that fits.
// `least_memory`: the settings among which the least GPU memory of all of them is found.
struct OffloadChoices {
    std::vector<OffloadLevel> always, when_needed, least_memory;
};

class SearchSpace {
public:
    SearchSpace(const Job& job, const SearchRequest& request);

    const std::vector<Mesh>& meshes() const { return meshes_; }
    // Meshes that --max-gpus removed (for the answer when nothing is left).
    int64_t meshes_over_gpu_limit() const { return over_gpu_limit_; }
    // Layouts of a mesh with every dimension but the micro-batch and the memory savers chosen.
    std::vector<Layout> variants(const Mesh& mesh) const;
    // A variant that lacks a free improvement the framework has (torch.compile, the fused loss, sequence
    // parallelism): the same variant with it uses no more memory and is no slower, so the walk skips it.
    bool lacks_free_improvement(const Layout& variant) const;
    std::vector<int64_t> micro_batches(const Mesh& mesh) const;   // ascending
    const std::vector<Recompute>& recompute_chain() const { return recompute_; }   // lightest first
    OffloadChoices offload_choices(const Layout& variant) const;   // by its ZeRO stage and optimizer

    // Is `l` (canonical) a point of the space? (Validity rules of check_job are not re-checked here.)
    bool contains(const Layout& l) const;

private:
    void add_meshes(int system, int nodes);
    std::vector<int64_t> tp_options(const SearchSystem& s) const;
    std::vector<int64_t> pp_options() const;
    std::vector<int64_t> cp_options() const;
    std::vector<int64_t> ep_options() const;

    Layout job_layout_;
    const SearchRequest& request_;
    int64_t layers_ = 1, seq_len_ = 1, global_batch_ = 1, experts_ = 0;
    std::vector<Mesh> meshes_;
    int64_t over_gpu_limit_ = 0;
    std::vector<Recompute> recompute_;
    OffloadLevel own_offload_;
    std::vector<PipelineSchedule> schedules_;
    std::vector<int> zero_;
    std::vector<bool> sequence_parallel_;
    std::vector<LossImpl> losses_;
    std::vector<bool> compile_;
    std::vector<Precision> precisions_;
    std::vector<Method> methods_;
    std::vector<Optimizer> optimizers_;
};

std::vector<int64_t> divisors(int64_t n);   // ascending

}  // namespace ftb
