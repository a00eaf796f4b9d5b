// The pages in a real browser (headless Chromium, installed by scripts/setup.sh): every report kind and the page
// of `ftbound serve` render their charts with no script error and no network request, every figure on the page
// equals the JSON document it was drawn from (to the bit, and as the terminal would print it), and a screenshot
// is not blank. One browser per test: starting Chromium is the slow part.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <set>
#include <string>
#include <vector>

#include "browser_test_util.hpp"
#include "plan_test_util.hpp"
#include "report/table.hpp"
#include "spec_test_util.hpp"
#include "web/html_page.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

using browser_test::Chromium;
using browser_test::Page;
using plan_test::example;
using spec_test::describe;
using spec_test::run_ftbound;

// The value at a dotted path of the document ("step.breakdown.3.seconds"); null when there is none.
const Json* at_path(const Json& doc, const std::string& path) {
    const Json* node = &doc;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t dot = path.find('.', start);
        const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (node->is_object() && node->contains(part)) node = &(*node)[part];
        else if (node->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoul(part) < node->size())
            node = &(*node)[std::stoul(part)];
        else return nullptr;
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return node;
}

// The terminal's text for a figure (src/report/table.cpp; views.js keeps the same rules).
std::string terminal_text(const std::string& format, double v) {
    if (format == "bytes") return fmt_bytes(v);
    if (format == "seconds") return fmt_seconds(v);
    if (format == "count") return fmt_count(v);
    if (format == "percent") return fmt_percent(v, 1);
    if (format == "money") return fmt::format("{:.2f}", v);
    if (format == "times") return fmt::format("{:.2f}x", v);
    if (format == "number") {   // three significant figures, as JavaScript's toPrecision(3); whole from 1000 up
        if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
        if (v == 0) return "0.00";
        const std::string sci = fmt::format("{:.2e}", v);
        const int exponent = std::stoi(sci.substr(sci.find('e') + 1));
        return fmt::format("{:.{}f}", v, std::max(0, 2 - exponent));
    }
    return "unknown format " + format;
}

// Every element the page tags with a place in the document: its number is the document's, bit for bit, and its
// text is what the terminal prints for it. Returns how many were checked.
size_t expect_figures_equal_document(Page& page, const Json& doc) {
    const Json figures = page.eval(
        "Array.from(document.querySelectorAll('[data-key]')).map(e => ({key: e.getAttribute('data-key'),"
        " value: e.getAttribute('data-value'), format: e.getAttribute('data-format'),"
        " text: (e.querySelector('.v') || e).textContent}))");
    size_t checked = 0;
    for (const Json& f : figures) {
        const std::string key = f["key"];
        SCOPED_TRACE(key);
        const Json* j = at_path(doc, key);
        if (j == nullptr) {
            ADD_FAILURE() << "the page shows a figure the document does not hold";
            continue;
        }
        if (f["value"].is_null()) {   // a sentence: the document's text
            EXPECT_TRUE(j->is_string());
            EXPECT_EQ(f["text"], *j);
        } else if (f["value"] == "null") {
            EXPECT_TRUE(j->is_null());
            EXPECT_EQ(f["text"], "n/a");
        } else if (j->is_number()) {
            const double v = j->get<double>();
            EXPECT_EQ(std::strtod(f["value"].get<std::string>().c_str(), nullptr), v);
            if (f["format"].is_string()) {
                // JavaScript's toFixed rounds a tie up, fmt to even: either reading of a tie is the same figure.
                const std::string text = f["text"], format = f["format"];
                EXPECT_TRUE(text == terminal_text(format, v) || text == terminal_text(format, std::nextafter(v, INFINITY)))
                    << text << " vs " << terminal_text(format, v);
            }
        } else if (j->is_boolean()) {
            EXPECT_EQ(f["value"], j->get<bool>() ? "true" : "false");
        } else {
            EXPECT_EQ(f["value"], *j);
        }
        ++checked;
    }
    return checked;
}

std::set<std::string> charts_on(Page& page) {
    const Json names = page.eval("Array.from(document.querySelectorAll('svg[data-chart]')).map(s => s.getAttribute('data-chart'))");
    return names.get<std::set<std::string>>();
}

