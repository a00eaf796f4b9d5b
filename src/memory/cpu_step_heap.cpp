#include "memory/cpu_step_heap.hpp"

#include <algorithm>
#include <unordered_map>

#include "memory/glibc_heap.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

namespace {

// c10::alloc_cpu: posix_memalign(&data, gAlignment, nbytes), gAlignment 64 (c10/core/alignment.h).
constexpr int64_t kTensorAlignmentBytes = 64;

// How an op's gradient reaches one of its inputs: a new tensor of the input's size (most ops), or the output's
// gradient itself (add, and the copies that reshape makes: their backward is a view).
enum class GradFlow { alloc, pass };

struct Input {
    int id = -1;
    GradFlow flow = GradFlow::alloc;
};

struct Node {
    int out = -1;
    std::vector<Input> inputs;
    std::vector<int> saved;
    std::vector<int64_t> temps_bytes;   // backward temporaries, each freed before the next is made
};

// Tensors with reference counts, the autograd graph of one forward, and the parameters' gradients.
class Tape {
public:
    explicit Tape(GlibcHeap& heap) : heap_(heap) {}

    int make(int64_t bytes, bool requires_grad, bool param = false) {
        tensors_.push_back({heap_.allocate_aligned(bytes, kTensorAlignmentBytes), bytes, 1, requires_grad, param, -1});
        return int(tensors_.size()) - 1;
    }
    // Another name for the same tensor.
    int share(int id) {
        ++tensors_[size_t(id)].refs;
        return id;
    }
    // A view: no storage of its own, keeps its base alive.
    int view(int base, int64_t bytes) {
        ++tensors_[size_t(base)].refs;
        tensors_.push_back({-1, bytes, 1, tensors_[size_t(base)].requires_grad, false, base});
        return int(tensors_.size()) - 1;
    }
    void drop(int id) {
        Tensor& t = tensors_[size_t(id)];
        if (--t.refs > 0) return;
        if (t.base >= 0) drop(t.base);
        else heap_.release(t.handle);
    }
    bool requires_grad(int id) const { return tensors_[size_t(id)].requires_grad; }
    int64_t bytes(int id) const { return tensors_[size_t(id)].bytes; }

    // Records the op that made `n.out` when it needs a gradient; its saved tensors stay until its backward.
    void record(Node n) {
        if (!requires_grad(n.out)) return;
        for (const int s : n.saved) ++tensors_[size_t(s)].refs;
        nodes_.push_back(std::move(n));
    }

    void backward(int loss);
    void zero_grad();   // set_to_none: every parameter's gradient freed, in parameter order

private:
    struct Tensor {
        int64_t handle = -1, bytes = 0;
        int refs = 0;
        bool requires_grad = false, param = false;
        int base = -1;
    };
    void run(const Node& n);
    void give(int input, int grad);

    GlibcHeap& heap_;
    std::vector<Tensor> tensors_;
    std::vector<Node> nodes_;
    std::unordered_map<int, int> grads_;         // activation -> its gradient (until its node runs)
    std::vector<std::pair<int, int>> param_grads_;   // (parameter, gradient), in the order formed
};

void Tape::backward(int loss) {
    grads_[loss] = make(bytes(loss), false);   // the implicit ones of loss.backward()
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) run(*it);
    nodes_.clear();
    for (const auto& [id, grad] : grads_) drop(grad);   // gradients of tensors no node consumes
    grads_.clear();
}

void Tape::run(const Node& n) {
    const auto g = grads_.find(n.out);
    if (g != grads_.end()) {
        const int grad = g->second;
        grads_.erase(g);
        for (const int64_t t : n.temps_bytes) heap_.release(heap_.allocate(t));
        for (const Input& in : n.inputs) {
            if (!requires_grad(in.id)) continue;
            if (in.flow == GradFlow::pass) ++tensors_[size_t(grad)].refs;
            give(in.id, in.flow == GradFlow::pass ? grad : make(bytes(in.id), false));
        }
        drop(grad);
    }
    for (const int s : n.saved) drop(s);
}

