// `ftbound serve` on an ephemeral loopback port (CONTRACT.md routes): the API answers what the command line
// prints, bad bodies get a 400 with the command line's error line, no file path is taken from a client, 200
// concurrent requests are all answered, a request past its time limit gets a 503, and SIGTERM/SIGINT stop it
// cleanly. The server keeps serving after every bad request.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "browser_test_util.hpp"
#include "ftbound/error.hpp"
#include "plan_test_util.hpp"
#include "serve/api.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using browser_test::Server;
using plan_test::example;
using spec_test::describe;
using spec_test::run_ftbound;

httplib::Client client(const Server& s) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_connection_timeout(30);
    c.set_read_timeout(120);
    c.set_write_timeout(30);
    return c;
}

// The error line the command line prints for `yaml` saved as a file, with the file named as the server names it.
std::string cli_error_line(const std::string& yaml) {
    const std::string file = spec_test::write_scratch("job.yaml", yaml);
    const auto r = run_ftbound({"plan", file});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    std::string line = r.err.substr(0, r.err.find('\n'));
    if (const size_t at = line.find(file); at != std::string::npos) line.replace(at, file.size(), serve::kRequestJob);
    return line;
}

std::string first_error(const httplib::Result& r) {
    if (!r) return "no answer";
    const Json j = Json::parse(r->body, nullptr, false);
    return j.is_object() && j.contains("errors") && !j["errors"].empty() ? j["errors"][0].get<std::string>() : r->body;
}

const std::string kExample = spec_test::slurp(example("llama3.1-8b-lora-r760xa.yaml"));

