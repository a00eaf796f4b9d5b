#include "report/plan_report.hpp"

#include <fmt/format.h>

#include "report/table.hpp"

#include <algorithm>
#include <cmath>

namespace ftb {

using OJson = nlohmann::ordered_json;

namespace {

bool ends_with_bytes(const std::string& k) { return k.size() >= 6 && k.compare(k.size() - 6, 6, "_bytes") == 0; }

// Byte counts (keys ending in _bytes, and everything under `whole` mappings) print as whole numbers
// (docs/output.md): the model's fractional bytes (NF4's half bytes) are rounded to the nearest byte.
void whole_numbers(OJson& j, bool whole) {
    if (j.is_number_float() && whole && std::isfinite(j.get<double>())) {
        j = static_cast<int64_t>(std::llround(j.get<double>()));
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) whole_numbers(it.value(), whole || ends_with_bytes(it.key()));
    } else if (j.is_array()) {
        for (auto& e : j) whole_numbers(e, whole);
    }
}

}  // namespace

OJson memory_json(const MemoryResult& m) {
    OJson j;
    j["allocated_peak_bytes"] = m.allocated_peak_bytes;
    j["reserved_peak_bytes"] = m.reserved_peak_bytes;
    j["device_used_bytes"] = m.device_used_bytes;
    j["capacity_bytes"] = m.capacity_bytes;
    j["fits"] = m.fits;
    j["verdict"] = to_string(m.verdict);
    j["band_bytes"] = {m.band_low_bytes, m.band_high_bytes};
    j["margin_bytes"] = m.margin_bytes;
    j["paged_bytes"] = m.paged_bytes;
    j["breakdown"] = {{"weights", m.breakdown.weights_bytes},         {"gradients", m.breakdown.gradients_bytes},
                      {"optimizer", m.breakdown.optimizer_bytes},     {"activations", m.breakdown.activations_bytes},
                      {"logits", m.breakdown.logits_bytes},           {"temporary", m.breakdown.temporary_bytes},
                      {"overhead", m.breakdown.overhead_bytes}};
    j["peak_phase"] = to_string(m.peak_phase);
    j["peak_stage"] = m.peak_stage;
    j["host_bytes"] = m.host_bytes;
    j["host_capacity_bytes"] = m.host_capacity_bytes;
    j["host_fits"] = m.host_fits;
    j["cuda_context_bytes"] = m.cuda_context_bytes;
    j["comm_buffer_bytes"] = m.comm_buffer_bytes;
    j["allocator_overhead_bytes"] = m.allocator_overhead_bytes;
    j["params"] = {{"total", m.total_params}, {"trainable", m.trainable_params}, {"per_gpu", m.params_per_gpu}};
    j["tokens_per_micro_batch"] = m.tokens_per_micro_batch;
    j["in_flight_micro_batches"] = m.in_flight_micro_batches;
    const LayerActivationBytes& a = m.layer_activation_per_token;
    j["block_activation_bytes_per_token"] = {{"norms", a.norms}, {"projection_inputs", a.projections_in},
                                             {"attention", a.attention}, {"ffn", a.ffn},
                                             {"dropout_masks", a.dropout_masks}, {"total", a.total()}};
    whole_numbers(j, false);
    whole_numbers(j["breakdown"], true);   // bytes at the peak
    whole_numbers(j["params"], true);      // parameter counts
    return j;
}

OJson price_json(const std::optional<NodePrice>& p) {
    if (!p) return nullptr;
    return {{"per_node_hour", p->per_node_hour}, {"includes_power", p->includes_power}, {"basis", p->basis},
            {"currency", p->currency.empty() ? OJson(nullptr) : OJson(p->currency)},
            {"date", p->date.empty() ? OJson(nullptr) : OJson(p->date)},
            {"comparable", p->comparable.empty() ? OJson(nullptr) : OJson(p->comparable)}, {"sources", p->sources}};
}

