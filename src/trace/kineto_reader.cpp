#include "trace/kineto_reader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ftbound/error.hpp"
#include "trace/time_units.hpp"

namespace ftb::trace {

namespace {

namespace od = simdjson::ondemand;

enum class Mode { start, object_key_or_end, key, colon, value_start, value, events, event, done };

enum class Category { other, kernel, memcpy, memset, runtime, host_op, flow, profiler_span };

Category classify_category(std::string_view cat) {
    switch (cat.size()) {
        case 6:
            if (cat == "kernel" || cat == "Kernel") return Category::kernel;
            if (cat == "cpu_op" || cat == "Memcpy" || cat == "Memset")
                return cat == "cpu_op" ? Category::host_op : cat == "Memcpy" ? Category::memcpy : Category::memset;
            break;
        case 4:
            if (cat == "ac2g") return Category::flow;
            break;
        case 5:
            if (cat == "Trace") return Category::profiler_span;
            break;
        case 7:
            if (cat == "Runtime") return Category::runtime;
            break;
        case 8:
            if (cat == "Operator") return Category::host_op;
            break;
        case 10:
            if (cat == "gpu_memcpy") return Category::memcpy;
            if (cat == "gpu_memset") return Category::memset;
            break;
        case 11:
            if (cat == "cuda_driver") return Category::runtime;
            break;
        case 12:
            if (cat == "cuda_runtime") return Category::runtime;
            break;
        case 15:
            if (cat == "user_annotation" || cat == "python_function") return Category::host_op;
            break;
        case 16:
            if (cat == "async_cpu_to_gpu") return Category::flow;
            break;
        default:
            break;
    }
    return Category::other;
}

bool contains_nocase(std::string_view hay, std::string_view needle_lower) {
    if (needle_lower.size() > hay.size()) return false;
    for (std::size_t i = 0; i + needle_lower.size() <= hay.size(); ++i) {
        std::size_t j = 0;
        while (j < needle_lower.size()) {
            char c = hay[i + j];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != needle_lower[j]) break;
            ++j;
        }
        if (j == needle_lower.size()) return true;
    }
    return false;
}

CopyDirection copy_direction(std::string_view name) {
    if (name.find("HtoD") != std::string_view::npos) return CopyDirection::h2d;
    if (name.find("DtoH") != std::string_view::npos) return CopyDirection::d2h;
    if (name.find("DtoD") != std::string_view::npos) return CopyDirection::d2d;
    if (name.find("HtoH") != std::string_view::npos) return CopyDirection::h2h;
    if (name.find("PtoP") != std::string_view::npos) return CopyDirection::p2p;
    return CopyDirection{};
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
        s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
        s.remove_prefix(1);
    return s;
}

// The raw text of a scalar, without surrounding quotes when it is a string (some writers quote numbers).
std::string_view scalar_text(od::value& v) {
    std::string_view raw = trim(v.raw_json_token());
    if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') raw = raw.substr(1, raw.size() - 2);
    return raw;
}

// A pid/tid: an integer, a string holding one, or a legacy "stream 7" label. -1 when none of those.
std::int64_t id_value(od::value& v) {
    std::string_view t = scalar_text(v);
    if (auto n = integer_text(t)) return *n;
    constexpr std::string_view kStream = "stream ";
    if (t.substr(0, kStream.size()) == kStream) {
        std::string_view rest = trim(t.substr(kStream.size()));
        if (auto n = integer_text(rest)) return *n;
    }
    return -1;
}

// Keys of Kineto events never hold escapes; an escaped key simply matches nothing we look for.
std::string_view key_view(const od::raw_json_string& key) {
    const char* s = key.raw();
    std::size_t n = 0;
    while (s[n] != '"' && s[n] != '\\') ++n;
    if (s[n] == '\\') return {};
    return {s, n};
}

// What an event says that any table needs; absent fields stay -1 / empty. `name` points into the parser's
// buffer: valid while that event is handled.
struct EventFields {
    char ph = 0;
    Category category = Category::other;
    std::string_view name;
    std::int64_t pid = -1, tid = -1, flow_id = -1;
    std::optional<std::int64_t> ts_ns, dur_ns;
    std::int64_t correlation = -1, device = -1, stream = -1, bytes = -1, seq = -1;
    std::int64_t mem_total_allocated = -1, mem_device_type = -1;
    bool collective_arg = false;
};

struct TransparentHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace

struct KinetoReader::State {
    std::string source;
    std::vector<char> buffer;  // holds `size` bytes followed by SIMDJSON_PADDING readable bytes
    std::size_t size = 0;
    std::size_t pos = 0;
    std::uint64_t discarded = 0;  // bytes dropped from the front of `buffer` so far

