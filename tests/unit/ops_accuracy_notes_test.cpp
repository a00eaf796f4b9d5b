// Accuracy notes (src/ops/accuracy_notes.*): a plan outside what validation/ measured says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "ops/accuracy_notes.hpp"
#include "plan_test_util.hpp"
#include "spec/catalog.hpp"

namespace ftb {
namespace {

namespace fs = std::filesystem;
using namespace plan_test;

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
    for (const auto& n : notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

TEST(OpsAccuracyNotes, ValidatedArchitecturesAreThoseOfTheValidationJobs) {
    // Every `gpu: NAME` of the public validation jobs, by architecture.
    std::set<std::string> seen;
    const std::regex gpu_line(R"(^\s*gpu:\s*([A-Za-z0-9._-]+))");
    for (const char* dir : {"validation/jobs", "validation/qwen/jobs"})
        for (const auto& e : fs::directory_iterator(fs::path(FTBOUND_SOURCE_DIR) / dir)) {
            std::ifstream in(e.path());
            for (std::string line; std::getline(in, line);) {
                std::smatch m;
                if (std::regex_search(line, m, gpu_line))
                    seen.insert(to_string(gpu_arch(Catalog::instance().gpu(m[1], {e.path().string(), "gpu"}))));
            }
        }
    std::set<std::string> listed;
    for (GpuArch a : validated_gpu_architectures()) listed.insert(to_string(a));
    EXPECT_EQ(seen, listed);
}

TEST(OpsAccuracyNotes, OutsideTheValidatedRangeIsSaid) {
    // An H100 LoRA job: validated, no note.
    EXPECT_TRUE(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"))).empty());
    // The same on B200 (no measured Blackwell case), as QLoRA, and on a CPU server.
    EXPECT_TRUE(mentions(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"hardware.system=dgx-b200"})),
                         "no measured case on a"));
    EXPECT_TRUE(mentions(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"train.method=qlora"})),
                         "QLoRA"));
    const auto cpu = accuracy_notes(load_job(plan_data("lora-8b-cpu-server.yaml")));
    EXPECT_TRUE(mentions(cpu, "CPU server"));
    EXPECT_TRUE(mentions(cpu, "validation/measured/cpu-vm"));
}

TEST(OpsAccuracyNotes, PlanJsonCarriesThem) {
    const Json j = plan_json({plan_data("lora-8b-cpu-server.yaml")});
    ASSERT_TRUE(j["accuracy_notes"].is_array());
    EXPECT_FALSE(j["accuracy_notes"].empty());
}

}  // namespace
}  // namespace ftb
