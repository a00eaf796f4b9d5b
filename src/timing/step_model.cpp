// The step: per micro-batch kernels on the compute stream (matmuls, attention, elementwise, loss), the host
// issuing them, communication on its own stream with the overlap frameworks get, the pipeline schedule,
// the optimizer step and offload traffic. Every second lands on one resource.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "ftbound/timing.hpp"
#include "memory/training_setup.hpp"
#include "system/collectives.hpp"
#include "system/topology.hpp"
#include "timing/rates.hpp"

namespace ftb {

const char* to_string(Resource r) {
    static const char* names[kResourceCount] = {"compute", "memory_bandwidth", "memory_capacity", "pcie",
                                                "gpu_interconnect", "network", "host_memory", "host_cpu",
                                                "storage", "launch_overhead", "pipeline_bubble", "data_loading",
                                                "power"};
    return names[size_t(r)];
}

namespace {

// FlashAttention-2 reaches "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023, FlashAttention-2,
// abstract); on H100 it reaches "only 35% utilization" (Shah et al. 2024, FlashAttention-3, abstract).
// The backward pass executes 2.5x the forward FLOPs (5 matmuls against 2, Dao 2023 §3).
// FlashAttention-2 is "around 2x faster than FlashAttention" (Dao 2023, abstract); FlashAttention-3 reaches
// "up to 75% utilization" in BF16 on H100 (Shah et al. 2024, abstract).
double attention_efficiency(GpuArch arch, int kernel) {
    const bool hopper_or_newer = arch == GpuArch::hopper || arch == GpuArch::blackwell;
    double fa2 = 0.35;
    if (arch == GpuArch::ampere || arch == GpuArch::ada) fa2 = 0.6;   // middle of the 50-73% range
    if (kernel == 1) return fa2 / 2;
    if (kernel == 3 && hopper_or_newer) return 0.75;
    return fa2;
}
constexpr double kAttentionBackwardFlopsFactor = 2.5;

// Matmul time factor of the framework on this architecture (FrameworkProfile::matmul_time_factor); an
// architecture without its own figure takes its predecessor's (Ada from Ampere, Blackwell from Hopper).
double matmul_time_factor(const FrameworkProfile& fw, GpuArch arch) {
    auto find = [&](GpuArch a) -> double {
        for (const auto& [name, f] : fw.matmul_time_factor)
            if (name == to_string(a)) return f;
        return 0;
    };
    double f = find(arch);
    if (f <= 0 && arch == GpuArch::ada) f = find(GpuArch::ampere);
    if (f <= 0 && arch == GpuArch::blackwell) f = find(GpuArch::hopper);
    return f > 0 ? f : 1.0;
}

// DDP gradient buckets: bucket_cap_mb=25 (torch.nn.parallel.DistributedDataParallel default).
constexpr double kDdpBucketBytes = 25.0 * 1048576;

Dtype gemm_dtype(Precision p) {
    switch (p) {
        case Precision::fp32: return Dtype::fp32;
        case Precision::tf32: return Dtype::tf32;
        case Precision::fp16: return Dtype::fp16;
        case Precision::bf16: return Dtype::bf16;
        case Precision::fp8: return Dtype::fp8;
    }
    return Dtype::bf16;
}

// Kernels of one pass, split by what bounds them.
struct Work {
    double matmul_s = 0;      // compute-bound GEMMs
    double attention_s = 0;   // attention core
    double memory_s = 0;      // memory-bound GEMMs and elementwise / norm / softmax kernels
    double dequant_s = 0;     // QLoRA weight dequantisation (memory-bound)
    double kernels = 0;
    double flops = 0;
    double gpu_seconds() const { return matmul_s + attention_s + memory_s + dequant_s; }
    Work& operator+=(const Work& o) {
        matmul_s += o.matmul_s, attention_s += o.attention_s, memory_s += o.memory_s, dequant_s += o.dequant_s;
        kernels += o.kernels, flops += o.flops;
        return *this;
    }
    Work scaled(double k) const {
        Work w = *this;
        w.matmul_s *= k, w.attention_s *= k, w.memory_s *= k, w.dequant_s *= k, w.kernels *= k, w.flops *= k;
        return w;
    }
};

struct Context {
    const Job& job;
    const TrainingSetup& set;
    const DeviceRates& rates;
    const ResourceScale& scale;
    Dtype dt;
    double tp;
    double act, resid;   // bytes
    bool compiled;
    bool fused_norm;
    bool fused_qkv;
    double sustained;   // 1 / matmul_time_factor of the framework on this device
};

void gemm(Work& w, const Context& c, double m, double n, double k, double count = 1) {
    if (m < 1 || n < 1 || k < 1 || count <= 0) return;
    const GemmEstimate e = gemm_estimate(int64_t(std::ceil(m)), int64_t(std::ceil(n)), int64_t(std::ceil(k)), c.dt, c.rates);
    if (e.memory_bound) w.memory_s += count * e.seconds / c.scale[Resource::memory_bandwidth];
    else w.matmul_s += count * e.seconds / (c.scale[Resource::compute] * c.sustained);
    w.kernels += count;
    w.flops += 2.0 * m * n * k * count;
}

void elementwise(Work& w, const Context& c, double bytes, double kernels) {
    w.memory_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
    w.kernels += kernels;
}

struct LayerWork {
    Work forward, backward, recompute;
};

// One block, one micro-batch of `tokens` tokens on this GPU.
LayerWork layer_work(const LayerSpec& l, const ModelSpec& m, const Context& c, double tokens, double seq,
                     bool trains, bool needs_grad) {
    LayerWork out;
    const double h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim()), i = double(l.ffn_intermediate);
    const double tp = c.tp, T = tokens;
    const uint32_t lora = c.set.adapters ? c.set.lora_mask : 0;
    const double r = double(c.job.spec.train.lora.rank);
    const bool qlora = c.job.spec.train.method == Method::qlora;
    Work& f = out.forward;
    Work& b = out.backward;

