// QLoRA weight dequantisation per use (qlora_dequant.hpp).
#include "timing/qlora_dequant.hpp"

namespace ftb {

namespace {

// Dequantising the 4-bit base weights for one use, by the kernels of the library the job names
// (train.qlora.kernel). Bytes per weight element and kernels per dequantised weight:
struct DequantCost {
    double bytes_per_element = 0;   // read + written by the dequantisation kernels
    double issue_factor = 1;        // their time over their memory-bound time (instruction-bound kernels)
    double cast_bytes_per_element = 0;   // a cast of the dequantised weight to the compute dtype (memory-bound)
    double kernels = 0;             // per weight matrix
    bool in_backward = true;        // backward dequantises again (false: the dequantised weight was saved)
    double backward_extra_bytes_per_element = 0;   // backward's own copies of the dequantised weight
    double backward_extra_kernels = 0;
    double activation_cast_bytes = 0;   // per input and output element of each use: casts around an fp16-only kernel
};

// bitsandbytes (Linear4bit -> MatMul4Bit, bitsandbytes/autograd/_functions.py): forward runs
// F.dequantize_4bit(B).to(A.dtype) then F.linear; backward dequantises again for grad_A. The kernel
// (csrc/kernels.cu kDequantizeBlockwise, 64 threads x 8 bytes per tile) reads the packed codes (0.5 byte) and one
// fp32 absmax per 64-element block and writes the dequantised weight. With double quantisation
// (compress_statistics) F.dequantize_4bit first runs dequantize_blockwise on the 8-bit absmax and `absmax += offset`
// (two more kernels). When the weight was quantised from another dtype than the compute dtype
// (QuantState.dtype), `.to(A.dtype)` is a cast kernel over the whole weight.
// Until bitsandbytes 0.47 the NF4 code -> value map was a 4-level if-tree per element (dDequantizeNF4): a warp
// of 32 random codes walks every branch, so the kernel is instruction-bound; the branch-free rewrite
// (bitsandbytes PR #1746, merged 2025-09-18, in 0.48) measured "between 1.36x - 2.07x faster" on A100 and H100
// (PR #1747's benchmark, same change). The old kernel is charged the geometric middle, 1.68x its memory time.
inline constexpr double kBnbBranchTreeSlowdown = 1.68;

// auto-gptq int4 QuantLinear (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, v0.5.1, the kernel Qwen's
// finetune.py runs with exllama disabled): for micro-batches of at least kernel_switch_threshold (128) tokens the
// weight is dequantised by PyTorch ops, then torch.matmul: bitwise_right_shift of the int32 words broadcast 8 ways
// (reads 0.5, writes a 4-byte int32 per element), .to(int8) (4 + 1), bitwise_and (1 + 1), minus the zeros (1 + 1),
// times the scales into fp16 (1 + 2): 16.5 bytes per element in 5 kernels (plus 4 small ones on the zeros).
// autograd saves the dequantised weight for backward: no second dequantisation (a recompute repeats it).
// AutoAWQ (casper-hansen/AutoAWQ awq/modules/linear/gemm.py at d9dc8e56): WQLinear_GEMM.forward casts a non-fp16
// input to fp16 (`x.half()`) and the output back; in training WQLinearMMFunction.forward takes, for 1024 tokens or
// more, awq_ext.dequantize_weights_cuda (reads the packed codes, fp16 scales and packed zeros, writes the fp16
// weight) then torch.matmul; backward dequantises again and runs grad_output.bmm(weights.transpose(0, 1)
// .unsqueeze(0).repeat(batch_size, 1, 1)): the repeat copies the fp16 weight once per sequence of the micro-batch.
// Each cast reads one dtype and writes the other, per input and output element, in forward and again for the
// gradients in backward, when the compute dtype is not fp16.
DequantCost awq_dequant_cost(const WorkContext& c) {
    const QloraConfig& q = c.job.spec.train.qlora;
    const double code = q.bits / 8.0, fp16 = 2;
    DequantCost d;
    d.bytes_per_element = code + (2 + code) / double(q.group_size) + fp16;
    d.kernels = 1;
    d.backward_extra_bytes_per_element = fp16 + fp16 * double(c.job.spec.train.micro_batch);
    d.backward_extra_kernels = 1;
    if (c.dt != Dtype::fp16) d.activation_cast_bytes = c.act_bytes + fp16;
    return d;
}

DequantCost dequant_cost(const WorkContext& c) {
    const QloraConfig& q = c.job.spec.train.qlora;
    DequantCost d;
    switch (q.kernel) {
        case QloraKernel::awq: return awq_dequant_cost(c);
        case QloraKernel::modelopt_nvfp4:
            // ModelOpt's fp4_dequantize (modelopt/torch/kernels/quantization/gemm/fp4_kernel.py, the `fast` path of
            // NVFP4QTensor.dequantize at 211c6b34): one kernel reads the packed codes and the fp8 block scales and
            // writes the weight in the compute dtype. Charged per use in forward and again in backward, as the
            // frozen quantised bases above are (the LoRA trainer's own NVFP4 layer was not read).
            d.bytes_per_element = 0.5 + 1.0 / double(q.group_size) + c.act_bytes;
            d.kernels = 1;
            return d;
        case QloraKernel::auto_gptq:
            d.bytes_per_element = 0.5 + 4 + 4 + 1 + 1 + 1 + 1 + 1 + 1 + 2;
            d.kernels = 5 + 4;
            d.in_backward = false;
            return d;
        case QloraKernel::torchao:
            // torchao NF4Tensor (linear_nf4): the dequantised weight in forward and in backward; torch.compile fuses
            // the lookup and scaling into one memory-bound kernel (the eager op chain is not modelled apart).
            d.bytes_per_element = c.set.quant_bytes_per_param + c.act_bytes;
            d.kernels = 1;
            return d;
        case QloraKernel::bitsandbytes:
        case QloraKernel::bitsandbytes_047: break;
    }
    const std::string& from = c.job.framework.qlora_dequant_dtype;
    const double out_bytes = from == "fp32" ? 4 : 2;
    const double absmax_bytes = q.double_quant ? (1.0 + 4 + 8 + 4) / 64 : 4.0 / 64;   // 8-bit absmax -> fp32, += offset
    d.bytes_per_element = 0.5 + absmax_bytes + out_bytes;
    d.issue_factor = q.kernel == QloraKernel::bitsandbytes_047 ? kBnbBranchTreeSlowdown : 1.0;
    d.kernels = q.double_quant ? 3 : 1;
    if (!from.empty() && from != to_string(c.job.spec.train.precision)) {
        d.cast_bytes_per_element = out_bytes + c.act_bytes;
        d.kernels += 1;
    }
    return d;
}

// One use of `matrices` quantised weights of `elements` in all; one multiply per element (code value x block
// scale) counts in the hardware FLOPs. `io_elements`: the uses' input and output elements (for the casts).
void add_dequant(Work& w, const WorkContext& c, const DequantCost& d, double elements, double matrices,
                 double io_elements) {
    const double bytes = d.issue_factor * elements * d.bytes_per_element + elements * d.cast_bytes_per_element +
                         io_elements * d.activation_cast_bytes;
    w.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
    w.flops += elements;
    w.kernels += (d.kernels + (d.activation_cast_bytes > 0 ? 2 : 0)) * matrices;
}

}  // namespace

// Forward dequantisation, and backward's when the library dequantises again for the input gradient.
void add_dequant_uses(LayerWork& w, const WorkContext& c, double elements, double matrices, double io_elements) {
    const DequantCost d = dequant_cost(c);
    add_dequant(w.forward, c, d, elements, matrices, io_elements);
    if (!d.in_backward) return;
    add_dequant(w.backward, c, d, elements, matrices, io_elements);
    if (d.backward_extra_kernels > 0) {
        const double bytes = elements * d.backward_extra_bytes_per_element;
        w.backward.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
        w.backward.kernels += d.backward_extra_kernels * matrices;
    }
}

}  // namespace ftb