double mark_sum(Page& page, const std::string& chart) {
    return page.eval("Array.from(document.querySelectorAll('svg[data-chart=\"" + chart +
                     "\"] .mark[data-value]')).reduce((a, m) => a + Number(m.getAttribute('data-value')), 0)")
        .get<double>();
}

void expect_not_blank(Page& page) {
    const browser_test::Image img = browser_test::decode_png(page.screenshot_png());
    EXPECT_GT(img.width, 500u);
    const browser_test::Ink ink = browser_test::ink(img);
    EXPECT_GT(ink.share, 0.03) << "the screenshot is (nearly) one colour";
    EXPECT_GT(ink.colours, 20u);
}

// A report opened from disk: drawn, no script error, nothing asked of the network but the file itself.
void open_report(Page& page, const std::string& file) {
    page.wait_for("document.body.getAttribute('data-rendered')");
    EXPECT_TRUE(page.problems().empty()) << testing::PrintToString(page.problems());
    for (const auto& url : page.requests()) EXPECT_EQ(url, "file://" + file);
}

std::string write_report(const std::string& name, std::vector<std::string> args, Json& doc) {
    const std::string file = spec_test::scratch_dir() + "/" + name;
    args.insert(args.end(), {"--json", "--html", file});
    const auto r = run_ftbound(args, 120);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    doc = r.exit_code == 0 ? Json::parse(r.out) : Json::object();
    return file;
}

std::string trace(const std::string& name) { return std::string(ftb_test::test_data()) + "/traces/" + name; }

