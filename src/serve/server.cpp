#include "serve/server.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "cluster/library_loader.hpp"
#include "ftbound/error.hpp"
#include "serve/api.hpp"
#include "serve/compute_pool.hpp"
#include "serve/http_service.hpp"
#include "serve/request_guard.hpp"
#include "web/html_page.hpp"

namespace ftb::serve {

namespace {

HttpResponse response(const ApiAnswer& a) { return {a.status, a.json, "application/json", {}}; }

// The text of the error line for statuses the HTTP server sets itself (before any route runs).
std::string status_line(int status, size_t max_body_bytes) {
    switch (status) {
        case 400: return "error: request: malformed HTTP request";
        case 404: return "error: request: path: no such page or API route (GET /, GET /api/catalog, POST /api/plan, "
                         "POST /api/compare)";
        case 405: return "error: request: method: not allowed on this route";
        case 413: return "error: request: body: larger than the " + std::to_string(max_body_bytes) + "-byte limit";
        case 414: return "error: request: path: too long";
        default: return "error: request: HTTP status " + std::to_string(status);
    }
}

std::vector<HttpRoute> routes(ComputePool& pool, const ServeOptions& o) {
    // Microseconds: a limit under a millisecond (--time-limit 0.0005) must not round down to "already late".
    const auto limit = std::chrono::microseconds(static_cast<long long>(std::ceil(o.request_seconds * 1e6)));
    auto compute = [&pool, limit, seconds = o.request_seconds](std::function<ApiAnswer()> work) {
        auto a = pool.run(std::move(work), limit);
        return response(a ? *a
                          : api_error(503, "error: request: not answered within " + std::to_string(int(seconds)) +
                                               " s (the server is busy or the job is too large); try again"));
    };
    const std::string page = web::serve_page();
    return {
        {"GET", "/", [page](const HttpRequest&) { return HttpResponse{200, page, "text/html; charset=utf-8", {}}; }},
        {"GET", "/api/catalog", [compute](const HttpRequest&) { return compute(api_catalog); }},
        {"POST", "/api/plan", [compute](const HttpRequest& r) { return compute([body = r.body] { return api_plan(body); }); }},
        {"POST", "/api/compare",
         [compute](const HttpRequest& r) {
             return compute([body = r.body, hw = r.query("hardware")] { return api_compare(body, hw); });
         }},
    };
}

// Every request passes the Host/Origin check before routing; an allowed cross-origin page gets the CORS
// headers, and its preflight (OPTIONS) an empty 204.
BeforeRouting guard_request(const RequestGuard& guard, const HttpRequest& req) {
    BeforeRouting out;
    if (auto refused = check_request(guard, req.host, req.origin)) {
        out.answer = response(*refused);
        return out;
    }
    if (req.origin && is_allowed_cross_origin(guard, *req.origin)) {
        out.headers = {{"Access-Control-Allow-Origin", *req.origin}, {"Vary", "Origin"}};
        if (req.method == "OPTIONS")
            out.answer = HttpResponse{204, "", "",
                                      {{"Access-Control-Allow-Methods", "GET, POST"},
                                       {"Access-Control-Allow-Headers", "Content-Type"}}};
    }
    return out;
}

// The --host address as a Host header names it, when it is a name or address of its own (not a wildcard).
std::optional<std::string> bound_host_name(const std::string& host) {
    if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") return std::nullopt;
    if (host.find(':') != std::string::npos && host.front() != '[') return "[" + host + "]";
    return host;
}

using ServeHttp = int (*)(const HttpService&);

// libftbound_http.so: $FTBOUND_HTTP_LIBRARY, next to the binary, ../lib/ of it, then the loader's path.
ServeHttp load_http_server() {
    std::string path, error;
    void* lib = cluster::load_library("libftbound_http.so", "FTBOUND_HTTP_LIBRARY", path, error);
    if (!lib)
        throw InputError("serve", "libftbound_http.so",
                         "the HTTP server library was not found (" + error +
                             "): it is built and installed with ftbound (next to the binary or in ../lib), or set "
                             "FTBOUND_HTTP_LIBRARY");
    auto abi = reinterpret_cast<int (*)()>(dlsym(lib, "ftbound_http_abi"));
    auto serve_http = reinterpret_cast<ServeHttp>(dlsym(lib, "ftbound_http_serve"));
    if (!abi || !serve_http || abi() != kHttpServiceAbi)
        throw InputError(path, "serve", "is from another build of ftbound (interface version differs); reinstall ftbound");
    return serve_http;
}

}  // namespace

int serve(const ServeOptions& o, const std::function<void(const std::string& url)>& on_listening) {
    if (o.port < 0 || o.port > 65535) throw InputError("command line", "--port", "must be 0-65535");
    const ServeHttp serve_http = load_http_server();
    const size_t cores = o.compute_threads ? o.compute_threads : std::max(1u, std::thread::hardware_concurrency());
    ComputePool pool(cores, 256);
    auto guard = std::make_shared<RequestGuard>();
    guard->extra_hosts = o.allow_hosts;
    if (auto name = bound_host_name(o.host)) guard->extra_hosts.push_back(*name);
    guard->origins = o.allow_origins;

    HttpService service;
    service.host = o.host;
    service.port = o.port;
    service.max_body_bytes = o.max_body_bytes;
    service.connection_threads = o.connection_threads;
    service.routes = routes(pool, o);
    service.before_routing = [guard](const HttpRequest& req) { return guard_request(*guard, req); };
    // An oversized body is a bad request like a malformed one (400).
    service.on_http_error = [max_body = o.max_body_bytes](int status) {
        const std::string line = status_line(status, max_body);
        return response(api_error(status == 413 ? 400 : status, line));
    };
    service.on_exception = [] { return response(api_error(500, "internal error (a bug in ftbound): a request failed")); };
    service.on_listening = [&](int port) {
        guard->port = port;   // requests are read only after this returns
        const bool ipv6 = o.host.find(':') != std::string::npos;
        on_listening("http://" + (ipv6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(port) + "/");
    };
    const int code = serve_http(service);
    if (code == kHttpCannotBind)
        throw InputError("command line", "--host/--port",
                         "cannot listen on " + o.host + ":" + std::to_string(o.port) + " (address in use or not this machine's)");
    return code == kHttpStopped ? 0 : 1;
}

}  // namespace ftb::serve