TEST(ServeApi, PlanAndCompareAnswerWhatTheCommandLinePrints) {
    Server server;
    auto c = client(server);
    auto r = c.Post("/api/plan", kExample, "application/yaml");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const auto cli = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--json"});
    ASSERT_EQ(cli.exit_code, 0) << describe(cli);
    Json expected = Json::parse(cli.out);
    expected["job"] = serve::kRequestJob;
    EXPECT_EQ(Json::parse(r->body), expected);

    r = c.Post("/api/compare?hardware=dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480", kExample,
               "application/yaml");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const auto cmp = run_ftbound({"compare", example("llama3.1-8b-lora-r760xa.yaml"), "--hardware",
                                  "dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480", "--json"});
    ASSERT_EQ(cmp.exit_code, 0) << describe(cmp);
    EXPECT_EQ(Json::parse(r->body), Json::parse(cmp.out));

    r = c.Get("/api/catalog");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    const auto cat = run_ftbound({"catalog", "--json"});
    EXPECT_EQ(Json::parse(r->body), Json::parse(cat.out));

    r = c.Get("/");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("id=\"ftbound-default-job\""), std::string::npos);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeApi, BadBodiesGet400WithTheCommandLinesErrorLine) {
    Server server;
    auto c = client(server);
    const std::vector<std::string> bodies = {
        "model: [unclosed\n",                                                               // malformed YAML
        "- a list\n- not a job\n",                                                          // not a mapping
        "",                                                                                 // empty
        std::string("model: x\0y", 10),                                                     // NUL bytes
        kExample.substr(0, kExample.find("hardware:")) + "hardware: {system: no-such-server}\n",   // unknown name
        [] { std::string s = kExample; s.replace(s.find("micro_batch: 2"), 14, "micro_batch: -3"); return s; }(),
    };
    for (const auto& body : bodies) {
        SCOPED_TRACE(body.substr(0, 60));
        const auto r = c.Post("/api/plan", body, "application/yaml");
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400);
        EXPECT_EQ(first_error(r), cli_error_line(body));
    }
    // Paths are refused wherever the job could name one; the model's inline config.json fields are not paths.
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"model: meta-llama/Llama-3.1-8B", "model: /etc/passwd"},
             {"model: meta-llama/Llama-3.1-8B", "model: ./config.json"},
             {"system: dell-poweredge-r760xa-4x-h100-pcie", "system: ../../secret.yaml"},
             {"checkpoint_storage: nvme", "checkpoint_storage: ~/x"}}) {
        std::string body = kExample;
        body.replace(body.find(from), from.size(), to);
        const auto r = c.Post("/api/plan", body, "application/yaml");
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400) << to;
        EXPECT_NE(first_error(r).find("looks like a file path; the server takes catalog names only"), std::string::npos)
            << first_error(r);
    }
    auto r = c.Post("/api/compare?hardware=/etc/x.yaml", kExample, "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_EQ(first_error(r), "error: request: hardware: '/etc/x.yaml' looks like a file path; the server takes catalog names only");
    r = c.Post("/api/compare", kExample, "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_EQ(first_error(r), "error: request: hardware: name at least one catalog system (?hardware=a,b)");
    // Over the 1 MiB cap: refused before it is read.
    r = c.Post("/api/plan", std::string(2 << 20, '#'), "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_EQ(first_error(r), "error: request: body: larger than the 1048576-byte limit");
    r = c.Get("/no/such/route");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(first_error(r).rfind("error: request: path: no such page or API route", 0), 0u);
    // Still serving.
    r = c.Post("/api/plan", kExample, "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(server.stop(SIGINT), 0) << server.stderr_text();
}

TEST(ServeApi, Answers200ConcurrentRequests) {
    Server server;
    // A small inline job keeps the plans quick; malformed and oversized bodies, the catalog and the page mixed in.
    const std::string tiny = plan_test::tiny_job_document().dump();
    std::vector<std::thread> clients;
    std::atomic<int> wrong{0}, answered{0};
    std::mutex failures_mutex;
    std::vector<std::string> failures;
    for (int i = 0; i < 200; ++i) {
        clients.emplace_back([&, i] {
            auto c = client(server);
            const int want = i % 5 == 1 || i % 5 == 4 ? 400 : 200;
            const httplib::Result r = [&] {
                switch (i % 5) {
                    case 0: return c.Post("/api/plan", tiny, "application/yaml");
                    case 1: return c.Post("/api/plan", "train: {seq_len: [\n", "application/yaml");
                    case 2: return c.Get("/api/catalog");
                    case 3: return c.Get("/");
                    default: return c.Post("/api/plan", std::string((1 << 20) + 1, 'x'), "application/yaml");
                }
            }();
            if (r) ++answered;
            if (!r || r->status != want) {
                ++wrong;
                std::lock_guard<std::mutex> lock(failures_mutex);
                failures.push_back(std::to_string(i) + ": " + (r ? std::to_string(r->status) + " " + r->body.substr(0, 200)
                                                                 : httplib::to_string(r.error())));
            }
        });
    }
    for (auto& t : clients) t.join();
    EXPECT_EQ(answered, 200);
    EXPECT_EQ(wrong, 0) << testing::PrintToString(failures);
    auto c = client(server);
    const auto r = c.Post("/api/plan", kExample, "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
    EXPECT_NE(server.stderr_text().find("ftbound serve: stopped"), std::string::npos);
}

TEST(ServeApi, RequestPastItsTimeLimitGets503AndTheServerGoesOn) {
    // One microsecond against a compare that plans a CPU server too (its heap replay alone takes milliseconds): a
    // plan of the example alone now often answers within a millisecond, which made a 1 ms limit flaky.
    Server server({"--time-limit", "0.000001"});
    auto c = client(server);
    auto r = c.Post("/api/compare?hardware=dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480", kExample,
                    "application/yaml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(first_error(r).rfind("error: request: not answered within", 0), 0u) << r->body;
    r = c.Get("/");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeApi, BadCommandLineAndBusyPortAreInputErrors) {
    auto r = run_ftbound({"serve", "--port", "70000"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(r.err, "error: command line: --port: must be 0-65535\n");
    r = run_ftbound({"serve", "--time-limit", "0"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    Server server;
    r = run_ftbound({"serve", "--port", std::to_string(server.port())});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(server.port())), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(ServeApi, RejectClientPathsLooksEverywhereButTheInlineModel) {
    const Json ok = Json::parse(R"({"model": {"model_type": "llama", "_name_or_path": "/home/me/llama"},
                                   "hardware": {"system": "dgx-h100"}, "train": {"lora": {"targets": ["q_proj"]}}})");
    EXPECT_NO_THROW(serve::reject_client_paths(ok, "job.yaml"));
    const Json bad = Json::parse(R"({"hardware": {"gpu": {"base": "../gpus/x"}}})");
    try {
        serve::reject_client_paths(bad, "job.yaml");
        FAIL() << "a path passed";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "hardware.gpu.base");
    }
    const Json in_list = Json::parse(R"({"train": {"lora": {"targets": ["q_proj", "/etc/passwd"]}}})");
    EXPECT_THROW(serve::reject_client_paths(in_list, "job.yaml"), InputError);
}

}  // namespace
}  // namespace ftb
