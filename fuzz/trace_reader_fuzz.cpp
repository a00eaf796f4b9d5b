// libFuzzer target: any bytes through the trace reader (whole and in odd chunks, with and without
// --partial) and the analyses. Input errors are expected; crashes, hangs, sanitizer reports and any
// other exception are findings.
#include <cstddef>
#include <cstdint>

#include "ftbound/error.hpp"
#include "trace/kineto_reader.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const char* bytes = reinterpret_cast<const char*>(data);
    for (bool partial : {false, true}) {
        ftb::trace::ReadOptions options;
        options.partial = partial;
        options.chunk_bytes = 1 + size % 61;  // exercise chunk boundaries everywhere
        try {
            ftb::trace::TraceTables t = ftb::trace::read_trace_bytes("fuzz", bytes, size, options);
            ftb::trace::RankAnalysis r = ftb::trace::analyse_rank(t, 0);
            std::vector<const ftb::trace::TraceTables*> views{&t};
            ftb::trace::diagnose(views, {r});
        } catch (const ftb::InputError&) {
        }
    }
    return 0;
}
