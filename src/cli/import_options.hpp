// The flags `import` and `plan --from` share, and the import itself with its stderr report.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "import/import_job.hpp"

namespace ftb::cli {

struct ImportFlags {
    std::string deepspeed, accelerate, hardware;
    std::vector<std::string> sets;   // --set KEY=VALUE, applied to the imported job
};

inline void add_import_flags(CLI::App& sub, ImportFlags& f) {
    sub.add_option("--deepspeed", f.deepspeed, "DeepSpeed JSON of an HF TrainingArguments config (else its `deepspeed` field)");
    sub.add_option("--accelerate", f.accelerate, "accelerate config (GPUs, machines, DeepSpeed/FSDP, mixed precision)");
    sub.add_option("--hardware", f.hardware, "catalog system to run the imported job on (e.g. xe9680)");
    sub.add_option("--set", f.sets, "override a job-file field of the imported job: --set train.seq_len=4096")->take_all();
}

// The imported job and the report to print on stderr.
inline std::pair<import::ImportResult, std::string> imported_job(const std::string& config, const ImportFlags& f) {
    import::ImportOptions o;
    o.deepspeed = f.deepspeed;
    o.accelerate = f.accelerate;
    o.hardware = f.hardware;
    o.overrides = f.sets;
    import::ImportResult r = import::import_config(config, o);
    return {r, import::import_report(r, config)};
}

}  // namespace ftb::cli
