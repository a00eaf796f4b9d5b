#include "ops/compare.hpp"

#include <sstream>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"

namespace ftb {

std::vector<std::string> split_system_list(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<CompareRow> compare_systems(const Json& doc, const std::string& file, const std::vector<std::string>& systems) {
    std::vector<CompareRow> rows;
    for (const auto& name : systems) {
        CompareRow row;
        row.system = name;
        Json d = doc;
        Json& hw = d["hardware"];
        if (!hw.is_object()) hw = Json::object();
        for (const char* k : {"gpu", "gpus_per_node", "intra_node", "host"}) hw.erase(k);
        hw["system"] = name;
        // Resolve the system once to adapt the layout to it (unknown names are a user error for the whole call).
        const SystemSpec sys = Catalog::instance().system(name, {"--hardware", name});
        Json& par = d["parallel"];
        if (!par.is_object()) par = Json::object();
        if (sys.cpu_only) {
            for (const char* k : {"tp", "pp", "cp", "ep"})
                if (par.contains(k) && par[k] != 1) {
                    row.adjustments.push_back(std::string(k) + "=1 (CPU server: data parallel over sockets)");
                    par[k] = 1;
                }
            par["sequence_parallel"] = false;
            if (par.value("zero", 0) == 3 && d.contains("offload")) d["offload"]["params"] = "none";
        }
        if (par.contains("dp") && !(par["dp"].is_string())) row.adjustments.push_back("dp=auto");
        par["dp"] = "auto";
        // Keep the global batch; lower the micro-batch until it divides the per-step batch of this layout.
        for (int attempt = 0; attempt < 64; ++attempt) {
            try {
                Job job = job_from_document(d, file);
                row.plan = make_plan(job, PlanOptions{true, false, true, false});
                row.job = std::move(job);
                row.error.clear();
                break;
            } catch (const InputError& e) {
                // Mistakes in the job itself are the user's to fix (exit 2); only what this system makes
                // impossible (the layout, the batch split) becomes a row.
                const std::string& field = e.field();
                const bool layout = field.rfind("parallel", 0) == 0 || field == "train.global_batch" ||
                                    field == "train.precision";
                if (!layout) throw;
                row.error = e.what();
                Json& train = d["train"];
                const int64_t mb = train.value("micro_batch", int64_t(1));
                if (e.field() == "train.global_batch" && mb > 1) {
                    train["micro_batch"] = mb - 1;
                    continue;
                }
                break;
            }
        }
        if (row.plan && d["train"].value("micro_batch", int64_t(1)) != doc["train"].value("micro_batch", int64_t(1)))
            row.adjustments.push_back("micro_batch=" + std::to_string(d["train"].value("micro_batch", int64_t(1))) +
                                      " (divides the global batch)");
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace ftb
