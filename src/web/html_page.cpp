#include "web/html_page.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "ftbound/error.hpp"
#include "web/assets.hpp"

namespace ftb::web {

namespace {

std::string required_asset(std::string_view name) {
    const std::string_view a = asset(name);
    FTB_ASSERT(!a.empty());
    return std::string(a);
}

// Reports may load nothing; the served page may also call back its own server.
constexpr const char* kReportPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
constexpr const char* kServePolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'";

std::string page(const std::string& title, const std::string& policy, const std::string& body_attributes,
                 const std::string& body, const std::vector<std::string>& scripts) {
    std::string out = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + policy + "\">\n";
    out += "<title>" + html_escape(title) + "</title>\n<style>\n" + required_asset("report.css") + "</style>\n</head>\n";
    out += "<body" + body_attributes + ">\n" + body;
    for (const auto& s : scripts) out += "<script>\n" + required_asset(s) + "</script>\n";
    return out + "</body>\n</html>\n";
}

}  // namespace

const char* to_string(ReportKind kind) {
    switch (kind) {
        case ReportKind::plan: return "plan";
        case ReportKind::compare: return "compare";
        case ReportKind::search: return "search";
        case ReportKind::diagnose: return "diagnose";
    }
    return "plan";
}

std::string html_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string script_safe_json(const std::string& json_text) {
    std::string out;
    out.reserve(json_text.size());
    for (char c : json_text) {
        if (c == '<') out += "\\u003c";
        else out += c;
    }
    return out;
}

std::string report_page(ReportKind kind, const std::string& json_text, const std::string& title) {
    const std::string body = "<main id=\"report\"></main>\n<script type=\"application/json\" id=\"ftbound-data\">" +
                             script_safe_json(json_text) + "</script>\n";
    return page(title, kReportPolicy, std::string(" data-kind=\"") + to_string(kind) + "\"", body,
                {"charts.js", "views.js", "report.js"});
}

void write_report(const std::string& path, ReportKind kind, const std::string& json_text, const std::string& title) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError("command line", "--html", "cannot write '" + path + "'");
    f << report_page(kind, json_text, title);
    f.close();
    if (!f) throw InputError("command line", "--html", "writing '" + path + "' failed");
}

std::string serve_page() {
    const std::string job = nlohmann::json(required_asset("llama3.1-8b-lora-r760xa.yaml")).dump();
    const std::string body = "<script type=\"application/json\" id=\"ftbound-default-job\">" + script_safe_json(job) +
                             "</script>\n";
    return page("ftbound", kServePolicy, "", body, {"charts.js", "views.js", "app.js"});
}

}  // namespace ftb::web
