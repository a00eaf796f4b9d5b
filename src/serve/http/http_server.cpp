// libftbound_http.so: `ftbound serve`'s HTTP server over cpp-httplib (src/serve/http_service.hpp says why it is a
// library of its own). It binds, listens, routes and stops on SIGINT/SIGTERM; every answer comes from the functions
// of the HttpService the binary passes in.
#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include "serve/http_service.hpp"

namespace ftb::serve {
namespace {

void answer(httplib::Response& res, const HttpResponse& a) {
    res.status = a.status;
    for (const auto& [name, value] : a.headers) res.set_header(name, value);
    if (!a.content_type.empty()) res.set_content(a.body, a.content_type);
}

HttpRequest request_of(const httplib::Request& req) {
    HttpRequest r;
    r.method = req.method;
    r.body = req.body;
    if (req.has_header("Host")) r.host = req.get_header_value("Host");
    if (req.has_header("Origin")) r.origin = req.get_header_value("Origin");
    r.query = [&req](const std::string& name) { return req.get_param_value(name.c_str()); };
    return r;
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
        if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
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

void add_routes(httplib::Server& svr, const HttpService& s) {
    for (const HttpRoute& route : s.routes) {
        auto handler = [&route](const httplib::Request& req, httplib::Response& res) {
            answer(res, route.handle(request_of(req)));
        };
        if (route.method == "GET") svr.Get(route.path, handler);
        else if (route.method == "POST") svr.Post(route.path, handler);
        else throw std::invalid_argument("HttpRoute: method " + route.method + " is not GET or POST");
    }
    // Statuses set by httplib itself (oversized body, unknown route) get the service's answer; a route's own
    // answers (a body already set) pass as they are.
    svr.set_error_handler(httplib::Server::HandlerWithResponse([&s](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        answer(res, s.on_http_error(res.status));
        return httplib::Server::HandlerResponse::Handled;
    }));
    svr.set_exception_handler(
        [&s](const httplib::Request&, httplib::Response& res, std::exception_ptr) { answer(res, s.on_exception()); });
    svr.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
        BeforeRouting before = s.before_routing(request_of(req));
        for (const auto& [name, value] : before.headers) res.set_header(name, value);
        if (!before.answer) return httplib::Server::HandlerResponse::Unhandled;
        answer(res, *before.answer);
        return httplib::Server::HandlerResponse::Handled;
    });
}

}  // namespace
}  // namespace ftb::serve

extern "C" __attribute__((visibility("default"))) int ftbound_http_abi() { return ftb::serve::kHttpServiceAbi; }

extern "C" __attribute__((visibility("default"))) int ftbound_http_serve(const ftb::serve::HttpService& s) {
    using namespace ftb::serve;
    httplib::Server svr;
    const size_t connections = s.connection_threads;
    svr.new_task_queue = [connections] { return new httplib::ThreadPool(connections); };
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a second server share the port.
    // The listening socket is remembered to lift httplib's accept backlog (5) once it listens.
    auto listening_fd = std::make_shared<int>(-1);
    svr.set_socket_options([listening_fd](int sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        *listening_fd = sock;
    });
    svr.set_payload_max_length(s.max_body_bytes);
    svr.set_read_timeout(5, 0);
    svr.set_write_timeout(5, 0);
    svr.set_keep_alive_timeout(2);
    SignalWatcher signals(svr);
    add_routes(svr, s);
    int port = s.port;
    if (port == 0) port = svr.bind_to_any_port(s.host);
    else if (!svr.bind_to_port(s.host, port)) port = -1;
    if (port <= 0) return kHttpCannotBind;
    // A burst of connections (a page's requests, a script's) would overflow a backlog of 5 and see dropped or
    // reset connections; listen() again on a listening socket only changes its backlog (Linux listen(2)).
    if (*listening_fd >= 0) ::listen(*listening_fd, SOMAXCONN);
    s.on_listening(port);
    return svr.listen_after_bind() ? kHttpStopped : kHttpFailed;
}
