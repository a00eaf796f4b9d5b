#include "probe/host_bench.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ftbound/error.hpp"
#include "ftbound/units.hpp"
#include "probe/bf16_gemm.hpp"


namespace fs = std::filesystem;

namespace ftb::probe {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void pin_to(std::thread& t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(t.native_handle(), sizeof(set), &set);  // best effort: unpinned still measures
}

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

double* aligned_doubles(size_t n) {
    void* p = std::aligned_alloc(64, ((n * sizeof(double) + 63) / 64) * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<double*>(p);
}

// The BLAS is loaded when a benchmark first needs it, not linked: OpenBLAS's 16,000 relocations and its start-up
// (thread pool, CPU detection) cost every other command several milliseconds. RTLD_GLOBAL puts its symbols where the
// dlsym(RTLD_DEFAULT, ...) lookups below find them. False when ftbound was built without a BLAS or it cannot be loaded.
bool load_blas() {
#ifdef FTBOUND_HAVE_BLAS
    static const bool loaded = [] {
        for (const char* name : {FTBOUND_BLAS_LIBRARY, FTBOUND_BLAS_SONAME})
            if (dlopen(name, RTLD_NOW | RTLD_GLOBAL)) return true;
        return false;
    }();
    return loaded;
#else
    return false;
#endif
}

// cblas_sgemm of the loaded BLAS; null without one. CBLAS enums: CblasRowMajor = 101, CblasNoTrans = 111.
using SGemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
SGemm blas_sgemm() { return load_blas() ? reinterpret_cast<SGemm>(dlsym(RTLD_DEFAULT, "cblas_sgemm")) : nullptr; }

// BLAS thread count, where the BLAS lets us set it (OpenBLAS does; reference BLAS is single-threaded).
void set_blas_threads(int threads) {
    using SetThreads = void (*)(int);
    if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(threads);
}

template <typename RunOnce>
GemmRate time_gemm(RunOnce&& run_once, const HostBenchOptions& opt, int start_size, std::string method) {
    // Grow n until one multiply takes gemm_min_seconds, so that a big machine is not timed on a
    // problem that fits its caches; then repeat at that size.
    int n = start_size;
    double t = 0;
    for (;;) {
        auto t0 = Clock::now();
        run_once(n);
        t = seconds_since(t0);
        if (t >= opt.gemm_min_seconds || n * 2 > opt.gemm_max_size) break;
        n *= 2;
    }
    std::vector<double> samples;
    for (int r = 0; r < opt.gemm_repetitions; ++r) {
        auto t0 = Clock::now();
        run_once(n);
        double s = seconds_since(t0);
        samples.push_back(2.0 * n * static_cast<double>(n) * n / s / kTera);
    }
    GemmRate g;
    g.tflops = measurement_of(std::move(samples));
    g.method = std::move(method);
    g.size = n;
    return g;
}

}  // namespace

std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty())
        for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) cpus.push_back(static_cast<int>(c));
    return cpus;
}

