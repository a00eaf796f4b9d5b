// Units: every quantity carries its unit in its name (_bytes, _seconds, _flops, _GBps, _w).
// GB/s here is 1e9 bytes per second (vendor and nccl-tests convention); GiB is 2^30 bytes.
#pragma once
#include <cstdint>

namespace ftb {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;

}  // namespace ftb