    // --- projections: forward GEMM, backward dgrad (always) and wgrad (trainable) ---
    auto linear = [&](double in, double outw, double count, bool adapted) {
        gemm(f, c, T, outw, in, count);
        if (needs_grad) gemm(b, c, T, in, outw, count);          // dgrad
        if (trains) gemm(b, c, in, outw, T, count);              // wgrad
        if (adapted) {
            gemm(f, c, T, r, in, count), gemm(f, c, T, outw, r, count);
            gemm(b, c, T, in, r, count), gemm(b, c, T, r, outw, count);       // dgrad through B and A
            gemm(b, c, r, outw, T, count), gemm(b, c, in, r, T, count);       // wgrad of B and A
            // dropout on the adapter input, scaling and the add into the base output
            const double dropout = c.job.spec.train.lora.dropout > 0 ? (2 * c.act + 1) * in : 0;
            elementwise(f, c, T * count * (dropout + 5 * c.act * outw), c.compiled ? 1 : 3 * count);
            elementwise(b, c, 2 * T * count * (dropout + 5 * c.act * outw), c.compiled ? 1 : 4 * count);
        }
        if (qlora) {
            // bitsandbytes dequantises the whole weight for every use: read 4-bit + constants, write 16-bit.
            const double bytes = in * outw * count * (c.set.quant_bytes_per_param + c.act);
            f.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
            b.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
            f.kernels += count, b.kernels += count;
        }
    };
    const double attn_sets = l.cross_attention ? 2 : 1;
    for (int s = 0; s < attn_sets; ++s) {
        if (c.fused_qkv) linear(h, (q + 2 * kv) / tp, 1, lora & (kQ | kK | kV));
        else {
            linear(h, q / tp, 1, lora & kQ);
            linear(h, kv / tp, 1, lora & kK);
            linear(h, kv / tp, 1, lora & kV);
        }
        linear(q / tp, h, 1, lora & kO);
    }
    double expert_tokens = T, experts_here = 1;
    if (l.experts > 0) {
        const double ep = double(c.job.spec.parallel.ep);
        experts_here = double(l.experts) / ep;
        expert_tokens = T * double(l.experts_per_token) * ep / double(l.experts);   // balanced routing
        gemm(f, c, T, double(l.experts), h);                                          // router
        if (needs_grad) gemm(b, c, T, h, double(l.experts));
    }
    {
        auto expert_linear = [&](double in, double outw, bool adapted) {
            // Experts see their routed tokens; count experts on this GPU.
            const double te = expert_tokens;
            gemm(f, c, te, outw, in, experts_here);
            if (needs_grad) gemm(b, c, te, in, outw, experts_here);
            if (trains) gemm(b, c, in, outw, te, experts_here);
            if (adapted) {
                gemm(f, c, te, r, in, experts_here), gemm(f, c, te, outw, r, experts_here);
                gemm(b, c, te, in, r, experts_here), gemm(b, c, te, r, outw, experts_here);
                gemm(b, c, r, outw, te, experts_here), gemm(b, c, in, r, te, experts_here);
            }
            if (qlora) {
                const double bytes = in * outw * experts_here * (c.set.quant_bytes_per_param + c.act);
                f.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
                b.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
            }
        };
        if (l.ffn_kind == FfnKind::gated) expert_linear(h, i / tp, lora & kGate);
        expert_linear(h, i / tp, lora & kUp);
        expert_linear(i / tp, h, lora & kDown);
        if (l.shared_expert_intermediate > 0) {
            const double s = double(l.shared_expert_intermediate);
            linear(h, s / tp, 2, lora & (kGate | kUp));
            linear(s / tp, h, 1, lora & kDown);
        }
    }

    // --- attention core ---
    const double keys = l.sliding_window > 0 ? std::min(seq, double(l.sliding_window)) : seq;
    const double causal = l.is_encoder ? 1.0 : 0.5;
    double attention_flops_fwd = 0;
    for (int s = 0; s < attn_sets; ++s) {
        const double flops = 4.0 * T * keys * q / tp * (s == 1 ? 1.0 : causal);
        attention_flops_fwd += flops;
        const Attention a = c.job.spec.train.attention;
        if (a == Attention::eager) {
            // Scores and probabilities materialised: two batched GEMMs and a softmax over heads x T x keys.
            const double heads = double(l.heads) / tp;
            gemm(f, c, T, keys, double(l.head_dim), heads);
            gemm(f, c, T, double(l.head_dim), keys, heads);
            if (needs_grad) {
                gemm(b, c, T, keys, double(l.head_dim), 2 * heads);
                gemm(b, c, T, double(l.head_dim), keys, 2 * heads);
            }
            const double score_bytes = T * heads * keys * (c.act + 4 + 4 + c.act);   // write, fp32 softmax, cast
            elementwise(f, c, score_bytes, 4);
            if (needs_grad) elementwise(b, c, 2 * score_bytes, 4);
        } else {
            const double peak = c.rates.peak_flops[size_t(Dtype::bf16)] > 0 ? c.rates.peak_flops[size_t(Dtype::bf16)]
                                                                             : c.rates.peak_flops[size_t(c.dt)];
            const double eff = attention_efficiency(c.rates.arch, c.job.framework.attention_kernel) * (c.rates.cpu ? 0 : 1) + (c.rates.cpu ? 0.5 : 0);
            f.attention_s += flops / (peak * eff) / c.scale[Resource::compute];
            f.flops += flops;
            f.kernels += 1;
            if (needs_grad) {
                b.attention_s += kAttentionBackwardFlopsFactor * flops / (peak * eff) / c.scale[Resource::compute];
                b.flops += kAttentionBackwardFlopsFactor * flops;
                b.kernels += 2;
            }
        }
    }

