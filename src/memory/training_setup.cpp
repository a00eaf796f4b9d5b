#include "memory/training_setup.hpp"

#include <algorithm>
#include <string>

namespace ftb {

double precision_bytes(Precision p) {
    switch (p) {
        case Precision::fp32:
        case Precision::tf32: return 4;
        case Precision::fp16:
        case Precision::bf16: return 2;
        case Precision::fp8: return 1;
    }
    return 2;
}

uint32_t lora_target_bits(const std::string& name) {
    // HuggingFace module names of each family's block linears (modeling_<family>.py).
    static const std::pair<const char*, uint32_t> table[] = {
        {"q_proj", kQ}, {"q", kQ}, {"query", kQ},
        {"k_proj", kK}, {"k", kK}, {"key", kK},
        {"v_proj", kV}, {"v", kV}, {"value", kV},
        {"o_proj", kO}, {"o", kO}, {"out_proj", kO | kSsmOut}, {"dense", kO},
        {"qkv_proj", kQ | kK | kV}, {"query_key_value", kQ | kK | kV}, {"c_attn", kQ | kK | kV}, {"Wqkv", kQ | kK | kV},
        {"gate_proj", kGate}, {"w1", kGate}, {"wi_0", kGate},
        {"up_proj", kUp}, {"w3", kUp}, {"wi_1", kUp}, {"wi", kUp}, {"fc1", kUp}, {"c_fc", kUp}, {"dense_h_to_4h", kUp},
        {"gate_up_proj", kGate | kUp},
        // state-space mixers (MambaMixer, Mamba2Mixer and the hybrids' copies): out_proj is the mixer's output too
        {"in_proj", kSsmIn}, {"x_proj", kSsmX}, {"dt_proj", kSsmDt},
        // Gated DeltaNet's input projections (Qwen3NextGatedDeltaNet; Qwen3_5GatedDeltaNet splits them in four)
        {"in_proj_qkvz", kSsmIn}, {"in_proj_ba", kSsmIn}, {"in_proj_qkv", kSsmIn}, {"in_proj_z", kSsmIn},
        {"in_proj_b", kSsmIn}, {"in_proj_a", kSsmIn},
        {"down_proj", kDown}, {"w2", kDown}, {"wo", kDown}, {"fc2", kDown}, {"dense_4h_to_h", kDown},
        {"fc1_latent_proj", kMoeLatent}, {"fc2_latent_proj", kMoeLatent},   // Nemotron-H NemotronHMoE
        {"c_proj", kO | kDown},   // gpt2 names both the attention output and the MLP output c_proj
    };
    // PEFT matches a target with a dot against the end of a module's name (peft/tuners/tuners_utils.py
    // check_target_module_exists: key == target or key.endswith("." + target)): self_attn.q_proj is every q_proj;
    // a path through the shared expert (Llama4TextMoe.shared_expert, DeepseekV3MoE.shared_experts) adapts its
    // linears alone.
    const auto dot = name.rfind('.');
    const std::string leaf = dot == std::string::npos ? name : name.substr(dot + 1);
    const bool shared_only = dot != std::string::npos && name.find("shared_expert") != std::string::npos;
    for (const auto& [n, bits] : table) {
        if (leaf != n) continue;
        if (!shared_only) return bits;
        uint32_t shared = 0;
        if (bits & kGate) shared |= kSharedGate;
        if (bits & kUp) shared |= kSharedUp;
        if (bits & kDown) shared |= kSharedDown;
        return shared;
    }
    return 0;
}

std::vector<MixerLinear> kda_linears(const LayerSpec& l) {
    const int64_t h = l.hidden, k = l.ssm_groups * l.ssm_state, I = l.ssm_inner, n = l.ssm_state;
    const uint32_t g = kMixerGates;
    return {{h, k, kQ, true},          {h, k, kK, true},  {h, I, kV, true},          {h, l.ssm_heads, g, true},
            {h, n, g, true, false, true}, {n, I, g, false},  {h, n, g, true, false, true}, {n, I, g, false},
            {I, h, kO, false, true}};   // q, k, v, b; f_a, f_b, g_a, g_b; o_proj
}

int64_t lora_params_in_layer(const LayerSpec& l, uint32_t mask, int64_t r) {
    int64_t p = 0;
    const int64_t attn_mult = l.cross_attention ? 2 : 1;
    if (l.ssm == SsmKind::kda)   // before the attention bits are masked off: KDA's q/k/v/o_proj take them
        for (const MixerLinear& x : kda_linears(l))
            if (mask & x.bits) p += r * (x.in + x.out);
    // A block without attention (a state-space mixer alone) or without an FFN has none of their linears.
    const uint32_t attention_bits = l.has_attention() ? ~0u : ~uint32_t(kQ | kK | kV | kO);
    const uint32_t ffn_bits = l.ffn_intermediate > 0 ? ~0u : ~uint32_t(kGate | kUp | kDown);
    mask &= attention_bits & ffn_bits;
    if (mask & kQ) p += attn_mult * r * (l.hidden + l.q_dim());
    if (mask & kK) p += attn_mult * r * (l.hidden + l.kv_dim());
    if (mask & kV) p += attn_mult * r * (l.hidden + l.kv_dim());
    if (mask & kO) p += attn_mult * r * (l.q_dim() + l.hidden);
    // afmoe's attention output gate is a gate_proj too (AfmoeAttention.gate_proj): a gate_proj target adapts it.
    if ((mask & kGate) && l.attention_output_gate) p += r * (l.hidden + l.q_dim());
    if (l.ssm != SsmKind::none && l.ssm != SsmKind::kda) {
        // Gated DeltaNet's in_proj is two linears (in_proj_qkvz, in_proj_ba): two adapters' A matrices
        if (mask & kSsmIn) p += r * ((l.ssm == SsmKind::gated_delta ? 2 : 1) * l.hidden + l.ssm_in_width());
        if (mask & kSsmOut) p += r * (l.ssm_inner + l.hidden);
        if (l.ssm == SsmKind::mamba1) {
            if (mask & kSsmX) p += r * (l.ssm_inner + l.ssm_x_width());
            if (mask & kSsmDt) p += r * (l.ssm_dt_rank + l.ssm_inner);
        }
    }
    const int64_t n = l.experts > 0 ? l.experts : 1;
    const int64_t i = l.ffn_intermediate, e = l.expert_width();
    const bool gated = l.ffn_kind == FfnKind::gated;
    if ((mask & kGate) && gated) p += n * r * (e + i);
    if (mask & kUp) p += n * r * (e + i);
    if (mask & kDown) p += n * r * (i + e);
    if ((mask & kMoeLatent) && l.moe_latent > 0) p += 2 * r * (l.hidden + e);
    if (l.shared_expert_intermediate > 0) {
        const int64_t s = l.shared_expert_intermediate;
        if ((mask & shared_gate_bits()) && gated) p += r * (l.hidden + s);
        if (mask & shared_up_bits()) p += r * (l.hidden + s);
        if (mask & shared_down_bits()) p += r * (s + l.hidden);
    }
    return p;
}

std::vector<AdaptedInput> adapted_inputs(const LayerSpec& l, uint32_t mask, bool fused_qkv) {
    std::vector<AdaptedInput> out;
    auto add = [&](int64_t in, int64_t count) {
        if (in > 0 && count > 0) out.push_back({in, count});
    };
    // The same linears lora_params_in_layer counts, by their input width.
    const int64_t attn_mult = l.cross_attention ? 2 : 1;
    if (l.ssm == SsmKind::kda)
        for (const MixerLinear& x : kda_linears(l))
            if (mask & x.bits) add(x.in, 1);
    if (!l.has_attention()) mask &= ~uint32_t(kQ | kK | kV | kO);
    if (l.ffn_intermediate == 0) mask &= ~uint32_t(kGate | kUp | kDown);
    const int qkv = fused_qkv ? ((mask & (kQ | kK | kV)) ? 1 : 0) : !!(mask & kQ) + !!(mask & kK) + !!(mask & kV);
    add(l.hidden, attn_mult * qkv);
    if (mask & kO) add(l.q_dim(), attn_mult);
    if ((mask & kGate) && l.attention_output_gate) add(l.hidden, 1);
    if (l.ssm != SsmKind::none && l.ssm != SsmKind::kda) {
        if (mask & kSsmIn) add(l.hidden, l.ssm == SsmKind::gated_delta ? 2 : 1);
        if (mask & kSsmOut) add(l.ssm_inner, 1);
        if (l.ssm == SsmKind::mamba1) {
            if (mask & kSsmX) add(l.ssm_inner, 1);
            if (mask & kSsmDt) add(l.ssm_dt_rank, 1);
        }
    }
    const int64_t n = l.experts > 0 ? l.experts : 1;
    const bool gated = l.ffn_kind == FfnKind::gated;
    add(l.expert_width(), n * (((mask & kGate) && gated ? 1 : 0) + (mask & kUp ? 1 : 0)));
    if (mask & kDown) add(l.ffn_intermediate, n);
    if ((mask & kMoeLatent) && l.moe_latent > 0) add(l.hidden, 1), add(l.moe_latent, 1);
    if (l.shared_expert_intermediate > 0) {
        add(l.hidden, ((mask & shared_gate_bits()) && gated ? 1 : 0) + (mask & shared_up_bits() ? 1 : 0));
        if (mask & shared_down_bits()) add(l.shared_expert_intermediate, 1);
    }
    return out;
}

int64_t oft_params_in_layer(const LayerSpec& l, uint32_t mask, bool fused_qkv, const OftConfig& oft) {
    int64_t p = 0;
    for (const AdaptedInput& a : adapted_inputs(l, mask, fused_qkv))
        p += a.count * oft_params_per_linear(a.in_features, oft_block_size_for(oft, a.in_features));
    return p;
}

namespace {

// PEFT's prepare_model_for_kbit_training upcasts the unquantised parameters to fp32 (profile
// kbit_training_upcasts_fp32); it skips GPTQ- and torchao-quantised models, so only bitsandbytes bases.
bool kbit_upcast(const Job& job) {
    const QloraKernel k = job.spec.train.qlora.kernel;
    return quantised_base(job.spec.train.method) && job.framework.kbit_training_upcasts_fp32 &&
           k != QloraKernel::auto_gptq && k != QloraKernel::torchao;
}

// The residual stream and the norms' output under autocast. Full training keeps fp32 parameters: the fp32 embedding
// output makes every residual add fp32. Adapters (LoRA, QLoRA) leave the base frozen in the compute dtype, so the
// stream stays there: Qwen-7B modeling_qwen.py RMSNorm returns `_norm(x.float()).type_as(x) * weight` in bf16, and PEFT
// Linear.forward casts its result back to the input's dtype (`result.to(previous_dtype)`, src/peft/tuners/lora.py).
// torch.nn.functional.layer_norm is on autocast's fp32 list (aten/src/ATen/autocast_mode.cpp, lower_precision_fp ->
// fp32 ops): its output is fp32 whatever the stream's dtype; a fused norm kernel outside autocast keeps the stream's.
void set_stream_dtypes(const Job& job, TrainingSetup& s) {
    s.bytes.residual = s.bytes.autocast && s.full ? 4 : s.bytes.act;
    const bool norm_on_fp32_list = job.model.norm == NormKind::layernorm && !job.framework.fused_norm;
    s.bytes.norm_out = s.bytes.autocast && (s.bytes.residual >= 4 || norm_on_fp32_list) ? 4 : s.bytes.act;
    // PEFT's kbit preparation (FrameworkProfile::kbit_training_upcasts_fp32): fp32 embedding and norm weights make
    // the stream and the norms' output fp32, with or without autocast.
    if (kbit_upcast(job)) s.bytes.residual = s.bytes.norm_out = 4;
}

}  // namespace

bool params_sharded_at_rest(const Job& job) {
    const int64_t zero = job.spec.parallel.zero;
    return zero >= 3 || (zero == 2 && job.framework.zero2_shards_params);
}

namespace {

// Bytes per element of activations, matmul inputs and the low-precision weight copies, from the precision.
void set_precision_bytes(const TrainSpec& t, TrainingSetup& s) {
    const double compute = precision_bytes(t.precision);
    const bool fp8 = t.precision == Precision::fp8;
    // fp8 training (Transformer Engine) computes GEMMs in fp8 but keeps activations and weights in bf16;
    // it saves fp8 copies of GEMM inputs for backward.
    s.bytes.act = fp8 ? 2 : compute;
    s.bytes.matmul_in = compute;
    // fp8_weights: the low-precision weight copies themselves are fp8 (Megatron --fp8-param-gather / Transformer
    // Engine fp8_model_init; torchtitan float8 enable_fsdp_float8_all_gather for the gathered FSDP copies).
    s.bytes.weight_compute = fp8 ? (t.fp8_weights ? 1 : 2) : compute;
}

// train.blocks: cross_attention: only the blocks that attend to the encoder train; no block below the first of them
// needs a backward pass (the text blocks before it do not see the encoder; check_job ensures there is one).
void limit_blocks(const Job& job, TrainingSetup& s) {
    if (job.spec.train.blocks != TrainedBlocks::cross_attention) return;
    const auto& layers = job.model.layers;
    s.block_outside.resize(layers.size());
    int64_t first = static_cast<int64_t>(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
        s.block_outside[i] = !layers[i].attends_encoder;
        if (layers[i].attends_encoder) first = std::min(first, static_cast<int64_t>(i));
    }
    s.first_trainable_layer = std::max(s.first_trainable_layer, first);
}

void set_adapters(const Job& job, TrainingSetup& s) {
    const TrainSpec& t = job.spec.train;
    s.full = t.method == Method::full || t.method == Method::freeze;
    s.adapters = trains_adapters(t.method);
    s.oft = oft_adapters(t.method);
    if (t.method == Method::freeze)
        s.first_trainable_layer = static_cast<int64_t>(job.model.num_layers()) - t.freeze_trainable_layers;
    limit_blocks(job, s);
    if (!s.adapters) return;
    // PEFT's all-linear takes every nn.Linear but the output head: a state-space mixer's, a latent MoE's and KDA's
    // gates too.
    if (t.lora.all_linear) s.lora_mask = kAllLinears | kSsmLinears | kMoeLatent | kMixerGates;
    const bool ssm = job.model.has_ssm();
    for (const auto& name : t.lora.targets) {
        uint32_t bits = lora_target_bits(name);
        // The hybrid families name attention's output o_proj: out_proj is the state-space mixer's alone there;
        // LFM2 names both outputs out_proj (Lfm2Attention.out_proj, Lfm2ShortConv.out_proj).
        if (ssm && (bits & kSsmOut) && job.model.architecture != "lfm2") bits &= ~uint32_t(kO);
        s.lora_mask |= bits;
        if (name == "lm_head") s.lora_on_head = true;
    }
}

// Bytes per quantised base weight under QLoRA, by kernel.
double quantised_bytes_per_param(const TrainSpec& t, const TrainingSetup& s) {
    if (!quantised_base(t.method)) return 0;
    // auto-gptq QuantLinear buffers (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py __init__, v0.4.2): qweight
    // packs 32 / bits weights per int32 (bits / 8 B), and per group of group_size input rows one fp16 scale
    // (2 B) and one zero of `bits` bits packed in int32 per output column; g_idx (int32 per input row) and the
    // bias are per row or column (~0 per weight). AutoAWQ's WQLinear_GEMM registers the same three buffers with
    // the same shapes (casper-hansen/AutoAWQ awq/modules/linear/gemm.py, WQLinear_GEMM.__init__ at d9dc8e56: qweight
    // int32 (in, out / (32 / w_bit)), qzeros int32 (in / group_size, out / (32 / w_bit)), scales fp16
    // (in / group_size, out)).
    const double code_bytes = t.qlora.bits / 8.0, group = double(t.qlora.group_size);
    if (t.qlora.kernel == QloraKernel::auto_gptq || t.qlora.kernel == QloraKernel::awq)
        return code_bytes + (2 + code_bytes) / group;
    // NVIDIA ModelOpt NVFP4 (NVIDIA/Model-Optimizer modelopt/torch/quantization/qtensor/nvfp4_tensor.py,
    // NVFP4QTensor.quantize at 211c6b34): two E2M1 codes packed per uint8 (`(q[..., 1::2] << 4) | q[..., 0::2]`),
    // one float8_e4m3fn scale per block of block_size (16) weights along the input, and one fp32
    // weights_scaling_factor_2 per tensor (~0 per weight).
    if (t.qlora.kernel == QloraKernel::modelopt_nvfp4) return 0.5 + 1.0 / group;
    // LLM.int8: 1 byte per weight + one fp32 scale per output row (counted per weight as ~0).
    if (t.qlora.bits != 4) return 1.0;
    // torchao's NF4Tensor (torchtune's FrozenNF4Linear / LoRALinear quantize_base) always quantises the scalers:
    // to_nf4(block_size=64, scaler_block_size=256) keeps quantized_data (uint8, two weights a byte), one int8
    // quantized_scaler per 64-weight block and one quantization_factor in the weight's dtype per 256 blocks
    // (pytorch/ao torchao/dtypes/nf4tensor.py, NF4Tensor.from_tensor and double_quantize_scalers).
    if (t.qlora.kernel == QloraKernel::torchao) return 0.5 + 1.0 / 64 + s.bytes.weight_compute / (64 * 256);
    // bitsandbytes NF4: 4 bits per weight + one fp32 absmax per 64-weight block; double quantisation stores
    // the absmax as 8-bit with one fp32 constant per 256 blocks (Dettmers et al. 2023, QLoRA §3).
    return t.qlora.double_quant ? 0.5 + 1.0 / 64 + 4.0 / (64 * 256) : 0.5 + 4.0 / 64;
}

void set_storage_bytes(const Job& job, bool mixed, TrainingSetup& s) {
    const FrameworkProfile& fw = job.framework;
    const double compute = precision_bytes(job.spec.train.precision);
    const bool sharded_params = params_sharded_at_rest(job);
    // Storage: trainable parameters keep fp32 under torch.amp, the compute dtype otherwise (the master style
    // keeps an fp32 copy inside the optimizer instead). Frozen parameters are loaded in the compute dtype.
    s.frozen_storage_bytes = kbit_upcast(job) ? 4 : s.bytes.weight_compute;   // the unquantised frozen parameters
    if (mixed && fw.mixed_style == MixedStyle::amp) {
        s.trainable_storage_bytes = 4;
        s.grad_bytes = 4;
        s.amp_weight_copies = s.full && !sharded_params;   // every fp32 weight gets a low-precision copy per matmul
    } else if (mixed) {
        // fp8 primary weights are Transformer Engine's (fp8_model_init makes its modules' weights Float8Tensor); LoRA
        // adapters are Megatron-Core ColumnParallelLinear / RowParallelLinear, not TE modules (NeMo
        // nemo/collections/llm/peft/utils.py ParallelLinearAdapter: linear_in / linear_out, then .bfloat16()), so they
        // stay bf16.
        s.trainable_storage_bytes = s.adapters && job.spec.train.fp8_weights ? s.bytes.act : s.bytes.weight_compute;
        s.grad_bytes = fw.mixed_grad_bytes;
        s.master_bytes_per_param = fw.mixed_master_bytes;
    } else {
        s.trainable_storage_bytes = compute < 4 ? s.bytes.weight_compute : 4;
        s.grad_bytes = s.trainable_storage_bytes;
        if (!s.full && !kbit_upcast(job)) s.frozen_storage_bytes = s.trainable_storage_bytes;
    }
    // FSDP MixedPrecision reduce_dtype: the gradients travel in it, then are cast back to the sharded parameter's
    // dtype (torch/distributed/fsdp/_runtime_utils.py _cast_grad_to_param_dtype).
    s.reduce_bytes = job.spec.train.reduce_dtype_bytes > 0 ? job.spec.train.reduce_dtype_bytes : s.grad_bytes;
}

void set_optimizer_bytes(const TrainSpec& t, const FrameworkProfile& fw, bool mixed, TrainingSetup& s) {
    // Optimizer states: torch.optim creates them like the parameter (zeros_like), so a bf16 parameter gets
    // bf16 states; under mixed precision they are fp32 unless the framework's optimizer keeps them in its own
    // dtype (master style: FrameworkProfile::mixed_state_bytes).
    s.state_bytes = !mixed ? s.trainable_storage_bytes : fw.mixed_style == MixedStyle::master ? fw.mixed_state_bytes : 4;
    switch (t.optimizer) {
        case Optimizer::adamw:
        case Optimizer::adam: s.optimizer_bytes_per_param = 2 * s.state_bytes; break;
        // bitsandbytes PagedAdamW (32-bit): two fp32 states per parameter whatever the parameter's dtype.
        case Optimizer::paged_adamw: s.optimizer_bytes_per_param = 8; break;
        // bitsandbytes blockwise 8-bit Adam: two uint8 states + one fp32 absmax per 2048-element block
        // (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization").
        case Optimizer::adamw_8bit:
        case Optimizer::paged_adamw_8bit: s.optimizer_bytes_per_param = 2 + 2 * 4.0 / 2048; break;
        case Optimizer::sgd: s.optimizer_bytes_per_param = 0; break;
        case Optimizer::sgd_momentum:
        case Optimizer::lion: s.optimizer_bytes_per_param = s.state_bytes; break;
        // Adafactor keeps factored row and column second moments (Shazeer & Stern 2018): per matrix
        // (rows + cols) states; accounted per layer in the memory model, not per parameter.
        case Optimizer::adafactor: s.optimizer_bytes_per_param = 0; break;
    }
    s.optimizer_bytes_per_param += s.master_bytes_per_param;
}

}  // namespace

TrainingSetup derive_setup(const Job& job) {
    const TrainSpec& t = job.spec.train;
    const FrameworkProfile& fw = job.framework;
    TrainingSetup s;
    set_precision_bytes(t, s);
    const bool mixed = t.weights == WeightsMode::mixed && precision_bytes(t.precision) < 4;
    // FSDP/ZeRO-3 mixed precision gathers the fp32 shards as low-precision parameters (MixedPrecision
    // param_dtype): the model then runs on bf16 weights, so autocast has nothing to cast and the residual
    // stream stays in the compute dtype (PyTorch FSDP docs, MixedPrecision).
    s.bytes.autocast = mixed && fw.mixed_style == MixedStyle::amp && !params_sharded_at_rest(job);
    set_adapters(job, s);
    set_stream_dtypes(job, s);
    s.quant_bytes_per_param = quantised_bytes_per_param(t, s);
    set_storage_bytes(job, mixed, s);
    set_optimizer_bytes(t, fw, mixed, s);

    const ParallelSpec& p = job.spec.parallel;
    s.grad_accumulation = job.spec.grad_accumulation();
    s.seq_len = job.spec.padded_seq_len();
    s.tokens_per_micro_batch = t.micro_batch * s.seq_len / p.cp;
    s.dp_shard = p.dp * (fw.zero_shards_over_cp ? p.cp : 1);
    const std::string& a = job.model.architecture;
    s.fused_qkv = fw.fused_qkv || a == "gpt2" || a == "gpt_neox" || a == "mpt" || a == "falcon" || a == "bloom" ||
                  a == "phi3";
    return s;
}

const TrainingSetup& block_setup(const TrainingSetup& set, int64_t li, TrainingSetup& scratch) {
    if (!set.outside(li) || !set.adapters) return set;
    scratch = set;
    scratch.lora_mask = 0;
    scratch.unadapted_block = true;
    return scratch;
}

}  // namespace ftb
