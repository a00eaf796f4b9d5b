// `ftbound serve`: the local web UI and JSON API over HTTP, on loopback unless told otherwise. The HTTP server
// (cpp-httplib) is libftbound_http.so, loaded here at run time (http_service.hpp says why); routes, guard and
// answers stay in the binary.
//   GET  /              the page (src/web/assets/app.js)
//   GET  /api/catalog   the catalog, as `ftbound catalog --json`
//   POST /api/plan      body: a job (YAML or JSON) -> `ftbound plan --json`
//   POST /api/compare   body: a job; ?hardware=a,b -> `ftbound compare --json`
// Only requests naming the server by a loopback name (or an --allow-host name) in Host are answered (421
// otherwise), and cross-origin requests only from an --allow-origin origin (403 otherwise): see request_guard.hpp.
// Bodies are capped, every computation has a time limit, the job may name catalog entries but no file, and
// SIGINT/SIGTERM stop the server cleanly (exit 0).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ftb::serve {

struct ServeOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                        // 0: any free port (the URL passed to on_listening tells which)
    size_t max_body_bytes = 1 << 20;
    double request_seconds = 60;            // a request not answered by then gets a 503
    size_t compute_threads = 0;             // 0: one per core
    size_t connection_threads = 32;         // connections served at once (the rest wait in the accept queue)
    std::vector<std::string> allow_hosts;   // Host names accepted besides the loopback names and a named --host
    std::vector<std::string> allow_origins; // origins whose pages may use the API (CORS)
};

// Serves until SIGINT or SIGTERM; `on_listening(url)` runs once the socket is bound. Returns the exit code. Throws
// InputError when the port cannot be bound or libftbound_http.so cannot be loaded (or is from another build).
int serve(const ServeOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace ftb::serve
