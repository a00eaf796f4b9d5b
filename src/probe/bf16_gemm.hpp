// A bf16 matrix multiply for CPUs with the AVX512-BF16 instructions (VDPBF16PS), used to measure the
// host's bf16 rate where the BLAS offers no bf16 GEMM (Debian's OpenBLAS is built without sbgemm).
#pragma once
#include <cstdint>
#include <vector>

namespace ftb::probe {

// Round-to-nearest-even float -> bfloat16 bits, and back.
uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t b);

bool cpu_has_avx512_bf16();  // asks the CPU (cpuid), not /proc

// C[M x N] (fp32, row-major) = A[M x K] * B[K x N], A and B bf16 row-major.
// N must be a multiple of 32 and K a multiple of 2; M is free. Runs on `threads` threads.
// Requires cpu_has_avx512_bf16(); throws ftb::InternalError otherwise or on bad shapes.
void bf16_gemm(const uint16_t* A, const uint16_t* B, float* C, int M, int N, int K, int threads);

}  // namespace ftb::probe
