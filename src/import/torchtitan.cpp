// torchtitan TOML (torchtitan/models/llama3/train_configs/llama3_8b.toml; older: train_configs/llama3_8b.toml).
// Sections and names: torchtitan/config/job_config.py (JobConfig): [model] name, flavor, converters;
// [training] local_batch_size (older: batch_size), global_batch_size, seq_len, steps, compile,
// mixed_precision_param; [parallelism] data_parallel_replicate_degree, data_parallel_shard_degree,
// tensor_parallel_degree, pipeline_parallel_degree, context_parallel_degree, pipeline_parallel_schedule;
// [activation_checkpoint] mode; [optimizer] name; [float8]. FSDP2 shards parameters, gradients and optimizer
// state over data_parallel_shard_degree (-1 = every GPU left): ZeRO-3.
#include "import/trainer_fields.hpp"

namespace ftb::import {
namespace {

// torchtitan model flavors -> the HF checkpoints of the same shapes (flavors in torchtitan/models/<name>/__init__.py:
// llama3 "8B" is dim 4096, 32 layers, 8 KV heads, ffn_dim_multiplier 1.3, vocab 128256 = Llama 3.1 8B).
std::string hf_id(const std::string& name, const std::string& flavor) {
    if (name == "llama3" || name == "llama3_1") {
        if (flavor == "8B") return "meta-llama/Llama-3.1-8B";
        if (flavor == "70B") return "meta-llama/Llama-3.1-70B";
        if (flavor == "405B") return "meta-llama/Llama-3.1-405B";
    }
    if (name == "deepseek_v3" && flavor == "671B") return "deepseek-ai/DeepSeek-V3";
    if (name == "qwen3" && flavor.rfind("debugmodel", 0) != 0) return "Qwen/Qwen3-" + flavor;
    return "";
}

// Flavors with no HF checkpoint, as an inline config.json of the same shapes. llama3 "debugmodel" (and its
// _flex_attn / _varlen_attn variants, the same shapes): dim 256, n_layers 6, vocab_size 2048 (the test tokenizer),
// n_heads 16 and n_kv_heads unset (= n_heads), FFN compute_ffn_hidden_dim(256, multiple_of=256) = 256 * ceil(
// (2 * 4 * 256 / 3) / 256) = 768, untied output, rope max_seq_len 131072 (torchtitan/models/llama3/__init__.py
// llama3_configs, commit 00f555e1). qwen3 "debugmodel_moe": dim 256, head_dim 128, n_layers 8, vocab_size 2048,
// n_heads 16, n_kv_heads 8, every layer MoE with 64 experts of moe_hidden_dim 768, top_k 8, no weight tying, rope
// max_seq_len 4096 (torchtitan/models/qwen3/__init__.py _debugmodel_moe, commit 0310b491); it has no dense FFN, so
// intermediate_size (which Qwen3MoeConfig requires) is given the expert width and used by no layer. deepseek_v3
// "debugmodel" and "16B" (torchtitan/models/deepseek_v3/__init__.py _debugmodel, _16b, commit 0014ac2c): MLA with
// q_lora_rank 0 (a plain wq), kv_lora_rank 512, qk_nope/rope/v head dims 128/64/128, one dense layer first
// (n_dense_layers 1), softmax routing, rope max_seq_len 4096 * 4, untied output; debugmodel dim 256, 6 layers,
// vocab 2048, 16 heads, dense FFN 1024, 8 experts of 256 (top 3) + 2 shared; 16B dim 2048, 27 layers, vocab
// 102400, 16 heads, dense FFN 10944, 64 experts of 1408 (top 6) + 2 shared. torchtitan keeps its load-balancing
// expert bias as a buffer where the deepseek_v3 reader counts a parameter per expert: the 16B counts 15,706,485,888,
// DeepSeek-V2-Lite's published 15,706,484,224 (its shapes) plus those 64 x 26.
OJson deepseek_v3_flavor(int64_t dim, int64_t layers, int64_t vocab, int64_t dense_ffn, int64_t experts,
                         int64_t expert_ffn, int64_t top_k) {
    return OJson{{"model_type", "deepseek_v3"},  {"hidden_size", dim},          {"num_hidden_layers", layers},
                 {"vocab_size", vocab},          {"num_attention_heads", 16},   {"num_key_value_heads", 16},
                 {"q_lora_rank", nullptr},       {"kv_lora_rank", 512},         {"qk_nope_head_dim", 128},
                 {"qk_rope_head_dim", 64},       {"v_head_dim", 128},           {"intermediate_size", dense_ffn},
                 {"first_k_dense_replace", 1},   {"moe_layer_freq", 1},         {"n_routed_experts", experts},
                 {"moe_intermediate_size", expert_ffn}, {"num_experts_per_tok", top_k}, {"n_shared_experts", 2},
                 {"max_position_embeddings", 16384},    {"tie_word_embeddings", false}};
}

// gpt_oss flavors (torchtitan/models/gpt_oss/__init__.py gptoss_configs and model/args.py GptOssModelArgs, commit
// 238fa995): vocab_size 201088, moe_inter_dim 2880, head_dim 64, n_heads 64, n_kv_heads 8, sliding_window_size 128
// on the even layers (model.py TransformerBlock: use_sliding_attention = layer_id % 2 == 0, GptOssConfig's own
// alternation), biased wq/wk/wv/wo, per-head sinks, gate_bias True, experts with mlp1/mlp2 biases, top_k 4, no shared
// expert, untied output; "debugmodel" dim 256, 4 layers, 8 experts (it sets no vocab_size: the 201088 default stands);
// "20b" dim 2880, 24 layers, 32 experts; "120b" dim 2880, 36 layers, 128 experts.
OJson gpt_oss_flavor(int64_t dim, int64_t layers, int64_t experts) {
    return OJson{{"model_type", "gpt_oss"},      {"hidden_size", dim},          {"num_hidden_layers", layers},
                 {"vocab_size", 201088},         {"intermediate_size", 2880},   {"head_dim", 64},
                 {"num_attention_heads", 64},    {"num_key_value_heads", 8},    {"num_local_experts", experts},
                 {"num_experts_per_tok", 4},     {"sliding_window", 128},       {"attention_bias", true},
                 {"max_position_embeddings", 131072},  {"tie_word_embeddings", false}};
}

// torchtitan's SwiGLU width: int(2 * hidden / 3), times ffn_dim_multiplier, rounded up to multiple_of
// (torchtitan/models/llama4/model/model.py FeedForward.__init__).
int64_t swiglu_width(int64_t hidden, int64_t multiple_of, double multiplier, int64_t divisor = 1) {
    int64_t w = int64_t(2 * hidden / 3);
    if (multiplier > 0) w = int64_t(multiplier * double(w));
    w = w / divisor;
    return multiple_of * ((w + multiple_of - 1) / multiple_of);
}

// llama4 flavors (torchtitan/models/llama4/__init__.py llama4_args and model/args.py TransformerModelArgs, commit
// 238fa995): head_dim dim / n_heads, no biases, untied output, MoEArgs defaults num_shared_experts 1, top_k 1, a
// bias-free router. A MoE layer is every interleave_moe_layer_step-th ((layer_id + 1) % step == 0; default 2); its
// experts and its shared expert are swiglu_width(4 * dim) / (top_k + num_shared_experts) wide (auto_scale_hidden_dim),
// a dense layer's FFN swiglu_width(4 * dim) (TransformerBlock.__init__). The _irope flavors (every_n_layers_nope 4)
// leave RoPE out of layers with layer_id % 4 == 0, which attend over the whole sequence, and the others attend within
// blocks of fixed_attn_block_size (8192; debugmodel_irope 256); the plain flavors attend causally everywhere.
OJson llama4_flavor(int64_t dim, int64_t layers, int64_t heads, int64_t kv, int64_t vocab, int64_t multiple_of,
                    double multiplier, int64_t experts, int64_t step, int64_t irope_block) {
    OJson rope = OJson::array();
    for (int64_t i = 0; i < layers; ++i) rope.push_back(irope_block > 0 && i % 4 == 0 ? 0 : 1);
    return OJson{{"model_type", "llama4_text"},  {"hidden_size", dim},          {"num_hidden_layers", layers},
                 {"num_attention_heads", heads}, {"num_key_value_heads", kv},   {"vocab_size", vocab},
                 {"intermediate_size", swiglu_width(4 * dim, multiple_of, multiplier, 2)},
                 {"intermediate_size_mlp", swiglu_width(4 * dim, multiple_of, multiplier)},
                 {"num_local_experts", experts}, {"num_experts_per_tok", 1},    {"interleave_moe_layer_step", step},
                 {"no_rope_layers", rope},
                 {"attention_chunk_size", irope_block > 0 ? OJson(irope_block) : OJson()},
                 {"max_position_embeddings", 1048576}, {"tie_word_embeddings", false}};
}

OJson llama4_inline(const std::string& flavor) {
    const bool irope = flavor.size() > 6 && flavor.compare(flavor.size() - 6, 6, "_irope") == 0;
    const std::string base = irope ? flavor.substr(0, flavor.size() - 6) : flavor;
    if (base == "debugmodel") return llama4_flavor(256, 6, 16, 16, 2048, 256, 0, 8, 2, irope ? 256 : 0);
    if (base == "17bx16e") return llama4_flavor(5120, 48, 40, 8, 202048, 2048, 1.2, 16, 1, irope ? 8192 : 0);
    if (base == "17bx128e") return llama4_flavor(5120, 48, 40, 8, 202048, 2048, 1.2, 128, 2, irope ? 8192 : 0);
    return nullptr;
}

OJson inline_flavor(const std::string& name, const std::string& flavor) {
    if (name == "deepseek_v3" && flavor == "debugmodel") return deepseek_v3_flavor(256, 6, 2048, 1024, 8, 256, 3);
    if (name == "deepseek_v3" && flavor == "16B") return deepseek_v3_flavor(2048, 27, 102400, 10944, 64, 1408, 6);
    if (name == "gpt_oss" && flavor == "debugmodel") return gpt_oss_flavor(256, 4, 8);
    if (name == "gpt_oss" && flavor == "20b") return gpt_oss_flavor(2880, 24, 32);
    if (name == "gpt_oss" && flavor == "120b") return gpt_oss_flavor(2880, 36, 128);
    if (name == "llama4") return llama4_inline(flavor);
    if (name == "llama3" && flavor.rfind("debugmodel", 0) == 0)
        return OJson{{"model_type", "llama"},        {"hidden_size", 256},          {"num_hidden_layers", 6},
                     {"num_attention_heads", 16},   {"num_key_value_heads", 16},   {"intermediate_size", 768},
                     {"vocab_size", 2048},          {"max_position_embeddings", 131072},
                     {"tie_word_embeddings", false}};
    // vlm "debugmodel" (torchtitan/experiments/vlm/__init__.py llama3_siglip2_args, commit 238fa995): the llama3
    // debugmodel_flex_attn text shapes (those above) and Siglip2ModelArgs(dim=128, ffn_dim=256, n_layers=4, n_heads=2)
    // with its defaults n_pos_embs 16 (16^2 positions), n_channels 3, patch_size 16 (model/args.py).
    if (name == "vlm" && flavor == "debugmodel")
        return OJson{{"model_type", "llama3_siglip2"},
                     {"text_config", inline_flavor("llama3", "debugmodel")},
                     {"vision_config", OJson{{"hidden_size", 128}, {"intermediate_size", 256}, {"num_hidden_layers", 4},
                                             {"num_attention_heads", 2}, {"num_patches", 256}, {"num_channels", 3},
                                             {"patch_size", 16}}}};
    if (name == "qwen3" && flavor.rfind("debugmodel_moe", 0) == 0)
        return OJson{{"model_type", "qwen3_moe"},   {"hidden_size", 256},          {"head_dim", 128},
                     {"num_hidden_layers", 8},      {"num_attention_heads", 16},   {"num_key_value_heads", 8},
                     {"num_experts", 64},           {"num_experts_per_tok", 8},    {"moe_intermediate_size", 768},
                     {"intermediate_size", 768},    {"decoder_sparse_step", 1},    {"mlp_only_layers", OJson::array()},
                     {"vocab_size", 2048},          {"max_position_embeddings", 4096},
                     {"tie_word_embeddings", false}};
    return nullptr;
}

int64_t degree(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    if (!v) return 1;
    if (!v->is_number_integer() || v->get<int64_t>() == 0 || v->get<int64_t>() < -1) m.fail(key, "expected a degree >= 1, or -1");
    return v->get<int64_t>();
}

}  // namespace

void read_torchtitan(Mapper& m, const ImportOptions& o) {
    const Json* name = m.take("model.name");
    const Json* flavor = m.take("model.flavor");
    if (!name || !flavor) m.fail("model", "missing [model] name and flavor");
    if (show_value(*name) == "flux")
        m.fail("model.name", "flux is a diffusion (text-to-image) model, not a language model: ftbound plans "
                             "language-model training");
    std::string id = hf_id(show_value(*name), show_value(*flavor));
    // The transformers backend trains an HF model by id: flavor "full" keeps that model's own shapes
    // (torchtitan/experiments/transformers_modeling_backend/__init__.py l.25-35, job_config.py l.12 `model`).
    if (show_value(*name) == "transformers_modeling_backend" && show_value(*flavor) == "full")
        if (const Json* hf = m.take("hf_transformers.model"); hf && hf->is_string()) id = hf->get<std::string>();
    const bool experiment = show_value(*name) == "vlm";   // torchtitan/experiments/vlm, not torchtitan/models
    if (const OJson shapes = inline_flavor(show_value(*name), show_value(*flavor)); id.empty() && !shapes.is_null())
        m.set("model", shapes, "model.name + model.flavor: " + show_value(*name) + " " + show_value(*flavor) +
                                   " (its shapes from torchtitan/" + (experiment ? "experiments/" : "models/") +
                                   show_value(*name) + "/__init__.py)");
    else if (id.empty() && !o.user_sets("model"))
        m.fail("model.flavor", "torchtitan model " + show_value(*name) + " " + show_value(*flavor) +
                                   " has no HF checkpoint ftbound knows; give --set model=NAME or a config.json");
    else if (!id.empty()) set_model(m, id, "model.name + model.flavor", o);
    // The vlm data loader caps the images a batch carries (experiments/vlm/job_config.py Data): the encoder's work,
    // which the plan does not cost (its accuracy note says so).
    if (experiment) {
        for (const char* cap : {"data.max_images_per_batch", "data.max_patches_per_image"})
            if (const Json* v = m.take(cap))
                m.note(std::string(cap) + ": " + show_value(*v) + " bounds the vision encoder's work per batch; its "
                       "compute is not in the planned step");
    }
    m.set("train.method", "full", "torchtitan trains every weight");
    if (const Json* conv = m.take("model.converters"); conv && conv->dump().find("float8") != std::string::npos)
        m.set("train.precision", "fp8", "model.converters: float8");
    int64_t micro = whole(m, "training.local_batch_size");
    if (!micro) micro = whole(m, "training.batch_size");
    if (micro) m.set("train.micro_batch", micro, "training.local_batch_size: " + std::to_string(micro));
    if (const int64_t g = whole(m, "training.global_batch_size")) m.set("train.global_batch", g, "training.global_batch_size");
    const int64_t seq = whole(m, "training.seq_len");
    if (!seq && !o.user_sets("train.seq_len")) m.fail("training.seq_len", "missing");
    if (seq) m.set("train.seq_len", seq, "training.seq_len: " + std::to_string(seq));
    m.set("train.packing", true, "torchtitan packs documents to seq_len");
    if (flag(m, "training.compile") || flag(m, "compile.enable")) m.set("train.compile", true, "compile");
    if (const Json* mp = m.take("training.mixed_precision_param"); mp && show_value(*mp) == "float32")
        m.set("train.precision", "fp32", "training.mixed_precision_param: float32");
    if (!m.has_set("train.precision")) m.set("train.precision", "bf16", "mixed_precision_param bfloat16 (torchtitan's default)");
    m.set("train.weights", "mixed", "FSDP2 mixed precision: fp32 parameters, bf16 compute");
    if (const int64_t steps = whole(m, "training.steps"))
        m.note("data.tokens: training.steps " + std::to_string(steps) + " x the global batch x seq_len (set data.tokens for the time to train)");
    const int64_t tp = degree(m, "parallelism.tensor_parallel_degree"), pp = degree(m, "parallelism.pipeline_parallel_degree");
    int64_t cp = degree(m, "parallelism.context_parallel_degree");
    if (cp == 1) cp = degree(m, "experimental.context_parallel_degree");
    const int64_t shard = degree(m, "parallelism.data_parallel_shard_degree");
    const int64_t replicate = degree(m, "parallelism.data_parallel_replicate_degree");
    if (tp > 1) m.set("parallel.tp", tp, "parallelism.tensor_parallel_degree");
    if (pp > 1) m.set("parallel.pp", pp, "parallelism.pipeline_parallel_degree");
    if (cp > 1) m.set("parallel.cp", cp, "parallelism.context_parallel_degree");
    if (shard != 1) m.set("parallel.zero", 3, "parallelism.data_parallel_shard_degree: " + std::to_string(shard) + " (FSDP2)");
    if (const Json* s = m.take("parallelism.pipeline_parallel_schedule"); s && pp > 1) {
        const std::string v = show_value(*s);
        m.set("parallel.pp_schedule", v == "GPipe" ? "gpipe" : v.find("Interleaved") != std::string::npos ? "interleaved" : "1f1b",
              "parallelism.pipeline_parallel_schedule: " + v);
    }
    if (shard > 0) {
        m.gpus_per_node = static_cast<int>(shard * (replicate > 0 ? replicate : 1) * tp * pp * cp);
        m.gpus_from = "the parallel degrees (one node)";
    } else if (const int64_t fixed = tp * pp * cp * (replicate > 0 ? replicate : 1);
               !o.user_sets("hardware") && o.hardware.empty() && 8 % fixed == 0) {
        // data_parallel_shard_degree -1 takes every GPU the launcher starts: run_train.sh's NGPU defaults to 8. Degrees
        // that 8 GPUs cannot hold (llama4_17bx128e.toml: tensor 8 x pipeline 4) get the fewest GPUs they need instead
        // (Mapper::finish), with the shard degree 1.
        m.gpus_per_node = 8;
        m.gpus_from = "run_train.sh's default NGPU=8 (data_parallel_shard_degree -1 takes every GPU)";
    }
    if (const Json* ac = m.take("activation_checkpoint.mode"); ac && ac->is_string())
        m.set("train.activation_checkpointing", ac->get<std::string>(), "activation_checkpoint.mode: " + ac->get<std::string>());
    if (const Json* opt = m.take("optimizer.name"); opt && opt->is_string()) {
        const std::string v = opt->get<std::string>();
        m.set("train.optimizer", v == "Adam" ? "adam" : "adamw", "optimizer.name: " + v);
    }
    m.set("train.framework", "torchtitan", "a torchtitan config");
}

}  // namespace ftb::import