    // --- elementwise, norms, rotary, residual, activation (bytes per token) ---
    const double B = c.act, R = c.resid;
    double bytes = 0, kernels = 0;
    const bool eager_rms = m.norm == NormKind::rmsnorm && !c.fused_norm && !c.compiled;
    bytes += l.norms * (eager_rms ? (R + 28 + 3 * B) : (R + B)) * h;
    kernels += l.norms * (eager_rms ? 7 : 1);
    const double sublayers = l.parallel_attn_mlp ? 1 : (l.cross_attention ? 3 : 2);
    bytes += sublayers * 3 * R * h;
    kernels += sublayers;
    if (m.position == PositionKind::rotary) {
        const bool fused_rope = c.compiled || c.fused_norm;
        bytes += (fused_rope ? 2 : 7) * B * (q + kv) / tp;
        kernels += fused_rope ? 1 : 10;
    }
    bytes += 2 * B * q / tp;   // attention output layout copy
    kernels += c.compiled ? 0 : 2;
    const double ffn_i = i / tp * (l.experts > 0 ? double(l.experts_per_token) : 1.0);
    if (l.ffn_kind == FfnKind::gated) bytes += (c.compiled ? 3 : 5) * B * ffn_i, kernels += c.compiled ? 1 : 2;
    else bytes += 2 * B * ffn_i, kernels += 1;
    if (m.hidden_dropout > 0) bytes += sublayers * (2 * R + 1) * h, kernels += sublayers;
    if (c.set.bytes.autocast) {
        // autocast casts every linear's fp32 input to the compute dtype, per call
        const double casts = (c.fused_qkv ? 1 : 3) + (l.ffn_kind == FfnKind::gated ? 2 : 1);
        bytes += casts * (R + B) * h;
        kernels += c.compiled ? 0 : casts;
    }
    if (l.experts > 0) bytes += 4 * B * h * double(l.experts_per_token), kernels += 6;   // permute / unpermute
    elementwise(f, c, T * bytes, kernels);
    if (needs_grad) elementwise(b, c, 2 * T * bytes, 2 * kernels);

    if (!needs_grad) b = Work{};
    const Recompute rc = c.job.spec.train.recompute;
    if (needs_grad && rc == Recompute::full) out.recompute = f;
    else if (needs_grad && rc == Recompute::selective) {
        out.recompute.attention_s = f.attention_s;
        out.recompute.flops = attention_flops_fwd;
        out.recompute.kernels = 1;
    }
    return out;
}

bool same_shape(const LayerSpec& a, const LayerSpec& b) {
    return a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads && a.head_dim == b.head_dim &&
           a.ffn_intermediate == b.ffn_intermediate && a.experts == b.experts && a.cross_attention == b.cross_attention &&
           a.sliding_window == b.sliding_window && a.norms == b.norms && a.ffn_kind == b.ffn_kind &&
           a.shared_expert_intermediate == b.shared_expert_intermediate && a.is_encoder == b.is_encoder;
}

// Where a communication group's time goes: NICs when it spans nodes and the network sets the pace,
// else the node's GPU fabric (NVLink) or PCIe.
Resource comm_resource(const CommGroup& g, const CollectiveCost& cost) {
    if (g.nodes > 1 && cost.network_bound) return Resource::network;
    return g.intra_nvlink ? Resource::gpu_interconnect : Resource::pcie;
}

struct Groups {
    CommGroup tp, dp, pp, cp, ep;
};

CommGroup scaled_group(CommGroup g, const ResourceScale& s) {
    g.intra_bus_GBps *= g.intra_nvlink ? s[Resource::gpu_interconnect] : s[Resource::pcie];
    g.nic_GBps *= s[Resource::network];
    return g;
}

// The communication groups of a layout (built once per job: they walk the topology).
Groups build_groups(const Job& job) {
    const ParallelSpec& par = job.spec.parallel;
    const SystemSpec& sys = job.system;
    const int gpn = sys.devices_per_node;
    auto per_node = [&](int64_t inner, int64_t size) {   // ranks of a group on one node, Megatron order tp-cp-dp-pp
        const int64_t span = std::max<int64_t>(1, int64_t(gpn) / std::max<int64_t>(1, inner));
        return int(std::max<int64_t>(1, std::min<int64_t>(size, span)));
    };
    Groups g;
    if (sys.cpu_only) return g;
    if (par.tp > 1) g.tp = comm_group(sys, int(par.tp), int(std::min<int64_t>(par.tp, gpn)));
    if (par.cp > 1) g.cp = comm_group(sys, int(par.cp), per_node(par.tp, par.cp));
    if (par.dp > 1) g.dp = comm_group(sys, int(par.dp), per_node(par.tp * par.cp, par.dp));
    if (par.pp > 1) g.pp = comm_group(sys, 2, per_node(par.tp * par.cp * par.dp, 2));
    if (par.ep > 1) g.ep = comm_group(sys, int(par.ep), per_node(par.tp, par.ep));
    return g;
}

class Ledger {
public:
    void add(const std::string& phase, double seconds, Resource r) {
        if (!(seconds > 0)) return;
        for (auto& p : phases_)
            if (p.phase == phase && p.resource == r) {
                p.seconds += seconds;
                return;
            }
        phases_.push_back({phase, seconds, r});
    }
    std::vector<StepPhase>& phases() { return phases_; }

private:
    std::vector<StepPhase> phases_;
};

TimeResult plan_time_with(const Job& job, const MemoryResult& mem, const ResourceScale& scale, const Groups* groups);

}  // namespace

TimeResult plan_time(const Job& job, const MemoryResult& mem, const ResourceScale& scale) {
    return plan_time_with(job, mem, scale, nullptr);
}

