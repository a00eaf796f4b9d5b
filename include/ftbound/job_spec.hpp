// JobSpec: how the model is trained, normalised from the job file (CONTRACT.md "The job file").
// Defaults are filled in by the reader from the named framework's profile, never by formulas.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/storage.hpp"

namespace ftb {

// oft / qoft: orthogonal fine-tuning (PEFT OFTConfig) over a frozen base, unquantised or quantised as qlora's.
enum class Method { full, lora, qlora, freeze, oft, qoft };
enum class Precision { fp32, tf32, fp16, bf16, fp8 };
enum class WeightsMode { mixed, pure };
enum class Optimizer { adamw, adamw_8bit, paged_adamw_8bit, paged_adamw, adam, sgd, sgd_momentum, adafactor, lion };
// How the optimizer step runs: torch.optim foreach (multi-tensor ops with state-sized intermediates), fused
// (one kernel, no intermediates), for_loop (one parameter at a time).
enum class OptimizerImpl { foreach, fused, for_loop };
// selective: attention core (Megatron); full: whole blocks (train.recompute_layers of them per stage);
// op: torchtitan per-op selective AC (saves matmul and attention outputs, every other matmul recomputed).
enum class Recompute { none, selective, full, op };
enum class Attention { flash, sdpa, eager };
enum class LossImpl { standard, fp32_upcast, chunked, fused };
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
// How context-parallel ranks exchange k and v: passed around a ring under the attention (Megatron --cp-comm-type
// p2p), or all-gathered before it and reduce-scattered after, on the critical path (all_gather), or PyTorch's
// context_parallel (pass_kv: k/v all-gathered beside the first local sub-SDPA, dk/dv passed around a ring in fp32),
// or re-sharded by heads around the attention (all_to_all: DeepSpeed-Ulysses, Transformer Engine a2a).
enum class ContextParallelExchange { ring, all_gather, pass_kv, all_to_all };
// checkpoints: (activations only) the recompute checkpoints, i.e. block inputs, go to host memory.
enum class OffloadTarget { none, cpu, nvme, checkpoints };

// What trains of a multimodal checkpoint's encoder (ModelSpec::encoder) when the text model's weights train (method
// full): all of it (transformers' default: every parameter requires grad), only the projector into the text model
// (LLaMA-Factory freeze_vision_tower), or nothing (also freeze_multi_modal_projector). LoRA and freeze keep it frozen,
// unless `adapters`: with lora / qlora, LoRA adapters on the tower's block linears (the text targets' names) train.
enum class EncoderTraining { trained, projector, frozen, adapters };
// Which of the text model's blocks train (their weights under full, their adapters under lora / qlora): all of them,
// or only the blocks that attend to the encoder (LayerSpec::attends_encoder), with the other blocks, the embedding,
// the final norm and the head frozen (torchtune's Llama 3.2 Vision with decoder_trainable frozen, fusion trained).
enum class TrainedBlocks { all, cross_attention };

// The adapted linears (LoRA's or OFT's, the same PEFT target_modules) live in LoraConfig::targets / all_linear.
struct LoraConfig {
    int64_t rank = 16;
    double alpha = 32;
    double dropout = 0;                // lora_dropout: a dropout mask and copy of the input per adapter
    std::vector<std::string> targets;  // HF module names; empty = all linear layers of the blocks
    bool all_linear = true;
};

// OFT (PEFT src/peft/tuners/oft, v0.18.1): each adapted linear's input is rotated by a block-diagonal orthogonal
// matrix, r blocks of b x b with r * b = in_features; a block is the Cayley-Neumann image of a skew-symmetric matrix
// stored as its strict upper triangle (OFTRotationModule.weight: r x b(b-1)/2). PEFT takes one of the two, the other
// 0 (OFTConfig.__post_init__); with block_size the rank follows per layer, and the reverse.
struct OftConfig {
    int64_t block_size = 32;   // oft_block_size (OFTConfig default 32)
    int64_t rank = 0;          // r: blocks per adapted linear
};

// Block size of OFT's rotation on a linear with `in_features` inputs; 0 when the config's block size or rank does
// not divide in_features (PEFT would then pick a neighbouring divisor with a warning, OFTLayer.adjust_oft_parameters).
inline int64_t oft_block_size_for(const OftConfig& c, int64_t in_features) {
    if (c.block_size > 0) return in_features % c.block_size == 0 ? c.block_size : 0;
    if (c.rank > 0) return in_features % c.rank == 0 ? in_features / c.rank : 0;
    return 0;
}

// The library whose kernels dequantise the 4-bit base weights for every use (each costs time differently).
enum class QloraKernel {
    bitsandbytes,       // bnb Linear4bit / MatMul4Bit: NF4, dequantised in forward and again in backward
    bitsandbytes_047,   // the same up to bitsandbytes 0.47, whose NF4 dequantisation kernel branched per element
    torchao,        // torchao NF4Tensor (torchtune): linear_nf4 dequantises in forward and in backward
    auto_gptq,      // auto-gptq int4 QuantLinear: dequantised with PyTorch ops; backward reuses the saved weight
    // Set by a pre-quantised checkpoint's quantization_config (ModelSpec::quantized), not named in job files:
    awq,            // AutoAWQ WQLinear_GEMM: dequantised to fp16 in forward and again in backward
    modelopt_nvfp4, // ModelOpt NVFP4 weights: dequantised by ModelOpt's fp4_dequantize per use
};

struct QloraConfig {
    int bits = 4;                      // 4 (NF4 / int4) or 8 (LLM.int8)
    bool double_quant = true;
    QloraKernel kernel = QloraKernel::bitsandbytes;
    // Weights per scale (and zero) of the group-quantised formats (auto-gptq, AWQ, NVFP4). 128 is the default of
    // Qwen's GPTQ script (QwenLM/Qwen run_gptq.py, --group-size default 128), the auto-gptq checkpoints in validation;
    // a pre-quantised checkpoint sets its own (quantization_config.group_size).
    int64_t group_size = 128;
};

struct TrainSpec {
    Method method = Method::full;
    LoraConfig lora;
    OftConfig oft;
    QloraConfig qlora;
    int64_t freeze_trainable_layers = 2;
    EncoderTraining encoder = EncoderTraining::trained;
    TrainedBlocks blocks = TrainedBlocks::all;
    Precision precision = Precision::bf16;
    WeightsMode weights = WeightsMode::mixed;
    Optimizer optimizer = Optimizer::adamw;
    OptimizerImpl optimizer_impl = OptimizerImpl::foreach;   // framework default when the job leaves it out
    bool optimizer_in_backward = false;
    int64_t micro_batch = 1;
    int64_t global_batch = 1;
    int64_t seq_len = 2048;
    bool packing = true;
    double avg_seq_len = 0;            // real tokens per sequence when padded (0 = seq_len)
    Recompute recompute = Recompute::none;
    int64_t recompute_layers = 0;      // full recompute: blocks per pipeline stage that recompute (0 = all)
    bool fp8_weights = false;          // low-precision weight copies stored in fp8 (precision fp8 only)
    // Megatron-Core `activation_func_fp8_input_store`: the fused SwiGLU keeps its input in fp8 for the backward.
    bool activation_func_fp8_input_store = false;
    // Element size gradients are reduced in across data-parallel ranks (FSDP MixedPrecision reduce_dtype);
    // 0: the gradients' own dtype.
    double reduce_dtype_bytes = 0;
    Attention attention = Attention::flash;
    LossImpl loss = LossImpl::standard;
    bool compile = false;
    std::string framework = "generic";
};

struct ParallelSpec {
    int64_t tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
    bool sequence_parallel = false;
    int zero = 0;
    PipelineSchedule pp_schedule = PipelineSchedule::one_f_one_b;
    int64_t virtual_stages = 1;
    bool pp_edges_as_layers = false;   // the embedding and the head + loss each take one block's place in the split
    ContextParallelExchange cp_exchange = ContextParallelExchange::ring;   // default: the framework profile's
    // Tensor-parallel collectives split into chunks and run under the GEMMs they feed or follow (Transformer Engine
    // userbuffers: Megatron-Core `tp_comm_overlap`, NeMo `ub_tp_comm_overlap`); false: on the critical path.
    bool tp_comm_overlap = false;
};

struct OffloadSpec {
    OffloadTarget optimizer = OffloadTarget::none;
    OffloadTarget params = OffloadTarget::none;
    OffloadTarget activations = OffloadTarget::none;
    // With activations: cpu, how many blocks of each pipeline stage (the first ones) send their saved tensors to
    // host memory (Megatron-Core `cpu_offloading_num_layers`); 0 = every block.
    int64_t activation_layers = 0;
};

struct DataSpec {
    double tokens = 0;                 // per epoch
    double epochs = 1;
    int64_t max_sample_tokens = 0;     // the longest tokenized sample (0 = unknown); sets the padded peak when unpacked
};

struct OpsSpec {
    std::optional<double> price_per_gpu_hour;
    std::optional<double> price_per_node_hour;
    double electricity_per_kwh = 0.15; // set by the reader; see ops defaults
    double pue = 1.3;
    StorageChoice checkpoint_storage;  // where checkpoints are written and read back (tier "" = default)
    StorageChoice data_storage;        // where the training data is read from (tier "" = default)
    std::optional<double> failures_per_gpu_hour;   // override of the Llama 3 default
    double restart_seconds = 0;        // 0 = derived
};

struct JobSpec {
    std::string file;                  // where it came from, for messages
    TrainSpec train;
    ParallelSpec parallel;
    OffloadSpec offload;
    DataSpec data;
    OpsSpec ops;