TEST(WebBrowser, EveryReportDrawsItsJson) {
    Json plan, tight, compare, diagnose;
    const std::string plan_file = write_report("plan.html", {"plan", example("llama3.1-8b-lora-r760xa.yaml")}, plan);
    const std::string over_file =
        write_report("over.html", {"plan", example("llama3.1-70b-full-8xh100-unsharded.yaml")}, tight);
    const std::string cmp_file = write_report(
        "compare.html",
        {"compare", example("llama3.1-8b-lora-r760xa.yaml"), "--hardware",
         "dell-poweredge-xe9680-8x-h100-sxm,dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480"},
        compare);
    const std::string diag_file =
        write_report("diagnose.html",
                     {"diagnose", trace("hta_sampled_rank-0.json.gz"), trace("hta_sampled_rank-1.json.gz"), "--plan",
                      example("llama3.1-8b-lora-r760xa.yaml")},
                     diagnose);
    // search: the contract's document, drawn by the same page builder the command uses.
    auto search_page = [](const std::string& name, Json& doc) {
        doc = Json::parse(spec_test::slurp(std::string(ftb_test::test_data()) + "/web/" + name + ".json"));
        const std::string file = spec_test::scratch_dir() + "/" + name + ".html";
        std::ofstream(file) << web::report_page(web::ReportKind::search, doc.dump(), name);
        return file;
    };
    Json search, none;
    const std::string search_file = search_page("search", search), none_file = search_page("search_none", none);
    Chromium browser;

    {
        SCOPED_TRACE("plan");
        Page page(browser, "file://" + plan_file);
        open_report(page, plan_file);
        const auto charts = charts_on(page);
        for (const char* c : {"memory-peak", "memory-walk", "time-by-resource", "time-breakdown", "communication", "weak-points",
                              "power"})
            EXPECT_TRUE(charts.count(c)) << c;
        EXPECT_GT(expect_figures_equal_document(page, plan), 40u);
        // The stacked peak adds up to what nvidia-smi would show; the walk's marked peak is the allocated peak.
        EXPECT_NEAR(mark_sum(page, "memory-peak"), plan["memory"]["device_used_bytes"].get<double>(), 1.0);
        EXPECT_NEAR(page.eval("Number(document.querySelector('svg[data-chart=\"memory-walk\"] .peak').getAttribute('data-value'))")
                        .get<double>(),
                    plan["memory"]["allocated_peak_bytes"].get<double>(), 1.0);
        for (const char* chart : {"time-breakdown", "time-by-resource"})
            EXPECT_NEAR(mark_sum(page, chart), plan["step"]["seconds"].get<double>(), 1e-9 * plan["step"]["seconds"].get<double>())
                << chart;
        // The bottleneck's share is its resource's part of the step, as drawn.
        const std::string bottleneck = plan["bottleneck"]["resource"];
        EXPECT_NEAR(page.eval("Number(document.querySelector('svg[data-chart=\"time-by-resource\"] .mark[data-label=\"" +
                              bottleneck + "\"]').getAttribute('data-value'))")
                            .get<double>() / plan["step"]["seconds"].get<double>(),
                    plan["bottleneck"]["share"].get<double>(), 1e-9);
        size_t speedups = 0;
        for (const Json& w : plan["weak_points"]) speedups += w["resource"] != "memory_capacity";
        EXPECT_EQ(page.eval("document.querySelectorAll('svg[data-chart=\"weak-points\"] .mark').length").get<size_t>(), speedups);
        EXPECT_EQ(page.eval("document.querySelectorAll('table[data-table=\"recommendations\"] tbody tr').length").get<size_t>(),
                  plan["recommendations"].size());
        expect_not_blank(page);
    }
    {
        SCOPED_TRACE("plan that does not fit");
        Page page(browser, "file://" + over_file);
        open_report(page, over_file);
        EXPECT_TRUE(charts_on(page).count("memory-peak"));
        EXPECT_GT(expect_figures_equal_document(page, tight), 20u);
        EXPECT_EQ(page.eval("document.querySelector('.verdict').classList.contains('does_not_fit')"), true);
        EXPECT_EQ(page.eval("document.querySelectorAll('table[data-table=\"fits-with\"] tbody tr').length").get<size_t>(),
                  tight["fits_with"].size());
    }
    {
        SCOPED_TRACE("compare");
        Page page(browser, "file://" + cmp_file);
        open_report(page, cmp_file);
        const auto charts = charts_on(page);
        EXPECT_TRUE(charts.count("compare"));
        EXPECT_TRUE(charts.count("compare-memory"));
        EXPECT_GT(expect_figures_equal_document(page, compare), 12u);
        EXPECT_EQ(page.eval("document.querySelectorAll('table[data-table=\"compare\"] tbody tr').length").get<size_t>(), 3u);
        // One bar per system in each small multiple that has a figure for it.
        EXPECT_GE(page.eval("document.querySelectorAll('svg[data-chart=\"compare\"] .mark').length").get<size_t>(), 3u * 2);
        expect_not_blank(page);
    }
    {
        SCOPED_TRACE("diagnose");
        Page page(browser, "file://" + diag_file);
        open_report(page, diag_file);
        const auto charts = charts_on(page);
        for (const char* c : {"gpu-time", "idle-split", "run-vs-plan", "top-kernels"}) EXPECT_TRUE(charts.count(c)) << c;
        EXPECT_GT(expect_figures_equal_document(page, diagnose), 20u);
        EXPECT_NEAR(mark_sum(page, "gpu-time"), 1.0, 1e-6);
        EXPECT_EQ(page.eval("document.querySelectorAll('svg[data-chart=\"top-kernels\"] .mark').length").get<size_t>(),
                  diagnose["top_kernels"].size());
        expect_not_blank(page);
    }
    {
        SCOPED_TRACE("search");
        Page page(browser, "file://" + search_file);
        open_report(page, search_file);
        EXPECT_TRUE(charts_on(page).count("search-front"));
        EXPECT_GT(expect_figures_equal_document(page, search), 10u);
        EXPECT_EQ(page.eval("document.querySelectorAll('svg[data-chart=\"search-front\"] circle.front').length").get<size_t>(),
                  search["front"].size());
        EXPECT_EQ(page.eval("document.querySelectorAll('table[data-table=\"search-top\"] tbody tr').length").get<size_t>(),
                  search["top"].size());
    }
    {
        SCOPED_TRACE("search: nothing feasible");
        Page page(browser, "file://" + none_file);
        open_report(page, none_file);
        EXPECT_GT(expect_figures_equal_document(page, none), 2u);
        EXPECT_EQ(page.eval("document.querySelector('[data-key=\"bound_by.reason\"]').textContent"), none["bound_by"]["reason"]);
    }
}

