// Reader: formats (object / bare array, new / legacy, gzip / plain), chunk boundaries, joins, and the
// refusals (exit-2 inputs). Expected values are hand counts of tests/data/traces/hand_*.json.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <sstream>

#include "ftbound/error.hpp"
#include "trace/kineto_reader.hpp"
#include "trace/time_units.hpp"
#include "trace/trace_file.hpp"
#include "test_paths.hpp"

using namespace ftb::trace;

namespace {
std::string data_path(const std::string& name) { return std::string(ftb_test::test_data()) + "/traces/" + name; }
std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
std::string gzip_bytes(const std::string& plain) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, plain.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}
TraceTables read_string(const std::string& s, ReadOptions o = {}) { return read_trace_bytes("test", s.data(), s.size(), o); }
}  // namespace

TEST(TraceTime, MicrosecondTextToIntegerNanoseconds) {
    EXPECT_EQ(microseconds_text_to_ns("1682725898236567"), 1682725898236567000LL);
    EXPECT_EQ(microseconds_text_to_ns("4458676522690.655"), 4458676522690655LL);
    EXPECT_EQ(microseconds_text_to_ns("68.0"), 68000);
    EXPECT_EQ(microseconds_text_to_ns("0.0005"), 1);  // rounds half up past the ns digit
    EXPECT_EQ(microseconds_text_to_ns("-2.5"), -2500);
    EXPECT_EQ(microseconds_text_to_ns("1.5e3"), 1500000);
    EXPECT_FALSE(microseconds_text_to_ns("abc"));
    EXPECT_FALSE(microseconds_text_to_ns("1."));
    EXPECT_FALSE(microseconds_text_to_ns("99999999999999999999999"));
}

TEST(TraceReader, NewStyleHandTrace) {
    TraceTables t = read_trace_file(data_path("hand_new_style.json"));
    EXPECT_EQ(t.gpu_ops.size(), 7u);
    EXPECT_EQ(t.runtime_calls.size(), 6u);
    EXPECT_EQ(t.steps.size(), 1u);
    EXPECT_EQ(t.dataloader_ranges.size(), 1u);
    EXPECT_EQ(t.flow_ends.size(), 1u);
    EXPECT_EQ(t.flow_starts, 1);
    ASSERT_TRUE(t.base_time_ns);  // written after traceEvents
    EXPECT_EQ(*t.base_time_ns, 1700000000000000000LL);
    EXPECT_EQ(t.rank.value_or(-1), 3);
    EXPECT_EQ(t.world_size.value_or(-1), 8);
    EXPECT_EQ(t.devices.size(), 8u);
    EXPECT_EQ(t.devices[0].total_memory_bytes, 85029158912LL);
    EXPECT_EQ(t.peak_allocated_bytes.value_or(-1), 5000);  // the CPU's 99999 is not a GPU peak
    // Fractional relative times: step starts at 123456789.125 us.
    EXPECT_EQ(t.steps[0].start_ns, 123456789125LL);
    EXPECT_EQ(t.steps[0].end_ns - t.steps[0].start_ns, 100000);
    int graph = 0, comm = 0;
    for (auto& c : t.runtime_calls) graph += c.is_graph_launch;
    for (auto& op : t.gpu_ops) comm += op.is_communication;
    EXPECT_EQ(graph, 1);
    EXPECT_EQ(comm, 1);
    // The escaped name survives the scanner and simdjson unescaping.
    bool found = false;
    for (auto& n : t.names) found |= n == "void gemm<\"tile\\\\64\">(float*)";
    EXPECT_TRUE(found);
}

TEST(TraceReader, LegacyBareArray) {
    TraceTables t = read_trace_file(data_path("hand_legacy_bare_array.json"));
    ASSERT_EQ(t.gpu_ops.size(), 2u);
    EXPECT_EQ(t.gpu_ops[0].stream, 7);  // from tid "stream 7"
    EXPECT_EQ(t.gpu_ops[0].device, 0);  // from pid
    EXPECT_EQ(t.gpu_ops[0].correlation, 11);
    EXPECT_EQ(t.gpu_ops[1].direction, CopyDirection::d2d);
    EXPECT_EQ(t.gpu_ops[1].bytes, 1000u);
    EXPECT_EQ(t.steps.at(0).number, 7);
    EXPECT_EQ(t.steps.at(0).start_ns, 1682725898000000000LL);
    EXPECT_FALSE(t.base_time_ns);
}