OJson storage_json(const OperationsResult& o) {
    auto tier = [](const StorageTier& t) {
        return OJson{{"tier", t.name}, {"node_local", t.node_local}, {"durable", t.durable},
                     {"write_GBps_per_node", t.write_GBps_per_node}, {"read_GBps_per_node", t.read_GBps_per_node},
                     {"aggregate_write_GBps", t.aggregate_write_GBps}, {"aggregate_read_GBps", t.aggregate_read_GBps}};
    };
    OJson ck = tier(o.checkpoint_storage);
    ck["write_seconds"] = o.checkpoint.seconds;
    ck["write_bound_by"] = o.checkpoint.bound_by;
    ck["restore_seconds"] = o.restore.seconds;
    ck["restore_bound_by"] = o.restore.bound_by;
    OJson data = tier(o.data_storage);
    data["bytes_per_node_per_step"] = o.data_read.bytes_per_node_per_step;
    data["read_seconds_per_step"] = o.data_read.seconds_per_step;
    data["exposed_seconds_per_step"] = o.data_read.exposed_seconds_per_step;
    return {{"checkpoint", ck}, {"data", data}, {"note", o.storage_note.empty() ? OJson(nullptr) : OJson(o.storage_note)}};
}


OJson memory_walk_json(const MemoryWalk& walk) {
    OJson points = OJson::array();
    for (const auto& p : walk.points) {
        const MemoryBreakdown& b = p.live;
        points.push_back({{"phase", to_string(p.phase)}, {"block", p.block == -1 ? OJson(nullptr) : OJson(p.block)},
                          {"allocated_bytes", b.allocated()}, {"weights", b.weights_bytes},
                          {"gradients", b.gradients_bytes}, {"optimizer", b.optimizer_bytes},
                          {"activations", b.activations_bytes}, {"logits", b.logits_bytes},
                          {"temporary", b.temporary_bytes}});
    }
    return {{"stage", walk.stage}, {"points", points}};
}

