// `ftbound serve` answers only requests that name it by a loopback name in Host, and only same-origin browser
// requests unless --allow-origin names the page's origin (issue #30: `Host: evil.example.com` got 200, and a
// cross-origin `POST /api/plan` with Content-Type text/plain, which a browser sends without a preflight, was
// planned). Raw HTTP requests on an ephemeral port, so every header is exactly what a browser or an attacker's
// page would send; plus the guard's functions directly.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "browser_test_util.hpp"
#include "ftbound/error.hpp"
#include "plan_test_util.hpp"
#include "serve/request_guard.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using browser_test::Server;

struct RawAnswer {
    int status = 0;
    std::string head, body;
};

// Sends `request` as is to 127.0.0.1:port and reads the answer until the server closes the connection.
RawAnswer send_raw(int port, const std::string& request) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0);
    timeval tv{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    RawAnswer out;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return out;
    }
    for (size_t sent = 0; sent < request.size();) {
        const ssize_t n = write(fd, request.data() + sent, request.size() - sent);
        if (n <= 0) break;
        sent += size_t(n);
    }
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) all.append(buf, size_t(n));
    close(fd);
    const size_t end = all.find("\r\n\r\n");
    out.head = all.substr(0, end);
    out.body = end == std::string::npos ? "" : all.substr(end + 4);
    if (all.rfind("HTTP/1.1 ", 0) == 0) out.status = std::stoi(all.substr(9, 3));
    return out;
}

std::string request(const std::string& method, const std::string& path, const std::vector<std::string>& headers,
                    const std::string& body = "") {
    std::string r = method + " " + path + " HTTP/1.1\r\n";
    for (const auto& h : headers) r += h + "\r\n";
    if (method == "POST") r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return r + "Connection: close\r\n\r\n" + body;
}

std::string error_of(const RawAnswer& a) {
    const Json j = Json::parse(a.body, nullptr, false);
    return j.is_object() && j.contains("errors") && !j["errors"].empty() ? j["errors"][0].get<std::string>()
                                                                        : "not an error document: " + a.body;
}

const std::string kJob = spec_test::slurp(plan_test::example("llama3.1-8b-lora-r760xa.yaml"));

