// The step: the work builder turns one micro-batch of the critical pipeline stage into kernels, the scheduler
// places them and the communication on streams, attribution turns the ledger into the step's figures.
#include "timing/step_model.hpp"

#include "memory/training_setup.hpp"
#include "timing/attribution.hpp"
#include "timing/flops.hpp"
#include "timing/rates.hpp"
#include "timing/work_builder.hpp"

namespace ftb {

TimeResult plan_time(const Job& job, const MemoryResult& mem, const ResourceScale& scale) {
    return plan_time_with_groups(job, mem, scale, build_comm_groups(job));
}

TimeResult plan_time_with_groups(const Job& job, const MemoryResult& mem, const ResourceScale& scale,
                                 const CommGroups& groups) {
    const TrainingSetup set = derive_setup(job);
    const DeviceRates rates = device_rates(job.system.device);
    const WorkContext context = make_work_context(job, set, rates, scale);
    const MicroBatchShape shape = micro_batch_shape(job);
    const StageWork stage = critical_stage_work(context, shape);
    const double ga = double(set.grad_accumulation);

    const CommGroups scaled = scaled_comm_groups(groups, scale);
    const ScheduleInputs inputs{job, mem, set, rates, scale, scaled, stage, shape.tokens_per_gpu, ga};
    Schedule schedule = schedule_step(inputs);

    TimeResult res;
    const StreamBusy busy = stream_busy(schedule.ledger.phases());
    attribute_hidden_compute(schedule.ledger, schedule.windows.rebound_s);
    set_step_totals(res, schedule.ledger.phases());
    const double tokens_per_step = double(job.spec.train.global_batch) * shape.real_tokens_per_seq;
    const StepFlops flops{tokens_per_step * method_flops_per_token(job, set, shape.real_tokens_per_seq),
                          tokens_per_step * six_n_flops_per_token(job.model, shape.real_tokens_per_seq),
                          hardware_flops_per_step(job.spec.parallel, stage, ga)};
    set_throughput(res, job, shape.real_tokens_per_seq, flops);
    res.compute_busy = busy.total_s > 0 ? busy.compute_s / busy.total_s : 0;
    res.memory_busy = busy.total_s > 0 ? busy.memory_s / busy.total_s : 0;
    res.link_busy = res.step_seconds > 0 ? std::min(1.0, schedule.comm_busy_s / res.step_seconds) : 0;
    res.communication_seconds = schedule.comm_busy_s;
    res.kernels_per_step = ga * (stage.forward.kernels + stage.backward.kernels + stage.recompute.kernels);
    res.bottleneck_sentence = describe_bottleneck(job, res);
    return res;
}

}  // namespace ftb
