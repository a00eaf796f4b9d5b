// QLoRA: dequantising the 4-bit base weights for each use, by the kernels of the library the job names
// (train.qlora.kernel: bitsandbytes before/after 0.48, auto-gptq, torchao), memory-bound.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Forward dequantisation of `matrices` quantised weights of `elements` in all, and backward's when the library
// dequantises again for the input gradient.
void add_dequant_uses(LayerWork& w, const WorkContext& c, double elements, double matrices);

}  // namespace ftb
