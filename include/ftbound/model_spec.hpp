// ModelSpec: a transformer's shapes, normalised from a HuggingFace config.json (DESIGN.md §2).
// One plain struct per block (LayerSpec), llama.cpp style; formulas never read JSON.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ftb {

enum class FfnKind { plain, gated };           // plain: up -> act -> down; gated: SwiGLU / GeGLU (gate, up, down)
enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { rotary, learned, alibi, relative_buckets };
// A block's state-space sequence mixer (none: attention alone). mamba1: the selective scan of Mamba (transformers
// modeling_mamba.py MambaMixer, modeling_jamba.py JambaMambaMixer); mamba2: the state-space duality of Mamba-2
// (modeling_mamba2.py Mamba2Mixer, modeling_falcon_h1.py FalconH1Mixer, modeling_granitemoehybrid.py
// GraniteMoeHybridMambaLayer, modeling_nemotron_h.py NemotronHMamba2Mixer). The linear-attention and convolution
// mixers share the fields: gated_delta: Gated DeltaNet (modeling_qwen3_next.py Qwen3NextGatedDeltaNet, and Qwen3.5's
// copy), ssm_groups key heads of ssm_state dimensions, ssm_heads value heads of ssm_inner / ssm_heads; short_conv:
// LFM2's gated short convolution (modeling_lfm2.py Lfm2ShortConv), ssm_inner = hidden channels, ssm_conv taps;
// kda: Kimi Delta Attention (vLLM model_executor/layers/kda.py KimiDeltaAttention), the gated delta rule with a
// per-channel decay: ssm_heads = ssm_groups heads of ssm_state key and ssm_inner / ssm_heads value dimensions, its
// own q_proj, k_proj, v_proj and o_proj, and low-rank decay and output gates of rank ssm_state.
enum class SsmKind { none, mamba1, mamba2, gated_delta, short_conv, kda };

// How a pre-quantised checkpoint stores its block linears (config.json `quantization_config`). none: unquantised,
// in the dtype the job loads it (a job may still quantise it on load: train.method qlora).
enum class WeightFormat {
    none,
    awq,      // AutoAWQ GEMM packing: `bits`-bit codes, one fp16 scale and one packed zero per group of input rows
    gptq,     // GPTQ (auto-gptq / optimum) packing: the same buffers (qweight, qzeros, scales; g_idx per input row)
    nvfp4,    // NVIDIA ModelOpt NVFP4: FP4 E2M1 codes, one FP8 E4M3 scale per group of 16, an FP32 scale per tensor
};

struct QuantizedWeights {
    WeightFormat format = WeightFormat::none;
    int bits = 16;                     // per weight code
    int64_t group_size = 0;            // weights sharing one scale (and zero)
};