Measurement triad_bandwidth_GBps(int threads, double array_bytes, int repetitions) {
    std::vector<int> cpus = allowed_cpus();
    if (threads <= 0) threads = static_cast<int>(cpus.size());
    size_t n = static_cast<size_t>(array_bytes / sizeof(double));
    n = std::max<size_t>(n, static_cast<size_t>(threads) * 1024);
    std::unique_ptr<double, FreeDeleter> a(aligned_doubles(n)), b(aligned_doubles(n)), c(aligned_doubles(n));
    const double scalar = 3.0;
    std::vector<double> seconds(static_cast<size_t>(repetitions), 0.0);
    std::barrier sync(threads);
    Clock::time_point t0;
    auto body = [&](int t) {
        size_t lo = n * static_cast<size_t>(t) / threads, hi = n * static_cast<size_t>(t + 1) / threads;
        double* __restrict pa = a.get();
        const double* __restrict pb = b.get();
        const double* __restrict pc = c.get();
        // First touch by the thread that will use the pages puts them on its NUMA node.
        for (size_t i = lo; i < hi; ++i) {
            a.get()[i] = 0.0;
            b.get()[i] = 1.0;
            c.get()[i] = 2.0;
        }
        for (int r = -1; r < repetitions; ++r) {  // r = -1: warm-up
            sync.arrive_and_wait();
            if (t == 0) t0 = Clock::now();
            sync.arrive_and_wait();
            for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
            sync.arrive_and_wait();
            if (t == 0 && r >= 0) seconds[static_cast<size_t>(r)] = seconds_since(t0);
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
        pool.emplace_back(body, t);
        pin_to(pool.back(), cpus[static_cast<size_t>(t) % cpus.size()]);
    }
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[0], &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    body(0);
    for (auto& th : pool) th.join();
    {
        cpu_set_t set;  // give the calling thread its CPUs back
        CPU_ZERO(&set);
        for (int cpu : cpus) CPU_SET(cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    // Check the result so the compiler cannot drop the loop and a broken run cannot pass.
    if (a.get()[n / 2] != 1.0 + scalar * 2.0) throw InternalError("triad produced a wrong result");
    std::vector<double> samples;
    for (double s : seconds) samples.push_back(3.0 * sizeof(double) * static_cast<double>(n) / s / kGB);
    return measurement_of(std::move(samples));
}

std::optional<GemmRate> sgemm_rate(int threads, const HostBenchOptions& opt) {
    const SGemm cblas_sgemm = blas_sgemm();
    if (!cblas_sgemm) return std::nullopt;
    set_blas_threads(threads);
    std::vector<float> A, B, C;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto run_once = [&](int n) {
        size_t nn = static_cast<size_t>(n) * n;
        if (A.size() != nn) {
            A.resize(nn);
            B.resize(nn);
            C.assign(nn, 0.0f);
            for (auto& x : A) x = dist(rng);
            for (auto& x : B) x = dist(rng);
        }
        cblas_sgemm(101, 111, 111, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
    };
    return time_gemm(run_once, opt, 512, "blas sgemm");
}

std::optional<GemmRate> bf16_gemm_rate(int threads, const HostBenchOptions& opt, bool& native, std::string& skipped_reason) {
    // OpenBLAS built with BUILD_BFLOAT16 exports cblas_sbgemm (it uses AMX on CPUs that have it).
    using SbGemm = void (*)(int, int, int, int, int, int, float, const uint16_t*, int, const uint16_t*, int, float,
                            float*, int);
    auto sbgemm = load_blas() ? reinterpret_cast<SbGemm>(dlsym(RTLD_DEFAULT, "cblas_sbgemm")) : nullptr;
    const bool kernel = cpu_has_avx512_bf16();
    native = sbgemm || kernel;
    std::vector<uint16_t> A, B;
    std::vector<float> C, A32, B32;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto prepare = [&](int n) {
        size_t nn = static_cast<size_t>(n) * n;
        if (A.size() == nn) return;
        A.resize(nn);
        B.resize(nn);
        C.assign(nn, 0.0f);
        for (auto& x : A) x = float_to_bf16(dist(rng));
        for (auto& x : B) x = float_to_bf16(dist(rng));
    };
    if (sbgemm) {
        set_blas_threads(threads);
        auto run_once = [&](int n) {
            prepare(n);
            // CBLAS enums: CblasRowMajor = 101, CblasNoTrans = 111.
            sbgemm(101, 111, 111, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
        };
        return time_gemm(run_once, opt, 512, "blas sbgemm");
    }
    if (kernel) {
        auto run_once = [&](int n) {
            prepare(n);
            bf16_gemm(A.data(), B.data(), C.data(), n, n, n, threads);
        };
        return time_gemm(run_once, opt, 512, "avx512-bf16 kernel (ftbound)");
    }
    if (const SGemm cblas_sgemm = blas_sgemm()) {
        // No bf16 units: PyTorch then runs a bf16 matmul without them (ATen's cpublas::gemm falls back to its own
        // kernel, pytorch aten/src/ATen/native/CPUBlas.cpp), computing in fp32. Timed here as what this CPU can do
        // at best: both inputs widened to fp32 (each call), then the BLAS's sgemm.
        (void)skipped_reason;  // measured: nothing skipped
        set_blas_threads(threads);
        auto run_once = [&](int n) {
            prepare(n);
            A32.resize(A.size());
            B32.resize(B.size());
            for (size_t i = 0; i < A.size(); ++i) A32[i] = bf16_to_float(A[i]);
            for (size_t i = 0; i < B.size(); ++i) B32[i] = bf16_to_float(B[i]);
            cblas_sgemm(101, 111, 111, n, n, n, 1.0f, A32.data(), n, B32.data(), n, 0.0f, C.data(), n);
        };
        return time_gemm(run_once, opt, 512, "bf16 converted to fp32 + blas sgemm (no bf16 units)");
    }
#ifdef FTBOUND_HAVE_BLAS
    skipped_reason = "the CPU has no AVX512-BF16 and no BLAS could be loaded (" FTBOUND_BLAS_SONAME ")";
#else
    skipped_reason = "the CPU has no AVX512-BF16 and ftbound was built without a BLAS";
#endif
    return std::nullopt;
}

Measurement first_touch_GBps(int threads, double bytes, int repetitions) {
    if (threads <= 0) threads = static_cast<int>(allowed_cpus().size());
    const size_t n = static_cast<size_t>(bytes);
    std::vector<double> samples;
    for (int r = -1; r < repetitions; ++r) {   // r = -1: warm-up
        void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        auto t0 = Clock::now();
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const size_t lo = n * static_cast<size_t>(t) / threads, hi = n * static_cast<size_t>(t + 1) / threads;
                std::memset(static_cast<char*>(p) + lo, 1, hi - lo);
            });
        for (auto& th : pool) th.join();
        const double s = seconds_since(t0);
        munmap(p, n);
        if (r >= 0) samples.push_back(bytes / s / 1e9);
    }
    return measurement_of(std::move(samples));
}

namespace {

// A Python script that prints three lines: RSS after `import torch`, per-op microseconds of 5 batches, and the GEMM
// switch microseconds of 5 batches.
std::string torch_rates_script(int t) {
    return
        "import os\n"
        "os.environ['OMP_NUM_THREADS'] = os.environ['OPENBLAS_NUM_THREADS'] = os.environ['MKL_NUM_THREADS'] = '" +
        std::to_string(t) + "'\n"
        "import time, statistics, torch\n"
        "rss = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmRSS:')][0]\n"
        "torch.set_num_threads(" + std::to_string(t) + ")\n"
        "def per_call(fn, n):\n"
        "    for _ in range(max(2, n // 10)): fn()\n"
        "    out = []\n"
        "    for _ in range(5):\n"
        "        t0 = time.perf_counter()\n"
        "        for _ in range(n): fn()\n"
        "        out.append((time.perf_counter() - t0) / n)\n"
        "    return out\n"
        "x = torch.ones(1, requires_grad=True)\n"
        "def chain():\n"
        "    y = x\n"
        "    for _ in range(100): y = y * 1.0001\n"
        "    y.backward()\n"
        "op = [v / 200 * 1e6 for v in per_call(chain, 100)]\n"
        "e = torch.randn(256, 512); a = torch.randn(256, 512); w = torch.randn(512, 512)\n"
        "lin = lambda: torch.nn.functional.linear(a, w)\n"
        "def both():\n"
        "    e.mul(1.0001); lin()\n"
        "sw = []\n"
        "for _ in range(5):\n"
        "    te = statistics.median(per_call(lambda: e.mul(1.0001), 100))\n"
        "    tg = statistics.median(per_call(lin, 50))\n"
        "    tb = statistics.median(per_call(both, 50))\n"
        "    sw.append(max(0.0, tb - te - tg) * 1e6)\n"
        "print(rss)\n"
        "print(' '.join('%.4f' % v for v in op))\n"
        "print(' '.join('%.2f' % v for v in sw))\n";
}

// Runs `python script` and returns its stdout lines (none when the interpreter cannot be started).
std::vector<std::string> run_python_lines(const std::string& python, const std::string& script) {
    const fs::path tmp = fs::temp_directory_path() / fmt::format("ftbound-torch-rates-{}.py", getpid());
    {
        std::ofstream f(tmp);
        f << script;
    }
    FILE* pipe = popen(fmt::format("'{}' '{}' 2>/dev/null", python, tmp.string()).c_str(), "r");
    std::vector<std::string> lines;
    if (pipe) {
        char buf[4096];
        while (fgets(buf, sizeof buf, pipe)) lines.emplace_back(buf);
        pclose(pipe);
    }
    std::error_code ec;
    fs::remove(tmp, ec);
    return lines;
}

std::vector<double> numbers_in(const std::string& line) {
    std::vector<double> v;
    std::istringstream in(line);
    for (double x; in >> x;) v.push_back(x);
    return v;
}

}  // namespace

std::optional<TorchRates> torch_rates(int threads, const std::string& python, std::string& skipped_reason) {
    const std::vector<std::string> lines = run_python_lines(python, torch_rates_script(std::max(1, threads)));
    if (lines.size() < 3 || numbers_in(lines[1]).empty() || numbers_in(lines[2]).empty()) {
        skipped_reason = python + " cannot import torch (give the interpreter that has it with --python)";
        return std::nullopt;
    }
    TorchRates r;
    r.runtime_rss_bytes = numbers_in(lines[0]).empty() ? 0 : numbers_in(lines[0])[0];
    r.op_us = measurement_of(numbers_in(lines[1]));
    r.blas_switch_us = measurement_of(numbers_in(lines[2]));
    return r;
}

double last_level_cache_bytes(const std::string& root, int sockets) {
    // Sum the highest-level cache over its distinct instances (each identified by its CPU list).
    fs::path cpu_dir = fs::path(root) / "sys/devices/system/cpu";
    std::error_code ec;
    int best_level = 0;
    double total = 0;
    std::set<std::string> seen;
    for (const auto& cpu : fs::directory_iterator(cpu_dir, ec)) {
        fs::path cache = cpu.path() / "cache";
        if (!fs::is_directory(cache, ec)) continue;
        for (const auto& idx : fs::directory_iterator(cache, ec)) {
            std::ifstream lf(idx.path() / "level"), sf(idx.path() / "size"), shf(idx.path() / "shared_cpu_list");
            int level = 0;
            std::string size, shared;
            if (!(lf >> level) || !(sf >> size)) continue;
            shf >> shared;
            double bytes = std::strtod(size.c_str(), nullptr);
            if (size.find('K') != std::string::npos) bytes *= 1024;
            else if (size.find('M') != std::string::npos) bytes *= 1024 * 1024;
            if (level > best_level) {
                best_level = level;
                total = 0;
                seen.clear();
            }
            if (level == best_level && seen.insert(shared).second) total += bytes;
        }
    }
    (void)sockets;
    return total;
}

int host_threads(int requested, std::string& from) {
    if (requested > 0) {
        from = "--threads";
        return requested;
    }
    // PyTorch's intra-op pool and OpenMP BLAS builds take OMP_NUM_THREADS (torchrun sets it to 1 per process by
    // default when it starts several): measure with what the job would get.
    if (const char* v = std::getenv("OMP_NUM_THREADS"); v && std::atoi(v) > 0) {
        from = "OMP_NUM_THREADS";
        return std::atoi(v);
    }
    from = "every allowed CPU";
    return static_cast<int>(allowed_cpus().size());
}

Threading blas_threading() {
    Threading t;
    for (const char* v : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_PROC_BIND",
                          "OMP_PLACES", "KMP_AFFINITY"})
        if (const char* x = std::getenv(v)) t.environment.emplace_back(v, x);
    void* sgemm = reinterpret_cast<void*>(blas_sgemm());
    Dl_info info{};
    if (sgemm && dladdr(sgemm, &info) && info.dli_fname) t.blas_library = info.dli_fname;
    // OpenBLAS's own queries (openblas_config.h); other BLAS libraries do not have them.
    if (auto config = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) t.blas_config = config();
    if (auto threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) t.blas_threads = threads();
    if (auto parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) {
        const int p = parallel();
        t.blas_threading = p == 0 ? "sequential" : p == 1 ? "pthreads" : p == 2 ? "openmp" : std::to_string(p);
    }
    return t;
}

HostBench run_host_bench(const HostInfo& host, const HostBenchOptions& opt) {
    HostBench hb;
    std::string threads_from;
    hb.threads = host_threads(opt.threads, threads_from);
    double array_bytes = opt.array_bytes;
    if (array_bytes <= 0) {
        // STREAM's rule: each array at least 4x the caches, so the triad streams from DRAM.
        array_bytes = std::max(128.0 * kMiB, 4.0 * last_level_cache_bytes("/", host.sockets));
        if (host.memory_bytes > 0) array_bytes = std::min(array_bytes, host.memory_bytes / 8.0);
    }
    hb.array_bytes = array_bytes;
    hb.memory_bandwidth_GBps = triad_bandwidth_GBps(hb.threads, array_bytes, opt.triad_repetitions);
    hb.fp32 = sgemm_rate(hb.threads, opt);
    hb.bf16 = bf16_gemm_rate(hb.threads, opt, hb.bf16_native, hb.bf16_skipped_reason);
    hb.threading = blas_threading();  // the BLAS's thread count as the benchmarks left it
    hb.threading.threads_from = threads_from;
    // 256 MiB per mapping: larger than glibc's largest mmap threshold (32 MiB), like the logits and big gradients.
    hb.first_touch_GBps = first_touch_GBps(hb.threads, 256.0 * kMiB, opt.triad_repetitions);
    if (opt.torch) {
        if (auto t = torch_rates(hb.threads, opt.python, hb.torch_skipped_reason)) {
            hb.torch_op_us = t->op_us;
            hb.torch_blas_switch_us = t->blas_switch_us;
            hb.torch_runtime_rss_bytes = t->runtime_rss_bytes;
        }
    }
    else hb.torch_skipped_reason = "not asked for (--torch)";
    return hb;
}

}  // namespace ftb::probe
