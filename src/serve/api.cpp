#include "serve/api.hpp"

#include <new>

#include "ftbound/error.hpp"
#include "ftbound/plan.hpp"
#include "ops/compare.hpp"
#include "report/catalog_report.hpp"
#include "report/compare_report.hpp"
#include "report/plan_report.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"

namespace ftb::serve {

namespace {

template <class J>
std::string dump(const J& j) {
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool names_a_path(const std::string& s) {
    return looks_like_path(s) || s.find("..") != std::string::npos || s.rfind("~", 0) == 0 || s.find('\\') != std::string::npos;
}

void check_values(const Json& node, const std::string& path, const std::string& file) {
    if (node.is_string()) {
        const std::string& s = node.get_ref<const std::string&>();
        if (names_a_path(s))
            throw InputError(file, path, "'" + s + "' looks like a file path; the server takes catalog names only");
    } else if (node.is_object()) {
        for (const auto& [key, value] : node.items()) {
            const std::string child = path.empty() ? key : path + "." + key;
            if (child == "model" && value.is_object()) continue;   // inline config.json fields
            check_values(value, child, file);
        }
    } else if (node.is_array()) {
        for (size_t i = 0; i < node.size(); ++i) check_values(node[i], path + "[" + std::to_string(i) + "]", file);
    }
}

// The request's job: parsed as the command line parses a job file, with no path in it.
Json request_job(const std::string& yaml) {
    Json doc = job_document(yaml, kRequestJob);
    reject_client_paths(doc, kRequestJob);
    return doc;
}

// Runs one request; user errors become 400s with the command line's line, anything else a 500.
template <class F>
ApiAnswer guarded(F&& run) {
    try {
        return ApiAnswer{200, run()};
    } catch (const InputError& e) {
        return api_error(400, std::string("error: ") + e.what());
    } catch (const std::bad_alloc&) {
        return api_error(500, "internal error: out of memory");
    } catch (const std::exception& e) {
        return api_error(500, std::string("internal error (a bug in ftbound): ") + e.what());
    }
}

}  // namespace

void reject_client_paths(const Json& job, const std::string& file) { check_values(job, "", file); }

ApiAnswer api_error(int status, const std::string& line) {
    nlohmann::ordered_json j;
    j["errors"] = {line};
    return ApiAnswer{status, dump(j)};
}

ApiAnswer api_plan(const std::string& yaml) {
    return guarded([&] {
        const Job job = job_from_document(request_job(yaml), kRequestJob);
        return dump(plan_json(job, make_plan(job)));
    });
}

ApiAnswer api_compare(const std::string& yaml, const std::string& hardware) {
    return guarded([&] {
        const auto systems = split_system_list(hardware);
        if (systems.empty()) throw InputError("request", "hardware", "name at least one catalog system (?hardware=a,b)");
        for (const auto& s : systems)
            if (names_a_path(s))
                throw InputError("request", "hardware", "'" + s + "' looks like a file path; the server takes catalog names only");
        return dump(compare_json(compare_systems(request_job(yaml), kRequestJob, systems)));
    });
}

ApiAnswer api_catalog() {
    return guarded([] { return dump(catalog_json(Catalog::instance())); });
}

}  // namespace ftb::serve
