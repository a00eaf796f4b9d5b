// Reader throughput and memory: MB/s of uncompressed JSON through read_trace_file, peak RSS, and the
// ratio against Python's json.loads on the same file. bench/trace_vs_python.sh runs it beside `ftbound diagnose`
// and Python's json.load in one script.
//   trace_read_bench [TRACE.json] [--python]
// Make a ~1 GB input with: python3 tools/tracegen/scale_trace.py tests/data/traces/hta_negative_queue_rank0.json.gz
//   /tmp/trace_1gb.json 1000
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "ftbound/error.hpp"
#include "trace/trace_file.hpp"

namespace {
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss * 1024.0;  // Linux reports kilobytes
}
}  // namespace

int main(int argc, char** argv) {
    std::string path = std::string(FTBOUND_SOURCE_DIR) + "/tests/data/traces/hta_negative_queue_rank0.json.gz";
    bool python = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--python") python = true;
        else path = a;
    }
    try {
        const double rss_before = peak_rss_bytes();
        auto t0 = std::chrono::steady_clock::now();
        const double cpu0 = cpu_seconds();
        ftb::trace::TraceTables t = ftb::trace::read_trace_file(path);
        const double cpu = cpu_seconds() - cpu0;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double mb = t.json_bytes_read / 1e6;
        std::printf("file: %s\nevents: %llu  gpu ops kept: %zu  runtime calls kept: %zu\n", path.c_str(),
                    static_cast<unsigned long long>(t.events_read), t.gpu_ops.size(), t.runtime_calls.size());
        // CPU time (user + system) is what one core spends; on a shared machine wall time also holds waiting.
        std::printf("uncompressed JSON: %.1f MB in %.3f s wall, %.3f s CPU = %.1f MB/s per core (%.1f MB/s wall)\n", mb,
                    seconds, cpu, mb / cpu, mb / seconds);
        std::printf("peak RSS: %.1f MB (%.1f MB before reading) = %.3f of the JSON size\n", peak_rss_bytes() / 1e6,
                    rss_before / 1e6, peak_rss_bytes() / t.json_bytes_read);
        if (python) {
            std::string cmd = "python3 -c \"import json,sys,time,gzip; f=sys.argv[1]; "
                              "raw=(gzip.open if open(f,'rb').read(2)==b'\\x1f\\x8b' else open)(f,'rb').read(); "
                              "t=time.perf_counter(); json.loads(raw); print(time.perf_counter()-t)\" '" + path + "'";
            FILE* p = popen(cmd.c_str(), "r");
            double py_seconds = 0;
            if (p && std::fscanf(p, "%lf", &py_seconds) == 1 && py_seconds > 0)
                std::printf("python json.loads (parse only, file already in memory): %.3f s = %.1f MB/s; ours is %.2fx\n",
                            py_seconds, mb / py_seconds, py_seconds / seconds);
            else
                std::printf("python json.loads: could not be measured\n");
            if (p) pclose(p);
        }
    } catch (const ftb::InputError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return 0;
}