namespace {

// Communication on the step's critical path (the seconds attributed to a link) and what the schedule hid
// under compute.
OJson communication_json(const TimeResult& t) {
    double exposed = 0;
    for (const auto& p : t.breakdown)
        if (p.resource == Resource::gpu_interconnect || p.resource == Resource::network || p.resource == Resource::pcie)
            exposed += p.seconds;
    return {{"seconds", t.communication_seconds}, {"exposed_seconds", exposed},
            {"overlapped_seconds", std::max(0.0, t.communication_seconds - exposed)}};
}

// The memory-relevant settings as planned: the job's, or its framework's defaults where it left them out.
OJson memory_settings_json(const Job& job) {
    const TrainSpec& tr = job.spec.train;
    return {{"optimizer", to_string(tr.optimizer)},
            {"optimizer_impl", to_string(tr.optimizer_impl)},
            {"activation_checkpointing", to_string(tr.recompute)},
            {"recompute_layers", tr.recompute_layers},
            {"offload_activations", to_string(job.spec.offload.activations)},
            {"fp8_weights", tr.fp8_weights},
            {"activation_func_fp8_input_store", tr.activation_func_fp8_input_store},
            {"reduce_dtype_bytes", tr.reduce_dtype_bytes},
            {"weights", tr.weights == WeightsMode::mixed ? "mixed" : "pure"},
            {"loss", to_string(tr.loss)},
            {"attention", to_string(tr.attention)}};
}

OJson step_json(const TimeResult& t) {
    OJson breakdown = OJson::array();
    for (const auto& p : t.breakdown)
        breakdown.push_back({{"phase", p.phase}, {"seconds", p.seconds}, {"resource", to_string(p.resource)}});
    return {{"seconds", t.step_seconds}, {"breakdown", breakdown}, {"kernels_per_gpu", t.kernels_per_step},
            {"communication", communication_json(t)}};
}

OJson throughput_json(const TimeResult& t) {
    return {{"tokens_per_step", t.tokens_per_step},
            {"tokens_per_second", t.tokens_per_second},
            {"tokens_per_second_per_gpu", t.tokens_per_second_per_gpu},
            {"mfu", t.mfu},
            {"mfu_6n", t.mfu_6n},
            {"hfu", t.hfu},
            {"model_flops_per_step", t.model_flops_per_step},
            {"model_flops_6n_per_step", t.model_flops_6n_per_step},
            {"hardware_flops_per_step", t.hardware_flops_per_step}};
}

OJson weak_points_json(const std::vector<WeakPoint>& weak_points) {
    OJson weak = OJson::array();
    for (const auto& w : weak_points) weak.push_back({{"resource", to_string(w.resource)}, {"what", w.what}, {"impact", w.impact}});
    return weak;
}

OJson recommendations_json(const std::vector<Recommendation>& recommendations) {
    OJson recs = OJson::array();
    for (const auto& r : recommendations)
        recs.push_back({{"resource", to_string(r.addresses)}, {"what", r.what}, {"set", r.set},
                        {"changes_training", r.changes_training}, {"step_seconds", r.step_seconds},
                        {"speedup", r.speedup}, {"device_used_bytes", r.device_used_bytes}});
    return recs;
}

OJson num_or_null(const std::optional<double>& v) { return v ? OJson(*v) : OJson(nullptr); }

OJson finite_or_null(double v) { return std::isfinite(v) ? OJson(v) : OJson(nullptr); }

OJson cost_detail_json(const Job& job, const OperationsResult& o) {
    return {{"compute", num_or_null(o.energy.compute_cost)}, {"energy", o.energy.energy_cost},
            {"it_energy_kwh", o.energy.it_energy_kwh}, {"pue", job.spec.ops.pue}, {"price", price_json(o.price)}};
}

// Without data.tokens the job's length is unknown: job-level figures are null; the checkpoint interval is
// then Daly's optimum for this checkpoint and failure rate, which does not depend on the length.
OJson reliability_json(const OperationsResult& o) {
    const ReliabilityResult& rl = o.reliability;
    const bool len = o.has_job_length;
    auto job_level = [&](double v) { return len ? finite_or_null(v) : OJson(nullptr); };
    return {{"expected_interruptions", job_level(rl.expected_interruptions)},
            {"checkpoint_interval_seconds",
             len ? finite_or_null(rl.checkpoint_interval_seconds)
                 : finite_or_null(daly_interval_seconds(rl.checkpoint_write_seconds, rl.job_mtbf_seconds))},
            {"goodput", job_level(rl.goodput)},
            {"progresses", rl.progresses},
            {"failures_per_gpu_hour", rl.failures_per_gpu_hour},
            {"job_mtbf_seconds", finite_or_null(rl.job_mtbf_seconds)},
            {"checkpoint_bytes", rl.checkpoint_bytes},
            {"checkpoint_write_seconds", rl.checkpoint_write_seconds},
            {"checkpoint_bound_by", o.checkpoint.bound_by},
            {"restart_seconds", rl.restart_seconds},
            {"wall_seconds", job_level(rl.wall_seconds)},
            {"lost_seconds", job_level(rl.lost_seconds)},
            {"lost_cost", job_level(rl.lost_cost)}};
}

OJson power_json(const PowerDraw& pw, const DeviceSpec& dev) {
    return {{"device_w", pw.device_w}, {"node_w", pw.node_w}, {"psu_capacity_w", pw.psu_capacity_w},
            {"sustained_clock_fraction", dev.power_clock_fraction},
            {"psu_capacity_after_failure_w", pw.psu_capacity_after_failure_w},
            {"psu_failures_tolerated", pw.psu_failures_tolerated},
            {"exceeds_redundant_capacity", pw.exceeds_redundant_capacity},
            {"throttle_factor_after_psu_failure", pw.throttle_factor}, {"note", pw.note}};
}

OJson fits_with_json(const std::vector<Change>& fixes) {
    OJson out = OJson::array();
    for (const auto& f : fixes)
        out.push_back({{"what", f.what}, {"set", f.set}, {"device_used_bytes", f.memory.device_used_bytes},
                       {"fits", f.memory.fits}});
    return out;
}

}  // namespace

