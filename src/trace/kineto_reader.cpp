#include "trace/kineto_reader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ftbound/error.hpp"
#include "trace/simdjson_runtime.hpp"
#include "trace/strict_json.hpp"
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
std::int64_t id_value(std::string_view t) {
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

// Why an event's field cannot be used: the field (".ph") and the reason, or the JSON error that stopped the read.
struct FieldProblem {
    const char* field = "";
    const char* reason = nullptr;
    simdjson::error_code json = simdjson::SUCCESS;
    bool set(const char* f, const char* r) {
        field = f;
        reason = r;
        return false;
    }
};

// One value as the full parser (simdjson On-Demand) sees it: escapes decoded, anything that is not JSON refused.
class SimdjsonValue {
public:
    explicit SimdjsonValue(od::value v) : v_(v) {}
    bool string(std::string_view& out) { return !v_.get_string().get(out); }
    bool scalar(std::string_view& out) {
        out = scalar_text(v_);
        return true;
    }
    bool skip() { return true; }  // On-Demand skips whatever is not read
    // fn(key, value) for each member; a value that is not an object has none we use.
    template <class Fn>
    bool members(FieldProblem& problem, Fn&& fn) {
        od::object obj;
        if (v_.get_object().get(obj)) return true;
        for (auto member : obj) {
            od::field f;
            if ((problem.json = std::move(member).get(f))) return false;
            SimdjsonValue value(f.value());
            if (!fn(key_view(f.key()), value)) return false;
        }
        return true;
    }

private:
    od::value v_;
};

// One value as the strict cursor sees it (the fast path; strict_json.hpp). A false leaves the cursor stopped
// (unusual or short input) or a FieldProblem set; either way the caller hands the event to the full parser.
class StrictValue {
public:
    explicit StrictValue(StrictJsonCursor& cursor) : c_(cursor) {}
    bool string(std::string_view& out) { return c_.string(out); }
    bool scalar(std::string_view& out) { return c_.scalar(out); }
    bool skip() { return c_.skip_value(); }
    template <class Fn>
    bool members(FieldProblem&, Fn&& fn) {
        if (c_.peek() != '{') return c_.skip_value();
        return c_.object([&](std::string_view key) { return fn(key, *this); });
    }

private:
    StrictJsonCursor& c_;
};

// Host ops, flows and spans need nothing from args; skipping them saves most parse time.
bool args_used(Category c) { return c != Category::host_op && c != Category::flow && c != Category::profiler_span; }

template <class Value>
bool read_time(Value& v, std::optional<std::int64_t>& out, FieldProblem& problem, const char* field,
               const char* reason) {
    std::string_view text;
    if (!v.scalar(text)) return false;
    out = microseconds_text_to_ns(text);
    return out ? true : problem.set(field, reason);
}

template <class Value>
bool read_id(Value& v, std::int64_t& out) {
    std::string_view text;
    if (!v.scalar(text)) return false;
    out = id_value(text);
    return true;
}

template <class Value>
bool read_integer(Value& v, std::int64_t& out) {
    std::string_view text;
    if (!v.scalar(text)) return false;
    if (auto n = integer_text(text)) out = *n;
    return true;
}

template <class Value>
bool read_event_args(Value& v, EventFields& e, FieldProblem& problem) {
    return v.members(problem, [&](std::string_view ak, Value& av) {
        // By length first: a kernel's args hold a dozen keys, and most match none of these.
        switch (ak.size()) {
            case 3:
                if (ak == "Seq" || ak == "seq") return read_integer(av, e.seq);
                break;
            case 5:
                if (ak == "bytes") return read_integer(av, e.bytes);
                break;
            case 6:
                if (ak == "device") return read_integer(av, e.device);
                if (ak == "stream") return read_integer(av, e.stream);
                break;
            case 9:
                if (ak == "Device Id") return read_integer(av, e.device);
                break;
            case 11:
                if (ak == "correlation") return read_integer(av, e.correlation);
                if (ak == "Device Type") return read_integer(av, e.mem_device_type);
                break;
            case 15:
                if (ak == "Collective name") e.collective_arg = true;
                else if (ak == "Total Allocated") return read_integer(av, e.mem_total_allocated);
                break;
            default:
                break;
        }
        return av.skip();
    });
}

// One member of an event object into EventFields; the same rules for both parsers. False: stop (see Value).
template <class Value>
bool read_event_field(std::string_view k, Value& v, EventFields& e, FieldProblem& problem) {
    std::string_view text;
    switch (k.empty() ? 0 : k[0]) {
        case 'p':
            if (k == "ph") {
                if (!v.string(text)) return problem.set(".ph", "must be a string");
                e.ph = text.empty() ? 0 : text[0];
                return true;
            }
            if (k == "pid") return read_id(v, e.pid);
            break;
        case 'c':
            if (k == "cat") {
                if (!v.string(text)) return problem.set(".cat", "must be a string");
                e.category = classify_category(text);
                return true;
            }
            break;
        case 'n':
            if (k == "name") return v.string(e.name) || problem.set(".name", "must be a string");
            break;
        case 't':
            if (k == "ts") return read_time(v, e.ts_ns, problem, ".ts", "not a time in microseconds");
            if (k == "tid") return read_id(v, e.tid);
            break;
        case 'd':
            if (k == "dur") return read_time(v, e.dur_ns, problem, ".dur", "not a duration in microseconds");
            break;
        case 'i':
            if (k == "id") return read_integer(v, e.flow_id);
            break;
        case 'a':
            if (k == "args" && args_used(e.category)) return read_event_args(v, e, problem);
            break;
        default:
            break;
    }
    return v.skip();
}

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

    // Room for `n` more bytes after the kept ones: drops what is processed (keeping the element being captured).
    char* make_room(std::size_t n) {
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
        return buffer.data() + size;
    }
    // `n` bytes written at make_room's pointer are now input; the padding after them is blank.
    void added(std::size_t n) {
        size += n;
        std::memset(buffer.data() + size, ' ', simdjson::SIMDJSON_PADDING);
        tables.json_bytes_read += n;
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
    bool read_simple_event(const char* begin, const char* end, const char*& after);
    void handle_event(const char* begin, std::size_t length);
    void add_event(const EventFields& e);
    void add_complete_event(const EventFields& e);
    void add_gpu_op(const EventFields& e, std::int64_t start, std::int64_t end);
    void add_host_op(const EventFields& e, std::int64_t start, std::int64_t end);
    void add_flow_end(const EventFields& e);
    void add_memory_event(const EventFields& e);
    // What a GPU op's name says, worked out once per distinct name (a trace repeats few names many times).
    struct NameTraits {
        bool collective = false;  // an NCCL/RCCL kernel
        CopyDirection direction = CopyDirection::none;
        bool pageable = false;
    };
    std::vector<NameTraits> name_traits;  // by name id
    std::uint32_t intern(std::string_view name) {
        auto it = name_ids.find(name);
        if (it != name_ids.end()) return it->second;
        auto id = static_cast<std::uint32_t>(tables.names.size());
        tables.names.emplace_back(name);
        name_ids.emplace(std::string(name), id);
        name_traits.push_back({contains_nocase(name, "nccl") || contains_nocase(name, "rccl"), copy_direction(name),
                               name.find("Pageable") != std::string_view::npos});
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
    const char* const data = buffer.data();
    char c = data[pos];
    while (is_space(c) || c == ',') {
        if (++pos == size) return;
        c = data[pos];
    }
    if (c == ']') {
        ++pos;
        mode = bare_array ? Mode::done : Mode::object_key_or_end;
        return;
    }
    if (c != '{')
        fail(event_field(), "an event must be a JSON object, found '" + std::string(1, c) + "' at byte " +
                                std::to_string(offset()));
    const char* after = nullptr;
    if (read_simple_event(data + pos, data + size, after)) {
        pos = static_cast<std::size_t>(after - data);
        return;
    }
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
    if (error) fail(key, std::string("malformed JSON: ") + simdjson_error_text(error));
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

// The fast path: an event of the common shape (strict_json.hpp), read in the one pass that finds its end.
// False when it is not of that shape or does not end within [begin, end): then the scanner captures it whole
// and handle_event reads it with the full parser, which also words any error.
bool KinetoReader::State::read_simple_event(const char* begin, const char* end, const char*& after) {
    StrictJsonCursor cursor(begin, end);
    StrictValue value(cursor);
    EventFields e;
    FieldProblem problem;
    if (!cursor.object([&](std::string_view k) { return read_event_field(k, value, e, problem); })) return false;
    after = cursor.position();
    add_event(e);
    return true;
}

// One event with the full parser: its fields are read into EventFields, then the parser for its kind adds it.
void KinetoReader::State::handle_event(const char* begin, std::size_t length) {
    od::document doc;
    auto error = event_parser.iterate(begin, length, length + simdjson::SIMDJSON_PADDING).get(doc);
    od::object obj;
    if (!error) error = doc.get_object().get(obj);
    if (error) fail(event_field(), std::string("malformed JSON: ") + simdjson_error_text(error));
    EventFields e;
    FieldProblem problem;
    for (auto field_result : obj) {
        od::field field;
        if ((problem.json = std::move(field_result).get(field))) break;
        SimdjsonValue value(field.value());
        if (!read_event_field(key_view(field.key()), value, e, problem)) break;
    }
    if (problem.json) fail(event_field(), std::string("malformed JSON: ") + simdjson_error_text(problem.json));
    if (problem.reason) fail(event_field() + problem.field, problem.reason);
    add_event(e);
}

void KinetoReader::State::add_event(const EventFields& e) {
    ++tables.events_read;
    if (e.ph == 'X') add_complete_event(e);
    else if ((e.ph == 'f' || e.ph == 't') && e.category == Category::flow) add_flow_end(e);
    else if (e.ph == 's' && e.category == Category::flow) ++tables.flow_starts;
    else if ((e.ph == 'i' || e.ph == 'I') && e.name == "[memory]") add_memory_event(e);
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
    const NameTraits& traits = name_traits[op.name_id];
    if (e.category == Category::kernel) {
        op.kind = GpuOpKind::kernel;
        op.is_communication = e.collective_arg || traits.collective;
    } else {
        op.kind = e.category == Category::memcpy ? GpuOpKind::memcpy : GpuOpKind::memset;
        op.bytes = e.bytes > 0 ? static_cast<std::uint64_t>(e.bytes) : 0;
        if (e.category == Category::memcpy) {
            op.direction = traits.direction;
            op.pageable = traits.pageable;
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
    require_simdjson();   // before the first parse, whose set-up cannot report a missing library
    state_->source = std::move(source);
    state_->buffer.resize(1 << 16);
    std::memset(state_->buffer.data(), ' ', state_->buffer.size());
}

KinetoReader::~KinetoReader() = default;

void KinetoReader::feed(const char* data, std::size_t size) {
    std::memcpy(reserve(size), data, size);
    commit(size);
}

char* KinetoReader::reserve(std::size_t size) {
    FTB_ASSERT(!state_->failed);
    return state_->make_room(size);
}

void KinetoReader::commit(std::size_t size) {
    FTB_ASSERT(!state_->failed);
    state_->added(size);
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