    Mode mode = Mode::start;
    bool bare_array = false;
    bool saw_trace_events = false;
    std::string key;
    bool in_string = false;
    bool escape = false;
    std::int64_t depth = 0;
    bool capture = false;
    std::size_t element_start = 0;
    bool failed = false;

    od::parser event_parser;
    od::parser meta_parser;
    std::unordered_map<std::string, std::uint32_t, TransparentHash, std::equal_to<>> name_ids;
    TraceTables tables;

    [[noreturn]] void fail(const std::string& field, const std::string& reason) {
        failed = true;
        throw InputError(source, field, reason);
    }
    std::string event_field() const { return "traceEvents[" + std::to_string(tables.events_read) + "]"; }
    std::uint64_t offset() const { return discarded + pos; }

    void append(const char* data, std::size_t n) {
        // Drop what is processed; keep the element being captured.
        std::size_t keep = capture ? element_start : pos;
        if (keep > 0) {
            std::memmove(buffer.data(), buffer.data() + keep, size - keep);
            size -= keep;
            pos -= keep;
            if (capture) element_start -= keep;
            discarded += keep;
        }
        if (buffer.size() < size + n + simdjson::SIMDJSON_PADDING)
            buffer.resize(std::max(buffer.size() * 2, size + n + simdjson::SIMDJSON_PADDING));
        std::memcpy(buffer.data() + size, data, n);
        size += n;
        std::memset(buffer.data() + size, ' ', simdjson::SIMDJSON_PADDING);
    }

    static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

    // The scanner: one step of the mode the document is in.
    void scan();
    void scan_document_start();
    void scan_object_key_or_end();
    void scan_key();
    void scan_colon();
    void scan_value_start();
    void scan_top_value();
    void scan_events();
    void scan_event();
    void scan_done();

    // Top-level values kept beside the events.
    void handle_top_value(const char* begin, std::size_t length);
    void read_base_time(od::document& doc);
    void read_distributed_info(od::document& doc);
    void read_device_properties(od::document& doc);