    int64_t grad_accumulation() const {  // micro-batches per optimizer step per DP rank
        int64_t per_step = train.micro_batch * parallel.dp;
        return per_step > 0 ? (train.global_batch + per_step - 1) / per_step : 1;
    }
    // Real (non-padding) tokens a sequence holds: all of seq_len when packed, else avg_seq_len.
    double real_tokens_per_sequence() const {
        return train.packing || train.avg_seq_len <= 0 ? double(train.seq_len) : train.avg_seq_len;
    }
    // The length a micro-batch is padded to at the memory peak: seq_len when packed or when the longest sample is
    // unknown; unpacked, a padding collator pads each batch to its longest sample (torchtune
    // torchtune/data/_collate.py padded_collate_sft; Hugging Face transformers DataCollatorWithPadding,
    // padding=True = "longest"), so no batch is longer than the data's longest sample, rounded up to a multiple of
    // cp (each context-parallel rank takes an equal part) and truncated to seq_len (max_seq_len).
    int64_t padded_seq_len() const {
        if (train.packing || data.max_sample_tokens <= 0) return train.seq_len;
        const int64_t cp = parallel.cp > 0 ? parallel.cp : 1;
        return std::min(train.seq_len, (data.max_sample_tokens + cp - 1) / cp * cp);
    }
    // The length an unpacked micro-batch is padded to on average: one sequence runs on its own length; for b, the
    // expected longest of b lengths drawn uniformly on [0, 2*avg] (mean avg) is 2*avg*b/(b+1) (an assumption: the
    // length distribution is not in the job), capped at padded_seq_len. seq_len when packed or avg_seq_len unset.
    double expected_padded_seq_len() const {
        if (train.packing || train.avg_seq_len <= 0) return double(train.seq_len);
        const double b = double(train.micro_batch);
        const double longest = double(padded_seq_len());
        return b <= 1 ? std::min(longest, train.avg_seq_len) : std::min(longest, 2 * train.avg_seq_len * b / (b + 1));
    }
};

const char* to_string(Method);
// Adapters train over a frozen base (lora, qlora, oft, qoft); of those, qlora and qoft quantise the base.
inline bool trains_adapters(Method m) { return m == Method::lora || m == Method::qlora || m == Method::oft || m == Method::qoft; }
inline bool quantised_base(Method m) { return m == Method::qlora || m == Method::qoft; }
inline bool oft_adapters(Method m) { return m == Method::oft || m == Method::qoft; }
const char* to_string(EncoderTraining);
const char* to_string(TrainedBlocks);
const char* to_string(Precision);
const char* to_string(Optimizer);
const char* to_string(OptimizerImpl);
const char* to_string(Recompute);
const char* to_string(Attention);
const char* to_string(LossImpl);
const char* to_string(PipelineSchedule);
const char* to_string(ContextParallelExchange);
const char* to_string(OffloadTarget);

}  // namespace ftb