OJson plan_json(const Job& job, const Plan& plan) {
    const TimeResult& t = plan.time;
    const OperationsResult& o = plan.ops;
    OJson j;
    j["job"] = job.spec.file;
    j["model"] = job.model.name;
    j["system"] = job.system.name;
    j["gpus"] = job.system.total_devices();
    j["memory"] = memory_json(plan.memory);
    j["memory"]["typical_step_allocated_peak_bytes"] = std::llround(plan.typical_step_allocated_peak_bytes);
    j["memory"]["settings"] = memory_settings_json(job);
    j["limits"] = {{"max_micro_batch", plan.max_micro_batch}, {"max_seq_len", plan.max_seq_len}};
    j["step"] = step_json(t);
    j["throughput"] = throughput_json(t);
    j["bottleneck"] = {{"resource", to_string(t.bottleneck)}, {"share", t.bottleneck_share}, {"why", t.bottleneck_sentence}};
    j["weak_points"] = weak_points_json(plan.weak_points);
    j["time_to_train_seconds"] = t.time_to_train_seconds ? OJson(*t.time_to_train_seconds) : OJson(nullptr);
    j["recommendations"] = recommendations_json(plan.recommendations);
    j["energy_kwh"] = o.has_job_length ? OJson(o.energy.energy_kwh) : OJson(nullptr);
    j["cost"] = o.has_job_length ? num_or_null(o.energy.total_cost) : OJson(nullptr);
    j["cost_detail"] = cost_detail_json(job, o);
    j["storage"] = storage_json(o);
    j["reliability"] = reliability_json(o);
    j["power"] = power_json(o.power, job.system.device);
    j["fits_with"] = fits_with_json(plan.fixes);
    j["accuracy_notes"] = plan.accuracy_notes;
    j["memory_walk"] = memory_walk_json(plan.memory_walk);
    whole_numbers(j, false);
    return j;
}

std::string memory_verdict(const Job& job, const MemoryResult& m) {
    const double gib = 1073741824.0;
    const std::string who = job.system.cpu_only ? "of RAM per socket" : "per GPU";
    const double need = m.device_used_bytes;
    const std::string margin = m.margin_bytes >= 0 ? fmt::format("{:.1f} GiB to spare", m.margin_bytes / gib)
                                                   : fmt::format("over by {:.1f} GiB", -m.margin_bytes / gib);
    const std::string band = fmt::format("band {:.1f}-{:.1f} GiB", m.band_low_bytes / gib, m.band_high_bytes / gib);
    const std::string where = fmt::format("peak in the {}{}", to_string(m.peak_phase),
                                          job.spec.parallel.pp > 1 ? fmt::format(" of pipeline stage {}", m.peak_stage) : "");
    std::string out;
    switch (m.verdict) {
        case MemoryVerdict::fits:
            out = fmt::format("FITS: {:.1f} of {:.1f} GiB {} ({:.0f}% used, {}; {}, {})", need / gib, m.capacity_bytes / gib,
                              who, 100.0 * need / m.capacity_bytes, margin, band, where);
            break;
        case MemoryVerdict::tight:
            out = fmt::format("TIGHT: {:.1f} of {:.1f} GiB {} ({}); the capacity lies inside the {}: it may or may not fit ({})",
                              need / gib, m.capacity_bytes / gib, who, margin, band, where);
            break;
        case MemoryVerdict::does_not_fit:
            out = fmt::format("DOES NOT FIT: needs {:.1f} GiB {}, {} {:.1f} GiB ({}; {}, {})", need / gib, who,
                              job.system.cpu_only ? "each socket's share of the node's RAM is"
                                                  : "the " + job.system.device.name + " has",
                              m.capacity_bytes / gib, margin, band, where);
            break;
    }
    if (m.fits && !m.host_fits)
        out += fmt::format("; but the host needs {:.1f} GiB of RAM and has {:.1f} GiB", m.host_bytes / gib,
                           m.host_capacity_bytes / gib);
    return out;
}

