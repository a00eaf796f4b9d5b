// Every key the job file accepts, by its place in the file. The readers reject anything else
// (Fields::reject_unknown with these lists), and docs/job-file.md and docs/job-file.schema.json must list
// exactly these keys (tests/unit/docs_job_file_test.cpp): a key added here is documented there too.
#pragma once
#include <string>
#include <vector>

namespace ftb {

struct JobKeySection {
    std::string path;                  // dotted place in the job file ("" = the top level)
    std::vector<std::string> keys;
};

// All sections, in the order docs/job-file.md presents them.
const std::vector<JobKeySection>& job_key_sections();

// The keys of one section; an unknown path is a bug (InternalError).
// "hardware.gpu" is any device mapping (an inline GPU or host CPU, a catalog device file);
// "hardware.intra_node" any link mapping (also hardware.inter_node and catalog link files).
const std::vector<std::string>& job_keys(const std::string& path);

}  // namespace ftb