namespace {

TimeResult plan_time_with(const Job& job, const MemoryResult& mem, const ResourceScale& scale, const Groups* groups) {
    const ModelSpec& m = job.model;
    const JobSpec& js = job.spec;
    const TrainSpec& tr = js.train;
    const ParallelSpec& par = js.parallel;
    const SystemSpec& sys = job.system;
    const TrainingSetup set = derive_setup(job);
    const DeviceRates rates = device_rates(sys.device);
    const bool cpu = sys.cpu_only;
    Context c{job, set, rates, scale, gemm_dtype(tr.precision), double(par.tp), set.bytes.act, set.bytes.residual,
              tr.compile, job.framework.fused_norm,
              set.fused_qkv,
              cpu ? 1.0 : 1.0 / matmul_time_factor(job.framework, rates.arch)};
    TimeResult res;
    Ledger ledger;

    // Tokens a micro-batch computes on. Padded batches run on the longest sequence of the batch: one sequence
    // runs on its own length; for more, the expected longest of b lengths drawn uniformly on [0, 2*avg]
    // (mean avg) is 2*avg*b/(b+1), capped at seq_len (an assumption: the length distribution is not in the job).
    const double real_per_seq = js.real_tokens_per_sequence();
    double compute_seq = double(tr.seq_len);
    if (!tr.packing && tr.avg_seq_len > 0) {
        const double b = double(tr.micro_batch);
        compute_seq = b <= 1 ? tr.avg_seq_len : std::min(double(tr.seq_len), 2 * tr.avg_seq_len * b / (b + 1));
    }
    const double tokens = double(tr.micro_batch) * compute_seq / double(par.cp);
    const double ga = double(set.grad_accumulation);

    // --- per stage, one micro-batch ---
    const int64_t L = int64_t(m.num_layers());
    double stage_gpu_max = 0, stage_host_max = 0;
    Work stage_fwd_best, stage_bwd_best, stage_rc_best;
    double stage_attn_fwd = 0, stage_attn_bwd = 0;
    std::vector<double> layer_fwd_s, layer_bwd_s;   // for ZeRO-3 overlap (critical stage)
    double first_stage_flops = 0, last_stage_flops = 0;   // one micro-batch, one GPU
    double host_per_kernel = (kKernelLaunchHostSeconds + job.framework.host_overhead_per_kernel_us * 1e-6) /
                             scale[Resource::launch_overhead];
    for (int64_t stage = 0; stage < par.pp; stage = (stage == 0 && par.pp > 1) ? par.pp - 1 : par.pp) {
        const int64_t base = L / par.pp, extra = L % par.pp;
        const int64_t first = stage * base + std::min(stage, extra);
        const int64_t last = first + base + (stage < extra ? 1 : 0);
        Work fwd, bwd, rc;
        std::vector<double> lf, lb;
        LayerWork cached;
        const LayerSpec* prev = nullptr;
        bool prev_trains = false, prev_grad = false;
        double attn_f = 0, attn_b = 0;
        for (int64_t li = first; li < last; ++li) {
            const LayerSpec& l = m.layers[size_t(li)];
            const bool trains = set.full && li >= set.first_trainable_layer;
            const bool needs_grad = set.adapters || li >= set.first_trainable_layer;
            if (!prev || !same_shape(*prev, l) || trains != prev_trains || needs_grad != prev_grad)
                cached = layer_work(l, m, c, tokens, compute_seq, trains, needs_grad);
            prev = &l, prev_trains = trains, prev_grad = needs_grad;
            fwd += cached.forward, bwd += cached.backward, rc += cached.recompute;
            attn_f += cached.forward.attention_s, attn_b += cached.backward.attention_s;
            lf.push_back(cached.forward.gpu_seconds());
            lb.push_back(cached.backward.gpu_seconds() + cached.recompute.gpu_seconds());
        }
        // Head: final norm, output projection, loss (last stage); embedding (first stage).
        if (stage == par.pp - 1) {
            const double V = double(m.vocab) / c.tp, h = double(m.hidden);
            gemm(fwd, c, tokens, V, h);
            gemm(bwd, c, tokens, h, V);
            if (set.full) gemm(bwd, c, h, V, tokens);
            double loss_bytes;   // per token, forward + backward
            switch (tr.loss) {
                case LossImpl::fp32_upcast: loss_bytes = 32 * V; break;   // cast, log-softmax, nll and their backward in fp32
                case LossImpl::fused: loss_bytes = 8 * V; break;
                default: loss_bytes = (set.bytes.autocast ? 32 : 8 * c.act) * V; break;
            }
            const double loss_kernels = tr.loss == LossImpl::chunked ? 10 * std::ceil(tokens / 128) : 10;
            elementwise(fwd, c, tokens * loss_bytes / 3, loss_kernels / 2);
            elementwise(bwd, c, tokens * loss_bytes * 2 / 3, loss_kernels / 2);
            elementwise(fwd, c, tokens * (c.resid + c.act) * h * 2, 2);   // final norm
            elementwise(bwd, c, tokens * (c.resid + c.act) * h * 4, 4);
        }
        if (stage == 0) {
            elementwise(fwd, c, tokens * (8 + c.resid * double(m.hidden)), 1);
            if (set.full && set.first_trainable_layer == 0) elementwise(bwd, c, tokens * 8 * double(m.hidden), 2);
        }
        const double gpu_s = fwd.gpu_seconds() + bwd.gpu_seconds() + rc.gpu_seconds();
        const double host_s = (fwd.kernels + bwd.kernels + rc.kernels) * host_per_kernel +
                              double(last - first) * job.framework.host_overhead_per_block_us * 1e-6 /
                                  scale[Resource::launch_overhead];
        // CPU devices run ops synchronously: dispatch overhead adds to the op time instead of hiding under it.
        const double mb_s = cpu ? gpu_s + host_s : std::max(gpu_s, host_s);
        (stage == 0 ? first_stage_flops : last_stage_flops) = fwd.flops + bwd.flops + rc.flops;
        if (mb_s > std::max(stage_gpu_max, stage_host_max) || stage == 0) {
            stage_gpu_max = gpu_s;
            stage_host_max = cpu ? host_s : std::max(0.0, host_s - gpu_s) + gpu_s;
            stage_fwd_best = fwd, stage_bwd_best = bwd, stage_rc_best = rc;
            stage_attn_fwd = attn_f, stage_attn_bwd = attn_b;
            layer_fwd_s = lf, layer_bwd_s = lb;
        }
    }
    const Work& F = stage_fwd_best;
    const Work& Bw = stage_bwd_best;
    const Work& RC = stage_rc_best;
    const double launch_idle_mb = stage_host_max - stage_gpu_max;   // GPU waiting for the host, per micro-batch

    // Compute-stream phases of all micro-batches of this GPU.
    const double pp_bubble_factor =
        par.pp > 1 ? double(par.pp - 1) / double(par.pp_schedule == PipelineSchedule::interleaved ? std::max<int64_t>(1, par.virtual_stages) : 1)
                   : 0.0;
    ledger.add("forward matmuls", ga * F.matmul_s, Resource::compute);
    ledger.add("forward attention", ga * F.attention_s, Resource::compute);
    ledger.add("forward elementwise and memory-bound kernels", ga * F.memory_s, Resource::memory_bandwidth);
    ledger.add("backward matmuls", ga * Bw.matmul_s, Resource::compute);
    ledger.add("backward attention", ga * Bw.attention_s, Resource::compute);
    ledger.add("backward elementwise and memory-bound kernels", ga * Bw.memory_s, Resource::memory_bandwidth);
    ledger.add("recompute: matmuls and attention", ga * (RC.matmul_s + RC.attention_s), Resource::compute);
    ledger.add("recompute: elementwise kernels", ga * RC.memory_s, Resource::memory_bandwidth);
    ledger.add("QLoRA weight dequantisation", ga * (F.dequant_s + Bw.dequant_s + RC.dequant_s), Resource::memory_bandwidth);
    ledger.add(cpu ? "framework per-op overhead" : "GPU idle waiting for kernel launches", ga * launch_idle_mb,
               Resource::launch_overhead);
    const double mb_seconds = stage_host_max;
    ledger.add("pipeline bubble", pp_bubble_factor * mb_seconds, Resource::pipeline_bubble);

    // --- communication ---
    const int gpn = sys.devices_per_node;
    double comm_busy = 0;
    // Compute time of the last micro-batch's backward that transfers can hide under; each overlapping transfer
    // uses up what it hides, so two transfers never hide under the same seconds.
    double backward_window_left = Bw.gpu_seconds() + RC.gpu_seconds();
    double forward_window_left = ga * F.gpu_seconds();
    // When a transfer outlasts the compute it overlaps, that compute ran under the transfer: the seconds belong
    // to the transfer's resource (the critical path is the transfer). `rebound` collects them per resource.
    std::array<double, kResourceCount> rebound{};
    auto hide = [&](double transfer, Resource r) {
        const double hidden = std::min(transfer, backward_window_left);
        backward_window_left -= hidden;
        if (transfer > hidden) rebound[size_t(r)] += hidden;
        return transfer - hidden;
    };
    if (!cpu) {
        const Groups built = groups ? Groups{} : build_groups(job);
        const Groups& base = groups ? *groups : built;
        Groups g;
        g.tp = scaled_group(base.tp, scale);
        g.cp = scaled_group(base.cp, scale);
        g.dp = scaled_group(base.dp, scale);
        g.pp = scaled_group(base.pp, scale);
        g.ep = scaled_group(base.ep, scale);
        const double h = double(m.hidden);
        const double L_stage = double(L) / double(par.pp);
        // Tensor parallel: two all-reduces (or reduce-scatter + all-gather with sequence parallel) of the
        // activations per block forward and two backward, on the critical path (Megatron-LM, Shoeybi et al. 2019).
        if (par.tp > 1) {
            const double bytes = tokens * h * c.act;
            const CollectiveCost cc = collective_cost(Collective::all_reduce, bytes, g.tp);
            const double per_mb = cc.seconds * 4 * L_stage * (RC.gpu_seconds() > 0 && tr.recompute == Recompute::full ? 1.5 : 1.0);
            ledger.add("tensor-parallel all-reduces", ga * per_mb, comm_resource(g.tp, cc));
            comm_busy += ga * per_mb;
        }
        // Context parallel: ring exchange of k/v chunks, hidden under the attention of the previous chunk.
        if (par.cp > 1) {
            const double kv_bytes = tokens * 2 * double(m.layers.front().kv_dim()) / c.tp * c.act;
            const CollectiveCost cc = collective_cost(Collective::send_recv, kv_bytes, g.cp);
            const double fwd_comm = cc.seconds * double(par.cp - 1) * L_stage;
            const double exposed = std::max(0.0, fwd_comm - stage_attn_fwd) + std::max(0.0, 2 * fwd_comm - stage_attn_bwd);
            ledger.add("context-parallel k/v exchange (exposed)", ga * exposed, comm_resource(g.cp, cc));
            comm_busy += ga * 3 * fwd_comm;
        }
        // Expert parallel: all-to-all dispatch and combine, forward and backward.
        if (par.ep > 1) {
            const LayerSpec& l0 = m.layers.front();
            const double bytes = tokens * double(l0.experts_per_token) * h * c.act;
            const CollectiveCost cc = collective_cost(Collective::all_to_all, bytes, g.ep);
            double moe_layers = 0;
            for (const auto& l : m.layers) moe_layers += l.experts > 0;
            const double per_mb = 4 * cc.seconds * moe_layers / double(par.pp);
            ledger.add("expert-parallel all-to-all", ga * per_mb, comm_resource(g.ep, cc));
            comm_busy += ga * per_mb;
        }
        // Pipeline: activations to the next stage and gradients back, per micro-batch.
        if (par.pp > 1) {
            const CollectiveCost cc = collective_cost(Collective::send_recv, tokens * h * c.act, g.pp);
            ledger.add("pipeline send/recv", 2 * ga * cc.seconds, comm_resource(g.pp, cc));
            comm_busy += 2 * ga * cc.seconds;
        }
        // Data parallel.
        if (par.dp > 1) {
            const double trainable_stage = mem.trainable_params / double(par.pp) / c.tp;
            const double grad_bytes = trainable_stage * set.grad_bytes;
            const bool fsdp_mixed = par.zero >= 3 && set.adapters && job.framework.fsdp_unit_mixes_frozen;
            if (par.zero >= 3) {
                // ZeRO-3 / FSDP: gather each block's parameters before its forward and again before its backward,
                // reduce-scatter its gradients after; prefetch hides a gather under the previous block's compute.
                const double layer_params = mem.params_per_gpu * double(par.dp) / std::max(1.0, L_stage);
                const CollectiveCost gather = collective_cost(Collective::all_gather, layer_params * set.bytes.weight_compute, g.dp);
                const double rs_params = fsdp_mixed ? layer_params : layer_params * std::min(1.0, trainable_stage / std::max(1.0, mem.params_per_gpu * double(par.dp)));
                const CollectiveCost rs = collective_cost(Collective::reduce_scatter, rs_params * set.grad_bytes, g.dp);
                const bool no_sync = ga > 1 && job.framework.fsdp_no_sync_accumulation;
                double exposed = 0, hidden_fwd = 0, hidden_bwd = 0, comm_bound = 0;
                for (size_t k = 0; k < layer_fwd_s.size(); ++k) {
                    exposed += std::max(0.0, gather.seconds - layer_fwd_s[k]);
                    hidden_fwd += std::min(gather.seconds, layer_fwd_s[k]);
                    if (gather.seconds > layer_fwd_s[k]) comm_bound += layer_fwd_s[k];
                    const double rs_s = no_sync ? rs.seconds / ga : rs.seconds;
                    exposed += std::max(0.0, gather.seconds + rs_s - layer_bwd_s[k]);
                    hidden_bwd += std::min(gather.seconds + rs_s, layer_bwd_s[k]);
                    if (gather.seconds + rs_s > layer_bwd_s[k]) comm_bound += layer_bwd_s[k];
                }
                rebound[size_t(comm_resource(g.dp, gather))] += ga * comm_bound;
                exposed += gather.seconds;   // the first block's gather has nothing to hide under
                // The compute that hid these gathers cannot hide other transfers too.
                forward_window_left = std::max(0.0, forward_window_left - ga * hidden_fwd);
                backward_window_left = std::max(0.0, backward_window_left - hidden_bwd);
                ledger.add("ZeRO-3 parameter gathers and gradient reduce-scatters (exposed)", ga * exposed, comm_resource(g.dp, gather));
                comm_busy += ga * double(layer_fwd_s.size()) * (2 * gather.seconds + rs.seconds);
            } else {
                // DDP / ZeRO-1/2: one gradient all-reduce (or reduce-scatter) per step, in buckets that overlap the
                // last micro-batch's backward; the last bucket is always exposed.
                const Collective op = par.zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce;
                const CollectiveCost cc = collective_cost(op, grad_bytes, g.dp);
                // DDP's bucket_cap_mb, or DeepSpeed's reduce_bucket_size for ZeRO-1/2 (framework profile).
                const double bucket_bytes = par.zero >= 1 ? job.framework.zero_bucket_elements * set.grad_bytes : kDdpBucketBytes;
                const double bucket = std::min(1.0, bucket_bytes / std::max(1.0, grad_bytes));
                const double last_bucket = cc.seconds * bucket;
                const double exposed = last_bucket + hide(cc.seconds - last_bucket, comm_resource(g.dp, cc));
                ledger.add("data-parallel gradient sync (exposed)", exposed, comm_resource(g.dp, cc));
                comm_busy += cc.seconds;
                // DeepSpeed gathers the updated parameter partitions after every step, offloaded or not
                // (ZeroOptimizer.step -> all_gather_dp_groups, deepspeed/runtime/zero/stage_1_and_2.py).
                if (par.zero >= 1) {
                    const CollectiveCost ag = collective_cost(Collective::all_gather, trainable_stage * set.bytes.weight_compute, g.dp);
                    ledger.add("ZeRO parameter all-gather after the step", ag.seconds, comm_resource(g.dp, ag));
                    comm_busy += ag.seconds;
                }
            }
        }
    } else if (par.dp > 1) {
        // CPU server: one data-parallel rank per socket; gradients all-reduced over the socket link (ring).
        double link_GBps = 0;
        for (const auto& l : sys.links) link_GBps = std::max(link_GBps, l.link.bandwidth_GBps * l.link.achievable_fraction);
        if (link_GBps > 0) {
            const double bytes = mem.trainable_params * set.grad_bytes;
            const double n = double(par.dp);
            const double s = 2 * (n - 1) / n * bytes / (link_GBps * 1e9 * scale[Resource::host_memory]);
            ledger.add("gradient all-reduce between sockets", s, Resource::host_memory);
        }
    }

    // --- optimizer step ---
    const double trainable_here = mem.trainable_params / double(par.pp) / c.tp / double(par.zero >= 1 ? par.dp : 1);
    const bool foreach_step = job.framework.optimizer_step == OptimizerStepImpl::foreach;
    double per_param_bytes;
    switch (tr.optimizer) {
        case Optimizer::sgd: per_param_bytes = 3 * set.trainable_storage_bytes; break;
        case Optimizer::sgd_momentum:
        case Optimizer::lion: per_param_bytes = 5 * std::max(set.state_bytes, set.trainable_storage_bytes); break;
        case Optimizer::adamw_8bit:
        case Optimizer::paged_adamw_8bit: per_param_bytes = 3 * set.trainable_storage_bytes + 4; break;
        default:
            // fused AdamW reads param, grad, m, v and writes param, m, v; torch's foreach AdamW makes eight
            // passes (lerp, mul, addcmul, sqrt, div, add, addcdiv, weight-decay mul): about 20 element accesses.
            per_param_bytes = (foreach_step ? 20.0 : 7.0) * std::max(set.state_bytes, set.trainable_storage_bytes) +
                              set.master_bytes_per_param * 2;
    }
    if (js.offload.optimizer == OffloadTarget::none) {
        const double s = memory_bound_seconds(trainable_here * per_param_bytes, rates) / scale[Resource::memory_bandwidth];
        ledger.add("optimizer step", s, Resource::memory_bandwidth);
    } else {
        // ZeRO-Offload: fp32 Adam on the host, bounded by DDR bandwidth shared by the node's GPUs (Ren et al. 2021).
        const double host_Bps = double(sys.sockets) * sys.host_cpu.memory_bandwidth_GBps * 1e9 * kCpuStreamFraction *
                                scale[Resource::host_memory];
        const double gpus_here = double(std::min<int64_t>(gpn, sys.total_devices()));
        const double cpu_s = host_Bps > 0 ? trainable_here * 28.0 * gpus_here / host_Bps : 0;
        ledger.add("CPU optimizer step (offloaded)", cpu_s, Resource::host_memory);
        // Gradients down and parameters up over each GPU's path to host memory, all GPUs of a node at once.
        if (!sys.components.empty()) {
            SystemSpec scaled = sys;
            for (auto& l : scaled.links)
                if (l.link.name.rfind("pcie", 0) == 0) l.link.bandwidth_GBps *= scale[Resource::pcie];
            const Topology topo(scaled);
            std::vector<Flow> down, up;
            for (int gi = 0; gi < int(gpus_here); ++gi) {
                const int gc = topo.gpu(gi);
                if (gc < 0) continue;
                const int host = topo.host_memory_near(gc);
                if (host < 0) continue;
                down.push_back({gc, host, trainable_here * set.grad_bytes});
                up.push_back({host, gc, trainable_here * set.bytes.weight_compute});
            }
            double d2h = 0, h2d = 0;
            for (const auto& r : share_links(topo, down)) d2h = std::max(d2h, r.seconds);
            for (const auto& r : share_links(topo, up)) h2d = std::max(h2d, r.seconds);
            ledger.add("offload: gradients to host (exposed)", hide(d2h, Resource::pcie), Resource::pcie);
            ledger.add("offload: parameters to GPU", h2d, Resource::pcie);
            comm_busy += d2h + h2d;
        }
    }
    if (js.offload.params != OffloadTarget::none || js.offload.activations != OffloadTarget::none) {
        // Parameters (ZeRO-Infinity) and saved activations stream over the host link per micro-batch,
        // prefetched under compute; only the excess shows.
        LinkSpec host_link;
        host_link.bandwidth_GBps = 0;
        for (const auto& l : sys.links)
            if (l.link.name.rfind("pcie", 0) == 0) host_link = l.link;
        if (host_link.bandwidth_GBps > 0) {
            host_link.bandwidth_GBps *= scale[Resource::pcie] / std::max(1.0, double(gpn) / double(std::max(1, sys.sockets)) / 2);
            double bytes = 0;
            // ZeRO-Infinity: each GPU fetches its own shard from the host per pass (forward and backward); the
            // other shards arrive through the gathers counted above.
            if (js.offload.params != OffloadTarget::none) bytes += 2 * mem.params_per_gpu * set.bytes.weight_compute;
            if (js.offload.activations != OffloadTarget::none) bytes += 2 * mem.breakdown.activations_bytes;
            const double t = host_copy_seconds(bytes, host_link, true);
            // Streams under the forward of every micro-batch and under what is left of the backward window.
            const double window = forward_window_left + backward_window_left;
            if (ga * t > window) rebound[size_t(Resource::pcie)] += window;
            backward_window_left = std::max(0.0, backward_window_left - ga * t);
            ledger.add("offload: parameters/activations over PCIe (exposed)", std::max(0.0, ga * t - window), Resource::pcie);
            comm_busy += ga * t;
        }
    }

    // --- totals ---
    auto& phases = ledger.phases();
    // Busy fractions of the GPU's streams (for the power model), before any re-attribution below.
    double stream_compute = 0, stream_memory = 0, stream_total = 0;
    for (const auto& p : phases) {
        stream_total += p.seconds;
        if (p.resource == Resource::compute) stream_compute += p.seconds;
        if (p.resource == Resource::memory_bandwidth) stream_memory += p.seconds;
    }
    // Move compute-stream seconds that ran under a longer transfer to that transfer's resource, taking them
    // from the compute and memory-bound phases in proportion.
    double moved = 0;
    for (double v : rebound) moved += v;
    if (moved > 0) {
        double stream = 0;
        for (const auto& p : phases)
            if (p.resource == Resource::compute || p.resource == Resource::memory_bandwidth) stream += p.seconds;
        const double take = std::min(moved, stream);
        if (stream > 0) {
            for (auto& p : phases)
                if (p.resource == Resource::compute || p.resource == Resource::memory_bandwidth)
                    p.seconds -= p.seconds * take / stream;
            for (size_t r = 0; r < rebound.size(); ++r)
                if (rebound[r] > 0)
                    ledger.add("compute hidden under " + std::string(to_string(Resource(r))) + " transfers (they set the pace)",
                               rebound[r] * take / moved, Resource(r));
        }
    }
    double step = 0;
    for (const auto& p : phases) step += p.seconds;
    res.step_seconds = step;
    std::array<double, kResourceCount> by{};
    for (const auto& p : phases) by[size_t(p.resource)] += p.seconds;
    size_t best = 0;
    for (size_t r = 0; r < by.size(); ++r)
        if (by[r] > by[best]) best = r;
    res.bottleneck = Resource(best);
    res.bottleneck_share = step > 0 ? by[best] / step : 0;
    std::sort(phases.begin(), phases.end(), [](const StepPhase& a, const StepPhase& b) { return a.seconds > b.seconds; });
    res.breakdown = phases;

    // Throughput and utilisation.
    const double gpus = double(sys.total_devices());
    res.tokens_per_step = double(tr.global_batch) * real_per_seq;
    res.tokens_per_second = step > 0 ? res.tokens_per_step / step : 0;
    res.tokens_per_second_per_gpu = res.tokens_per_second / gpus;
    // Model FLOPs (PaLM appendix B / Korthikanti et al. 2022): 6 per matmul parameter per token, plus attention
    // 12 * layers * q_dim * seq per token; no recompute; the same for every method.
    double matmul_params = double(m.lm_head_params() > 0 ? m.lm_head_params() : m.vocab * m.hidden);
    double attn_per_token = 0;
    for (const auto& l : m.layers) {
        matmul_params += double(l.attention_params() - l.qk_norm_params) + double(l.ffn_params_active());
        const double keys = l.sliding_window > 0 ? std::min(real_per_seq, double(l.sliding_window)) : real_per_seq;
        attn_per_token += 12.0 * double(l.q_dim()) * keys * (l.cross_attention ? 2 : 1);
    }
    res.model_flops_per_step = res.tokens_per_step * (6.0 * matmul_params + attn_per_token);
    const double peak = [&] {
        const PeakTflops& p = sys.device.peak_tflops;
        switch (tr.precision) {
            case Precision::fp32: return p.fp32;
            case Precision::tf32: return p.tf32;
            case Precision::fp16: return p.fp16;
            case Precision::bf16: return p.bf16;
            case Precision::fp8: return p.fp8;
        }
        return p.bf16;
    }() * 1e12;
    // Every stage but the last is like the first (embedding lookups do no FLOPs); each GPU of a TP/CP group
    // does its share; every DP replica does the same.
    const double per_replica_mb = par.pp > 1 ? double(par.pp - 1) * first_stage_flops + last_stage_flops : first_stage_flops;
    res.hardware_flops_per_step = per_replica_mb * ga * double(par.tp * par.cp) * double(par.dp);
    if (peak > 0 && step > 0) {
        res.mfu = res.model_flops_per_step / (gpus * peak * step);
        res.hfu = res.hardware_flops_per_step / (gpus * peak * step);
    }
    if (js.data.tokens > 0 && res.tokens_per_second > 0)
        res.time_to_train_seconds = js.data.tokens * js.data.epochs / res.tokens_per_second;
    res.compute_busy = stream_total > 0 ? stream_compute / stream_total : 0;
    res.memory_busy = stream_total > 0 ? stream_memory / stream_total : 0;
    res.link_busy = step > 0 ? std::min(1.0, comm_busy / step) : 0;
    res.communication_seconds = comm_busy;
    res.kernels_per_step = ga * (F.kernels + Bw.kernels + RC.kernels);

    res.bottleneck_sentence = describe_bottleneck(job, res);
    return res;
}

}  // namespace

