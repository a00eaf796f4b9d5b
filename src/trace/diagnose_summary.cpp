#include "trace/diagnose_summary.hpp"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "ftbound/error.hpp"
#include "trace/simdjson_runtime.hpp"

namespace ftb::trace {
namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

constexpr int kSummaryVersion = 1;
constexpr const char* kMarker = "ftbound_diagnose_summary";

json fractions_json(const GpuTimeFractions& g) {
    return {{"compute", g.compute}, {"communication", g.communication}, {"memcpy", g.memcpy}, {"idle", g.idle}};
}

json analysis_json(const RankAnalysis& r) {
    json kernels = json::array();
    for (const auto& k : r.top_kernels) kernels.push_back({k.name, k.count, k.seconds, k.share});
    json steps = json::array();
    for (const auto& s : r.steps) steps.push_back({s.number, s.seconds});
    // Columns, not objects: a rank can launch tens of thousands of collectives.
    json step = json::array(), seq = json::array(), start = json::array();
    for (const auto& c : r.collectives) {
        step.push_back(c.step);
        seq.push_back(c.sequence);
        start.push_back(c.start_ns);
    }
    const auto& m = r.memcpy;
    return {{"rank", r.rank}, {"device", r.device}, {"window_start_ns", r.window_start_ns},
            {"window_end_ns", r.window_end_ns}, {"window_from_steps", r.window_from_steps},
            {"window_seconds", r.window_seconds}, {"gpu", fractions_json(r.gpu)},
            {"idle", {r.idle.host_wait, r.idle.kernel_wait, r.idle.other, r.idle.host_wait_in_dataloader}},
            {"memcpy", {m.h2d_bytes, m.d2h_bytes, m.d2d_bytes, m.other_bytes, m.h2d_ns, m.d2h_ns, m.d2d_ns, m.pageable_bytes}},
            {"communication_seconds", r.communication_seconds}, {"comm_compute_overlap", r.comm_compute_overlap},
            {"kernel_seconds", r.kernel_seconds}, {"kernels", kernels}, {"steps", steps},
            {"peak_allocated_bytes", r.peak_allocated_bytes ? json(*r.peak_allocated_bytes) : json(nullptr)},
            {"collectives", {{"step", step}, {"sequence", seq}, {"start_ns", start}}},
            {"launches_joined", r.launches_joined}, {"launches_missing", r.launches_missing}, {"warnings", r.warnings}};
}

json facts_json(const TraceTables& t) {
    json devices = json::array();
    for (const auto& d : t.devices) devices.push_back({d.id, d.name, d.total_memory_bytes});
    return {{"world_size", t.world_size ? json(*t.world_size) : json(nullptr)}, {"devices", devices},
            {"events_read", t.events_read}, {"json_bytes_read", t.json_bytes_read}, {"complete", t.complete},
            {"stop_reason", t.stop_reason}, {"fraction_read", t.fraction_read}};
}

// Reads fields of a summary document, naming the file and the field in every error.
class Fields {
public:
    explicit Fields(std::string path) : path_(std::move(path)) {}

