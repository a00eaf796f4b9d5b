// The boundary between `ftbound serve` and libftbound_http.so, the HTTP server (cpp-httplib) it loads at run time.
// cpp-httplib brings OpenSSL, brotli and zlib, whose loading and start-up cost every command ~2.5 ms of CPU when
// linked into the binary (docs/performance.md); loaded with dlopen, only `serve` pays it. The library knows HTTP and
// nothing of ftbound: routes, the Host/Origin guard and the error lines are functions the binary hands it.
// Both sides are built from this header by the same build, and the library answers kHttpServiceAbi so that a
// library of another build is refused rather than misread.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ftb::serve {

// Bump whenever a struct below or ftbound_http_serve's signature changes.
inline constexpr int kHttpServiceAbi = 1;

struct HttpRequest {
    std::string method;                  // GET, POST, OPTIONS...
    std::string body;
    std::optional<std::string> host;     // the Host header, when sent
    std::optional<std::string> origin;   // the Origin header, when sent
    std::function<std::string(const std::string& name)> query;   // a query parameter, "" when absent
};

struct HttpResponse {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";   // empty: no body, no Content-Type (a preflight's 204)
    std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpRoute {
    std::string method;   // GET or POST
    std::string path;
    std::function<HttpResponse(const HttpRequest&)> handle;
};

// What runs before routing: `answer` ends the request there; otherwise `headers` join whatever the route answers.
struct BeforeRouting {
    std::optional<HttpResponse> answer;
    std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpService {
    std::string host;
    int port = 0;   // 0: any free port
    size_t max_body_bytes = 0;
    size_t connection_threads = 1;
    std::vector<HttpRoute> routes;
    std::function<BeforeRouting(const HttpRequest&)> before_routing;
    // The answer for a status the HTTP server set itself (unknown route 404, oversized body 413, malformed 400...).
    std::function<HttpResponse(int status)> on_http_error;
    // The answer when a route throws.
    std::function<HttpResponse()> on_exception;
    // Once the socket is bound, before the first request is read: the port it got.
    std::function<void(int port)> on_listening;
};

// The library's results (ftbound_http_serve's return value).
inline constexpr int kHttpStopped = 0;      // SIGINT/SIGTERM stopped it
inline constexpr int kHttpFailed = 1;       // listening ended for another reason
inline constexpr int kHttpCannotBind = 2;   // the address/port could not be bound

}  // namespace ftb::serve

// The library's two entry points (C names, looked up with dlsym).
extern "C" int ftbound_http_abi();
// Serves until SIGINT or SIGTERM (which it catches while serving and restores afterwards).
extern "C" int ftbound_http_serve(const ftb::serve::HttpService& service);