    // One event of traceEvents, and the parser of each event kind.
    void handle_event(const char* begin, std::size_t length);
    simdjson::error_code read_event_field(std::string_view key, od::value value, EventFields& e);
    simdjson::error_code read_event_args(od::value value, EventFields& e);
    void add_complete_event(const EventFields& e);
    void add_gpu_op(const EventFields& e, std::int64_t start, std::int64_t end);
    void add_host_op(const EventFields& e, std::int64_t start, std::int64_t end);
    void add_flow_end(const EventFields& e);
    void add_memory_event(const EventFields& e);
    std::uint32_t intern(std::string_view name) {
        auto it = name_ids.find(name);
        if (it != name_ids.end()) return it->second;
        auto id = static_cast<std::uint32_t>(tables.names.size());
        tables.names.emplace_back(name);
        name_ids.emplace(std::string(name), id);
        return id;
    }
};

void KinetoReader::State::scan() {
    while (pos < size) {
        switch (mode) {
            case Mode::start: scan_document_start(); break;
            case Mode::object_key_or_end: scan_object_key_or_end(); break;
            case Mode::key: scan_key(); break;
            case Mode::colon: scan_colon(); break;
            case Mode::value_start: scan_value_start(); break;
            case Mode::value: scan_top_value(); break;
            case Mode::events: scan_events(); break;
            case Mode::event: scan_event(); break;
            case Mode::done: scan_done(); break;
        }
    }
}

void KinetoReader::State::scan_document_start() {
    const char* const data = buffer.data();
    // A UTF-8 byte-order mark is tolerated before the document.
    if (discarded + pos == 0 && size >= 3 && static_cast<unsigned char>(data[0]) == 0xEF &&
        static_cast<unsigned char>(data[1]) == 0xBB && static_cast<unsigned char>(data[2]) == 0xBF) {
        pos = 3;
        return;
    }
    const char c = data[pos];
    if (is_space(c)) { ++pos; return; }
    if (c == '{') { mode = Mode::object_key_or_end; ++pos; return; }
    if (c == '[') { mode = Mode::events; bare_array = true; saw_trace_events = true; ++pos; return; }
    fail("", "not a JSON trace: it must start with '{' or '[' (byte " + std::to_string(offset()) + ")");
}

void KinetoReader::State::scan_object_key_or_end() {
    const char c = buffer[pos];
    if (is_space(c) || c == ',') { ++pos; return; }
    if (c == '}') { mode = Mode::done; ++pos; return; }
    if (c == '"') { key.clear(); escape = false; mode = Mode::key; ++pos; return; }
    fail("", "malformed JSON: expected a key at byte " + std::to_string(offset()));
}

void KinetoReader::State::scan_key() {
    const char c = buffer[pos++];
    if (escape) { escape = false; key.push_back(c); }
    else if (c == '\\') escape = true;
    else if (c == '"') mode = Mode::colon;
    else if (key.size() < 256) key.push_back(c);
}

void KinetoReader::State::scan_colon() {
    const char c = buffer[pos];
    if (is_space(c)) { ++pos; return; }
    if (c == ':') { mode = Mode::value_start; ++pos; return; }
    fail(key, "malformed JSON: expected ':' at byte " + std::to_string(offset()));
}

void KinetoReader::State::scan_value_start() {
    const char c = buffer[pos];
    if (is_space(c)) { ++pos; return; }
    if (key == "traceEvents") {
        if (c != '[') fail("traceEvents", "must be an array of events");
        saw_trace_events = true;
        mode = Mode::events;
        ++pos;
        return;
    }
    if (c == '}' || c == ',' || c == ']' || c == ':')
        fail(key, "malformed JSON: missing value at byte " + std::to_string(offset()));
    capture = key == "baseTimeNanoseconds" || key == "distributedInfo" || key == "deviceProperties";
    element_start = pos;
    depth = 0;
    in_string = false;
    escape = false;
    mode = Mode::value;
}

// Skips (or captures) one value of the top-level object, tracking nesting and strings.
void KinetoReader::State::scan_top_value() {
    const char* const data = buffer.data();
    bool ended = false;
    std::size_t end_at = 0;
    while (pos < size) {
        const char c = data[pos];
        if (in_string) {
            ++pos;
            if (escape) escape = false;
            else if (c == '\\') escape = true;
            else if (c == '"') {
                in_string = false;
                if (depth == 0) { ended = true; end_at = pos; break; }
            }
            continue;
        }
        if (c == '"') { in_string = true; ++pos; continue; }
        if (c == '{' || c == '[') { ++depth; ++pos; continue; }
        if (c == '}' || c == ']') {
            if (depth == 0) { ended = true; end_at = pos; break; }  // the enclosing object's end
            ++pos;
            if (--depth == 0) { ended = true; end_at = pos; break; }
            continue;
        }
        if (c == ',' && depth == 0) { ended = true; end_at = pos; break; }
        ++pos;
    }
    if (!ended) return;  // need more input
    if (capture) {
        handle_top_value(data + element_start, end_at - element_start);
        capture = false;
    }
    mode = Mode::object_key_or_end;
}

void KinetoReader::State::scan_events() {
    const char c = buffer[pos];
    if (is_space(c) || c == ',') { ++pos; return; }
    if (c == ']') {
        ++pos;
        mode = bare_array ? Mode::done : Mode::object_key_or_end;
        return;
    }
    if (c != '{')
        fail(event_field(), "an event must be a JSON object, found '" + std::string(1, c) + "' at byte " +
                                std::to_string(offset()));
    capture = true;
    element_start = pos;
    depth = 1;
    in_string = false;
    escape = false;
    ++pos;
    mode = Mode::event;
}

// The hot loop: finds the end of the event object that starts at element_start, then hands it over.
void KinetoReader::State::scan_event() {
    char* const data = buffer.data();
    const char* p = data + pos;
    const char* const end = data + size;
    bool closed = false;
    // Every byte of this event from element_start is in the buffer, so an escaped quote is recognised by the
    // run of backslashes before it (odd: escaped).
    const char* const element = data + element_start;
    while (p < end) {
        if (in_string) {
            const void* q = std::memchr(p, '"', static_cast<std::size_t>(end - p));
            if (!q) { p = end; break; }
            const char* quote = static_cast<const char*>(q);
            std::size_t backslashes = 0;
            for (const char* b = quote - 1; b >= element && *b == '\\'; --b) ++backslashes;
            p = quote + 1;
            if (backslashes % 2 == 0) in_string = false;
            continue;
        }
        const char c = *p++;
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') {
            if (--depth == 0) { closed = true; break; }
        }
    }
    pos = static_cast<std::size_t>(p - data);
    if (!closed) return;
    handle_event(data + element_start, pos - element_start);
    capture = false;
    mode = Mode::events;
}