TEST(TraceReader, AnyChunkingGivesTheSameTables) {
    const std::string doc = slurp(data_path("hand_new_style.json"));
    TraceTables whole = read_string(doc);
    for (std::size_t chunk : {1u, 2u, 3u, 7u, 64u}) {
        KinetoReader r("chunks");
        for (std::size_t i = 0; i < doc.size(); i += chunk) r.feed(doc.data() + i, std::min(chunk, doc.size() - i));
        r.finish();
        TraceTables t = r.take();
        ASSERT_EQ(t.gpu_ops.size(), whole.gpu_ops.size()) << chunk;
        for (std::size_t i = 0; i < t.gpu_ops.size(); ++i) {
            EXPECT_EQ(t.gpu_ops[i].start_ns, whole.gpu_ops[i].start_ns);
            EXPECT_EQ(t.names[t.gpu_ops[i].name_id], whole.names[whole.gpu_ops[i].name_id]);
        }
        EXPECT_EQ(t.base_time_ns, whole.base_time_ns);
        EXPECT_EQ(t.events_read, whole.events_read);
    }
}

TEST(TraceReader, GzipEqualsPlain) {
    const std::string doc = slurp(data_path("hand_new_style.json"));
    TraceTables a = read_string(doc), b = read_string(gzip_bytes(doc));
    EXPECT_EQ(a.events_read, b.events_read);
    EXPECT_EQ(a.gpu_ops.size(), b.gpu_ops.size());
    // Two concatenated gzip members are one stream.
    const std::string half1 = doc.substr(0, doc.size() / 2), half2 = doc.substr(doc.size() / 2);
    TraceTables c = read_string(gzip_bytes(half1) + gzip_bytes(half2));
    EXPECT_EQ(c.events_read, a.events_read);
}

TEST(TraceReader, RealTracesCountEveryGpuOp) {
    // Counts of kernel + gpu_memcpy + gpu_memset events, from independent_figures.py's loader (json.loads).
    EXPECT_EQ(read_trace_file(data_path("hta_nccl_data_rank0.json.gz")).gpu_ops.size(), 2700u + 960u + 114u);
    EXPECT_EQ(read_trace_file(data_path("hta_sampled_rank-0.json.gz")).gpu_ops.size(), 1154u + 40u + 10u);
}

TEST(TraceReader, RefusesWhatIsNotATrace) {
    const std::string random_bytes("\x8f\x01\xfe\x33garbage\x00\x7f", 13);
    for (const std::string& bad : {random_bytes, std::string("{}"), std::string("[1,2,3]"), std::string(""),
                                   std::string("[]"), std::string("{\"traceEvents\": 5}"),
                                   std::string("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": tru}]}"),
                                   std::string("{\"traceEvents\": [{\"ph\": \"X\"}]} trailing"),
                                   std::string("[{\"ph\": \"X\", \"ts\": \"x\"}]")}) {
        EXPECT_THROW(read_string(bad), ftb::InputError) << bad;
    }
}

TEST(TraceReader, TruncatedInputFailsOrReadsPartially) {
    const std::string doc = slurp(data_path("hand_new_style.json"));
    const std::string cut = doc.substr(0, doc.size() * 2 / 3);
    EXPECT_THROW(read_string(cut), ftb::InputError);
    const std::string gz = gzip_bytes(doc);
    EXPECT_THROW(read_string(gz.substr(0, gz.size() - 20)), ftb::InputError);
    ReadOptions partial;
    partial.partial = true;
    TraceTables t = read_string(cut, partial);
    EXPECT_FALSE(t.complete);
    EXPECT_GT(t.events_read, 0u);
    EXPECT_NE(t.stop_reason.find("truncated"), std::string::npos);
    EXPECT_DOUBLE_EQ(t.fraction_read, 1.0);  // every byte there was got read; the document just ends early
    TraceTables g = read_string(gz.substr(0, gz.size() / 2), partial);
    EXPECT_FALSE(g.complete);
    // Nothing usable even with --partial: still an error.
    EXPECT_THROW(read_string("{\"traceEvents\": [", partial), ftb::InputError);
}
