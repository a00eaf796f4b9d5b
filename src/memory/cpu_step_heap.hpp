// The allocations of eager PyTorch training steps on a CPU, replayed through the glibc heap model
// (memory/glibc_heap.hpp), to tell what the heap holds from the kernel beyond the live tensors.
//
// The step is the one tools/groundtruth/cpu_collect.py times: the model built (llama_torch.py: parameters in
// module order, then LoRA adapters), then per step `zero_grad(set_to_none=True)`, forward with the standard
// cross-entropy, `backward()`, and torch.optim.AdamW's for-loop step (torch/optim/adamw.py,
// _single_tensor_adamw: states made at the first step; per parameter one sqrt and one division temporary).
// Every tensor is one malloc (c10/core/impl/alloc_cpu.cpp: posix_memalign, no caching) freed when its last
// reference goes: a Python name rebound or out of scope, or an autograd node's saved tensors released after its
// backward ran (torch/csrc/autograd/engine.cpp, release_variables). Autograd saves an input only when another
// input's gradient needs it (tools/autograd/derivatives.yaml, saved conditionally by the generated code), and
// backward runs the nodes in the reverse of their creation order (the engine's sequence-number priority).
#pragma once
#include <cstdint>
#include <vector>

namespace ftb {

// One decoder block of a Llama-style model (RMSNorm, rotary q/k, eager attention, SwiGLU or two-matrix MLP).
struct CpuBlockShape {
    int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;
    bool gated = true;
    uint32_t lora_mask = 0;   // LinearBit: which linears carry adapters
};

struct CpuStepShape {
    int64_t micro_batch = 1, seq_len = 1, vocab = 0;
    int64_t element_bytes = 4;      // activations and their gradients
    int64_t param_bytes = 4;        // parameters, their gradients and AdamW's states
    bool full = true;               // every parameter trains; else only the adapters
    int64_t lora_rank = 0;
    bool tied_embedding = false;
    std::vector<CpuBlockShape> blocks;
    // Steps replayed (VmHWM is the peak over all of them). The second is the steady state: the first has no
    // AdamW states and its mmap threshold starts at 128 KiB; heap_trace.py's steps 1 and 2 hold the same.
    int steps = 2;
};

struct CpuHeapFigures {
    int64_t peak_resident_bytes = 0;   // the heap's largest hold from the kernel (arena + mmapped)
    int64_t peak_in_use_bytes = 0;     // the largest sum of live chunks
};

CpuHeapFigures replay_cpu_steps(const CpuStepShape& shape);

}  // namespace ftb
