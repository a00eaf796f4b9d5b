// Which requests `ftbound serve` answers, by their Host and Origin headers (issue #30). A page on any web site
// can make a browser send requests to 127.0.0.1: a cross-origin POST with Content-Type text/plain needs no
// preflight, and with DNS rebinding (the attacker's name resolving to 127.0.0.1) the page can even read the
// answers. So the server answers only requests that name it by a loopback name (or one it was told to accept)
// in Host, and only same-origin requests from a browser (an Origin header naming another site is refused)
// unless that origin was allowed. Plain functions of the headers; src/serve/server.cpp applies them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "serve/api.hpp"

namespace ftb::serve {

struct RequestGuard {
    int port = 0;                           // the port the server listens on (its pages' origin)
    std::vector<std::string> extra_hosts;   // host names accepted besides 127.0.0.1, localhost and [::1]
    std::vector<std::string> origins;       // origins (scheme://host[:port]) allowed to make cross-origin requests
};

// "evil.example.com:8080" -> {"evil.example.com", "8080"}; "[::1]:80" -> {"[::1]", "80"}; no port: "".
struct HostPort {
    std::string name, port;
};
HostPort split_host_header(const std::string& host);

// An origin as browsers send it: lower-case scheme and host, no trailing slash, no default port.
std::string normalized_origin(const std::string& origin);

// nullopt when the request may be answered; otherwise the answer: 421 for a Host whose name is not one this
// server answers (any port: a forwarded one is fine), 403 for a request whose Origin is neither this server's
// (http://NAME:PORT for an accepted name) nor an allowed one. `origin` is nullopt without an Origin header.
std::optional<ApiAnswer> check_request(const RequestGuard& guard, const std::optional<std::string>& host,
                                       const std::optional<std::string>& origin);

// Whether `origin` was allowed by --allow-origin (such requests get Access-Control-Allow-Origin).
bool is_allowed_cross_origin(const RequestGuard& guard, const std::string& origin);

}  // namespace ftb::serve
