// Activation costs, counted from each activation's eager PyTorch code and the autograd formulas of the ops it
// calls (pytorch tools/autograd/derivatives.yaml: which inputs or results each op's backward reads).
#include "model/activation.hpp"

#include <map>

namespace ftb {
namespace {

const ActivationCost kOneOp{};

// relu2, transformers activations.py ReLUSquaredActivation.forward: relu(input), then torch.square of it. relu's
// backward reads its result (threshold_backward(grad, result, 0)) and square's (pow) reads its input, the same
// tensor: one kept tensor; two kernels, each reading and writing the FFN width.
const ActivationCost kReluSquared{0, 1, 0, 0, 2, 4, 0};

// xielu, transformers activations.py XIELUActivation (the Python path, taken unless the optional `xielu` CUDA
// package is installed): alpha_p and alpha_n are nn.Parameter of shape (1,) (beta and eps are buffers), and
// _xielu_python computes where(x > 0, alpha_p * x * x + beta * x, (expm1(min(x, eps)) - x) * alpha_n + beta * x).
// Kept for backward: x (by alpha_p * x, by the second product and by minimum), the product alpha_p * x (by the
// product with x), expm1's result (its backward reads it), expm1(...) - x (the product with alpha_n needs it for
// alpha_n's gradient) and the bool mask x > 0 (where's condition). alpha_p * x is a product with a 1-element
// parameter tensor, so type promotion gives it the parameter's dtype. Forward kernels on the FFN width: gt, four
// products with a scalar (alpha_p * x, beta * x twice, * alpha_n), four ops of two tensors ((alpha_p * x) * x, two
// adds, sub), minimum, expm1, where = 12, plus softplus, softplus and add on the two scalars = 15. Elements read +
// written: gt 1 (+1 mask byte), scalar products 2 each, two-tensor ops 3 each, minimum 2, expm1 2, where 3 (+1 mask
// byte): 1 + 8 + 12 + 2 + 2 + 3 = 28.
const ActivationCost kXielu{2, 4, 1, 1, 15, 28, 2};

}  // namespace

const ActivationCost& activation_cost(const std::string& hidden_act) {
    static const std::map<std::string, const ActivationCost*> table = {
        {"relu2", &kReluSquared},
        {"xielu", &kXielu},
    };
    const auto it = table.find(hidden_act);
    return it == table.end() ? kOneOp : *it->second;
}

}  // namespace ftb