    // `shown`: the field's dotted path in errors, where it is not `key` itself.
    dom::element at(dom::element e, const char* key, const char* shown = nullptr) const {
        dom::element v;
        if (e[key].get(v)) fail(shown ? shown : key, "missing");
        return v;
    }
    dom::array array(dom::element e, const char* key, const char* shown = nullptr) const {
        return as_array(at(e, key, shown), shown ? shown : key);
    }
    dom::array as_array(dom::element e, const char* key) const {
        dom::array a;
        if (e.get_array().get(a)) fail(key, "is not a list");
        return a;
    }
    double number(dom::element e, const char* key) const { return as_number(at(e, key), key); }
    double as_number(dom::element e, const char* key) const {
        double d = 0;
        if (e.get_double().get(d)) fail(key, "is not a number");
        return d;
    }
    std::int64_t integer(dom::element e, const char* key) const { return as_integer(at(e, key), key); }
    std::int64_t as_integer(dom::element e, const char* key) const {
        std::int64_t i = 0;
        if (e.get_int64().get(i)) fail(key, "is not an integer");
        return i;
    }
    std::uint64_t as_count(dom::element e, const char* key) const {
        std::uint64_t i = 0;
        if (e.get_uint64().get(i)) fail(key, "is not a non-negative integer");
        return i;
    }
    std::string text(dom::element e, const char* key) const { return as_text(at(e, key), key); }
    std::string as_text(dom::element e, const char* key) const {
        std::string_view s;
        if (e.get_string().get(s)) fail(key, "is not a string");
        return std::string(s);
    }
    bool flag(dom::element e, const char* key) const {
        bool b = false;
        if (at(e, key).get_bool().get(b)) fail(key, "is not true or false");
        return b;
    }
    // A fixed-length list: [a, b, ...] read element by element.
    std::vector<dom::element> tuple(dom::element e, const char* key, size_t n) const {
        std::vector<dom::element> out;
        for (dom::element x : as_array(e, key)) out.push_back(x);
        if (out.size() != n) fail(key, "should hold " + std::to_string(n) + " values");
        return out;
    }
    [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
        throw InputError(path_, field, reason + " (is this a summary written by `ftbound diagnose --summary-out`?)");
    }

private:
    std::string path_;
};

void read_kernels(const Fields& f, dom::element a, RankAnalysis& r) {
    for (dom::element k : f.array(a, "kernels")) {
        const auto v = f.tuple(k, "kernels", 4);
        r.top_kernels.push_back({f.as_text(v[0], "kernels"), f.as_integer(v[1], "kernels"), f.as_number(v[2], "kernels"),
                                 f.as_number(v[3], "kernels")});
    }
}

void read_collectives(const Fields& f, dom::element a, RankAnalysis& r) {
    const dom::element c = f.at(a, "collectives");
    const dom::array step = f.array(c, "step", "collectives.step"), seq = f.array(c, "sequence", "collectives.sequence"),
                     start = f.array(c, "start_ns", "collectives.start_ns");
    if (step.size() != seq.size() || step.size() != start.size()) f.fail("collectives", "columns of different lengths");
    auto is = seq.begin(), it = start.begin();
    for (dom::element s : step) {
        r.collectives.push_back({f.as_integer(s, "collectives.step"), f.as_integer(*is, "collectives.sequence"),
                                 f.as_integer(*it, "collectives.start_ns")});
        ++is;
        ++it;
    }
}

RankAnalysis read_analysis(const Fields& f, dom::element a) {
    RankAnalysis r;
    r.rank = f.integer(a, "rank");
    r.device = static_cast<std::int32_t>(f.integer(a, "device"));
    r.window_start_ns = f.integer(a, "window_start_ns");
    r.window_end_ns = f.integer(a, "window_end_ns");
    r.window_from_steps = f.flag(a, "window_from_steps");
    r.window_seconds = f.number(a, "window_seconds");
    const dom::element g = f.at(a, "gpu");
    r.gpu = {f.number(g, "compute"), f.number(g, "communication"), f.number(g, "memcpy"), f.number(g, "idle")};
    const auto idle = f.tuple(f.at(a, "idle"), "idle", 4);
    r.idle = {f.as_number(idle[0], "idle"), f.as_number(idle[1], "idle"), f.as_number(idle[2], "idle"), f.as_number(idle[3], "idle")};
    const auto m = f.tuple(f.at(a, "memcpy"), "memcpy", 8);
    r.memcpy = {f.as_count(m[0], "memcpy"), f.as_count(m[1], "memcpy"), f.as_count(m[2], "memcpy"), f.as_count(m[3], "memcpy"),
                f.as_integer(m[4], "memcpy"), f.as_integer(m[5], "memcpy"), f.as_integer(m[6], "memcpy"), f.as_count(m[7], "memcpy")};
    r.communication_seconds = f.number(a, "communication_seconds");
    r.comm_compute_overlap = f.number(a, "comm_compute_overlap");
    r.kernel_seconds = f.number(a, "kernel_seconds");
    read_kernels(f, a, r);
    for (dom::element s : f.array(a, "steps")) {
        const auto v = f.tuple(s, "steps", 2);
        r.steps.push_back({f.as_integer(v[0], "steps"), f.as_number(v[1], "steps")});
    }
    if (const dom::element p = f.at(a, "peak_allocated_bytes"); !p.is_null()) r.peak_allocated_bytes = f.as_integer(p, "peak_allocated_bytes");
    read_collectives(f, a, r);
    r.launches_joined = f.integer(a, "launches_joined");
    r.launches_missing = f.integer(a, "launches_missing");
    for (dom::element w : f.array(a, "warnings")) r.warnings.push_back(f.as_text(w, "warnings"));
    return r;
}

TraceTables read_facts(const Fields& f, dom::element t) {
    TraceTables facts;
    if (const dom::element w = f.at(t, "world_size"); !w.is_null()) facts.world_size = f.as_integer(w, "trace.world_size");
    for (dom::element d : f.array(t, "devices")) {
        const auto v = f.tuple(d, "trace.devices", 3);
        facts.devices.push_back({f.as_integer(v[0], "trace.devices"), f.as_text(v[1], "trace.devices"), f.as_integer(v[2], "trace.devices")});
    }
    facts.events_read = f.as_count(f.at(t, "events_read"), "trace.events_read");
    facts.json_bytes_read = f.as_count(f.at(t, "json_bytes_read"), "trace.json_bytes_read");
    facts.complete = f.flag(t, "complete");
    facts.stop_reason = f.text(t, "stop_reason");
    facts.fraction_read = f.number(t, "fraction_read");
    return facts;
}

}  // namespace

