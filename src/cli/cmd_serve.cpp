// `ftbound serve [--host 127.0.0.1] [--port 8080] [--time-limit SECONDS] [--allow-host NAME]... [--allow-origin URL]...`:
// the local web UI and JSON API.
#include <iostream>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "serve/server.hpp"

namespace ftb::cli {
namespace {

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

const Register reg{Command{
    "serve", "local web UI and JSON API: POST /api/plan, /api/compare (the job as the body), GET /api/catalog",
    [](CLI::App& sub) -> std::function<int()> {
        auto o = std::make_shared<serve::ServeOptions>();
        sub.add_option("--host", o->host, "address to listen on (default 127.0.0.1: this machine only)");
        sub.add_option("--port", o->port, "port (default 8080; 0 picks a free one)");
        sub.add_option("--time-limit", o->request_seconds, "seconds a request may take before it is answered 503 (default 60)");
        sub.add_option("--allow-host", o->allow_hosts,
                       "a Host name to answer besides 127.0.0.1, localhost, [::1] and the --host address (repeatable)")
            ->delimiter(',');
        sub.add_option("--allow-origin", o->allow_origins,
                       "an origin (e.g. https://tools.example.com) whose pages may call the API (repeatable)")
            ->delimiter(',');
        return [o] {
            if (!(o->request_seconds > 0 && o->request_seconds <= 3600))
                throw InputError("command line", "--time-limit", "must be more than 0 and at most 3600 seconds");
            for (const auto& origin : o->allow_origins)
                if (origin.rfind("http://", 0) != 0 && origin.rfind("https://", 0) != 0)
                    throw InputError("command line", "--allow-origin",
                                     "'" + origin + "' is not an origin; give scheme://host[:port], e.g. http://localhost:3000");
            for (const auto& host : o->allow_hosts)
                if (host.empty() || host.find_first_of("/ ") != std::string::npos)
                    throw InputError("command line", "--allow-host", "'" + host + "' is not a host name");
            if (!is_loopback(o->host))
                std::cerr << "warning: serving on " << o->host
                          << ": anyone who can reach this address can run plans on this machine\n";
            const int code = serve::serve(*o, [](const std::string& url) {
                std::cout << "ftbound serve: " << url << " (Ctrl-C stops it)" << std::endl;
            });
            std::cerr << "ftbound serve: stopped\n";
            return code;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