void KinetoReader::State::scan_done() {
    if (is_space(buffer[pos])) { ++pos; return; }
    fail("", "malformed JSON: unexpected data after the end of the document at byte " + std::to_string(offset()));
}

void KinetoReader::State::handle_top_value(const char* begin, std::size_t length) {
    od::document doc;
    auto error = meta_parser.iterate(begin, length, length + simdjson::SIMDJSON_PADDING).get(doc);
    if (error) fail(key, std::string("malformed JSON: ") + simdjson::error_message(error));
    if (key == "baseTimeNanoseconds") read_base_time(doc);
    else if (key == "distributedInfo") read_distributed_info(doc);
    else if (key == "deviceProperties") read_device_properties(doc);
}

void KinetoReader::State::read_base_time(od::document& doc) {
    std::string_view raw;
    if (doc.raw_json_token().get(raw)) fail(key, "malformed number");
    raw = trim(raw);
    auto n = integer_text(raw);
    if (!n) fail(key, "must be an integer number of nanoseconds, found " + std::string(raw.substr(0, 40)));
    tables.base_time_ns = *n;
}

void KinetoReader::State::read_distributed_info(od::document& doc) {
    od::object obj;
    if (doc.get_object().get(obj)) return;  // not an object: the trace is still usable without it
    for (auto field_result : obj) {
        od::field field;
        if (std::move(field_result).get(field)) fail(key, "malformed JSON");
        std::string_view k = key_view(field.key());
        od::value v = field.value();
        if (k == "rank") {
            if (auto n = integer_text(scalar_text(v))) tables.rank = *n;
        } else if (k == "world_size") {
            if (auto n = integer_text(scalar_text(v))) tables.world_size = *n;
        } else if (k == "backend") {
            std::string_view s;
            if (!v.get_string().get(s)) tables.backend = std::string(s);
        }
    }
}

void KinetoReader::State::read_device_properties(od::document& doc) {
    od::array arr;
    if (doc.get_array().get(arr)) return;
    for (auto item_result : arr) {
        od::object obj;
        if (item_result.get_object().get(obj)) continue;
        DeviceInfo info;
        for (auto field_result : obj) {
            od::field field;
            if (std::move(field_result).get(field)) fail(key, "malformed JSON");
            std::string_view k = key_view(field.key());
            od::value v = field.value();
            if (k == "id") {
                if (auto n = integer_text(scalar_text(v))) info.id = *n;
            } else if (k == "name") {
                std::string_view s;
                if (!v.get_string().get(s)) info.name = std::string(s);
            } else if (k == "totalGlobalMem") {
                if (auto n = integer_text(scalar_text(v))) info.total_memory_bytes = *n;
            }
        }
        tables.devices.push_back(std::move(info));
    }
}

