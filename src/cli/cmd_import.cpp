// `ftbound import CONFIG [--json] [--deepspeed DS.json] [--accelerate ACC.yaml] [--hardware SYSTEM] [--set K=V]...`:
// another tool's training config as an ftbound job (YAML on stdout; what became what, what was assumed and
// what was not used on stderr). docs/import.md.
#include <iostream>

#include "cli/command.hpp"
#include "cli/import_options.hpp"
#include "spec/job_file.hpp"

namespace ftb::cli {
namespace {

struct ImportArgs {
    std::string config;
    bool json = false;
    ImportFlags flags;
};

const Register reg{Command{
    "import", "turn an axolotl, LLaMA-Factory, torchtune, HF TrainingArguments (+ DeepSpeed/accelerate) or torchtitan config into a job",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<ImportArgs>();
        sub.add_option("config", a->config, "the config: axolotl/LLaMA-Factory/torchtune YAML, TrainingArguments JSON/YAML, torchtitan TOML")
            ->required();
        sub.add_flag("--json", a->json, "print the job as one JSON document");
        add_import_flags(sub, a->flags);
        return [a] {
            const auto [job, report] = imported_job(a->config, a->flags);
            // The job must load as written (names resolve, layout holds) before it is printed.
            Json doc = Json::parse(job.job.dump());
            for (const auto& s : a->flags.sets) apply_override(doc, s, a->config);
            job_from_document(doc, a->config, a->flags.sets);
            std::cerr << report;
            if (a->json) std::cout << doc.dump(2) << "\n";
            else if (a->flags.sets.empty()) std::cout << import::job_yaml(job, a->config);
            else std::cout << import::job_yaml({job.format, import::OJson::parse(doc.dump()), {}, {}, {}}, a->config);
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