// A second gradient for the same tensor is added in place when the first is not shared (InputBuffer::accumulate,
// AccumulateGrad), else summed into a new tensor.
void Tape::give(int input, int grad) {
    if (tensors_[size_t(input)].param) {
        for (auto& [param, have] : param_grads_)
            if (param == input) return drop(grad);
        param_grads_.push_back({input, grad});
        return;
    }
    const auto have = grads_.find(input);
    if (have == grads_.end()) {
        grads_[input] = grad;
    } else if (tensors_[size_t(have->second)].refs == 1) {
        drop(grad);
    } else {
        const int sum = make(bytes(input), false);
        drop(have->second);
        drop(grad);
        have->second = sum;
    }
}

void Tape::zero_grad() {
    std::sort(param_grads_.begin(), param_grads_.end());   // parameter ids follow module order
    for (const auto& [param, grad] : param_grads_) drop(grad);
    param_grads_.clear();
}

// The parameters of one block as llama_torch.py registers them (LoRA's A and B follow their base weight).
struct BlockParams {
    int norm1 = -1, norm2 = -1;
    int linear[7] = {-1, -1, -1, -1, -1, -1, -1};        // q, k, v, o, gate, up, down (LinearBit order)
    int lora_a[7] = {-1, -1, -1, -1, -1, -1, -1}, lora_b[7] = {-1, -1, -1, -1, -1, -1, -1};
};

struct ModelParams {
    int embed = -1, norm = -1, head = -1;
    std::vector<BlockParams> blocks;
    std::vector<int> trainable;   // in model.parameters() order
};

// Linear shapes of a block in LinearBit order: (in, out) features.
std::pair<int64_t, int64_t> linear_shape(const CpuBlockShape& b, int k) {
    const int64_t q = b.heads * b.head_dim, kv = b.kv_heads * b.head_dim;
    switch (k) {
        case 0: return {b.hidden, q};
        case 1: case 2: return {b.hidden, kv};
        case 3: return {q, b.hidden};
        case 6: return {b.ffn, b.hidden};
        default: return {b.hidden, b.ffn};
    }
}

bool has_linear(const CpuBlockShape& b, int k) { return b.gated || k != 4; }

// The forward of the Llama of tools/groundtruth/llama_torch.py, op by op, with each tensor's lifetime.
class Forward {
public:
    Forward(Tape& tape, const CpuStepShape& s, const ModelParams& p) : t_(tape), s_(s), p_(p) {}
    int loss();

private:
    int64_t tokens() const { return s_.micro_batch * s_.seq_len; }
    int64_t act(int64_t features) const { return tokens() * features * s_.element_bytes; }

    int unary(int x, int64_t out_bytes, bool save_in, bool save_out, std::vector<int64_t> temps = {});
    int mul(int a, int b);
    int add(int a, int b);
    int linear(int x, int w);
    int matmul(int a, int b, int64_t out_bytes);
    int copy(int x, GradFlow flow, int64_t out_bytes);
    int adapted_linear(int x, const BlockParams& p, int k);
    int norm(int x, int weight);
    int rope(int x, int cos, int sin);
    int attention(int x, const CpuBlockShape& b, const BlockParams& p, int cos, int sin);
    std::pair<int, int> softmax_attention(int q, int k, int v, bool grouped, const CpuBlockShape& b);
    int mlp(int x, const CpuBlockShape& b, const BlockParams& p);
    int block(int x, const CpuBlockShape& b, const BlockParams& p, int cos, int sin);
    int cross_entropy(int logits);

    Tape& t_;
    const CpuStepShape& s_;
    const ModelParams& p_;
};

int Forward::unary(int x, int64_t out_bytes, bool save_in, bool save_out, std::vector<int64_t> temps) {
    const int out = t_.make(out_bytes, t_.requires_grad(x));
    Node n{out, {{x}}, {}, std::move(temps)};
    if (save_in) n.saved.push_back(x);
    if (save_out) n.saved.push_back(out);
    t_.record(std::move(n));
    return out;
}

// Elementwise product: each input's gradient needs the other; a broadcast input's gradient is reduced from a
// full-size product.
int Forward::mul(int a, int b) {
    const int64_t out_bytes = std::max(t_.bytes(a), t_.bytes(b));
    const int out = t_.make(out_bytes, t_.requires_grad(a) || t_.requires_grad(b));
    Node n{out, {{a}, {b}}, {}, {}};
    for (const auto& [mine, other] : {std::pair{a, b}, std::pair{b, a}}) {
        if (!t_.requires_grad(mine)) continue;
        n.saved.push_back(other);
        if (t_.bytes(mine) < out_bytes) n.temps_bytes.push_back(out_bytes);
    }
    t_.record(std::move(n));
    return out;
}

