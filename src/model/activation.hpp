// What an FFN's activation function costs beyond the matmuls around it, by the name config.json gives it
// (`hidden_act`): the scalars it learns, the FFN-width tensors eager autograd keeps for its backward, and the
// pointwise kernels and bytes its eager forward runs. Names without an entry are one pointwise op (silu, gelu,
// gelu_new, gelu_pytorch_tanh, relu, ...): one kernel that reads and writes the FFN width and keeps one tensor.
#pragma once
#include <cstdint>
#include <string>

namespace ftb {

struct ActivationCost {
    int64_t learnable_params = 0;      // parameters of the activation module itself, per FFN
    double saved_tensors = 1;          // FFN-width tensors eager autograd keeps, in the activation dtype
    double saved_promoted_tensors = 0; // of those, the ones a product with a learnable parameter promotes to the
                                       // parameter's dtype (fp32 under torch.amp)
    double saved_mask_bytes = 0;       // bool masks kept, bytes per FFN element
    double kernels = 1;                // eager forward pointwise kernels per call
    double act_traffic = 2;            // eager forward reads + writes per FFN element, in activation-dtype elements
    double mask_traffic = 0;           // eager forward bool-mask bytes per FFN element
};

// The cost of `hidden_act` (the table in activation.cpp; unknown names get the one-op default).
const ActivationCost& activation_cost(const std::string& hidden_act);

}  // namespace ftb