// One event: its fields are read into EventFields, then the parser for its phase adds it to the tables.
void KinetoReader::State::handle_event(const char* begin, std::size_t length) {
    od::document doc;
    auto error = event_parser.iterate(begin, length, length + simdjson::SIMDJSON_PADDING).get(doc);
    od::object obj;
    if (!error) error = doc.get_object().get(obj);
    if (error) fail(event_field(), std::string("malformed JSON: ") + simdjson::error_message(error));
    EventFields e;
    for (auto field_result : obj) {
        od::field field;
        if ((error = std::move(field_result).get(field))) break;
        if ((error = read_event_field(key_view(field.key()), field.value(), e))) break;
    }
    if (error) fail(event_field(), std::string("malformed JSON: ") + simdjson::error_message(error));
    ++tables.events_read;

    if (e.ph == 'X') add_complete_event(e);
    else if ((e.ph == 'f' || e.ph == 't') && e.category == Category::flow) add_flow_end(e);
    else if (e.ph == 's' && e.category == Category::flow) ++tables.flow_starts;
    else if ((e.ph == 'i' || e.ph == 'I') && e.name == "[memory]") add_memory_event(e);
}

simdjson::error_code KinetoReader::State::read_event_field(std::string_view k, od::value v, EventFields& e) {
    if (k.empty()) return simdjson::SUCCESS;
    switch (k[0]) {
        case 'p':
            if (k == "ph") {
                std::string_view s;
                if (v.get_string().get(s)) fail(event_field() + ".ph", "must be a string");
                e.ph = s.empty() ? 0 : s[0];
            } else if (k == "pid") {
                e.pid = id_value(v);
            }
            break;
        case 'c':
            if (k == "cat") {
                std::string_view s;
                if (v.get_string().get(s)) fail(event_field() + ".cat", "must be a string");
                e.category = classify_category(s);
            }
            break;
        case 'n':
            if (k == "name" && v.get_string().get(e.name)) fail(event_field() + ".name", "must be a string");
            break;
        case 't':
            if (k == "ts") {
                e.ts_ns = microseconds_text_to_ns(scalar_text(v));
                if (!e.ts_ns) fail(event_field() + ".ts", "not a time in microseconds");
            } else if (k == "tid") {
                e.tid = id_value(v);
            }
            break;
        case 'd':
            if (k == "dur") {
                e.dur_ns = microseconds_text_to_ns(scalar_text(v));
                if (!e.dur_ns) fail(event_field() + ".dur", "not a duration in microseconds");
            }
            break;
        case 'i':
            if (k == "id") {
                if (auto n = integer_text(scalar_text(v))) e.flow_id = *n;
            }
            break;
        case 'a':
            // Host ops, flows and spans need nothing from args; skipping them saves most parse time.
            if (k == "args" && e.category != Category::host_op && e.category != Category::flow &&
                e.category != Category::profiler_span)
                return read_event_args(v, e);
            break;
        default:
            break;
    }
    return simdjson::SUCCESS;
}

simdjson::error_code KinetoReader::State::read_event_args(od::value v, EventFields& e) {
    od::object args;
    if (v.get_object().get(args)) return simdjson::SUCCESS;  // args that are not an object carry nothing we use
    for (auto arg_result : args) {
        od::field arg;
        if (auto error = std::move(arg_result).get(arg)) return error;
        const std::string_view ak = key_view(arg.key());
        od::value av = arg.value();
        auto integer = [&](std::int64_t& out) {
            if (auto n = integer_text(scalar_text(av))) out = *n;
        };
        if (ak == "correlation") integer(e.correlation);
        else if (ak == "device" || ak == "Device Id") integer(e.device);
        else if (ak == "stream") integer(e.stream);
        else if (ak == "bytes") integer(e.bytes);
        else if (ak == "Collective name") e.collective_arg = true;
        else if (ak == "Seq" || ak == "seq") integer(e.seq);
        else if (ak == "Total Allocated") integer(e.mem_total_allocated);
        else if (ak == "Device Type") integer(e.mem_device_type);
    }
    return simdjson::SUCCESS;
}

// A complete ('X') event: a GPU kernel or copy, a runtime call, or a host op (profiler steps, data loading).
void KinetoReader::State::add_complete_event(const EventFields& e) {
    const std::int64_t dur = e.dur_ns.value_or(0);
    if (!e.ts_ns || dur < 0) { ++tables.events_ignored; return; }
    const std::int64_t start = *e.ts_ns, end = *e.ts_ns + dur;
    if (e.category != Category::profiler_span && e.category != Category::other) {
        tables.first_ns = std::min(tables.first_ns, start);
        tables.last_ns = std::max(tables.last_ns, end);
    }
    switch (e.category) {
        case Category::kernel:
        case Category::memcpy:
        case Category::memset: add_gpu_op(e, start, end); break;
        case Category::runtime:
            if (e.correlation >= 0)
                tables.runtime_calls.push_back(
                    {start, end, e.correlation, e.name.find("GraphLaunch") != std::string_view::npos});
            break;
        case Category::host_op: add_host_op(e, start, end); break;
        default: break;
    }
}

