#include "serve/server.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "ftbound/error.hpp"
#include "serve/api.hpp"
#include "serve/compute_pool.hpp"
#include "serve/request_guard.hpp"
#include "web/html_page.hpp"

namespace ftb::serve {

namespace {

constexpr const char* kJson = "application/json";

void answer(httplib::Response& res, const ApiAnswer& a) {
    res.status = a.status;
    res.set_content(a.json, kJson);
}

// The text of the error line for statuses httplib sets itself (before any handler runs).
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

// SIGINT/SIGTERM: the handler only writes a byte to a pipe (async-signal-safe, whichever thread takes the
// signal: libraries such as OpenBLAS start threads of their own); a watcher thread reads it and stops the server.
std::atomic<int> g_stop_fd{-1};

extern "C" void on_stop_signal(int) {
    const int fd = g_stop_fd.load();
    const char byte = 1;
    if (fd >= 0) [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
}

class SignalWatcher {
public:
    explicit SignalWatcher(httplib::Server& server) {
        if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) throw InternalError("pipe2 failed");
        g_stop_fd = fds_[1];
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
        thread_ = std::thread([this, &server] {
            while (!done_) {
                pollfd p{fds_[0], POLLIN, 0};
                if (poll(&p, 1, 200) > 0 && (p.revents & POLLIN)) {
                    server.stop();
                    return;
                }
            }
        });
    }
    ~SignalWatcher() {
        done_ = true;
        thread_.join();
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
        g_stop_fd = -1;
        close(fds_[0]);
        close(fds_[1]);
    }

private:
    int fds_[2] = {-1, -1};
    struct sigaction old_int_ {}, old_term_ {};
    std::atomic<bool> done_{false};
    std::thread thread_;
};

void add_routes(httplib::Server& svr, ComputePool& pool, const ServeOptions& o) {
    const auto limit = std::chrono::milliseconds(static_cast<long long>(o.request_seconds * 1000));
    auto compute = [&pool, limit, o](httplib::Response& res, std::function<ApiAnswer()> work) {
        auto a = pool.run(std::move(work), limit);
        answer(res, a ? *a
                      : api_error(503, "error: request: not answered within " + std::to_string(int(o.request_seconds)) +
                                           " s (the server is busy or the job is too large); try again"));
    };
    const std::string page = web::serve_page();
    svr.Get("/", [page](const httplib::Request&, httplib::Response& res) { res.set_content(page, "text/html; charset=utf-8"); });
    svr.Get("/api/catalog", [compute](const httplib::Request&, httplib::Response& res) { compute(res, api_catalog); });
    svr.Post("/api/plan", [compute](const httplib::Request& req, httplib::Response& res) {
        compute(res, [body = req.body] { return api_plan(body); });
    });
    svr.Post("/api/compare", [compute](const httplib::Request& req, httplib::Response& res) {
        compute(res, [body = req.body, hw = req.get_param_value("hardware")] { return api_compare(body, hw); });
    });
    const size_t max_body = o.max_body_bytes;
    // Statuses set by httplib itself (oversized body, unknown route) get an error line too; an oversized body is a
    // bad request like a malformed one (400).
    svr.set_error_handler(httplib::Server::HandlerWithResponse(
        [max_body](const httplib::Request&, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            const std::string line = status_line(res.status, max_body);
            if (res.status == 413) res.status = 400;
            answer(res, api_error(res.status, line));
            return httplib::Server::HandlerResponse::Handled;
        }));
    svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        answer(res, api_error(500, "internal error (a bug in ftbound): a request failed"));
    });
}

// The --host address as a Host header names it, when it is a name or address of its own (not a wildcard).
std::optional<std::string> bound_host_name(const std::string& host) {
    if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") return std::nullopt;
    if (host.find(':') != std::string::npos && host.front() != '[') return "[" + host + "]";
    return host;
}

// Every request passes the Host/Origin check before routing; an allowed cross-origin page gets the CORS
// headers, and its preflight (OPTIONS) an empty 204.
void add_request_guard(httplib::Server& svr, std::shared_ptr<const RequestGuard> guard) {
    svr.set_pre_routing_handler([guard](const httplib::Request& req, httplib::Response& res) {
        auto header = [&req](const char* name) -> std::optional<std::string> {
            if (!req.has_header(name)) return std::nullopt;
            return req.get_header_value(name);
        };
        const auto origin = header("Origin");
        if (auto refused = check_request(*guard, header("Host"), origin)) {
            answer(res, *refused);
            return httplib::Server::HandlerResponse::Handled;
        }
        if (origin && is_allowed_cross_origin(*guard, *origin)) {
            res.set_header("Access-Control-Allow-Origin", *origin);
            res.set_header("Vary", "Origin");
            if (req.method == "OPTIONS") {
                res.set_header("Access-Control-Allow-Methods", "GET, POST");
                res.set_header("Access-Control-Allow-Headers", "Content-Type");
                res.status = 204;
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
}

}  // namespace

int serve(const ServeOptions& o, const std::function<void(const std::string& url)>& on_listening) {
    if (o.port < 0 || o.port > 65535) throw InputError("command line", "--port", "must be 0-65535");
    httplib::Server svr;
    const size_t connections = o.connection_threads;
    svr.new_task_queue = [connections] { return new httplib::ThreadPool(connections); };
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a second server share the port.
    // The listening socket is remembered to lift httplib's accept backlog (5) once it listens.
    auto listening_fd = std::make_shared<int>(-1);
    svr.set_socket_options([listening_fd](int sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        *listening_fd = sock;
    });
    svr.set_payload_max_length(o.max_body_bytes);
    svr.set_read_timeout(5, 0);
    svr.set_write_timeout(5, 0);
    svr.set_keep_alive_timeout(2);
    const size_t cores = o.compute_threads ? o.compute_threads : std::max(1u, std::thread::hardware_concurrency());
    SignalWatcher signals(svr);
    ComputePool pool(cores, 256);
    add_routes(svr, pool, o);
    auto guard = std::make_shared<RequestGuard>();
    guard->extra_hosts = o.allow_hosts;
    if (auto name = bound_host_name(o.host)) guard->extra_hosts.push_back(*name);
    guard->origins = o.allow_origins;
    add_request_guard(svr, guard);
    int port = o.port;
    if (port == 0) port = svr.bind_to_any_port(o.host);
    else if (!svr.bind_to_port(o.host, port)) port = -1;
    if (port <= 0)
        throw InputError("command line", "--host/--port",
                         "cannot listen on " + o.host + ":" + std::to_string(o.port) + " (address in use or not this machine's)");
    // A burst of connections (a page's requests, a script's) would overflow a backlog of 5 and see dropped or
    // reset connections; listen() again on a listening socket only changes its backlog (Linux listen(2)).
    if (*listening_fd >= 0) ::listen(*listening_fd, SOMAXCONN);
    guard->port = port;   // requests are read only after listen_after_bind below
    const bool ipv6 = o.host.find(':') != std::string::npos;
    on_listening("http://" + (ipv6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(port) + "/");
    return svr.listen_after_bind() ? 0 : 1;
}

}  // namespace ftb::serve