std::string describe_bottleneck(const Job& job, const TimeResult& t) {
    const SystemSpec& sys = job.system;
    const JobSpec& js = job.spec;
    const ParallelSpec& par = js.parallel;
    const bool cpu = sys.cpu_only;
    const double ga = double(job.spec.grad_accumulation());
    std::string out;
    const double share = t.bottleneck_share * 100;
    switch (t.bottleneck) {
        case Resource::compute:
            out = fmt::format("compute: the {} runs matmuls and attention for {:.0f}% of the step", sys.device.name, share);
            break;
        case Resource::memory_bandwidth:
            out = fmt::format("memory bandwidth: elementwise, norm, loss and optimizer kernels stream through {} memory for {:.0f}% of the step",
                                                  cpu ? "DDR" : "HBM", share);
            break;
        case Resource::launch_overhead:
            out = fmt::format("launch overhead: the GPU waits for the host to issue {:.0f} short kernels per step: {:.0f}% of the step",
                                                  t.kernels_per_step, share);
            break;
        case Resource::pipeline_bubble:
            out = fmt::format("pipeline bubble: {} stages fed {} micro-batch{} per step leave each GPU idle {:.0f}% of the step",
                                                  par.pp, int64_t(ga), ga > 1 ? "es" : "", share);
            break;
        case Resource::network:
            out = fmt::format("network: communication across {} nodes over {} ({:.0f} GB/s per GPU) takes {:.0f}% of the step",
                                                  sys.nodes, sys.inter_node.name, sys.inter_node.bandwidth_GBps, share);
            break;
        case Resource::gpu_interconnect:
            out = fmt::format("GPU interconnect: collectives inside the node take {:.0f}% of the step", share);
            break;
        case Resource::pcie:
            out = fmt::format("PCIe: {} over the GPUs' host links takes {:.0f}% of the step",
                                                  js.offload.optimizer != OffloadTarget::none || js.offload.params != OffloadTarget::none
                                                      ? "offload traffic" : "GPU-to-GPU traffic without NVLink",
                                                  share);
            break;
        case Resource::host_memory:
            out = fmt::format("host memory: {} bound by the host's DDR bandwidth: {:.0f}% of the step",
                                                  cpu ? "socket-to-socket gradient exchange" : "the offloaded optimizer step is", share);
            break;
        default:
            out = fmt::format("{}: {:.0f}% of the step", to_string(t.bottleneck), share);
    }
    return out;
}