// The served page: the example job planned on load, re-planned when the YAML changes, errors shown with the
// command line's text, the catalog browsable, a comparison drawn.
TEST(WebBrowser, ServedPageReplansAsTheJobChanges) {
    browser_test::Server server;
    Chromium browser;
    Page page(browser, server.url());
    page.wait_for("document.body.getAttribute('data-plan-seq') === '1'");
    EXPECT_EQ(page.eval("document.getElementById('errors').textContent"), "");
    const auto cli = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--json"});
    ASSERT_EQ(cli.exit_code, 0) << describe(cli);
    Json expected = Json::parse(cli.out);
    expected["job"] = "job.yaml";
    for (const char* c : {"memory-peak", "memory-walk", "time-breakdown", "weak-points"}) EXPECT_TRUE(charts_on(page).count(c)) << c;
    EXPECT_GT(expect_figures_equal_document(page, expected), 40u);
    expect_not_blank(page);

    // Edit: micro-batch 2 -> 1; the charts follow, with the command line's figures for the same change.
    page.eval("(() => { const t = document.getElementById('job'); t.value = t.value.replace('micro_batch: 2', 'micro_batch: 1');"
              " t.dispatchEvent(new Event('input')); })()");
    page.wait_for("document.body.getAttribute('data-plan-seq') === '2'");
    const auto cli1 = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--json", "--set", "train.micro_batch=1"});
    ASSERT_EQ(cli1.exit_code, 0) << describe(cli1);
    Json expected1 = Json::parse(cli1.out);
    expected1["job"] = "job.yaml";
    EXPECT_NE(expected1["memory"]["device_used_bytes"], expected["memory"]["device_used_bytes"]);
    EXPECT_GT(expect_figures_equal_document(page, expected1), 40u);

    // A mistake: the error line is the command line's, and the last good plan stays, dimmed.
    page.eval("(() => { const t = document.getElementById('job'); t.value = t.value.replace('micro_batch: 1', 'micro_batch: -3');"
              " t.dispatchEvent(new Event('input')); })()");
    page.wait_for("document.body.getAttribute('data-plan-seq') === '3'");
    const std::string yaml = page.eval("document.getElementById('job').value");
    const std::string file = spec_test::write_scratch("job.yaml", yaml);
    const auto bad = run_ftbound({"plan", file});
    ASSERT_EQ(bad.exit_code, 2) << describe(bad);
    std::string line = bad.err.substr(0, bad.err.find('\n'));
    line.replace(line.find(file), file.size(), "job.yaml");
    EXPECT_EQ(page.eval("document.getElementById('errors').textContent"), line);
    EXPECT_EQ(page.eval("document.getElementById('report').classList.contains('stale')"), true);

    // The catalog, and a comparison of the job on the first systems listed.
    page.eval("document.querySelector('[data-tab=catalog]').click()");
    page.wait_for("document.body.getAttribute('data-catalog') === 'loaded'");
    const auto models = run_ftbound({"catalog", "models", "--json"});
    ASSERT_EQ(models.exit_code, 0) << describe(models);
    EXPECT_EQ(page.eval("document.querySelectorAll('#catalog-table tbody tr').length").get<size_t>(),
              Json::parse(models.out)["models"].size());
    page.eval("(() => { const t = document.getElementById('job'); t.value = t.value.replace('micro_batch: -3', 'micro_batch: 2'); })()");
    page.eval("document.querySelector('[data-tab=compare]').click(); document.getElementById('compare-run').click()");
    page.wait_for("document.body.getAttribute('data-compared')", 120000);
    EXPECT_EQ(page.eval("document.body.getAttribute('data-compared')"), "200");
    EXPECT_TRUE(charts_on(page).count("compare"));
    EXPECT_TRUE(page.problems().empty()) << testing::PrintToString(page.problems());
    for (const auto& url : page.requests()) EXPECT_EQ(url.rfind(server.url(), 0), 0u) << url;
}

}  // namespace
}  // namespace ftb
