#include "trace/diagnose_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ftb::trace {

namespace {

nlohmann::json kernels_json(const std::vector<KernelTotal>& kernels, std::size_t limit) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < kernels.size() && i < limit; ++i)
        a.push_back({{"name", kernels[i].name}, {"count", kernels[i].count}, {"seconds", kernels[i].seconds},
                     {"share", kernels[i].share}});
    return a;
}

nlohmann::json gpu_json(const GpuTimeFractions& g) {
    return {{"compute", g.compute}, {"communication", g.communication}, {"memcpy", g.memcpy}, {"idle", g.idle}};
}

nlohmann::json idle_json(const IdleSplit& i) {
    return {{"host_wait", i.host_wait}, {"kernel_wait", i.kernel_wait}, {"other", i.other},
            {"host_wait_in_dataloader", i.host_wait_in_dataloader}};
}

nlohmann::json memcpy_json(const MemcpyFigures& m) {
    return {{"h2d_bytes", m.h2d_bytes}, {"d2h_bytes", m.d2h_bytes}, {"d2d_bytes", m.d2d_bytes},
            {"h2d_GBps", m.h2d_GBps()}, {"d2h_GBps", m.d2h_GBps()}, {"d2d_GBps", m.d2d_GBps()},
            {"pageable_fraction", m.pageable_fraction()}};
}

}  // namespace

MeasuredStep measured_step(const Diagnosis& d, const std::vector<const TraceTables*>& tables) {
    MeasuredStep m;
    m.from_steps = d.mean_step_seconds > 0;
    m.step_seconds = m.from_steps ? d.mean_step_seconds : d.window_seconds;
    const double s = m.step_seconds;
    const double loader = std::min(d.idle.host_wait, d.idle.host_wait_in_dataloader);
    const bool host_copies = d.memcpy.h2d_bytes + d.memcpy.d2h_bytes >= d.memcpy.d2d_bytes;
    m.breakdown = {
        {"compute kernels", s * d.gpu.compute, "compute"},
        {"exposed communication", s * d.gpu.communication, communication_resource(tables)},
        {"copies and memsets alone", s * d.gpu.memcpy, host_copies ? "pcie" : "memory_bandwidth"},
        {"GPU waits for the DataLoader", s * loader, "data_loading"},
        {"GPU waits for other host work", s * (d.idle.host_wait - loader), "host_cpu"},
        {"launch gaps", s * d.idle.kernel_wait, "launch_overhead"},
        {"other idle", s * d.idle.other, "idle"},
    };
    return m;
}

nlohmann::json diagnosis_json(const Diagnosis& d, const std::vector<InputSummary>& inputs, const MeasuredStep& measured) {
    nlohmann::json j;
    j["ranks"] = d.ranks.size();
    j["window_seconds"] = d.window_seconds;
    j["window_source"] = std::all_of(d.ranks.begin(), d.ranks.end(), [](auto& r) { return r.window_from_steps; })
                             ? "profiler_steps"
                             : "trace_span";
    j["gpu"] = gpu_json(d.gpu);
    j["idle"] = idle_json(d.idle);
    j["memcpy"] = memcpy_json(d.memcpy);
    j["overlap"] = {{"comm_compute", d.comm_compute_overlap}, {"communication_seconds", d.communication_seconds}};
    j["bottleneck"] = {{"resource", d.bottleneck.resource}, {"share", d.bottleneck.share},
                       {"evidence", d.bottleneck.evidence}};
    j["top_kernels"] = kernels_json(d.top_kernels, 10);
    j["steps"] = {{"mean_seconds", measured.from_steps ? nlohmann::json(d.mean_step_seconds) : nlohmann::json(nullptr)},
                  {"skew_seconds", d.step_skew_seconds ? nlohmann::json(*d.step_skew_seconds) : nlohmann::json(nullptr)}};
    if (d.straggler)
        j["straggler"] = {{"rank", d.straggler->rank}, {"mean_lateness_seconds", d.straggler->mean_lateness_seconds},
                          {"collectives_matched", d.straggler->collectives_matched}};
    else
        j["straggler"] = nullptr;
    j["memory"] = {{"peak_allocated_bytes",
                    d.peak_allocated_bytes ? nlohmann::json(*d.peak_allocated_bytes) : nlohmann::json(nullptr)}};
    nlohmann::json items = nlohmann::json::array();
    for (auto& b : measured.breakdown) items.push_back({{"phase", b.phase}, {"seconds", b.seconds}, {"resource", b.resource}});
    j["measured"] = {{"step_seconds", measured.step_seconds}, {"breakdown", items}};

    nlohmann::json ranks = nlohmann::json::array();
    for (std::size_t i = 0; i < d.ranks.size(); ++i) {
        const auto& r = d.ranks[i];
        nlohmann::json steps = nlohmann::json::array();
        for (auto& s : r.steps) steps.push_back({{"step", s.number}, {"seconds", s.seconds}});
        nlohmann::json rj = {{"rank", r.rank}, {"device", r.device}, {"window_seconds", r.window_seconds},
                             {"gpu", gpu_json(r.gpu)}, {"idle", idle_json(r.idle)}, {"memcpy", memcpy_json(r.memcpy)},
                             {"overlap", {{"comm_compute", r.comm_compute_overlap},
                                          {"communication_seconds", r.communication_seconds}}},
                             {"steps", steps}, {"top_kernels", kernels_json(r.top_kernels, 5)},
                             {"launches_joined", r.launches_joined}, {"launches_missing", r.launches_missing}};
        if (i < inputs.size() && inputs[i].tables) {
            const TraceTables& t = *inputs[i].tables;
            rj["file"] = inputs[i].file;
            rj["read"] = {{"events", t.events_read}, {"json_bytes", t.json_bytes_read}, {"complete", t.complete},
                          {"fraction_read", t.fraction_read}};
            if (!t.complete) rj["read"]["stop_reason"] = t.stop_reason;
        }
        ranks.push_back(std::move(rj));
    }
    j["per_rank"] = std::move(ranks);
    nlohmann::json warnings = nlohmann::json::array();
    for (auto& w : d.warnings) warnings.push_back(w);
    for (auto& in : inputs)
        if (in.tables && !in.tables->complete)
            warnings.push_back(fmt::format("{}: partial analysis: read {:.0f}% of the file ({} events) before: {}", in.file,
                                           100.0 * in.tables->fraction_read, in.tables->events_read,
                                           in.tables->stop_reason));
    j["warnings"] = std::move(warnings);
    return j;
}