std::string summary_json(const std::string& trace_file, const TraceTables& t, const RankAnalysis& r) {
    return json{{kMarker, kSummaryVersion}, {"trace_file", trace_file}, {"trace", facts_json(t)}, {"analysis", analysis_json(r)}}.dump() + "\n";
}

RankSummary read_summary(const std::string& path) {
    require_simdjson();
    static thread_local dom::parser parser;  // reused: its buffers grow to the largest summary once
    dom::element doc;
    if (auto error = parser.load(path).get(doc))
        throw InputError(path, "", std::string("cannot read a diagnose summary: ") + simdjson_error_text(error));
    const Fields f(path);
    std::int64_t version = 0;
    if (doc[kMarker].get_int64().get(version))
        f.fail(kMarker, "missing");
    if (version != kSummaryVersion)
        f.fail(kMarker, "version " + std::to_string(version) + ", this ftbound reads version " + std::to_string(kSummaryVersion));
    RankSummary s;
    s.trace_file = f.text(doc, "trace_file");
    s.facts = read_facts(f, f.at(doc, "trace"));
    s.analysis = read_analysis(f, f.at(doc, "analysis"));
    s.facts.rank = s.analysis.rank;
    return s;
}

std::vector<RankSummary> read_summaries(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (!fs::is_directory(p, ec)) {
            files.push_back(p);
            continue;
        }
        std::vector<std::string> in_dir;
        for (const auto& e : fs::directory_iterator(p, ec))
            if (e.path().extension() == ".json") in_dir.push_back(e.path().string());
        if (in_dir.empty()) throw InputError(p, "", "a folder of diagnose summaries with no .json file in it");
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
    }
    std::vector<RankSummary> out;
    out.reserve(files.size());
    for (const auto& f : files) out.push_back(read_summary(f));
    std::stable_sort(out.begin(), out.end(), [](const RankSummary& a, const RankSummary& b) { return a.analysis.rank < b.analysis.rank; });
    return out;
}

}  // namespace ftb::trace
