// Derived facts about a job that both the memory and the time model need: which parameters
// train, in which dtypes tensors live, how the work is split across GPUs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ftbound/job.hpp"

namespace ftb {

// Bits of the linear layers of a block, for LoRA targeting and trainability.
enum LinearBit : uint32_t {
    kQ = 1u << 0, kK = 1u << 1, kV = 1u << 2, kO = 1u << 3,
    kGate = 1u << 4, kUp = 1u << 5, kDown = 1u << 6,
    kAllLinears = 0x7f,
    // The shared expert's linears alone (a target named shared_expert.gate_proj: PEFT matches a dotted target
    // against the end of the module's name, so the dense MLPs and the routed experts keep no adapter).
    kSharedGate = 1u << 7, kSharedUp = 1u << 8, kSharedDown = 1u << 9,
    // A state-space mixer's linears (MambaMixer / Mamba2Mixer: in_proj, x_proj, dt_proj, out_proj).
    kSsmIn = 1u << 10, kSsmX = 1u << 11, kSsmDt = 1u << 12, kSsmOut = 1u << 13,
    kSsmLinears = kSsmIn | kSsmX | kSsmDt | kSsmOut,
    // A latent MoE's fc1_latent_proj and fc2_latent_proj (Nemotron-H NemotronHMoE; LayerSpec::moe_latent).
    kMoeLatent = 1u << 14,
    // KDA's gate linears (b_proj, f_a/f_b_proj, g_a/g_b_proj): no target name here reaches them, all-linear does.
    kMixerGates = 1u << 15,
};

// One nn.Linear of a KDA mixer (vLLM model_executor/layers/kda.py KimiDeltaAttention, commit 01a7e5d9), in x out
// without bias, and the target bits its module name answers to: q_proj, k_proj, v_proj and o_proj share attention's
// names (a q_proj target adapts both kinds of block); b_proj, f_a_proj, f_b_proj, g_a_proj and g_b_proj kMixerGates.
struct MixerLinear {
    int64_t in = 0, out = 0;
    uint32_t bits = 0;
    bool reads_norm = false;   // reads the block's normed input (q, k, v, b, f_a, g_a)
    // Under tensor parallelism (vLLM kda.py): o_proj splits its input (RowParallelLinear), f_a and g_a are whole on
    // every rank (ReplicatedLinear), the others split their output (ColumnParallelLinear).
    bool row_parallel = false, replicated = false;
};
std::vector<MixerLinear> kda_linears(const LayerSpec& l);

// The bits that adapt a shared expert's gate, up and down projections: every gate/up/down, or the shared ones alone.
inline uint32_t shared_gate_bits() { return kGate | kSharedGate; }
inline uint32_t shared_up_bits() { return kUp | kSharedUp; }
inline uint32_t shared_down_bits() { return kDown | kSharedDown; }

struct ElementBytes {
    double matmul_in = 2;     // saved inputs of matmuls (fp8 under Transformer Engine: 1)
    double act = 2;           // outputs of matmuls and elementwise ops
    double residual = 2;      // the residual stream (fp32 under torch.amp when the embedding trains in fp32: its
                              // output promotes the adds; a frozen low-precision base keeps it low, as under LoRA)
    double norm_out = 2;      // the pre-attention / pre-FFN norms' output, as q/k/v and gate/up read it: fp32
                              // under autocast when the residual is fp32 or layer_norm runs on autocast's fp32 list
    double weight_compute = 2;// weights as the matmuls read them
    bool autocast = false;    // torch.amp: casts happen per op call, each cast a new tensor
};

struct TrainingSetup {
    ElementBytes bytes;
    bool full = false;                 // every parameter trains
    bool adapters = false;             // LoRA / QLoRA / OFT / QOFT
    bool oft = false;                  // the adapters are OFT's input rotations (method oft / qoft), not LoRA's A and B
    uint32_t lora_mask = 0;            // which linears carry adapters
    bool lora_on_head = false;
    int64_t first_trainable_layer = 0; // freeze: layers below this need no backward at all
    double quant_bytes_per_param = 0;  // QLoRA: bytes per base linear weight (NF4/int8 + constants)
    double trainable_storage_bytes = 2;// bytes per trainable parameter as stored on the GPU
    double frozen_storage_bytes = 2;
    double grad_bytes = 2;
    double reduce_bytes = 2;           // gradient element as reduced across data-parallel ranks (train.reduce_dtype)
    double state_bytes = 4;            // optimizer state element
    double optimizer_bytes_per_param = 8;   // states (+ master copy) per trainable parameter
    double master_bytes_per_param = 0;
    bool amp_weight_copies = false;    // fp32 weights cast to the compute dtype per matmul, kept for backward
    int64_t grad_accumulation = 1;
    int64_t seq_len = 0;               // the micro-batch's padded length at the memory peak (JobSpec::padded_seq_len)
    int64_t tokens_per_micro_batch = 0;   // per GPU (b * seq_len / cp)
    int64_t dp_shard = 1;              // ZeRO/FSDP sharding degree
    bool fused_qkv = false;            // one q/k/v projection: the family's module layout or the framework's
    // train.blocks: cross_attention: per block, true where it lies outside the trained part (no trainable weights, no
    // adapters); empty when every block is in it. The embedding, final norm and head are then outside too.
    std::vector<bool> block_outside;
    bool unadapted_block = false;      // block_setup's copy for one block outside the trained part
    bool blocks_limited() const { return !block_outside.empty(); }
    bool outside(int64_t li) const { return blocks_limited() && block_outside.at(size_t(li)); }
    // The block's weights train (full / freeze from first_trainable_layer on, within the trained part).
    bool block_trains(int64_t li) const { return full && li >= first_trainable_layer && !outside(li); }
    // Backward runs through the block (for its own weights or for a trained block below it).
    bool block_needs_grad(int64_t li) const { return li >= first_trainable_layer; }
    // The final norm and output head train under full and freeze (with the last blocks), the embedding under full.
    bool head_trains() const { return full && !blocks_limited(); }
    bool embedding_trains() const { return full && first_trainable_layer == 0 && !blocks_limited(); }
};

// The setup one block sees: outside the trained part its linears carry no adapters (a copy in `scratch`), else `set`.
const TrainingSetup& block_setup(const TrainingSetup& set, int64_t li, TrainingSetup& scratch);

TrainingSetup derive_setup(const Job& job);

// Parameters live sharded over data parallelism between uses: ZeRO-3 / FSDP full shard, and FSDP's SHARD_GRAD_OP
// for `zero: 2` where the profile says so (zero2_shards_params).
bool params_sharded_at_rest(const Job& job);

// LoRA target module name (any family's HuggingFace name, e.g. q_proj, query_key_value, wi_0, c_attn)
// -> the block linears it covers; 0 when the name is not a block linear.
uint32_t lora_target_bits(const std::string& name);

double precision_bytes(Precision p);
// LoRA trainable parameters of one block.
int64_t lora_params_in_layer(const LayerSpec& l, uint32_t mask, int64_t rank);

// The input widths of one block's adapted linears: {in_features, how many such linears}. A fused qkv projection is
// one linear (`fused_qkv`).
struct AdaptedInput {
    int64_t in_features = 0;
    int64_t count = 0;
};
std::vector<AdaptedInput> adapted_inputs(const LayerSpec& l, uint32_t mask, bool fused_qkv);

// OFT trainable parameters of one linear with `in_features` inputs and rotation blocks of `block`: in / block blocks,
// each the strict upper triangle of a block x block skew-symmetric matrix (PEFT OFTLayer.update_layer: n_elements =
// oft_block_size * (oft_block_size - 1) // 2; OFTRotationModule.weight = nn.Parameter(torch.empty(r, n_elements))).
inline int64_t oft_params_per_linear(int64_t in_features, int64_t block) {
    return block <= 0 ? 0 : in_features / block * (block * (block - 1) / 2);
}
// OFT trainable parameters of one block (0 where a block size does not divide: check_train refuses those).
int64_t oft_params_in_layer(const LayerSpec& l, uint32_t mask, bool fused_qkv, const OftConfig& oft);

}  // namespace ftb
