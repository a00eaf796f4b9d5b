// `ftbound catalog [models|gpus|cpus|systems|networks|links|frameworks] [--json]`
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "report/catalog_report.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"

namespace ftb::cli {
namespace {

const Register reg{Command{
    "catalog", "what the built-in catalog holds (models, gpus, cpus, systems, networks, links, frameworks)",
    [](CLI::App& sub) -> std::function<int()> {
        auto section = std::make_shared<std::string>();
        auto json = std::make_shared<bool>(false);
        sub.add_option("section", *section, "models | gpus | cpus | systems | networks | links | frameworks");
        sub.add_flag("--json", *json, "print one JSON document");
        return [section, json] {
            const Catalog& cat = Catalog::instance();
            std::vector<std::string> wanted = catalog_sections();
            if (!section->empty()) {
                const auto& sections = catalog_sections();
                if (std::find(sections.begin(), sections.end(), *section) == sections.end()) {
                    std::string hint = did_you_mean(*section, sections);
                    throw InputError("command line", "section",
                                     "unknown section '" + *section + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                         "; one of models, gpus, cpus, systems, networks, links, frameworks");
                }
                wanted = {*section};
            }
            nlohmann::ordered_json doc;
            std::string text;
            for (const auto& s : wanted) {
                nlohmann::ordered_json arr = nlohmann::ordered_json::array();
                text += catalog_section(cat, s, arr) + "\n";
                doc[s] = arr;
            }
            std::cout << (*json ? doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : text);
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