// One block (decoder layer, or an encoder/decoder block of an encoder-decoder model).
struct LayerSpec {
    int64_t hidden = 0;
    int64_t heads = 0;
    int64_t kv_heads = 0;
    int64_t head_dim = 0;
    int64_t ffn_intermediate = 0;      // dense FFN width (per expert for MoE)
    FfnKind ffn_kind = FfnKind::gated;
    // Attention projections: q [hidden -> heads*head_dim], k/v [hidden -> kv_heads*head_dim], o [heads*head_dim -> hidden]
    bool qkv_bias = false;
    bool o_bias = false;
    bool mlp_bias = false;
    bool qk_norm = false;              // per-head RMSNorm on q and k (qwen3, some stablelm)
    int64_t qk_norm_params = 0;        // parameters of those norms
    // Norms in this block (count x params each); a norm's params = hidden (weight) [+ hidden (bias)]
    int norms = 2;
    bool norm_bias = false;
    bool parallel_attn_mlp = false;    // attention and MLP read the same normed input (falcon, phi, gpt-j)
    // Mixture of experts
    int64_t experts = 0;               // 0 = dense block
    int64_t experts_per_token = 0;
    int64_t shared_expert_intermediate = 0;   // qwen2_moe shared expert width (0 = none)
    bool shared_expert_gate = false;
    bool router_bias = false;          // a per-expert bias on the router (DeepSeek-V3's e_score_correction_bias)
    // Latent MoE (Nemotron-H: modeling_nemotron_h.py NemotronHMoE): the routed experts read and write moe_latent
    // dimensions, reached through fc1_latent_proj [hidden -> latent] and fc2_latent_proj [latent -> hidden] (no
    // biases); the router and the shared expert read the hidden state. 0: the experts read the hidden state.
    int64_t moe_latent = 0;
    // Encoder-decoder
    bool cross_attention = false;      // decoder block of T5: extra attention over encoder states
    // A block whose attention reads the encoder's states instead of the text (mllama's cross-attention layers, which
    // torchtune calls fusion layers): train.blocks: cross_attention trains these alone.
    bool attends_encoder = false;
    bool is_encoder = false;
    int64_t relative_attention_params = 0;   // T5's relative position bias table, held by the first block of a stack
    // Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0. q and k have head_dim = qk_nope + qk_rope
    // dimensions per head, v has v_head_dim; k and v come from a shared latent of kv_lora_rank (+ a shared
    // rope key of qk_rope_head_dim), q from a latent of q_lora_rank (0 = projected directly).
    int64_t q_lora_rank = 0;
    int64_t kv_lora_rank = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
    int64_t sliding_window = 0;        // 0 = full attention (llama4: the chunk of its chunked-attention layers)
    // A learned per-head logit each query also attends to (gpt_oss: GptOssAttention.sinks, one value per head).
    bool attention_sinks = false;
    // The experts' SwiGLU clamps gate and up and adds 1 to up before the product (gpt_oss: GptOssExperts._apply_gate,
    // torchtitan gpt_oss/model/moe.py swiglu): more intermediates saved for backward than silu(gate) * up.
    bool clamped_swiglu = false;
    // A sigmoid gate on the attention output from its own projection, hidden -> heads * head_dim without bias
    // (afmoe: AfmoeAttention.gate_proj, output * sigmoid(gate_proj(x)) before o_proj).
    bool attention_output_gate = false;
    int64_t activation_params = 0;     // a learnable activation's own scalars (xIELU: alpha_p, alpha_n)
    // State-space mixer (SsmKind). A block without attention has heads = kv_heads = 0; one without an FFN has
    // ffn_intermediate = 0 (Mamba's blocks are a norm and the mixer). Attention beside an SSM on the same normed
    // input is Falcon-H1's parallel hybrid.
    SsmKind ssm = SsmKind::none;
    int64_t ssm_inner = 0;             // d_inner: the scan's channels (expand * hidden, or Falcon-H1's mamba_d_ssm)
    int64_t ssm_state = 0;             // N: state size per channel (mamba1) or per group (mamba2)
    int64_t ssm_conv = 0;              // K: the depthwise causal convolution's kernel
    int64_t ssm_dt_rank = 0;           // mamba1: R, the rank of the step size's projection
    int64_t ssm_heads = 0;             // mamba2: H heads of ssm_inner / H channels each
    int64_t ssm_groups = 0;            // mamba2: G groups sharing B and C
    int64_t ssm_chunk = 0;             // mamba2: the SSD algorithm's chunk length (gated_delta: the kernel's)
    bool ssm_conv_bias = false;
    bool ssm_proj_bias = false;        // biases on in_proj and out_proj
    bool ssm_gated_norm = false;       // mamba2: the gated RMSNorm over d_inner (gated_delta: per head) before out_proj
    int64_t ssm_extra_params = 0;      // norms inside the mixer (Jamba: dt, B and C layernorms)

    // Every field equal: the memory model counts a run of equal blocks once (stage_params, stage_activations).
    bool operator==(const LayerSpec&) const = default;
    int64_t q_dim() const { return heads * head_dim; }
    int64_t kv_dim() const { return kv_heads * head_dim; }
    int64_t attention_params() const;  // q, k, v, o (+ cross attention) with biases and qk norms
    int64_t ffn_params() const;        // dense FFN, or all experts + router + shared expert
    int64_t ffn_params_active() const; // FFN parameters one token touches (top-k experts + shared)
    int64_t expert_width() const { return moe_latent > 0 ? moe_latent : hidden; }   // a routed expert's in / out
    int64_t latent_proj_params() const { return 2 * hidden * moe_latent; }           // fc1 / fc2_latent_proj
    // The shared expert has the routed experts' form (gated: gate, up, down; plain: up, down).
    int64_t shared_expert_mats() const { return ffn_kind == FfnKind::gated ? 3 : 2; }
    int64_t norm_params() const;
    int64_t ssm_params() const;        // the state-space mixer, exact (0 without one)
    int64_t ssm_linear_params() const; // of those, the nn.Linear weights (in_proj, x_proj, dt_proj, out_proj)
    // in_proj's output width (mamba1: 2 d_inner; mamba2: 2 d_inner + 2 G N + H; gated_delta: in_proj_qkvz and
    // in_proj_ba, 2 G N + 2 d_inner + 2 H; short_conv: 3 d_inner; kda: every linear reading the block's input, q, k,
    // v, b, f_a and g_a, 2 G N + d_inner + H + 2 N)
    int64_t ssm_in_width() const;
    // channels of the convolution (mamba1, short_conv: d_inner; mamba2, gated_delta, kda: d_inner + 2 G N)
    int64_t ssm_conv_width() const;
    int64_t ssm_x_width() const { return ssm == SsmKind::mamba1 ? ssm_dt_rank + 2 * ssm_state : 0; }   // mamba1 x_proj
    bool has_attention() const { return heads > 0; }
    // A delta-rule linear attention (Gated DeltaNet or KDA): fla's chunked delta rule runs the scan.
    bool delta_rule() const { return ssm == SsmKind::gated_delta || ssm == SsmKind::kda; }
    int64_t params() const {
        return attention_params() + ffn_params() + norm_params() + relative_attention_params + activation_params +
               ssm_params();
    }
};