std::vector<WeakPoint> weak_points(const Job& job, const MemoryResult& memory, const TimeResult& base) {
    std::vector<WeakPoint> out;
    const Groups groups = build_groups(job);
    static const std::pair<Resource, const char*> candidates[] = {
        {Resource::compute, "tensor-core (matmul) throughput"},
        {Resource::memory_bandwidth, "HBM bandwidth"},
        {Resource::launch_overhead, "host kernel-launch rate (torch.compile / CUDA graphs)"},
        {Resource::gpu_interconnect, "GPU-to-GPU fabric bandwidth (NVLink)"},
        {Resource::network, "inter-node network bandwidth per GPU"},
        {Resource::pcie, "PCIe bandwidth"},
        {Resource::host_memory, "host DDR bandwidth"},
        {Resource::pipeline_bubble, "pipeline bubble (more micro-batches or interleaving)"},
    };
    for (const auto& [r, what] : candidates) {
        ResourceScale s;
        s.factor[size_t(r)] = 2;
        double step;
        if (r == Resource::pipeline_bubble) {
            double bubble = 0;
            for (const auto& p : base.breakdown)
                if (p.resource == Resource::pipeline_bubble) bubble += p.seconds;
            step = base.step_seconds - bubble / 2;
        } else {
            step = plan_time_with(job, memory, s, &groups).step_seconds;
        }
        const double speedup = step > 0 ? base.step_seconds / step : 1;
        if (speedup > 1.001) out.push_back({r, what, speedup});
    }
    std::sort(out.begin(), out.end(), [](const WeakPoint& a, const WeakPoint& b) { return a.impact > b.impact; });
    out.push_back({Resource::memory_capacity, "GPU memory headroom at the peak",
                   memory.capacity_bytes > 0 ? 1.0 - memory.device_used_bytes / memory.capacity_bytes : 0});
    return out;
}

}  // namespace ftb
