// FrameworkProfile: what a training framework does by default that moves memory or time.
// Loaded from data/frameworks/NAME.yaml; every figure there carries its source.
#pragma once
#include <string>
#include <vector>

namespace ftb {

enum class MixedStyle {
    amp,     // fp32 parameters; autocast makes low-precision weight copies that backward keeps (torch.amp)
    master,  // low-precision parameters; fp32 master copy inside the optimizer (Megatron, DeepSpeed)
};

// A fused attention kernel family (FrameworkProfile::attention_kernel).
enum class AttentionKernel { flash1, flash2, flash3, transformer_engine };

struct FrameworkProfile {
    std::string name = "generic";
    // Defaults for job-file fields the user left out.
    std::string default_weights = "mixed";
    std::string default_attention = "flash";
    std::string default_loss = "standard";
    std::string default_optimizer = "adamw";
    double default_lora_dropout = 0.0;
    std::vector<std::string> default_lora_targets;           // empty: all linear layers of the blocks
    std::string default_optimizer_impl = "foreach";          // torch.optim's default on CUDA
    std::string default_activation_checkpointing = "none";
    std::string default_activation_offload = "none";         // none | cpu | checkpoints (applied with full recompute)
    // What `activation_checkpointing: selective` recomputes in this framework: "attention" = the attention core
    // (Megatron recompute_granularity selective), "op" = torchtitan's per-op selective AC (SelectiveAC).
    std::string selective_recompute = "attention";
    std::string default_qlora_kernel = "bitsandbytes";   // train.qlora.kernel
    // Memory behaviour
    MixedStyle mixed_style = MixedStyle::amp;
    double mixed_grad_bytes = 4;                // gradient element size under mixed precision
    // Under mixed precision (master style): the optimizer's element sizes for its two Adam moments and for its own
    // copy of the parameters. fp32 unless the recipe sets the optimizer's dtype (apex DistributedFusedAdam `dtype`).
    double mixed_state_bytes = 4;
    double mixed_master_bytes = 4;
    bool ddp_gradient_buckets = false;          // DDP's flat reducer buckets beside .grad (not a bucket view)
    bool fused_qkv = false;                     // one qkv projection (one saved input, one LoRA dropout)
    bool fused_norm = false;                    // norm kernel saves its input + statistics only
    // Eager RMSNorm upcasts to fp32 before normalising (HF LlamaRMSNorm: x.to(torch.float32)); false: it works in
    // the input dtype (LitGPT lit_gpt/rmsnorm.py at 8641822), saving the input and the per-row rsqrt in that dtype.
    bool rmsnorm_upcast = true;
    // A gated FFN's activation runs as one fused autograd function that saves only its input (gate and up) and
    // recomputes silu in backward (Megatron-Core megatron/core/fusions/fused_bias_swiglu.py SwiGLUFunction.forward:
    // ctx.save_for_backward(input_for_backward)); false: eager silu(gate) * up also keeps silu's output.
    bool fused_swiglu = false;
    // q, k, v are views of one fused qkv output (LitGPT lit_gpt/model.py CausalSelfAttention.forward: view, permute,
    // split, reshape). With one query head per kv group the value handed to attention is still a view, so the
    // attention's saved value keeps the whole qkv output; with grouped queries k and v are expanded to every
    // query head first (copies of the query width).
    bool qkv_split_views = false;
    // LoRA on a fused qkv linear that adapts only some of q, k, v pads its output to the qkv width with index_copy,
    // which keeps its source (the adapted-width LoRA output) for backward (LitGPT lit_gpt/lora.py
    // LoRAQKVLinear.zero_pad; derivatives.yaml index_copy: source's gradient uses expand_as(source)).
    bool lora_qkv_zero_pad = false;
    int zero3_live_layers = 2;                  // gathered full layers held by ZeRO-3/FSDP prefetch
    // DeepSpeed ZeRO-3 stage3_max_reuse_distance (elements): a module's parameters stay gathered when the trace uses
    // them again within this many elements (partitioned_param_coordinator.py __params_to_release); 0 = not modelled.
    double zero3_max_reuse_elements = 0;
    // DeepSpeed ZeRO-3 with parameters offloaded: a gather copies the host partition to the device beside the full
    // buffer it all-gathers into (partition_parameters.py all_gather_coalesced: `param_ds_tensor.to(device)` next to
    // `param_buffer = torch.empty(...)`), so for a moment the module's weight is there once more per rank's share.
    bool zero3_offload_stages_partition = false;
    // ... and on a single rank too: DeepSpeed before 0.9.0 all-gathers with one rank (the staged copy is the whole
    // weight); from 0.9.0 `if self.num_partitions == 1: return _no_gather_coalesced(params)` only moves it over.
    bool zero3_single_rank_gathers = false;
    double zero_bucket_elements = 5e8;          // DeepSpeed reduce/allgather bucket (elements)
    // DeepSpeed contiguous_gradients (default true): the gradient bucket is one flat buffer of zero_bucket_elements
    // in the parameters' dtype, allocated whole however few gradients there are; ZeRO-3 allocates it once at init
    // and keeps it (stage3.py), ZeRO-1/2 at every backward (stage_1_and_2.py). Otherwise the bucket holds at most
    // the gradients.
    bool zero_contiguous_gradients = false;
    double allocator_overhead_fraction = 0.05;  // reserved above allocated at the peak (caching allocator)
    double nccl_buffer_bytes = 0;               // per communicator the job opens
    // Vocabulary-sized cross-entropy tensors live at the loss peak: torch's log_softmax + nll keep the saved
    // output, its incoming gradient and the produced gradient (3); Megatron's vocab-parallel CE works in place (1).
    double cross_entropy_live_copies = 3;
    // `loss: chunked` as the output head writing this many chunks, each with its own cross-entropy
    // (torchtune CEWithChunkedOutputLoss, num_output_chunks); 0 = LitGPT's 128-token chunks (chunked_cross_entropy).
    int chunked_loss_output_chunks = 0;
    // The training loop drops its reference to the logits right after the loss (torchtune: `del logits`, "free
    // logits otherwise it peaks backward memory"); otherwise the logits stay held until the step ends.
    bool logits_freed_after_loss = false;
    // Without output chunks the model itself returns fp32 logits (torchtune TransformerDecoder.forward:
    // `output = self.output(h).float()`): the loss sees a 4-byte vocabulary row per token.
    bool output_upcast_fp32 = false;
    bool qlora_quantizes_lm_head = false;       // the 4-bit conversion also takes the output head
    // QLoRA: a block that carries no adapter (train.blocks leaves it out) keeps its attention linears in the compute
    // dtype and only its MLP quantised (torchtune lora_llama3_2_vision_decoder builds such a block's attention from
    // plain nn.Linear and its MLP with llama3_mlp(quantize_base=True)); false: every block linear is quantised.
    bool qlora_unadapted_attention_unquantised = false;
    // QLoRA on bitsandbytes prepared by PEFT's prepare_model_for_kbit_training (peft src/peft/utils/other.py: "cast
    // all non INT8 parameters to fp32", every fp16/bf16 parameter that is not a Params4bit): the embedding, the norms'
    // weights and an unquantised head are stored in fp32, so the embedding's output and every RMSNorm output
    // (`self.weight * hidden_states.to(input_dtype)`, fp32 weight) are fp32 and the residual stream with them;
    // Linear4bit casts its input to the compute dtype and its output back to the input's (bitsandbytes
    // nn/modules.py Linear4bit.forward: `.to(inp_dtype)`). GPTQ / torchao-quantised models are skipped there.
    bool kbit_training_upcasts_fp32 = false;
    // A quantised frozen linear keeps its input when the input needs a gradient: bitsandbytes MatMul4Bit stores
    // ctx.tensors = (A, B) whenever any(ctx.needs_input_grad[:2]) (bitsandbytes autograd/_functions.py);
    // torchao's linear_nf4 (torchtune) keeps only the NF4 weight. A stock frozen linear keeps nothing
    // (autograd saves mm's input only for the weight gradient; measured: validation/measured/saved-tensors).
    bool quantized_linear_saves_input = true;
    // DeepSpeed ZeRO-3 before 0.9 swaps torch.nn.functional.linear for its own autograd function once zero.Init is
    // entered and never restores it (partition_parameters.py: `torch.nn.functional.linear = zero3_linear_wrap`, "This
    // will persist unless manually reset"; the restore in shutdown_init_context is commented out); LinearFunctionForZeroStage3.forward
    // (zero/linear.py) saves its input whether or not the weight trains, so every frozen nn.Linear keeps its input.
    bool zero3_linear_saves_input = false;
    // FSDP wraps frozen and trainable parameters in one unit (use_orig_params=True): gradients are kept for the
    // whole unit, as if nothing were frozen (PyTorch FSDP docs, "FSDP has some constraints on freezing parameters").
    bool fsdp_unit_mixes_frozen = false;
    // Gradient accumulation under FSDP's no_sync(): gradients accumulate unsharded (PyTorch FSDP docs, no_sync).
    bool fsdp_no_sync_accumulation = false;
    // `parallel.zero: 2` is FSDP's SHARD_GRAD_OP: parameters are sharded outside computation, unsharded before the
    // forward and resharded only after the backward (torch/distributed/fsdp/api.py ShardingStrategy), gathered in
    // MixedPrecision's param_dtype. Otherwise ZeRO-2 keeps whole parameters (DeepSpeed stage 2, Megatron).
    bool zero2_shards_params = false;
    // FSDP1 (FlatParameter units): every syncing backward writes each unit's flat gradient from its views'
    // gradients, casts it to the reduce dtype and pre-divides it before the reduce-scatter (work_builder.cpp).
    bool fsdp1_flat_gradients = false;
    // FSDP2 (fully_shard): each unit's post-backward keeps its reduce-scatter input (a copy of the unit's unsharded
    // gradients, made before they are freed) alive until the next unit's post-backward, so while a unit's gradients
    // form the previous unit's copy is still held (_fsdp_param_group.py post_backward: comm_ctx.reduce_scatter_state).
    bool fsdp2_holds_reduce_scatter_input = false;
    // ZeRO/FSDP shards the model state over the data- and context-parallel ranks together: torchtitan applies
    // fully_shard on the flattened dp_shard x cp mesh ("dp_shard_cp", parallelize_llama.py apply_fsdp).
    bool zero_shards_over_cp = false;
    // FSDP2 root unit: fully_shard(model) after the blocks puts the embedding, the final norm and the output head
    // in one unit (torchtitan parallelize_llama.py apply_fsdp), unsharded by its pre-backward hook on the model's
    // output and resharded only by its post-backward, after the embedding's backward: the whole root is gathered
    // through backward, and so are its gradients until they are reduce-scattered at the end.
    bool fsdp2_root_unit = false;
    // FSDP2's collectives allocate on their own CUDA streams, and the caching allocator reuses a freed block only on
    // the stream that allocated it (c10/cuda/CUDACachingAllocator.cpp: "Once freed, blocks can be re-allocated on
    // the same stream, but not on any other stream"): the sharded gradients are views of the reduce-scatter output
    // made on the reduce-scatter stream (_fsdp_collectives.py foreach_reduce: torch.as_strided(reduce_output, ...)),
    // and each all-gather's output buffer is made on the all-gather copy-in stream (foreach_all_gather), so what
    // those streams held at their peak stays reserved beside the compute stream's blocks.
    bool fsdp2_stream_pools = false;
    // torch.distributed.pipelining with FSDP2 units: every micro-batch's backward runs with
    // set_requires_gradient_sync(False) and set_reshard_after_backward(False), and the last one reduce-scatters
    // (stage.py backward_maybe_with_nosync, run_post_backward), so the stage's gradients accumulate unsharded in
    // the reduce dtype (_fsdp_param.py to_accumulated_grad_if_needed); with reshard_after_forward False under
    // pipelining (torchtitan apply_fsdp: "For PP, do not reshard after forward") the stage stays gathered.
    bool pp_fsdp_accumulates_unsharded = false;
    // The last pipeline stage keeps every micro-batch's output (the logits) until the step ends
    // (torch/distributed/pipelining/stage.py forward_one_chunk: `if self.is_last: self.output_chunks.append(output)`).
    bool pp_last_stage_keeps_outputs = false;
    // The model's loss first takes a contiguous copy of the logits shifted by one position (Qwen modeling_qwen.py
    // QWenLMHeadModel.forward and transformers' *ForCausalLM before 4.46: `shift_logits = logits[..., :-1,
    // :].contiguous()`), freed with the loss; it changes where the loss's later tensors fit (loss_memory.cpp).
    bool loss_shift_copy = false;
    // With tensor parallelism the loss runs under torch's loss_parallel() on the vocabulary-sharded logits
    // (torchtitan: ParallelDims enable_loss_parallel = not training.disable_loss_parallel; apply_tp output
    // Shard(-1); train_context enters loss_parallel): the DTensor handlers' eager decompositions
    // (memory/loss_memory.cpp).
    bool tp_loss_parallel = false;
    // Under train.compile the loss function is compiled too (torchtitan components/loss.py
    // build_cross_entropy_loss: `loss_fn = torch.compile(loss_fn)` when training.compile).
    bool compile_loss = false;
    // Time behaviour
    double host_overhead_per_kernel_us = 0;     // Python + dispatcher work per launched kernel (eager mode)
    // Threads each rank's optimizer step gets when it runs on the host (offload.optimizer: cpu) with torch.optim:
    // torchrun sets OMP_NUM_THREADS=1 per process when nproc_per_node > 1. 0 = the node's cores shared by its
    // ranks (DeepSpeed's CPU Adam).
    int cpu_optimizer_threads_per_rank = 0;
    // The recipe re-sizes torch's intra-op pool to the host's CPUs divided among the node's ranks before training
    // (torchtune training.set_torch_num_threads: os.cpu_count() // world_size, called by the *_distributed recipes
    // when fsdp_cpu_offload is set), overriding torchrun's OMP_NUM_THREADS=1; cpu_optimizer_threads_per_rank is then
    // only the floor.
    bool cpu_optimizer_threads_split_host = false;
    // The fused attention kernel the framework runs (timing/attention_work.hpp): FlashAttention(-1) or its Triton
    // port, FlashAttention-2 (torch SDPA's flash backend), FlashAttention-3 (Hopper), or Transformer Engine's own
    // choice (cuDNN fused attention on Hopper and newer, FlashAttention-2 before).
    AttentionKernel attention_kernel = AttentionKernel::flash2;
    // How context parallelism exchanges k/v: "ring" = p2p ring, each chunk's send/recv hidden under the attention
    // of the previous one (Megatron-LM --cp-comm-type default p2p; TransformerEngine AttnFuncWithCPAndKVP2P);
    // "all_gather" = k and v all-gathered before attention and again in backward, dk/dv reduce-scattered after
    // it, all on the critical path (TransformerEngine AttnFuncWithCPAndKVAllGather: "KV all-gather between CP
    // ranks is exposed"; Llama 3, arXiv 2407.21783 §3.3.2).
    std::string context_parallel_exchange = "ring";
    // Interleaved pipelines post each stage-boundary send/recv ahead and wait for it only when the next model chunk
    // needs it, so it runs under that chunk's compute (Megatron-Core overlap_p2p_comm); false: on the critical path.
    bool pipeline_p2p_overlap = false;
    // How fp8 GEMM inputs are cast (precision fp8): "fused" = not charged apart; "te_delayed" / "te_current" =
    // Transformer Engine's quantizers under delayed / current scaling (own-kernel input casts, norm-fused casts,
    // output-gradient casts and, on TN-only GPUs, the transposed copies: timing/fp8_casts.hpp
    // transformer_engine_cast_bytes); "torchao_tensorwise" = torchao Float8Linear with dynamic tensorwise scaling,
    // whose amax reductions, casts and fp8 layout copies are memory-bound kernels of their own (timing/fp8_casts.hpp).
    std::string fp8_linear_casts = "fused";
    // Under precision fp8 with sequence parallelism, the tensor-parallel all-gathers (the column-parallel linears'
    // input in forward, the row-parallel linears' output gradient in backward) move fp8 (1 byte per element); the
    // reduce-scatters stay in the activation dtype (torchao Float8ColwiseParallel / Float8RowwiseParallel /
    // PrepareFloat8ModuleInput, which torchtitan applies with Float8). false: every collective in the activation dtype.
    bool tp_all_gather_fp8 = false;
    // Matmul time in this framework's training steps relative to the isolated-matmul estimate, per GPU
    // architecture name (ampere, hopper, ...): what the model does not yet have a mechanism for (clocks under
    // power limits, framework copies). CALIBRATED by `ftbound validate --leave-out` (docs/validation.md)
    // for the profiles and architectures that have public cases; absent = 1.
    std::vector<std::pair<std::string, double>> matmul_time_factor;
    // Host (Python) time per transformer block per micro-batch beyond kernel launches: the forward's module
    // calls (a recomputed block runs them again).
    double host_overhead_per_block_us = 0;
    // Host (Python) time per FSDP unit per micro-batch: the unit's pre/post forward and backward hooks.
    double host_overhead_per_fsdp_unit_us = 0;
    // The dtype bitsandbytes dequantises into: the dtype the weight had when it was quantised (QuantState.dtype).
    // Empty = the compute dtype; when it differs, a cast to the compute dtype follows every dequantisation.
    std::string qlora_dequant_dtype;
    std::vector<std::string> sources;
};

}  // namespace ftb