void KinetoReader::State::add_gpu_op(const EventFields& e, std::int64_t start, std::int64_t end) {
    GpuOp op;
    op.start_ns = start;
    op.end_ns = end;
    op.correlation = e.correlation;
    op.collective_seq = e.seq;
    op.device = static_cast<std::int32_t>(e.device >= 0 ? e.device : e.pid);
    op.stream = static_cast<std::int32_t>(e.stream >= 0 ? e.stream : e.tid);
    op.name_id = intern(e.name);
    if (e.category == Category::kernel) {
        op.kind = GpuOpKind::kernel;
        op.is_communication = e.collective_arg || contains_nocase(e.name, "nccl") || contains_nocase(e.name, "rccl");
    } else {
        op.kind = e.category == Category::memcpy ? GpuOpKind::memcpy : GpuOpKind::memset;
        op.bytes = e.bytes > 0 ? static_cast<std::uint64_t>(e.bytes) : 0;
        if (e.category == Category::memcpy) {
            op.direction = copy_direction(e.name);
            op.pageable = e.name.find("Pageable") != std::string_view::npos;
        }
    }
    tables.gpu_ops.push_back(op);
}

void KinetoReader::State::add_host_op(const EventFields& e, std::int64_t start, std::int64_t end) {
    constexpr std::string_view kStep = "ProfilerStep#";
    if (e.name.substr(0, kStep.size()) == kStep) {
        if (auto n = integer_text(e.name.substr(kStep.size()))) tables.steps.push_back({*n, start, end});
    } else if (e.name.find("DataLoader") != std::string_view::npos) {
        tables.dataloader_ranges.push_back({start, end});
    }
}

void KinetoReader::State::add_flow_end(const EventFields& e) {
    if (e.ts_ns && e.flow_id >= 0) tables.flow_ends.push_back({*e.ts_ns, e.flow_id});
}

// Kineto's memory events: Device Type 0 is the CPU (c10::DeviceType::CPU); others are accelerators.
void KinetoReader::State::add_memory_event(const EventFields& e) {
    if (e.mem_device_type > 0 && e.mem_total_allocated >= 0)
        tables.peak_allocated_bytes = std::max(tables.peak_allocated_bytes.value_or(0), e.mem_total_allocated);
}

KinetoReader::KinetoReader(std::string source) : state_(std::make_unique<State>()) {
    state_->source = std::move(source);
    state_->buffer.resize(1 << 16);
    std::memset(state_->buffer.data(), ' ', state_->buffer.size());
}

KinetoReader::~KinetoReader() = default;

void KinetoReader::feed(const char* data, std::size_t size) {
    FTB_ASSERT(!state_->failed);
    state_->append(data, size);
    state_->tables.json_bytes_read += size;
    state_->scan();
}

bool KinetoReader::at_end() const { return state_->mode == Mode::done; }

void KinetoReader::finish() {
    State& s = *state_;
    if (s.mode == Mode::start) s.fail("", "empty input: not a trace");
    if (s.mode != Mode::done) {
        std::string where = s.mode == Mode::event || s.mode == Mode::events ? "inside traceEvents" : "inside the document";
        s.fail("", "truncated JSON: the input ends " + where + " after " + std::to_string(s.tables.events_read) +
                       " events (byte " + std::to_string(s.offset()) + ")");
    }
    if (!s.saw_trace_events) s.fail("traceEvents", "missing: not a PyTorch profiler trace");
    if (s.tables.events_read == 0) s.fail("traceEvents", "holds no events");
}

TraceTables KinetoReader::take() { return std::move(state_->tables); }
const TraceTables& KinetoReader::tables() const { return state_->tables; }

}  // namespace ftb::trace
