// The JSON API of `ftbound serve` as plain functions of a request (no HTTP here): each answers the document the
// command prints with --json, or a 400 whose `errors` hold the lines the command line prints for the same job.
#pragma once
#include <string>

#include "spec/document.hpp"

namespace ftb::serve {

struct ApiAnswer {
    int status = 200;
    std::string json;   // the body
};

// The name a request's job goes by in its error lines: the text the command line prints for a file of this name.
inline constexpr const char* kRequestJob = "job.yaml";

ApiAnswer api_plan(const std::string& yaml);
// `hardware`: comma-separated catalog system names.
ApiAnswer api_compare(const std::string& yaml, const std::string& hardware);
ApiAnswer api_catalog();
// A 4xx/5xx answer carrying error lines, e.g. {"errors": ["error: request: body: ..."]}.
ApiAnswer api_error(int status, const std::string& line);

// A server reads no file a client names: every name in the job (model, hardware, links, storage...) must be a
// catalog name. Throws InputError at the first value that looks like a path. An inline model mapping holds
// config.json fields, which are never read as files, and is not checked.
void reject_client_paths(const Json& job, const std::string& file);

}  // namespace ftb::serve