// "59.27 (compute 56.91 + energy 2.36) at 19.66 USD per node-hour, hourly list price (AWS ..., 2024-12)".
std::string cost_sentence(const OperationsResult& o) {
    if (!o.energy.total_cost || !o.price)
        return "no price known for this system (ops.price_per_gpu_hour or ops.price_per_node_hour)";
    const NodePrice& p = *o.price;
    const std::string parts = p.includes_power ? fmt::format("{:.2f} (the price includes power)", *o.energy.total_cost)
                                               : fmt::format("{:.2f} (compute {:.2f} + energy {:.2f})", *o.energy.total_cost,
                                                             *o.energy.compute_cost, o.energy.energy_cost);
    std::string basis = p.basis;
    if (!p.comparable.empty()) basis += ": " + p.comparable;
    if (!p.date.empty()) basis += ", " + p.date;
    return fmt::format("{} at {:.2f}{} per node-hour ({})", parts, p.per_node_hour,
                       p.currency.empty() ? "" : " " + p.currency, basis);
}

namespace {

// What is planned: model, method, layout, memory settings, system, and where the figures are less sure.
std::string text_job(const Job& job, const Plan& plan) {
    const MemoryResult& m = plan.memory;
    const JobSpec& js = job.spec;
    std::string out;
    out += fmt::format("ftbound plan: {}\n", js.file);
    out += fmt::format("  model   {} ({}, {} params, {} trainable)\n", job.model.name, job.model.architecture,
                       fmt_count(m.total_params), fmt_count(m.trainable_params));
    out += fmt::format("  method  {} / {} {} / {} / micro-batch {} x {} tokens, global batch {} (accumulation {})\n",
                       to_string(js.train.method), to_string(js.train.precision),
                       js.train.weights == WeightsMode::mixed ? "mixed" : "pure", to_string(js.train.optimizer),
                       js.train.micro_batch, js.train.seq_len, js.train.global_batch, js.grad_accumulation());
    out += fmt::format("  layout  tp {} pp {} cp {}{} dp {} ep {}, ZeRO {}, recompute {}, attention {}, loss {}, framework {}\n",
                       js.parallel.tp, js.parallel.pp, js.parallel.cp,
                       js.parallel.cp > 1 ? std::string(" (") + to_string(js.parallel.cp_exchange) + ")" : std::string(),
                       js.parallel.dp, js.parallel.ep, js.parallel.zero,
                       to_string(js.train.recompute), to_string(js.train.attention), to_string(js.train.loss),
                       js.train.framework);
    const int64_t stage_blocks = (int64_t(job.model.num_layers()) + js.parallel.pp - 1) / js.parallel.pp;
    out += fmt::format("  memory  {} step, recompute {}{}, activation offload {}, fp8 weights {}{}, optimizer in backward {}\n",
                       to_string(js.train.optimizer_impl), to_string(js.train.recompute),
                       js.train.recompute == Recompute::full
                           ? fmt::format(" ({} of {} blocks per stage)",
                                         js.train.recompute_layers > 0 ? js.train.recompute_layers : stage_blocks, stage_blocks)
                           : "",
                       to_string(js.offload.activations), js.train.fp8_weights ? "yes" : "no",
                       js.train.activation_func_fp8_input_store ? ", SwiGLU input kept in fp8" : "",
                       js.train.optimizer_in_backward ? "yes" : "no");
    out += fmt::format("  system  {}: {} x {} per node{}, {} node{}\n", job.system.name, job.system.devices_per_node,
                       job.system.device.name, job.system.cpu_only ? " (one process per socket)" : "", job.system.nodes,
                       job.system.nodes > 1 ? "s" : "");
    for (const auto& n : plan.accuracy_notes) out += "  accuracy: " + n + "\n";
    out += "\n";
    return out;
}

// The memory at the peak by part, what the allocator and the runtime add, the verdict and the limits.
std::string text_memory(const Job& job, const Plan& plan) {
    const MemoryResult& m = plan.memory;
    const JobSpec& js = job.spec;
    const bool cpu = job.system.cpu_only;
    std::string out;
    TextTable t({"memory at the peak (" + std::string(to_string(m.peak_phase)) + ")", "bytes", "share"},
                {false, true, true});
    const double used = m.device_used_bytes > 0 ? m.device_used_bytes : 1;
    auto row = [&](const char* name, double b) { t.add({name, fmt_bytes(b), fmt_percent(b / used)}); };
    row("weights", m.breakdown.weights_bytes);
    row("gradients", m.breakdown.gradients_bytes);
    row("optimizer states", m.breakdown.optimizer_bytes);
    row("activations", m.breakdown.activations_bytes);
    row("logits and loss", m.breakdown.logits_bytes);
    row("temporary", m.breakdown.temporary_bytes);
    t.add_rule();
    if (cpu) {
        t.add({"live tensors at the peak", fmt_bytes(m.allocated_peak_bytes), ""});
        t.add({"held by the allocator (glibc malloc)", fmt_bytes(m.reserved_peak_bytes), ""});
        t.add({"+ PyTorch runtime and communicator buffers", fmt_bytes(m.cuda_context_bytes + m.comm_buffer_bytes), ""});
        t.add({"process RSS (ps, top)", fmt_bytes(m.device_used_bytes), fmt_percent(m.device_used_bytes / m.capacity_bytes)});
        t.add({"RAM per socket (the node's RAM / sockets)", fmt_bytes(m.capacity_bytes), ""});
    } else {
        t.add({"allocated peak (torch max_memory_allocated)", fmt_bytes(m.allocated_peak_bytes), ""});
        t.add({"reserved peak (torch max_memory_reserved)", fmt_bytes(m.reserved_peak_bytes), ""});
        t.add({"+ CUDA context and communicator buffers", fmt_bytes(m.cuda_context_bytes + m.comm_buffer_bytes), ""});
        t.add({"device used (nvidia-smi)", fmt_bytes(m.device_used_bytes), fmt_percent(m.device_used_bytes / m.capacity_bytes)});
        t.add({"capacity", fmt_bytes(m.capacity_bytes), ""});
    }
    if (m.paged_bytes > 0)
        t.add({"paged optimizer states (unified memory, not in device used)", fmt_bytes(m.paged_bytes), ""});
    if (m.host_bytes > 0)
        t.add({"host RAM per node (offload, pinned buffers)", fmt_bytes(m.host_bytes),
               m.host_capacity_bytes > 0 ? fmt_percent(m.host_bytes / m.host_capacity_bytes) : "host size unknown"});
    out += t.str("  ");
    out += "\n  " + memory_verdict(job, m) + "\n";
    if (plan.typical_step_allocated_peak_bytes < m.allocated_peak_bytes)
        out += fmt::format("  typical step: micro-batches padded to about {:.0f} tokens (avg_seq_len {:.0f}, micro-batch {}) "
                           "peak at {} of live tensors; the table sizes the longest batch the job allows ({} tokens)\n",
                           std::ceil(js.expected_padded_seq_len()), js.train.avg_seq_len, js.train.micro_batch,
                           fmt_bytes(plan.typical_step_allocated_peak_bytes), js.padded_seq_len());
    out += fmt::format("  limits: largest micro-batch that fits {}; longest sequence at micro-batch {}: {} tokens{}\n",
                       plan.max_micro_batch, js.train.micro_batch, plan.max_seq_len,
                       plan.max_seq_len > job.model.max_positions && job.model.max_positions > 0
                           ? fmt::format(" (beyond the model's {} trained positions)", job.model.max_positions)
                           : "");
    return out;
}

// The step, where it goes, the bottleneck and the weak points, and the time to train.
std::string text_time(const Job& job, const Plan& plan) {
    const MemoryResult& m = plan.memory;
    const JobSpec& js = job.spec;
    const bool cpu = job.system.cpu_only;
    const char* unit = job.system.cpu_only ? "socket" : "GPU";
    std::string out;
    const TimeResult& tm = plan.time;
    out += fmt::format("\n  step: {} per optimizer step ({} micro-batch{} per {}), {:.0f} tokens/s ({:.0f} per {}), MFU {:.1f}% (6N {:.1f}%), HFU {:.1f}%\n",
                       fmt_seconds(tm.step_seconds), js.grad_accumulation(), js.grad_accumulation() > 1 ? "es" : "", unit,
                       tm.tokens_per_second, tm.tokens_per_second_per_gpu, unit, 100 * tm.mfu, 100 * tm.mfu_6n, 100 * tm.hfu);
    TextTable st({"where the step goes", "seconds", "share", "resource"}, {false, true, true, false});
    for (const auto& p : tm.breakdown)
        st.add({p.phase, fmt_seconds(p.seconds), fmt_percent(p.seconds / tm.step_seconds), to_string(p.resource)});
    out += st.str("  ");
    out += "\n  bottleneck: " + tm.bottleneck_sentence + "\n";
    if (!plan.weak_points.empty()) {
        out += "  weak points (each resource made 2x better, re-scheduled):\n";
        for (const auto& w : plan.weak_points) {
            const char* room = cpu ? "socket's RAM" : "GPU memory";
            if (w.resource == Resource::memory_capacity && w.impact >= 0)
                out += fmt::format("    - {}: {:.0f}% of the {} left\n", w.what, 100 * w.impact, room);
            else if (w.resource == Resource::memory_capacity)   // negative headroom: say by how much it is over
                out += fmt::format("    - {}: over by {:.1f} GiB ({:.0f}% more than the {} has)\n", w.what,
                                   -w.impact * m.capacity_bytes / 1073741824.0, -100 * w.impact,
                                   cpu ? "socket's share of RAM" : "GPU");
            else
                out += fmt::format("    - {} ({}): step {:.2f}x faster\n", w.what, to_string(w.resource), w.impact);
        }
    }
    if (tm.time_to_train_seconds)
        out += fmt::format("  time to train {} tokens x {} epochs: {}\n", fmt_count(js.data.tokens), js.data.epochs,
                           fmt_seconds(*tm.time_to_train_seconds));
    return out;
}

// The changes that make the step faster, each re-planned.
std::string text_recommendations(const Job& job, const Plan& plan) {
    const char* unit = job.system.cpu_only ? "socket" : "GPU";
    std::string out;
    if (!plan.recommendations.empty()) {
        out += "\n  what to change (each re-planned; all fit):\n";
        for (const auto& r : plan.recommendations) {
            std::string sets;
            for (const auto& s : r.set) sets += " --set " + s;
            out += fmt::format("    - {}: step {} ({:.2f}x tokens/s), {} per {}{}  [{}]\n", r.what, fmt_seconds(r.step_seconds),
                               r.speedup, fmt_bytes(r.device_used_bytes), unit, r.changes_training ? ", changes the training" : "",
                               sets.substr(1));
        }
    }
    return out;
}

// Power, reliability and checkpoints, energy and cost.
std::string text_operations(const Job& job, const Plan& plan) {
    const JobSpec& js = job.spec;
    std::string out;
    const OperationsResult& o = plan.ops;
    if (job.system.device.tdp_w <= 0)   // e.g. a probed system whose power limit could not be read
        out += fmt::format("\n  power: unknown (the {} has no power figures: give tdp_w and idle_w in the system file)",
                           job.system.device.name);
    else
        out += fmt::format("\n  power: {:.0f} W per {}, {:.0f} W per node", o.power.device_w,
                           job.system.cpu_only ? "socket" : "GPU", o.power.node_w);
    if (o.power.psu_known)
        out += fmt::format(" against {:.0f} W of supplies ({:.0f} W after losing {} redundant)", o.power.psu_capacity_w,
                           o.power.psu_capacity_after_failure_w, o.power.psu_failures_tolerated);
    out += "\n";
    const DeviceSpec& dev = job.system.device;
    if (dev.power_clock_fraction < 1)   // a GPU held below its rating (spec/power_capped_peaks.hpp)
        out += fmt::format("    power limit {:.0f} W of the part's {:.0f} W rating: tensor cores sustain {:.1f}% of their "
                           "clock, matmuls and attention take {:.2f}x as long, HBM-bound kernels keep their time\n",
                           dev.tdp_w, dev.rated_tdp_w, 100 * dev.power_clock_fraction, 1 / dev.power_clock_fraction);
    if (!o.power.note.empty()) out += "    " + o.power.note + "\n";
    const ReliabilityResult& rl = o.reliability;
    if (o.has_job_length) {
        if (rl.progresses) {
            out += fmt::format("  reliability: {:.3g} expected interruptions (job MTBF {}), checkpoint {} to {} written in {} "
                               "({}-bound), restored in {}, every {}; goodput {:.1f}%, {} lost{}\n",
                               rl.expected_interruptions, fmt_seconds(rl.job_mtbf_seconds), fmt_bytes(rl.checkpoint_bytes),
                               o.checkpoint_storage.name, fmt_seconds(rl.checkpoint_write_seconds), o.checkpoint.bound_by,
                               fmt_seconds(o.restore.seconds), fmt_seconds(rl.checkpoint_interval_seconds), 100 * rl.goodput,
                               fmt_seconds(rl.lost_seconds), rl.lost_cost > 0 ? fmt::format(" (cost {:.2f})", rl.lost_cost) : "");
            if (!o.storage_note.empty()) out += "    " + o.storage_note + "\n";
        } else {
            out += "  reliability: failures arrive faster than a checkpoint and restart complete: the job cannot progress\n";
        }
        out += fmt::format("  energy: {:.1f} kWh at the meter (PUE {:.2f}); cost: {}\n", o.energy.energy_kwh, js.ops.pue,
                           cost_sentence(o));
    } else {
        out += "  job length unknown: give data.tokens for time to train, reliability over the job, energy and cost\n";
    }
    return out;
}

// What would make a job that does not fit fit, or that nothing tried does.
std::string text_fixes(const Job& job, const Plan& plan) {
    const MemoryResult& m = plan.memory;
    const bool cpu = job.system.cpu_only;
    const char* unit = job.system.cpu_only ? "socket" : "GPU";
    std::string out;
    if (!plan.fixes.empty()) {
        out += "\n  what would make it fit (each re-planned):\n";
        for (const auto& f : plan.fixes) {
            std::string sets;
            for (const auto& s : f.set) sets += " --set " + s;
            out += fmt::format("    - {}: {} per {}{}\n", f.what, fmt_bytes(f.memory.device_used_bytes), unit,
                               sets.empty() ? "" : "  [" + sets.substr(1) + "]");
        }
    } else if (!m.fits) {
        out += fmt::format("\n  no single change or combination of up to three changes tried makes it fit: {} are needed\n",
                           cpu ? "more RAM or more sockets" : "more or larger GPUs");
    }
    return out;
}

}  // namespace

std::string plan_text(const Job& job, const Plan& plan) {
    return text_job(job, plan) + text_memory(job, plan) + text_time(job, plan) + text_recommendations(job, plan) +
           text_operations(job, plan) + text_fixes(job, plan);
}

}  // namespace ftb
