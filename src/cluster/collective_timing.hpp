// Collective figures from the ranks' timings, as nccl-tests reports them (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// the time is each rank's mean over back-to-back operations, averaged over the ranks (nccl-tests' default `-a 1`);
// algbw = S / t with S the size column of the *_perf tools (collectives.hpp says which buffer that is per op);
// busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather, reduce-scatter and all-to-all.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "system/collectives.hpp"

namespace ftb::cluster {

const char* collective_name(Collective op);   // all_reduce | all_gather | reduce_scatter | all_to_all | ...
std::optional<Collective> collective_named(const std::string& name);

double algbw_GBps(double bytes, double seconds);                        // S / t, 1e9 B/s
double busbw_GBps(Collective op, int ranks, double bytes, double seconds);  // algbw x nccl-tests' factor

struct CollectiveFigure {
    Collective op = Collective::all_reduce;
    double bytes = 0;             // nccl-tests' size S
    int ranks = 0;
    std::vector<double> seconds;  // per sample: the ranks' mean time of one operation
    double median_seconds() const;
    double algbw_GBps() const;
    double busbw_GBps() const;
    std::vector<double> busbw_samples_GBps() const;
};

// `per_rank[r][s]`: rank r's time of one operation in sample s. Samples that not every rank has are dropped.
CollectiveFigure collective_figure(Collective op, double bytes, const std::vector<std::vector<double>>& per_rank);

}  // namespace ftb::cluster
