#include "serve/request_guard.hpp"

#include <algorithm>
#include <cctype>

namespace ftb::serve {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool is_loopback_name(const std::string& name) { return name == "127.0.0.1" || name == "localhost" || name == "[::1]"; }

std::string accepted_names(const RequestGuard& g) {
    std::string out = "127.0.0.1, localhost, [::1]";
    for (const auto& h : g.extra_hosts) out += ", " + h;
    return out;
}

// A Host header's port: digits, at most 65535. Any port is accepted (ssh -L 9000:localhost:8080 makes the
// browser name the forwarded port); the name is what DNS rebinding changes.
bool is_port_text(const std::string& port) {
    return port.size() <= 5 && std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) &&
           (port.empty() || std::stoi(port) <= 65535);
}

bool is_known_name(const RequestGuard& g, const std::string& name) {
    return is_loopback_name(name) ||
           std::any_of(g.extra_hosts.begin(), g.extra_hosts.end(), [&](const std::string& h) { return lower(h) == name; });
}

// The Origin of a page this server served: http://NAME:PORT for a name it answers, on its port or on the port
// the request's Host names (a forwarded port).
bool is_own_origin(const RequestGuard& g, const std::string& host_header, const std::string& origin) {
    const std::string o = normalized_origin(origin);
    if (o == normalized_origin("http://" + host_header)) return true;
    const std::string prefix = "http://";
    if (o.rfind(prefix, 0) != 0) return false;
    const HostPort hp = split_host_header(o.substr(prefix.size()));
    return is_known_name(g, hp.name) && hp.port == std::to_string(g.port);
}

}  // namespace

HostPort split_host_header(const std::string& host) {
    if (!host.empty() && host.front() == '[') {   // an IPv6 literal
        const size_t close = host.find(']');
        if (close == std::string::npos) return {host, ""};
        const std::string rest = host.substr(close + 1);
        return {host.substr(0, close + 1), rest.size() > 1 && rest[0] == ':' ? rest.substr(1) : rest};
    }
    const size_t colon = host.rfind(':');
    if (colon == std::string::npos) return {host, ""};
    return {host.substr(0, colon), host.substr(colon + 1)};
}

std::string normalized_origin(const std::string& origin) {
    std::string o = lower(origin);
    while (!o.empty() && o.back() == '/') o.pop_back();
    for (const char* d : {"http://", "https://"}) {
        const std::string scheme(d);
        if (o.rfind(scheme, 0) != 0) continue;
        const std::string suffix = scheme == "http://" ? ":80" : ":443";
        if (o.size() > suffix.size() && o.compare(o.size() - suffix.size(), suffix.size(), suffix) == 0)
            o.resize(o.size() - suffix.size());
    }
    return o;
}

bool is_allowed_cross_origin(const RequestGuard& g, const std::string& origin) {
    const std::string o = normalized_origin(origin);
    return std::any_of(g.origins.begin(), g.origins.end(), [&](const std::string& a) { return normalized_origin(a) == o; });
}

std::optional<ApiAnswer> check_request(const RequestGuard& g, const std::optional<std::string>& host,
                                       const std::optional<std::string>& origin) {
    if (!host || host->empty())
        return api_error(421, "error: request: Host: missing; this server answers requests naming it as " +
                                  accepted_names(g));
    const HostPort hp = split_host_header(*host);
    if (!is_known_name(g, lower(hp.name)) || !is_port_text(hp.port))
        return api_error(421, "error: request: Host: '" + host->substr(0, 200) + "' is not this server (it answers " +
                                  accepted_names(g) + "); start it with --allow-host NAME to accept another name");
    if (!origin) return std::nullopt;   // not sent by a browser page (curl, scripts), or a same-origin GET
    if (is_own_origin(g, *host, *origin) || is_allowed_cross_origin(g, *origin)) return std::nullopt;
    const std::string shown = origin->substr(0, 200);
    return api_error(403, "error: request: Origin: '" + shown + "' is another site than this server (http://" +
                              host->substr(0, 200) + "); start the server with --allow-origin " + shown +
                              " to let pages from it use the API");
}

}  // namespace ftb::serve
