// libFuzzer target: any bytes through the input layer, as the fast-tier harness in
// tests/unit/spec_reader_robustness_test.cpp does it: the YAML/JSON reader, the HF config reader, the job
// reader (catalog names resolved against data/), the `ftbound import` readers (axolotl, LLaMA-Factory,
// torchtune, HF/TRL with DeepSpeed, torchtitan TOML), a --set override and the size parser. InputError is the
// expected answer to bad input; crashes, hangs, sanitizer reports, running out of memory (-rss_limit_mb)
// and any other exception are findings.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ftbound/error.hpp"
#include "import/import_job.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "spec/job_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        ftb::Json doc = ftb::parse_yaml_text(text, "fuzz");
        if (doc.is_object()) {
            try {
                ftb::ModelSpec m = ftb::model_from_hf_config(ftb::Fields(doc, "fuzz", ""), "fuzz");
                (void)m.total_params();
                (void)m.active_params();
            } catch (const ftb::InputError&) {
            }
            try {
                ftb::job_from_document(doc, "fuzz");
            } catch (const ftb::InputError&) {
            }
            try {
                ftb::import::import_document(doc, "fuzz.yaml", {});
            } catch (const ftb::InputError&) {
            }
        }
    } catch (const ftb::InputError&) {
    }
    // The same bytes as a torchtitan TOML.
    try {
        ftb::import::import_document(ftb::import::parse_toml_text(text, "fuzz.toml"), "fuzz.toml", {});
    } catch (const ftb::InputError&) {
    }
    // The first line as a --set assignment applied to a small job tree.
    try {
        ftb::Json job = ftb::parse_yaml_text("train: {seq_len: 1}\nmodel: m\n", "job");
        ftb::apply_override(job, text.substr(0, text.find('\n')), "job");
    } catch (const ftb::InputError&) {
    }
    if (size < 256) (void)ftb::parse_size_bytes(text);
    return 0;
}
