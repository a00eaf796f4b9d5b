// FSDP1's gradient traffic per unit: frozen weights' gradients in units that mix frozen and trainable weights,
// the flat gradient, its cast to the reduce dtype and the pre-divide before the reduce-scatter.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// A FlatParameter unit holding frozen and trainable weights computes the frozen weights' gradients too.
bool fsdp_computes_frozen_weight_grads(const WorkContext& c);
// The flat gradient written from the views' gradients of block `l` (and its no_sync() accumulation).
void add_flat_gradient_traffic(Work& bwd, const WorkContext& c, const LayerSpec& l);
// The post-backward hook's cast, pre-divide and cast back for a unit of `elements` parameters on this GPU.
void add_fsdp1_post_backward_traffic(Work& bwd, const WorkContext& c, double elements, bool flat_write_counted);
// Whether a unit whose weights train (`trains`) syncs flat FSDP1 gradients.
bool fsdp1_unit_gradients(const WorkContext& c, bool trains);

}  // namespace ftb
