// QLoRA: dequantising the quantised base weights for each use, by the kernels of the library the job names
// (train.qlora.kernel: bitsandbytes before/after 0.48, auto-gptq, torchao) or a pre-quantised checkpoint's format
// sets (AutoAWQ, ModelOpt NVFP4), memory-bound.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Forward dequantisation of `matrices` quantised weights of `elements` in all, and backward's when the library
// dequantises again for the input gradient. `io_elements`: input plus output elements of those uses (tokens x
// (in + out) per matrix), which a kernel that only runs in fp16 casts (AutoAWQ).
void add_dequant_uses(LayerWork& w, const WorkContext& c, double elements, double matrices, double io_elements = 0);

}  // namespace ftb