// A multimodal checkpoint's non-text encoder (vision tower or audio encoder) and the projector that maps its outputs
// into the text model's embedding space. The text model's blocks are ModelSpec::layers; the encoder is counted beside
// them: its weights are held (and, trained, its gradients and optimizer state), while its compute and activations per
// image depend on how many images or audio frames a sequence carries, which no job field states.
struct EncoderSpec {
    std::string modality;              // "vision" or "audio"; empty: a text-only checkpoint
    std::string kind;                  // the encoder's architecture, as its config names it (siglip, clip, pixtral, ...)
    int64_t params = 0;                // the encoder, exact, without the projector
    int64_t projector_params = 0;      // the projector (and merger) into the text model, exact
    int64_t layers = 0;                // its blocks
    int64_t hidden = 0;                // its width
    // Its blocks' MLP width where every block is q, k, v, o of hidden x hidden and a two-matrix MLP hidden ->
    // intermediate -> hidden (CLIP-style; the layout train.encoder: adapters counts LoRA on); 0: not described.
    int64_t intermediate = 0;
    bool present() const { return !modality.empty(); }
};

// An nn.Linear outside the blocks that the model holds but its forward never runs (MiMo's MTP input_proj).
struct IdleLinear {
    std::string name;                  // its module name, the leaf LoRA target names match
    int64_t in = 0, out = 0;           // weight out x in, no bias
};

struct ModelSpec {
    std::string name;                  // catalog id or the config's path
    std::string architecture;          // config.json model_type
    int64_t hidden = 0;
    int64_t vocab = 0;
    int64_t max_positions = 0;
    PositionKind position = PositionKind::rotary;
    int64_t position_embedding_params = 0;   // learned absolute positions (gpt2, opt, mpt with learned_pos_emb)
    bool tie_word_embeddings = false;
    bool lm_head_bias = false;
    int64_t embedding_norm_params = 0; // bloom's word_embeddings_layernorm
    int64_t final_norm_params = 0;     // per stack (decoder-only: one; T5: encoder + decoder)
    int final_norms = 1;
    int64_t extra_params = 0;          // family-specific leftovers (OPT project_in/out), named in the reader
    int64_t vision_params = 0;         // multimodal checkpoints: encoder.params + encoder.projector_params
    EncoderSpec encoder;               // multimodal checkpoints: the vision or audio encoder and its projector
    QuantizedWeights quantized;        // a pre-quantised checkpoint's block linears
    NormKind norm = NormKind::rmsnorm;
    std::string activation;            // config hidden_act: silu, gelu, gelu_pytorch_tanh, relu, relu2, xielu
    // Dropout the config keeps on during training: each active dropout saves a 1-byte mask per element.
    double attention_dropout = 0;      // on the attention probabilities (eager attention)
    double hidden_dropout = 0;         // on each sub-layer's output before the residual add
    double ffn_dropout = 0;            // inside the FFN after the activation (T5)
    bool encoder_decoder = false;
    int64_t encoder_layers = 0;        // T5: first encoder_layers entries of `layers` are the encoder
    std::vector<LayerSpec> layers;     // in execution order
    // Modules the model class builds and loads but its forward never runs: MiMo's multi-token-prediction layers
    // (MiMoModel.mtp_layers beside Qwen2Model's decoder layers; MiMoForCausalLM keeps Qwen2ForCausalLM.forward, and
    // Qwen2Model.forward iterates self.layers alone). Their weights are stored like the blocks' (quantised under QLoRA)
    // and PEFT adapts their linears by name, but they cost no compute or activations and receive no gradient.
    std::vector<LayerSpec> idle_layers;     // their decoder blocks
    std::vector<IdleLinear> idle_linears;   // their linears outside those blocks
    int64_t idle_norm_params = 0;           // their norms outside those blocks

    const LayerSpec& layer(size_t i) const { return layers.at(i); }
    size_t num_layers() const { return layers.size(); }
    int64_t embedding_params() const { return vocab * hidden + position_embedding_params; }
    int64_t lm_head_params() const { return (tie_word_embeddings ? 0 : vocab * hidden) + (lm_head_bias ? vocab : 0); }
    int64_t idle_params() const;       // the idle modules above, exact
    int64_t total_params() const;      // exact; tied embeddings counted once; idle modules included
    int64_t active_params() const;     // per token (MoE: top-k experts); idle modules excluded
    bool is_moe() const;
    bool has_ssm() const;              // any block with a state-space mixer
};

}  // namespace ftb
