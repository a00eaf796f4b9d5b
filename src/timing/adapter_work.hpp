// The work of an adapter on a linear: LoRA's A and B, or OFT's block rotation of the input (PEFT), with their
// elementwise kernels, beside the base linear's own GEMMs (work_builder.cpp add_linear).
#pragma once
#include "timing/work.hpp"

namespace ftb {

// The adapters of `count` linears of `in` x `out` that see `tokens` tokens each, into `w`. `in_bytes`: the element
// size of the linears' input. `lora_elementwise`: charge LoRA's dropout, scaling and add (the block's projections;
// an expert's adapter is charged its GEMMs only).
void add_adapter_work(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                      double in_bytes, bool lora_elementwise);

}  // namespace ftb
