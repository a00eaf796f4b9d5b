// Streaming reader of PyTorch profiler (Kineto) Chrome traces: bytes in, tables out. It takes the JSON
// in chunks of any size; a small scanner finds each element of the `traceEvents` array (tracking strings,
// escapes and nesting) and hands that one event to simdjson On-Demand, so memory holds one event and the
// kept tables, never the whole document. Accepts `{"traceEvents": [...], ...}` and a bare `[...]` of events,
// new-style traces (relative fractional-µs times + `baseTimeNanoseconds`) and legacy ones (absolute integer
// µs, `Kernel`/`Memcpy`/`Runtime`/`Operator` categories, `external id`, tids like "stream 7").
// It does no I/O: the file/gzip adapter is trace_file.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "trace/trace_tables.hpp"

namespace ftb::trace {

class KinetoReader {
public:
    // `source` names the input in error messages (a file path).
    explicit KinetoReader(std::string source);
    ~KinetoReader();
    KinetoReader(const KinetoReader&) = delete;
    KinetoReader& operator=(const KinetoReader&) = delete;

    // Consumes the next bytes. Throws ftb::InputError on JSON that cannot be a trace.
    void feed(const char* data, std::size_t size);
    // feed() without the copy: reserve(n) gives room for up to n bytes inside the reader; write the next bytes
    // there, then commit(how many were written), which consumes them as feed() would.
    char* reserve(std::size_t size);
    void commit(std::size_t size);
    // The input has ended. Throws ftb::InputError when the document is incomplete or holds no events.
    void finish();
    // Whether the document has been read to its end (the closing bracket of the top level).
    bool at_end() const;
    // Tables read so far (after finish(), or after an error when the caller analyses a partial read).
    TraceTables take();
    const TraceTables& tables() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace ftb::trace
