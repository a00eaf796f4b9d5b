#include "trace/trace_file.hpp"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "ftbound/error.hpp"
#include "trace/kineto_reader.hpp"

namespace ftb::trace {

namespace {

// Pulls raw bytes from a source: returns how many were written into `out` (0 at the end).
using ByteSource = std::function<std::size_t(char* out, std::size_t capacity)>;

struct Progress {
    std::uint64_t consumed = 0;  // raw (possibly compressed) bytes handed on so far
    std::uint64_t total = 0;     // raw bytes in the whole input, when known
};

void pump(KinetoReader& reader, const std::string& source, ByteSource& pull, Progress& progress,
          std::size_t chunk_bytes) {
    std::vector<char> in(chunk_bytes);
    std::size_t n = pull(in.data(), in.size());
    progress.consumed += n;
    if (n == 0) {
        reader.finish();
        return;
    }
    const bool gzip = n >= 2 && static_cast<unsigned char>(in[0]) == 0x1f && static_cast<unsigned char>(in[1]) == 0x8b;
    if (!gzip) {
        // After the first chunk, the bytes are read straight into the reader's buffer (no copy in between).
        reader.feed(in.data(), n);
        while ((n = pull(reader.reserve(chunk_bytes), chunk_bytes)) > 0) {
            progress.consumed += n;
            reader.commit(n);
        }
        reader.finish();
        return;
    }
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) throw InternalError("zlib inflateInit2 failed");
    std::unique_ptr<z_stream, void (*)(z_stream*)> guard(&z, [](z_stream* s) { inflateEnd(s); });
    bool stream_ended = false;
    while (true) {
        z.next_in = reinterpret_cast<Bytef*>(in.data());
        z.avail_in = static_cast<uInt>(n);
        while (z.avail_in > 0) {
            if (stream_ended) {
                // Another gzip member follows (concatenated .gz files are one stream of data).
                if (inflateReset(&z) != Z_OK) throw InternalError("zlib inflateReset failed");
                stream_ended = false;
            }
            // Inflated straight into the reader's buffer.
            z.next_out = reinterpret_cast<Bytef*>(reader.reserve(chunk_bytes));
            z.avail_out = static_cast<uInt>(chunk_bytes);
            int rc = inflate(&z, Z_NO_FLUSH);
            std::size_t produced = chunk_bytes - z.avail_out;
            if (produced > 0) reader.commit(produced);
            if (rc == Z_STREAM_END) { stream_ended = true; continue; }
            if (rc == Z_BUF_ERROR) break;
            if (rc != Z_OK)
                throw InputError(source, "", std::string("corrupt gzip data: ") + (z.msg ? z.msg : "inflate failed"));
        }
        n = pull(in.data(), in.size());
        progress.consumed += n;
        if (n == 0) break;
    }
    if (!stream_ended) {
        throw InputError(source, "", "truncated gzip stream: the file ends inside compressed data");
    }
    reader.finish();
}

TraceTables run(const std::string& source, ByteSource pull, std::uint64_t total_bytes, const ReadOptions& options) {
    KinetoReader reader(source);
    Progress progress;
    progress.total = total_bytes;
    try {
        pump(reader, source, pull, progress, options.chunk_bytes);
    } catch (const InputError& e) {
        if (!options.partial || reader.tables().events_read == 0) throw;
        TraceTables tables = reader.take();
        tables.complete = false;
        tables.stop_reason = e.what();
        tables.fraction_read =
            progress.total > 0 ? std::min(1.0, static_cast<double>(progress.consumed) / progress.total) : 0.0;
        return tables;
    }
    return reader.take();
}

}  // namespace

TraceTables read_trace_file(const std::string& path, const ReadOptions& options) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a folder, not a trace file");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    std::uint64_t total = 0;
    if (std::fseek(file.get(), 0, SEEK_END) == 0) {
        long end = std::ftell(file.get());
        if (end > 0) total = static_cast<std::uint64_t>(end);
        std::fseek(file.get(), 0, SEEK_SET);
    }
    std::FILE* f = file.get();
    ByteSource pull = [f, &path](char* out, std::size_t capacity) -> std::size_t {
        std::size_t n = std::fread(out, 1, capacity, f);
        if (n == 0 && std::ferror(f)) throw InputError(path, "", "read error");
        return n;
    };
    return run(path, std::move(pull), total, options);
}

TraceTables read_trace_bytes(const std::string& source, const char* data, std::size_t size, const ReadOptions& options) {
    std::size_t offset = 0;
    ByteSource pull = [&](char* out, std::size_t capacity) -> std::size_t {
        std::size_t n = std::min(capacity, size - offset);
        if (n > 0) std::memcpy(out, data + offset, n);
        offset += n;
        return n;
    };
    return run(source, std::move(pull), size, options);
}

}  // namespace ftb::trace
