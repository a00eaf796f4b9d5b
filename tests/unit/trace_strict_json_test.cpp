// The reader's fast path (src/trace/strict_json.hpp): what the strict cursor accepts, where it stops, and that
// an event reads the same through it as through the full parser (simdjson).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "trace/kineto_reader.hpp"
#include "trace/strict_json.hpp"
#include "trace/trace_file.hpp"
#include "test_paths.hpp"

using namespace ftb::trace;
using Stop = StrictJsonCursor::Stop;

namespace {
// The bytes after `text` stay readable, as in the reader's padded buffer.
struct Padded {
    explicit Padded(const std::string& text) : bytes(text + std::string(64, ' ')), size(text.size()) {}
    StrictJsonCursor cursor() const { return StrictJsonCursor(bytes.data(), bytes.data() + size); }
    std::string bytes;
    std::size_t size;
};

// Every member's key and scalar text (objects and arrays skipped); empty when the cursor stopped.
std::string members(const std::string& text, Stop* stop = nullptr) {
    Padded in(text);
    StrictJsonCursor c = in.cursor();
    std::string seen;
    const bool ok = c.object([&](std::string_view key) {
        std::string_view value;
        const char next = c.peek();
        if (next == '{' || next == '[') {
            seen += std::string(key) + "=<skipped>;";
            return c.skip_value();
        }
        if (!c.scalar(value)) return false;
        seen += std::string(key) + "=" + std::string(value) + ";";
        return true;
    });
    if (stop) *stop = c.stop();
    return ok ? seen : "";
}
}  // namespace

TEST(StrictJson, ReadsPlainMembers) {
    EXPECT_EQ(members(R"({"ph": "X", "ts": 12.5, "dur":-3e2, "x":true ,"y" : null, "args": {"a": [1, {"b": []}]}} )"),
              "ph=X;ts=12.5;dur=-3e2;x=true;y=null;args=<skipped>;");
    EXPECT_EQ(members("{} "), "");
    Stop stop = Stop::unusual;
    members("{} ", &stop);
    EXPECT_EQ(stop, Stop::none);
    // A 30-byte string crosses the 8-byte words of the scan.
    EXPECT_EQ(members(R"({"name": "ncclKernel_AllReduce_RING_LL_Sum"} )"), "name=ncclKernel_AllReduce_RING_LL_Sum;");
}

TEST(StrictJson, StopsAtWhatTheFullParserMustRead) {
    for (const char* text : {R"({"name": "a\"b"} )", "{\"name\": \"\xc2\xb5s\"} ", "{\"name\": \"tab\there\"} ",
                             R"({"ts": 01} )", R"({"ts": 1.} )", R"({"ts": .5} )", R"({"ts": 1e} )", R"({"ts": tru} )",
                             R"({"ts": 1 2} )", R"({"a" 1} )", R"({"a": 1,} )", R"({'a': 1} )", R"({"a": [1 2]} )",
                             R"({"a": [1,]} )"}) {
        Stop stop = Stop::none;
        EXPECT_EQ(members(text, &stop), "") << text;
        EXPECT_EQ(stop, Stop::unusual) << text;
    }
}

TEST(StrictJson, StopsShortWhenTheBytesEndInsideTheObject) {
    const std::string whole = R"({"ph": "X", "ts": 12.5, "args": {"a": [1, 2]}, "ok": false})";
    for (std::size_t n = 0; n < whole.size(); ++n) {
        Stop stop = Stop::none;
        EXPECT_EQ(members(whole.substr(0, n), &stop), "") << n;
        EXPECT_EQ(stop, Stop::short_input) << whole.substr(0, n);
    }
}

TEST(StrictJson, NestingDeeperThanItsLimitGoesToTheFullParser) {
    const std::string deep = "{\"a\": " + std::string(100, '[') + std::string(100, ']') + "} ";
    Stop stop = Stop::none;
    EXPECT_EQ(members(deep, &stop), "");
    EXPECT_EQ(stop, Stop::unusual);
}

// Fed one byte at a time, no event is ever whole in the reader's buffer when it starts, so every event goes
// through the full parser; read in one piece, nearly every event takes the fast path. The tables must agree.
TEST(StrictJson, FastAndFullParsersGiveTheSameTablesOnARealTrace) {
    const TraceTables fast = read_trace_file(std::string(ftb_test::test_data()) + "/traces/hta_sampled_rank-0.json.gz");
    gzFile gz = gzopen((std::string(ftb_test::test_data()) + "/traces/hta_sampled_rank-0.json.gz").c_str(), "rb");
    ASSERT_NE(gz, nullptr);
    std::string doc;
    char chunk[1 << 16];
    for (int n; (n = gzread(gz, chunk, sizeof chunk)) > 0;) doc.append(chunk, static_cast<std::size_t>(n));
    gzclose(gz);
    KinetoReader reader("bytewise");
    for (char c : doc) reader.feed(&c, 1);
    reader.finish();
    const TraceTables full = reader.take();

    EXPECT_EQ(full.events_read, fast.events_read);
    EXPECT_EQ(full.events_ignored, fast.events_ignored);
    EXPECT_EQ(full.names, fast.names);
    ASSERT_EQ(full.gpu_ops.size(), fast.gpu_ops.size());
    for (std::size_t i = 0; i < full.gpu_ops.size(); ++i) {
        const GpuOp &a = full.gpu_ops[i], &b = fast.gpu_ops[i];
        EXPECT_TRUE(a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.correlation == b.correlation &&
                    a.collective_seq == b.collective_seq && a.bytes == b.bytes && a.name_id == b.name_id &&
                    a.device == b.device && a.stream == b.stream && a.kind == b.kind && a.direction == b.direction &&
                    a.is_communication == b.is_communication && a.pageable == b.pageable)
            << "gpu op " << i;
    }
    ASSERT_EQ(full.runtime_calls.size(), fast.runtime_calls.size());
    for (std::size_t i = 0; i < full.runtime_calls.size(); ++i) {
        const RuntimeCall &a = full.runtime_calls[i], &b = fast.runtime_calls[i];
        EXPECT_TRUE(a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.correlation == b.correlation &&
                    a.is_graph_launch == b.is_graph_launch)
            << "runtime call " << i;
    }
    ASSERT_EQ(full.steps.size(), fast.steps.size());
    for (std::size_t i = 0; i < full.steps.size(); ++i)
        EXPECT_TRUE(full.steps[i].number == fast.steps[i].number && full.steps[i].start_ns == fast.steps[i].start_ns &&
                    full.steps[i].end_ns == fast.steps[i].end_ns);
    EXPECT_EQ(full.dataloader_ranges.size(), fast.dataloader_ranges.size());
    EXPECT_EQ(full.flow_ends.size(), fast.flow_ends.size());
    EXPECT_EQ(full.flow_starts, fast.flow_starts);
    EXPECT_EQ(full.first_ns, fast.first_ns);
    EXPECT_EQ(full.last_ns, fast.last_ns);
    EXPECT_EQ(full.peak_allocated_bytes, fast.peak_allocated_bytes);
}
