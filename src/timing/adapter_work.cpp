// Adapter work on a linear (adapter_work.hpp).
#include "timing/adapter_work.hpp"

#include "timing/qlora_dequant.hpp"

namespace ftb {

namespace {

// LoRA A (in x r) and B (r x out): forward through both, dgrad through B and A, wgrad of B and A.
void add_lora_matmuls(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count) {
    const double r = double(c.job.spec.train.lora.rank);
    add_gemm(w.forward, c, tokens, r, in, count), add_gemm(w.forward, c, tokens, out, r, count);
    add_gemm(w.backward, c, tokens, in, r, count), add_gemm(w.backward, c, tokens, r, out, count);
    add_gemm(w.backward, c, r, out, tokens, count), add_gemm(w.backward, c, in, r, tokens, count);
}

// Elementwise bytes per token of one adapter call: dropout on its input, the scaling and the add into the base
// output. Adapters stored in fp32 under autocast (train.weights: mixed) first convert their input to fp32 (PEFT
// Linear.forward: `x = x.to(self.lora_A[...].weight.dtype)`, a copy unless it is fp32 already); lora_A's autocast
// casts it back to the compute dtype, and the dropout between runs in fp32. `in_bytes`: the input's element size.
double adapter_elementwise_bytes(const WorkContext& c, double in, double out, double in_bytes) {
    const bool fp32_adapter = c.set.bytes.autocast && c.set.trainable_storage_bytes >= 4;
    const double x_bytes = fp32_adapter ? 4 : c.act_bytes;
    double bytes = 5 * c.act_bytes * out;
    if (fp32_adapter) bytes += ((in_bytes < 4 ? in_bytes + 4 : 0) + 4 + c.act_bytes) * in;
    if (c.job.spec.train.lora.dropout > 0) bytes += (2 * x_bytes + 1) * in;
    return bytes;
}

// OFT's rotation of one adapted linear's input (PEFT v0.18.1 src/peft/tuners/oft/layer.py, OFTRotationModule.forward
// and _cayley_batch, with OFTConfig's defaults use_cayley_neumann=True, num_cayley_neumann_terms=5): the r = in / b
// skew-symmetric blocks become R = I + 2Q + 2Q^2 + 2Q^3 + Q^4 (three torch.bmm of r b x b blocks), then
// einsum("...rk,rkc->...rc") rotates the tokens x in input block by block: one bmm over r blocks of tokens x b by b.
// Backward runs each bmm twice (the gradient of either operand; the rotation's second is R's gradient over the
// tokens). Each bmm call is one kernel over its r blocks.
void add_oft_matmuls(LayerWork& w, const WorkContext& c, double tokens, double in, double count) {
    const double b = double(oft_block_size_for(c.job.spec.train.oft, int64_t(in))), blocks = in / b * count;
    auto batched = [&](Work& into, double m, double n, double k, double calls) {
        const double kernels = into.kernels;
        add_gemm(into, c, m, n, k, blocks * calls, true);
        into.kernels = kernels + calls * count;
    };
    batched(w.forward, b, b, b, 3);          // Q^2, Q^3, Q^4
    batched(w.backward, b, b, b, 6);
    batched(w.forward, tokens, b, b, 1);     // x R
    batched(w.backward, tokens, b, b, 1);    // dx = dy R^T
    batched(w.backward, b, b, tokens, 1);    // dR = x^T dy
}

// OFT's memory-bound work per adapted linear (PEFT v0.18.1 src/peft/tuners/oft/layer.py, eager PyTorch). Forward:
// _cayley_batch's zeros, index_put of the upper triangle, matrix - matrix.T, eye, repeat and four add_ into R (9
// kernels; its bmm are GEMMs above); the rotation's einsum permutes and reshapes x (a copy) and the output back (a
// copy). With fp32 adapters under autocast, 9 casts more: x to the adapter's dtype (Linear.forward
// _cast_input_dtype), autocast's bf16 casts for the bmm (Q four times, x, R), the output to the adapter's dtype
// (x_rotated.to(required_dtype)) and to the input's for the base layer (base_layer(x.to(previous_dtype))).
// Backward: each cast's gradient (ToCopyBackward), three scaled add_ gradients, index_put's (an index), the skew
// difference's, and a sum per extra consumer of Q (4), Q^2 and Q^3. Bytes per element: a cast or copy reads and
// writes; the Cayley terms work on in x b elements (r blocks of b x b), R in fp32.
void add_oft_elementwise(LayerWork& w, const WorkContext& c, double tokens, double in, double count, double in_bytes) {
    const double b = double(oft_block_size_for(c.job.spec.train.oft, int64_t(in)));
    const bool fp32_adapter = c.set.bytes.autocast && c.set.trainable_storage_bytes >= 4;
    const double act = c.act_bytes, x = fp32_adapter ? 4 : act;
    double casts = 0;   // per input element, forward; their gradients cost the same in backward
    if (fp32_adapter) casts = (in_bytes < 4 ? in_bytes + 4 : 0) + (4 + act) + (act + 4) + (4 + act);
    const double copies = 2 * x + 2 * act;   // einsum's reshape of the input, the output's reshape back
    // Cayley, per element of R: zeros, index_put, the skew difference (two reads, one write), repeat, four add_
    // (fp32 R read and written with an fp32 or bf16 addend), and the bf16 casts of Q (four) and R (one).
    const double cayley = 4 + 4 + 12 + 4 + (12 + 3 * 10) + (fp32_adapter ? 5 * 6 : 0);
    const double fwd = tokens * in * (casts + copies) + in * b * cayley;
    const double bwd = tokens * in * casts + in * b * cayley;
    add_memory_bound(w.forward, c, fwd * count, c.compiled ? 1 : (fp32_adapter ? 9 + 2 + 9 : 9 + 2) * count);
    add_memory_bound(w.backward, c, bwd * count, c.compiled ? 1 : (fp32_adapter ? 9 + 11 : 11) * count);
}

// PEFT's GPTQ OFT layer runs the quantised base twice in forward: GPTQOFTLinear.forward begins with
// `result = self.quant_linear_module(x)` on the unrotated input and overwrites it after the rotation
// (src/peft/tuners/oft/gptq.py, v0.18.1). The first call's graph is dropped with its result; its work stays.
void add_gptq_oft_extra_forward(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count) {
    const TrainSpec& t = c.job.spec.train;
    if (t.method != Method::qoft || t.qlora.kernel != QloraKernel::auto_gptq) return;
    LayerWork extra;
    add_gemm(extra.forward, c, tokens, out, in, count);
    add_dequant_uses(extra, c, in * out * count, count, tokens * (in + out) * count);
    w.forward += extra.forward;
}

}  // namespace

void add_adapter_work(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                      double in_bytes, bool lora_elementwise) {
    if (c.set.oft) {
        add_oft_matmuls(w, c, tokens, in, count);
        add_oft_elementwise(w, c, tokens, in, count, in_bytes);
        add_gptq_oft_extra_forward(w, c, tokens, in, out, count);
        return;
    }
    add_lora_matmuls(w, c, tokens, in, out, count);
    if (!lora_elementwise) return;
    const double bytes = adapter_elementwise_bytes(c, in, out, in_bytes);
    add_memory_bound(w.forward, c, tokens * count * bytes, c.compiled ? 1 : 3 * count);
    add_memory_bound(w.backward, c, 2 * tokens * count * bytes, c.compiled ? 1 : 4 * count);
}

}  // namespace ftb
