// What a training framework implements, as far as `ftbound search` may change a job: parallel dimensions,
// pipeline schedules, ZeRO stages, offloads, recompute variants, loss kernels, torch.compile, fp8, adapters.
// Loaded from the `supports:` section of data/frameworks/NAME.yaml; each entry cites the framework's source.
#pragma once
#include <string>
#include <vector>

#include "ftbound/job_spec.hpp"

namespace ftb {

struct FrameworkSupport {
    bool tensor_parallel = true;
    std::vector<PipelineSchedule> pipeline = {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved};  // empty: no pp
    bool context_parallel = true;
    bool expert_parallel = true;
    bool sequence_parallel = true;
    std::vector<int> zero = {0, 1, 2, 3};
    bool offload_optimizer = true;   // to host RAM
    bool offload_params = true;
    bool offload_activations = true;
    std::vector<Recompute> activation_checkpointing = {Recompute::none, Recompute::selective, Recompute::full};
    std::vector<LossImpl> losses = {LossImpl::standard, LossImpl::fp32_upcast, LossImpl::chunked, LossImpl::fused};
    bool compile = true;
    bool fp8 = true;
    bool lora = true;
    bool qlora = true;
    std::vector<std::string> sources;
};

}  // namespace ftb