int Forward::add(int a, int b) {
    const int out = t_.make(std::max(t_.bytes(a), t_.bytes(b)), t_.requires_grad(a) || t_.requires_grad(b));
    t_.record({out, {{a, GradFlow::pass}, {b, GradFlow::pass}}, {}, {}});
    return out;
}

// x @ W^T: the input is saved when the weight trains, the weight when the input needs a gradient.
int Forward::linear(int x, int w) {
    const int64_t out_features = t_.bytes(w) / s_.param_bytes / (t_.bytes(x) / tokens() / s_.element_bytes);
    return matmul(x, w, act(out_features));
}

int Forward::matmul(int a, int b, int64_t out_bytes) {
    const int out = t_.make(out_bytes, t_.requires_grad(a) || t_.requires_grad(b));
    Node n{out, {{a}, {b}}, {}, {}};
    if (t_.requires_grad(b)) n.saved.push_back(a);
    if (t_.requires_grad(a)) n.saved.push_back(b);
    t_.record(std::move(n));
    return out;
}

// A contiguous copy (reshape of a strided tensor); with GradFlow::alloc the copy is of a slice, whose backward
// makes a zero tensor of the whole input (SliceBackward).
int Forward::copy(int x, GradFlow flow, int64_t out_bytes) {
    const int out = t_.make(out_bytes, t_.requires_grad(x));
    t_.record({out, {{x, flow}}, {}, {}});
    return out;
}

// base(x) + B(A(x)) * scale (llama_torch.py LoRALinear), or the plain linear.
int Forward::adapted_linear(int x, const BlockParams& p, int k) {
    const int base = linear(x, p.linear[k]);
    if (p.lora_a[k] < 0) return base;
    const int a = linear(x, p.lora_a[k]);
    const int low = linear(a, p.lora_b[k]);
    t_.drop(a);
    const int scaled = unary(low, t_.bytes(low), false, false);
    t_.drop(low);
    const int out = add(base, scaled);
    t_.drop(base);
    t_.drop(scaled);
    return out;
}

// RMSNorm: x * rsqrt(x.pow(2).mean(-1) + eps) * weight. pow's backward makes x.pow(1) and 2 * that.
int Forward::norm(int x, int weight) {
    const int64_t full = t_.bytes(x), per_token = tokens() * s_.element_bytes;
    const int squared = unary(x, full, true, false, {full, full});
    const int mean = unary(squared, per_token, false, false);
    t_.drop(squared);
    const int shifted = unary(mean, per_token, false, false);
    t_.drop(mean);
    const int inv = unary(shifted, per_token, false, true);
    t_.drop(shifted);
    const int scaled = mul(x, inv);
    t_.drop(inv);
    const int out = mul(scaled, weight);
    t_.drop(scaled);
    return out;
}

// x * cos + rotate_half(x) * sin; rotate_half: cat(-x[..., half:], x[..., :half]).
int Forward::rope(int x, int cos, int sin) {
    const int64_t full = t_.bytes(x);
    const int with_cos = mul(x, cos);
    const int neg = unary(x, full / 2, false, false, {full / 2});
    const int rotated = t_.make(full, t_.requires_grad(x));
    t_.record({rotated, {{neg, GradFlow::pass}, {x}}, {}, {}});
    t_.drop(neg);
    const int with_sin = mul(rotated, sin);
    t_.drop(rotated);
    const int out = add(with_cos, with_sin);
    t_.drop(with_cos);
    t_.drop(with_sin);
    return out;
}

// Eager attention of llama_torch.py. q and k leave rope in the (b, s, heads, d) layout, so matmul's reshape
// to (b * heads, s, d) copies them (and v); repeat_interleave's output is contiguous and is not copied.
int Forward::attention(int x, const CpuBlockShape& b, const BlockParams& p, int cos, int sin) {
    const int64_t q_bytes = act(b.heads * b.head_dim);
    const int q0 = adapted_linear(x, p, 0), k0 = adapted_linear(x, p, 1), v0 = adapted_linear(x, p, 2);
    const int q = rope(q0, cos, sin);
    t_.drop(q0);
    int k = rope(k0, cos, sin), v = v0;
    t_.drop(k0);
    const bool grouped = b.kv_heads != b.heads;
    if (grouped) {
        const int kr = unary(k, q_bytes, false, false), vr = unary(v, q_bytes, false, false);
        t_.drop(k);
        t_.drop(v);
        k = kr;
        v = vr;
    }
    const auto [merged, scores] = softmax_attention(q, k, v, grouped, b);
    const int out = adapted_linear(merged, p, 3);
    t_.drop(merged);
    for (const int local : {q, k, v, scores}) t_.drop(local);
    return out;
}