TEST(ServeGuard, OnlyLoopbackHostNamesAreAnswered) {
    Server server;
    const std::string port = std::to_string(server.port());
    for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "LocalHost:" + port,
                                   std::string("127.0.0.1"), std::string("localhost"), std::string("[::1]"),
                                   "localhost:9000" /* ssh -L 9000:localhost:PORT */}) {
        const auto a = send_raw(server.port(), request("GET", "/api/catalog", {"Host: " + host}));
        EXPECT_EQ(a.status, 200) << host << "\n" << a.head;
    }
    for (const std::string& host : std::vector<std::string>{"evil.example.com", "evil.example.com:" + port, "127.0.0.1.evil.example.com",
                                   "localhost.evil.example.com:" + port, "[::1].evil:" + port, "10.0.0.1:" + port,
                                   "localhost:80x", "localhost:99999", "0.0.0.0:" + port}) {
        for (const auto& req : std::vector<std::string>{request("GET", "/api/catalog", {"Host: " + host}), request("GET", "/", {"Host: " + host}),
                                request("POST", "/api/plan", {"Host: " + host, "Content-Type: application/yaml"}, kJob)}) {
            const auto a = send_raw(server.port(), req);
            EXPECT_EQ(a.status, 421) << host << "\n" << a.head;
            EXPECT_NE(a.head.find("Content-Type: application/json"), std::string::npos) << a.head;
            EXPECT_EQ(error_of(a).rfind("error: request: Host: '" + host + "' is not this server", 0), 0u) << error_of(a);
        }
    }
    // HTTP/1.0 without a Host header is refused too: a rebinding page's request always has one, but there is no
    // name to check.
    const auto a = send_raw(server.port(), "GET /api/catalog HTTP/1.0\r\n\r\n");
    EXPECT_EQ(a.status, 421) << a.head;
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeGuard, CrossOriginRequestsAreRefusedUnlessAllowed) {
    Server server;
    const std::string port = std::to_string(server.port());
    const std::string host = "Host: 127.0.0.1:" + port;
    // The no-preflight attack: a form-like text/plain POST from another site's page.
    for (const std::string& origin : std::vector<std::string>{"https://evil.example.com", "http://localhost:3000", "null",
                                     "http://127.0.0.1:" + port + ".evil.example.com", "https://127.0.0.1:" + port}) {
        auto a = send_raw(server.port(),
                          request("POST", "/api/plan", {host, "Origin: " + origin, "Content-Type: text/plain"}, kJob));
        EXPECT_EQ(a.status, 403) << origin << "\n" << a.head;
        EXPECT_EQ(a.body.find("\"memory\""), std::string::npos) << "planned for another site's page";
        EXPECT_EQ(error_of(a).rfind("error: request: Origin: '" + origin + "' is another site", 0), 0u) << error_of(a);
        EXPECT_NE(error_of(a).find("--allow-origin"), std::string::npos);
        EXPECT_EQ(a.head.find("Access-Control-Allow-Origin"), std::string::npos) << a.head;
        a = send_raw(server.port(), request("OPTIONS", "/api/plan", {host, "Origin: " + origin,
                                                                    "Access-Control-Request-Method: POST"}));
        EXPECT_EQ(a.status, 403) << origin << "\n" << a.head;
    }
    // The server's own page (same origin, under any name it answers) and clients that send no Origin are planned.
    for (const std::vector<std::string>& headers :
         {std::vector<std::string>{host, "Origin: http://127.0.0.1:" + port},
          {"Host: localhost:" + port, "Origin: http://localhost:" + port}, {"Host: [::1]:" + port, "Origin: http://[::1]:" + port},
          {"Host: localhost:9000", "Origin: http://localhost:9000"}, {host}}) {
        auto h = headers;
        h.push_back("Content-Type: text/plain");
        const auto a = send_raw(server.port(), request("POST", "/api/plan", h, kJob));
        EXPECT_EQ(a.status, 200) << headers.back() << "\n" << a.head;
    }
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeGuard, AllowOriginAndAllowHostOpenWhatTheyName) {
    Server server({"--allow-origin", "https://tools.example.com", "--allow-host", "ftbound.internal"});
    const std::string port = std::to_string(server.port());
    const std::string host = "Host: 127.0.0.1:" + port;
    auto a = send_raw(server.port(), request("OPTIONS", "/api/plan",
                                             {host, "Origin: https://tools.example.com", "Access-Control-Request-Method: POST",
                                              "Access-Control-Request-Headers: content-type"}));
    EXPECT_EQ(a.status, 204) << a.head;
    EXPECT_NE(a.head.find("Access-Control-Allow-Origin: https://tools.example.com"), std::string::npos) << a.head;
    a = send_raw(server.port(), request("POST", "/api/plan",
                                        {host, "Origin: https://tools.example.com", "Content-Type: application/yaml"}, kJob));
    EXPECT_EQ(a.status, 200) << a.head;
    EXPECT_NE(a.head.find("Access-Control-Allow-Origin: https://tools.example.com"), std::string::npos) << a.head;
    // Only the origin named: another one is still refused.
    a = send_raw(server.port(), request("POST", "/api/plan", {host, "Origin: https://tools.example.org",
                                                               "Content-Type: text/plain"}, kJob));
    EXPECT_EQ(a.status, 403) << a.head;
    a = send_raw(server.port(), request("GET", "/api/catalog", {"Host: ftbound.internal:" + port}));
    EXPECT_EQ(a.status, 200) << a.head;
    a = send_raw(server.port(), request("GET", "/api/catalog", {"Host: ftbound.example.com:" + port}));
    EXPECT_EQ(a.status, 421) << a.head;
    EXPECT_NE(error_of(a).find("ftbound.internal"), std::string::npos) << error_of(a);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeGuard, BadAllowOptionsAreInputErrors) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"serve", "--port", "0", "--allow-origin", "tools.example.com"},
                                                 {"serve", "--port", "0", "--allow-host", "a b"}}) {
        const auto r = spec_test::run_ftbound(args, 20);
        EXPECT_EQ(r.exit_code, 2) << spec_test::describe(r);
        EXPECT_EQ(r.err.rfind("error: command line: " + args[3] + ": ", 0), 0u) << r.err;
    }
}

// The API body is read by the job reader: a 40,000-digit micro_batch is a 400 with one error line.
TEST(ServeGuard, LongNumberInTheBodyIs400) {
    Server server;
    std::string job = kJob;
    job.replace(job.find("micro_batch: 2"), 14, "micro_batch: " + std::string(40000, '9'));
    const auto a = send_raw(server.port(), request("POST", "/api/plan", {"Host: 127.0.0.1:" + std::to_string(server.port()),
                                                                        "Content-Type: application/yaml"}, job));
    EXPECT_EQ(a.status, 400) << a.head;
    EXPECT_EQ(error_of(a).rfind("error: job.yaml: train.micro_batch: out of range", 0), 0u) << error_of(a).substr(0, 300);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.stderr_text();
}

TEST(ServeGuard, HeaderFunctions) {
    using serve::split_host_header;
    EXPECT_EQ(split_host_header("[::1]:8080").name, "[::1]");
    EXPECT_EQ(split_host_header("[::1]:8080").port, "8080");
    EXPECT_EQ(split_host_header("[::1]").port, "");
    EXPECT_EQ(split_host_header("localhost:80").name, "localhost");
    EXPECT_EQ(serve::normalized_origin("HTTP://LocalHost:80/"), "http://localhost");
    EXPECT_EQ(serve::normalized_origin("https://a.example:443"), "https://a.example");
    serve::RequestGuard g;
    g.port = 8080;
    EXPECT_FALSE(serve::check_request(g, std::string("localhost:8080"), std::nullopt));
    EXPECT_FALSE(serve::check_request(g, std::string("localhost:8080"), std::string("http://127.0.0.1:8080")));
    EXPECT_EQ(serve::check_request(g, std::string("localhost:8080"), std::string("http://127.0.0.1:8081"))->status, 403);
    EXPECT_EQ(serve::check_request(g, std::nullopt, std::nullopt)->status, 421);
    EXPECT_EQ(serve::check_request(g, std::string(""), std::nullopt)->status, 421);
}

}  // namespace
}  // namespace ftb
