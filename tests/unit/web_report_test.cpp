// `--html FILE` on plan, compare and diagnose (CONTRACT.md): one self-contained page holding the command's
// --json document, drawn by the page's own scripts. What the browser shows is tested in web_browser_test.cpp;
// here, the file itself: nothing it could load from anywhere, the same document as --json, and the errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"
#include "web/html_page.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

using plan_test::example;
using spec_test::describe;
using spec_test::run_ftbound;

std::string trace(const std::string& name) { return std::string(ftb_test::test_data()) + "/traces/" + name; }

// The JSON document a page carries.
Json embedded_document(const std::string& html) {
    const std::string open = "id=\"ftbound-data\">";
    const size_t from = html.find(open);
    EXPECT_NE(from, std::string::npos);
    if (from == std::string::npos) return Json();
    const size_t start = from + open.size(), end = html.find("</script>", start);
    return Json::parse(html.substr(start, end - start));
}

// Nothing in the page can reach the network: no element loads a URL, the only URL is the SVG namespace, and
// the content security policy forbids any load.
void expect_self_contained(const std::string& html) {
    for (const char* needle : {" src=", " href=", "url(", "@import", "<link", "<iframe", "<img"})
        EXPECT_EQ(html.find(needle), std::string::npos) << needle;
    EXPECT_EQ(html.find("https:"), std::string::npos);
    for (size_t at = html.find("http:"); at != std::string::npos; at = html.find("http:", at + 1))
        EXPECT_EQ(html.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(at, 60);
    EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none';"), std::string::npos);
}

TEST(WebReport, PlanPageHoldsTheJsonDocumentAndNothingToLoad) {
    const std::string html = spec_test::scratch_dir() + "/plan.html";
    const auto r = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--json", "--html", html});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string page = spec_test::slurp(html);
    expect_self_contained(page);
    EXPECT_EQ(embedded_document(page), Json::parse(r.out));
    EXPECT_NE(page.find("data-kind=\"plan\""), std::string::npos);
    // The text report is still printed when --json is not given.
    const auto text = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--html", html});
    ASSERT_EQ(text.exit_code, 0) << describe(text);
    EXPECT_NE(text.out.find("ftbound plan:"), std::string::npos);
}

TEST(WebReport, PlanJsonHasTheWalkAndCommunicationThePageDraws) {
    const auto r = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const Json j = Json::parse(r.out);
    // The walk's largest point is the allocated peak, and it happens in the phase the memory report names.
    const Json& points = j["memory_walk"]["points"];
    ASSERT_GT(points.size(), 2u * 32);   // 32 blocks forward and backward, the loss, the optimizer step
    double peak = 0;
    std::string phase;
    for (const Json& p : points) {
        const double sum = p["weights"].get<double>() + p["gradients"].get<double>() + p["optimizer"].get<double>() +
                           p["activations"].get<double>() + p["logits"].get<double>() + p["temporary"].get<double>();
        EXPECT_DOUBLE_EQ(sum, p["allocated_bytes"].get<double>());
        if (p["allocated_bytes"].get<double>() > peak) {
            peak = p["allocated_bytes"];
            phase = p["phase"];
        }
    }
    EXPECT_DOUBLE_EQ(peak, j["memory"]["allocated_peak_bytes"].get<double>());
    EXPECT_EQ(phase, j["memory"]["peak_phase"]);
    // In execution order: forward blocks 0..31, the loss and the head's backward, backward blocks 31..0, the
    // optimizer step.
    EXPECT_EQ(points.front()["phase"], "forward");
    EXPECT_EQ(points.front()["block"], 0);
    EXPECT_EQ(points[32]["phase"], "loss");
    EXPECT_EQ(points[33]["phase"], "loss");
    EXPECT_EQ(points[34]["block"], 31);
    EXPECT_EQ(points.back()["phase"], "optimizer step");
    // Communication: what the step's breakdown attributes to links, and the rest hidden under compute.
    const Json& c = j["step"]["communication"];
    double exposed = 0;
    for (const Json& p : j["step"]["breakdown"])
        if (p["resource"] == "gpu_interconnect" || p["resource"] == "network" || p["resource"] == "pcie")
            exposed += p["seconds"].get<double>();
    EXPECT_DOUBLE_EQ(c["exposed_seconds"].get<double>(), exposed);
    EXPECT_GT(c["seconds"].get<double>(), 0);   // four GPUs synchronise gradients every step
    EXPECT_NEAR(c["overlapped_seconds"].get<double>(), std::max(0.0, c["seconds"].get<double>() - exposed), 1e-12);
}

TEST(WebReport, CompareAndDiagnosePagesHoldTheirJson) {
    const std::string html = spec_test::scratch_dir() + "/compare.html";
    const auto c = run_ftbound({"compare", example("llama3.1-8b-lora-r760xa.yaml"), "--hardware",
                                "dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480", "--json", "--html", html});
    ASSERT_EQ(c.exit_code, 0) << describe(c);
    std::string page = spec_test::slurp(html);
    expect_self_contained(page);
    EXPECT_EQ(embedded_document(page), Json::parse(c.out));

    const std::string dhtml = spec_test::scratch_dir() + "/diagnose.html";
    const auto d = run_ftbound({"diagnose", trace("hta_sampled_rank-0.json.gz"), trace("hta_sampled_rank-1.json.gz"), "--json",
                                "--html", dhtml});
    ASSERT_EQ(d.exit_code, 0) << describe(d);
    page = spec_test::slurp(dhtml);
    expect_self_contained(page);
    EXPECT_EQ(embedded_document(page), Json::parse(d.out));
    // Without --json the text is printed and the page still holds the JSON document.
    const auto t = run_ftbound({"diagnose", trace("hta_sampled_rank-0.json.gz"), "--html", dhtml});
    ASSERT_EQ(t.exit_code, 0) << describe(t);
    EXPECT_NE(t.out.find("top kernels"), std::string::npos);
    EXPECT_EQ(embedded_document(spec_test::slurp(dhtml))["ranks"], 1);
}

TEST(WebReport, UnwritableHtmlPathIsAnInputError) {
    const auto r = run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml"), "--html", "/nonexistent-dir/r.html"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "error: command line: --html: cannot write '/nonexistent-dir/r.html'\n");
}

TEST(WebReport, EmbeddedTextCannotCloseTheScript) {
    // A model or kernel name holding "</script>" stays data: '<' is written \u003c inside the JSON.
    const std::string doc = Json{{"name", "</script><script>alert(1)</script><!--"}}.dump();
    const std::string page = web::report_page(web::ReportKind::plan, doc, "t</title>");
    EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
    EXPECT_EQ(embedded_document(page), Json::parse(doc));
    EXPECT_NE(page.find("<title>t&lt;/title&gt;</title>"), std::string::npos);
}

}  // namespace
}  // namespace ftb