// softmax(q k^T / sqrt(d) + mask) v, heads merged back to (b, s, q_dim); also the masked scores, which the
// caller's name keeps until it returns.
std::pair<int, int> Forward::softmax_attention(int q, int k, int v, bool grouped, const CpuBlockShape& b) {
    const int64_t q_bytes = act(b.heads * b.head_dim);
    const int64_t score_bytes = s_.micro_batch * b.heads * s_.seq_len * s_.seq_len * s_.element_bytes;
    const int qc = copy(q, GradFlow::pass, q_bytes);
    const int kc = grouped ? t_.share(k) : copy(k, GradFlow::pass, q_bytes);
    const int raw = matmul(qc, kc, score_bytes);
    t_.drop(qc);
    t_.drop(kc);
    const int divided = unary(raw, score_bytes, false, false);
    t_.drop(raw);
    const int masked = t_.make(score_bytes, t_.requires_grad(divided));
    t_.record({masked, {{divided, GradFlow::pass}}, {}, {}});
    t_.drop(divided);
    const int probs = unary(masked, score_bytes, false, true);
    const int vc = grouped ? t_.share(v) : copy(v, GradFlow::pass, q_bytes);
    const int heads_out = matmul(probs, vc, q_bytes);
    t_.drop(probs);
    t_.drop(vc);
    const int merged = copy(heads_out, GradFlow::pass, q_bytes);
    t_.drop(heads_out);
    return {merged, masked};
}

// down(silu(gate(x)) * up(x)), or down(act(up(x))) for a two-matrix MLP.
int Forward::mlp(int x, const CpuBlockShape& b, const BlockParams& p) {
    const int64_t f = act(b.ffn);
    int inner = -1;
    if (b.gated) {
        const int gate = adapted_linear(x, p, 4);
        const int activated = unary(gate, f, true, false);
        t_.drop(gate);
        const int up = adapted_linear(x, p, 5);
        inner = mul(activated, up);
        t_.drop(activated);
        t_.drop(up);
    } else {
        const int up = adapted_linear(x, p, 5);
        inner = unary(up, f, true, false);
        t_.drop(up);
    }
    const int out = adapted_linear(inner, p, 6);
    t_.drop(inner);
    return out;
}

int Forward::block(int x, const CpuBlockShape& b, const BlockParams& p, int cos, int sin) {
    const int normed = norm(x, p.norm1);
    const int attn = attention(normed, b, p, cos, sin);
    t_.drop(normed);
    const int mid = add(x, attn);
    t_.drop(attn);
    const int normed2 = norm(mid, p.norm2);
    const int ffn = mlp(normed2, b, p);
    t_.drop(normed2);
    const int out = add(mid, ffn);
    t_.drop(ffn);
    t_.drop(mid);
    return out;
}

// F.cross_entropy(logits[:, :-1].reshape(-1, V), ...): the reshape copies the slice when micro_batch > 1;
// log_softmax keeps its output; nll_loss's backward makes a zero tensor of it.
int Forward::cross_entropy(int logits) {
    const int64_t shifted = s_.micro_batch * (s_.seq_len - 1) * s_.vocab * s_.element_bytes;
    const int flat = s_.micro_batch > 1 ? copy(logits, GradFlow::alloc, shifted) : t_.view(logits, shifted);
    if (s_.micro_batch == 1) t_.record({flat, {{logits}}, {}, {}});
    const int log_probs = unary(flat, shifted, false, true);
    t_.drop(flat);
    const int loss = unary(log_probs, s_.element_bytes, false, false);
    t_.drop(log_probs);
    return loss;
}