std::string diagnosis_text(const Diagnosis& d, const std::vector<InputSummary>& inputs, const MeasuredStep& measured) {
    std::string out;
    auto pct = [](double f) { return fmt::format("{:5.1f}%", 100.0 * f); };
    out += fmt::format("ranks: {}   window: {:.6f} s per rank ({})\n", d.ranks.size(), d.window_seconds,
                       measured.from_steps ? "profiler steps" : "whole trace");
    out += fmt::format("bottleneck: {} ({} of the window)\n  {}\n\n", d.bottleneck.resource, pct(d.bottleneck.share),
                       d.bottleneck.evidence);
    out += "GPU time\n";
    out += fmt::format("  compute        {}\n  communication  {}  (exposed; {} of communication hidden under compute)\n",
                       pct(d.gpu.compute), pct(d.gpu.communication), pct(d.comm_compute_overlap));
    out += fmt::format("  memcpy/memset  {}\n  idle           {}\n", pct(d.gpu.memcpy), pct(d.gpu.idle));
    out += fmt::format("    host_wait    {}  (in DataLoader {})\n    kernel_wait  {}\n    other        {}\n\n",
                       pct(d.idle.host_wait), pct(d.idle.host_wait_in_dataloader), pct(d.idle.kernel_wait),
                       pct(d.idle.other));
    out += fmt::format("copies: H2D {} B at {:.2f} GB/s, D2H {} B at {:.2f} GB/s, D2D {} B at {:.2f} GB/s, pageable {}\n",
                       d.memcpy.h2d_bytes, d.memcpy.h2d_GBps(), d.memcpy.d2h_bytes, d.memcpy.d2h_GBps(),
                       d.memcpy.d2d_bytes, d.memcpy.d2d_GBps(), pct(d.memcpy.pageable_fraction()));
    if (measured.from_steps) out += fmt::format("step: {:.6f} s mean", d.mean_step_seconds);
    if (d.step_skew_seconds) out += fmt::format(", skew across ranks {:.6f} s", *d.step_skew_seconds);
    if (measured.from_steps) out += "\n";
    if (d.straggler)
        out += fmt::format("straggler: rank {} reaches collectives {:.6f} s after the first rank on average ({} matched)\n",
                           d.straggler->rank, d.straggler->mean_lateness_seconds, d.straggler->collectives_matched);
    if (d.peak_allocated_bytes) out += fmt::format("memory: peak allocated {} B\n", *d.peak_allocated_bytes);
    out += "\ntop kernels\n";
    for (std::size_t i = 0; i < d.top_kernels.size() && i < 10; ++i) {
        const auto& k = d.top_kernels[i];
        std::string name = k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name;
        out += fmt::format("  {}  {:8.6f} s  x{:<6} {}\n", pct(k.share), k.seconds, k.count, name);
    }
    for (auto& w : d.warnings) out += "warning: " + w + "\n";
    for (auto& in : inputs)
        if (in.tables && !in.tables->complete)
            out += fmt::format("warning: {}: partial analysis: read {:.0f}% of the file ({} events) before: {}\n", in.file,
                               100.0 * in.tables->fraction_read, in.tables->events_read, in.tables->stop_reason);
    return out;
}

}  // namespace ftb::trace
