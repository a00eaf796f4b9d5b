#include "probe/storage_bench.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ftbound/error.hpp"
#include "ftbound/units.hpp"

namespace fs = std::filesystem;

namespace ftb::probe {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

struct Scratch {
    std::string path;
    ~Scratch() {
        if (!path.empty()) ::unlink(path.c_str());
    }
};

// Every thread moves blocks t, t+threads, ... with pread/pwrite; returns false on an I/O error.
bool transfer_all(int fd, bool write, char* const* buffers, size_t block, size_t blocks, int threads) {
    std::atomic<bool> ok{true};
    auto worker = [&](int t) {
        for (size_t b = static_cast<size_t>(t); b < blocks && ok; b += static_cast<size_t>(threads)) {
            off_t offset = static_cast<off_t>(b * block);
            size_t done = 0;
            while (done < block) {
                ssize_t n = write ? ::pwrite(fd, buffers[t] + done, block - done, offset + static_cast<off_t>(done))
                                  : ::pread(fd, buffers[t] + done, block - done, offset + static_cast<off_t>(done));
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) {
                    ok = false;
                    return;
                }
                done += static_cast<size_t>(n);
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (auto& th : pool) th.join();
    return ok;
}

// One O_DIRECT buffer of random bytes per I/O thread (O_DIRECT needs buffers aligned to the logical block size;
// 4 KiB covers every common device). Random, so compressing or deduplicating storage cannot shortcut the writes.
struct AlignedBuffers {
    std::vector<char*> data;
    AlignedBuffers(int count, size_t block_bytes) {
        std::mt19937_64 rng(1234);
        for (int b = 0; b < count; ++b) {
            char* buf = static_cast<char*>(std::aligned_alloc(4096, block_bytes));
            if (!buf) throw std::bad_alloc();
            data.push_back(buf);
            for (size_t i = 0; i + 8 <= block_bytes; i += 8) {
                uint64_t v = rng();
                std::memcpy(buf + i, &v, 8);
            }
        }
    }
    ~AlignedBuffers() {
        for (char* p : data) std::free(p);
    }
    AlignedBuffers(const AlignedBuffers&) = delete;
    AlignedBuffers& operator=(const AlignedBuffers&) = delete;
};

// Creates the scratch file for direct I/O. False, with the reason, when the filesystem refuses O_DIRECT (a
// figure would then come from the page cache); an unwritable folder is the user's error.
bool open_direct_scratch(const std::string& dir, const std::string& path, Fd& f, std::string& skipped_reason) {
    f.fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_DIRECT, 0600);
    if (f.fd >= 0) return true;
    const int err = errno;
    if (err == EINVAL) {
        skipped_reason = "the filesystem refuses O_DIRECT, so a figure would come from the page cache";
        return false;
    }
    if (err == EACCES || err == EROFS || err == EPERM)
        throw InputError(dir, "--dir", std::string("cannot write a scratch file: ") + std::strerror(err));
    throw InputError(dir, "--dir", std::string("cannot create a scratch file: ") + std::strerror(err));
}

// GB/s of each of `repetitions` passes over the file in one direction; empty with `failure` set when a pass
// fails (EINVAL: O_DIRECT accepted at open but refused per request, by the device's alignment rules). A write
// pass counts until fdatasync returns; a read pass starts with the file dropped from the page cache.
std::vector<double> timed_passes(int fd, bool write, AlignedBuffers& buffers, size_t block, size_t blocks,
                                 int threads, int repetitions, std::string& failure) {
    const double file_bytes = static_cast<double>(block * blocks);
    std::vector<double> samples;
    for (int r = 0; r < repetitions; ++r) {
        if (!write) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        const auto t0 = Clock::now();
        bool ok = transfer_all(fd, write, buffers.data.data(), block, blocks, threads);
        if (write) ok = ok && ::fdatasync(fd) == 0;
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!ok) {
            failure = std::string(write ? "direct write failed: " : "direct read failed: ") + std::strerror(errno);
            return {};
        }
        samples.push_back(file_bytes / s / kGB);
    }
    return samples;
}

}  // namespace

double page_cache_resident_fraction(const std::string& path) {
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY);
    if (f.fd < 0) return 0;
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || st.st_size == 0) return 0;
    void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, f.fd, 0);
    if (map == MAP_FAILED) return 0;
    long page = ::sysconf(_SC_PAGESIZE);
    size_t pages = (static_cast<size_t>(st.st_size) + static_cast<size_t>(page) - 1) / static_cast<size_t>(page);
    std::vector<unsigned char> resident(pages);
    size_t in_cache = 0;
    if (::mincore(map, static_cast<size_t>(st.st_size), resident.data()) == 0)
        for (unsigned char r : resident) in_cache += r & 1u;
    ::munmap(map, static_cast<size_t>(st.st_size));
    return static_cast<double>(in_cache) / static_cast<double>(pages);
}

StorageBench run_storage_bench(const std::string& dir, const StorageBenchOptions& opt) {
    StorageBench sb;
    sb.dir = dir;
    sb.io_threads = std::max(1, opt.io_threads);
    sb.block_bytes = opt.block_bytes;
    const size_t block = static_cast<size_t>(opt.block_bytes);
    const size_t blocks = std::max<size_t>(1, static_cast<size_t>(opt.file_bytes / opt.block_bytes));
    sb.file_bytes = static_cast<double>(block * blocks);

    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(dir, "--dir", "not a folder");
    Scratch scratch;
    scratch.path = (fs::path(dir) / fmt::format(".ftbound-probe-{}.tmp", ::getpid())).string();
    Fd f;
    if (!open_direct_scratch(dir, scratch.path, f, sb.skipped_reason)) return sb;
    AlignedBuffers buffers(sb.io_threads, block);
    std::vector<double> write_samples =
        timed_passes(f.fd, true, buffers, block, blocks, sb.io_threads, opt.repetitions, sb.skipped_reason);
    if (!sb.skipped_reason.empty()) return sb;
    std::vector<double> read_samples =
        timed_passes(f.fd, false, buffers, block, blocks, sb.io_threads, opt.repetitions, sb.skipped_reason);
    if (!sb.skipped_reason.empty()) return sb;
    sb.page_cache_resident_fraction = page_cache_resident_fraction(scratch.path);
    sb.write_GBps = measurement_of(std::move(write_samples));
    sb.read_GBps = measurement_of(std::move(read_samples));
    sb.measured = true;
    return sb;
}

}  // namespace ftb::probe