int Forward::loss() {
    const int64_t e = s_.element_bytes, s = s_.seq_len;
    const int64_t head_dim = s_.blocks.front().head_dim;
    const int angles = t_.make(s * head_dim / 2 * e, false);   // rotary_tables
    const int emb = t_.make(s * head_dim * e, false);
    t_.drop(angles);
    const int cos = t_.make(s * head_dim * e, false), sin = t_.make(s * head_dim * e, false);
    t_.drop(emb);
    const int filled = t_.make(s * s * e, false);               // torch.full((s, s), -inf).triu(1)
    const int mask = t_.make(s * s * e, false);
    t_.drop(filled);
    int x = t_.make(act(s_.blocks.front().hidden), t_.requires_grad(p_.embed));
    t_.record({x, {{p_.embed}}, {}, {}});
    for (size_t i = 0; i < s_.blocks.size(); ++i) {
        const int next = block(x, s_.blocks[i], p_.blocks[i], cos, sin);
        t_.drop(x);
        x = next;
    }
    const int normed = norm(x, p_.norm);
    t_.drop(x);
    const int logits = linear(normed, p_.head);
    t_.drop(normed);
    const int loss = cross_entropy(logits);
    for (const int local : {logits, mask, cos, sin}) t_.drop(local);
    return loss;
}

// Parameters in llama_torch.py's module order; a tied head's own weight is made and then replaced.
ModelParams build_model(Tape& t, const CpuStepShape& s) {
    ModelParams m;
    const int64_t e = s.param_bytes, h = s.blocks.front().hidden;
    auto param = [&](int64_t elements, bool trains) {
        const int id = t.make(elements * e, trains, true);
        if (trains) m.trainable.push_back(id);
        return id;
    };
    m.embed = param(s.vocab * h, s.full);
    for (const CpuBlockShape& b : s.blocks) {
        BlockParams p;
        p.norm1 = param(b.hidden, s.full);
        for (int k = 0; k < 7; ++k) {
            if (k == 4) p.norm2 = param(b.hidden, s.full);
            if (!has_linear(b, k)) continue;
            const auto [in, out] = linear_shape(b, k);
            p.linear[k] = param(in * out, s.full);
        }
        m.blocks.push_back(p);
    }
    m.norm = param(h, s.full);
    m.head = s.tied_embedding ? m.embed : param(s.vocab * h, s.full);
    if (s.tied_embedding) t.drop(t.make(s.vocab * h * e, false));
    for (size_t i = 0; i < s.blocks.size(); ++i)   // apply_lora: block by block, attention then MLP
        for (int k = 0; k < 7; ++k) {
            if (!(s.blocks[i].lora_mask & (1u << k)) || !has_linear(s.blocks[i], k)) continue;
            const auto [in, out] = linear_shape(s.blocks[i], k);
            m.blocks[i].lora_a[k] = param(s.lora_rank * in, true);
            m.blocks[i].lora_b[k] = param(out * s.lora_rank, true);
        }
    return m;
}

// torch.optim.AdamW, for-loop: states at the first step; per parameter denom = (exp_avg_sq.sqrt() / c).add_(eps).
void adamw_step(Tape& t, GlibcHeap& heap, const ModelParams& m, bool first, const CpuStepShape& s) {
    if (first)
        for (const int p : m.trainable) {
            t.make(s.element_bytes, false);   // state['step']
            t.make(t.bytes(p), false);        // exp_avg
            t.make(t.bytes(p), false);        // exp_avg_sq
        }
    for (const int p : m.trainable) {
        const int64_t root = heap.allocate_aligned(t.bytes(p), kTensorAlignmentBytes);
        const int64_t denom = heap.allocate_aligned(t.bytes(p), kTensorAlignmentBytes);
        heap.release(root);
        heap.release(denom);
    }
}

}  // namespace

CpuHeapFigures replay_cpu_steps(const CpuStepShape& shape) {
    GlibcHeap heap;
    Tape tape(heap);
    const ModelParams model = build_model(tape, shape);
    tape.make(shape.micro_batch * shape.seq_len * 8, false);   // the token ids (int64)
    for (int step = 0; step < shape.steps; ++step) {
        tape.zero_grad();
        heap.hold_pieces(true);   // the forward's graph objects take memalign's small pieces
        const int loss = Forward(tape, shape, model).loss();
        heap.hold_pieces(false);
        tape.backward(loss);
        adamw_step(tape, heap, model, step == 0, shape);
        // backward() frees the graph's saved tensors, not its nodes: loss.grad_fn owns them (and their edges) until
        // `loss` goes, which in cpu_collect.py's step() is when it returns, after opt.step().
        heap.release_pieces();
        tape.drop(loss);
    }
    return {heap.peak_resident_bytes(), heap.peak_in_use_bytes()};
}

}  // namespace ftb
