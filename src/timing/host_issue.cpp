// The host's side of a stage's micro-batch (host_issue.hpp).
#include "timing/host_issue.hpp"

#include <algorithm>
#include <cmath>

#include "timing/eager_host.hpp"
#include "timing/rates.hpp"

namespace ftb {

double host_seconds_per_kernel(const Job& job, const ResourceScale& scale) {
    // A CPU with its PyTorch per-op time measured (the probed system file's op_overhead_us) pays that per op.
    if (job.system.cpu_only && job.system.device.op_overhead_us > 0)
        return job.system.device.op_overhead_us * 1e-6 / scale[Resource::launch_overhead];
    return (kKernelLaunchHostSeconds + job.framework.host_overhead_per_kernel_us * 1e-6) / scale[Resource::launch_overhead];
}

// The per-block host overhead is the forward's Python (module calls and their bookkeeping); full and per-op
// recompute run each recomputed block's forward again (torch.utils.checkpoint re-enters the module's forward).
double forward_reruns_per_block(const Job& job) {
    const TrainSpec& tr = job.spec.train;
    if (tr.recompute != Recompute::full && tr.recompute != Recompute::op) return 0;
    const double stage_blocks = std::ceil(double(job.model.num_layers()) / double(job.spec.parallel.pp));
    return tr.recompute_layers > 0 ? std::min(1.0, double(tr.recompute_layers) / stage_blocks) : 1.0;
}

// The host's side of a stage's micro-batch of `blocks` blocks: issuing its kernels (op by op from Python when the
// blocks run eagerly: eager_host.hpp) and the framework's per-block and per-FSDP-unit Python, and the micro-batch
// as the stream sees it (kernels, or the host when it is slower). `grad_tensors`: tensors given a gradient.
void add_host_issue(StageWork& s, const WorkContext& c, double blocks, double grad_tensors) {
    const double launch_scale = c.scale[Resource::launch_overhead];
    const double per_block_s = c.job.framework.host_overhead_per_block_us * 1e-6 / launch_scale;
    // Each block is one FSDP unit (auto-wrap by block): half its hook work runs in the forward, half in backward.
    const double per_unit_s = c.job.spec.parallel.zero >= 3 && c.job.spec.parallel.dp > 1
                                  ? c.job.framework.host_overhead_per_fsdp_unit_us * 1e-6 / launch_scale
                                  : 0;
    PhaseHostSeconds issue;
    if (issues_eagerly(c)) {
        issue = eager_host_seconds(s.forward.kernels, s.backward.kernels, s.recompute.kernels, grad_tensors, launch_scale);
        const double extra_s = c.job.framework.host_overhead_per_kernel_us * 1e-6 / launch_scale;
        issue.forward_s += s.forward.kernels * extra_s;
        issue.backward_s += (s.backward.kernels + s.recompute.kernels) * extra_s;
    } else {
        const double per_kernel_s = host_seconds_per_kernel(c.job, c.scale);
        issue.forward_s = s.forward.kernels * per_kernel_s;
        issue.backward_s = (s.backward.kernels + s.recompute.kernels) * per_kernel_s;
    }
    const double host_forward_s = issue.forward_s + blocks * (per_block_s + per_unit_s / 2);
    const double host_backward_s =
        issue.backward_s + blocks * (forward_reruns_per_block(c.job) * per_block_s + per_unit_s / 2);
    s.host_issue_s = host_forward_s + host_backward_s;
    // A CPU runs each op on the thread that dispatched it: the per-op host time adds to the op's own time, and so
    // does the wait of each GEMM call for the cores when the BLAS's thread pool and OpenMP's take turns (probed).
    const DeviceSpec& dev = c.job.system.device;
    if (c.job.system.cpu_only && dev.blas_switch_us > 0)
        s.pool_switch_s = (s.forward.gemm_ops + s.backward.gemm_ops + s.recompute.gemm_ops) * dev.blas_switch_us * 1e-6 /
                          c.scale[Resource::launch_overhead];
    // On a GPU the stream runs no further ahead than the host has issued, phase by phase: the forward's kernels are
    // issued by Python, the backward's by autograd's engine once the forward has been issued. A host-bound forward
    // followed by a GPU-bound backward costs the host's forward plus the GPU's backward.
    const double gpu_forward_s = s.forward.gpu_seconds();
    const double gpu_backward_s = s.backward.gpu_seconds() + s.recompute.gpu_seconds();
    if (c.job.system.cpu_only) {
        s.forward_wall_s = gpu_forward_s, s.backward_wall_s = gpu_backward_s;
        s.wall_s = s.gpu_s + s.host_issue_s + s.pool_switch_s;
        return;
    }
    s.forward_wall_s = std::max(host_forward_s, gpu_forward_s);
    s.backward_wall_s = std::max(host_backward_s, gpu_backward_s);
    s.wall_s = s.forward_wall_s + s.backward_wall_s;
    // A host-bound phase stretches every block's share of the stream alike.
    const double stretch_forward = gpu_forward_s > 0 ? s.forward_wall_s / gpu_forward_s : 1;
    const double stretch_backward = gpu_backward_s > 0 ? s.backward_wall_s / gpu_backward_s : 1;
    for (double& t : s.layer_forward_s) t *= stretch_forward;
    for (double& t : s.layer_backward_s) t *= stretch_backward;
}

}  // namespace ftb
