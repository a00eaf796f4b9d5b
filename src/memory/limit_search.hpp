// The search behind max_micro_batch and max_seq_len, on its own so a test can give it any margin curve.
#pragma once
#include <cstdint>
#include <functional>

namespace ftb {

// The largest multiple of `step` in [step, cap] whose margin (bytes to spare; >= 0 fits) is not negative, for a
// margin that falls as x grows; cap itself when it fits; 0 when step does not fit.
int64_t largest_fitting(int64_t step, int64_t cap, const std::function<double(int64_t)>& margin);

}  // namespace ftb
