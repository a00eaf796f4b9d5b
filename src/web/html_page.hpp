// Self-contained HTML pages: a command's JSON document embedded in the page and drawn by the page's own scripts
// (src/web/assets/views.js), with the stylesheet inline. No network is needed to open one; the page's content
// security policy forbids any.
#pragma once
#include <string>

namespace ftb::web {

enum class ReportKind { plan, compare, search, diagnose };
const char* to_string(ReportKind kind);

// The report page of one command's --json document (its text, as printed).
std::string report_page(ReportKind kind, const std::string& json_text, const std::string& title);
// Writes report_page to `path`; an unwritable path is an InputError on --html.
void write_report(const std::string& path, ReportKind kind, const std::string& json_text, const std::string& title);

// The page of `ftbound serve` (it talks to the server's JSON API).
std::string serve_page();

// Text safe inside HTML elements and attribute values.
std::string html_escape(const std::string& text);
// JSON text safe inside a <script> element: '<' written as \u003c, so no "</script>" or "<!--" can appear.
std::string script_safe_json(const std::string& json_text);

}  // namespace ftb::web
