// The job-file reference stays true to the reader:
//  1. the keys the reader accepts (spec/job_keys.hpp, the lists reject_unknown uses) are exactly the
//     properties of docs/job-file.schema.json, and each is documented in docs/job-file.md;
//  2. the schema's choices are the reader's choices, and its "Defaults per framework" table is the profiles';
//  3. every example (docs/job-file.md's yaml blocks, examples/, the validation and plan test jobs) validates
//     against the schema (valijson, Debian's libvalijson-dev) and loads; examples carry the editor modeline;
//  4. user-facing docs link only inside the repository.
#include <gtest/gtest.h>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/document.hpp"
#include "spec/framework_profile.hpp"
#include "spec/job_file.hpp"
#include "spec/job_keys.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using ftb::Json;

namespace {

const std::string kSource = ftb_test::source_dir();
const std::string kModeline = "# yaml-language-server: $schema=../docs/job-file.schema.json";

std::string read(const std::string& rel) { return spec_test::slurp(kSource + "/" + rel); }

const Json& schema_json() {
    static const Json j = Json::parse(read("docs/job-file.schema.json"));
    return j;
}

// One compiled schema for every validation (parsing it is the slow part).
class SchemaValidator {
public:
    SchemaValidator() {
        valijson::SchemaParser parser;
        valijson::adapters::NlohmannJsonAdapter adapter(schema_json());
        parser.populateSchema(adapter, schema_);
    }
    // "" when `doc` is valid, else the errors, one per line.
    std::string errors(const Json& doc) const {
        valijson::Validator validator;
        valijson::ValidationResults results;
        valijson::adapters::NlohmannJsonAdapter target(doc);
        if (validator.validate(schema_, target, &results)) return "";
        std::string out;
        valijson::ValidationResults::Error e;
        while (results.popError(e)) {
            std::string where;
            for (const auto& c : e.context) where += c;
            out += where + ": " + e.description + "\n";
        }
        return out.empty() ? "invalid\n" : out;
    }

private:
    valijson::Schema schema_;
};

const SchemaValidator& validator() {
    static const SchemaValidator v;
    return v;
}

const Json& resolve_ref(const Json& node) {
    if (!node.contains("$ref")) return node;
    const std::string ref = node["$ref"];
    const std::string prefix = "#/definitions/";
    EXPECT_EQ(ref.rfind(prefix, 0), 0u) << ref;
    return schema_json()["definitions"][ref.substr(prefix.size())];
}

// Every object schema reachable from `node` (through $ref and oneOf/anyOf branches), by dotted job-file path.
void collect_objects(const Json& raw, const std::string& path, std::map<std::string, std::set<std::string>>& out) {
    const Json& node = resolve_ref(raw);
    for (const char* branch : {"oneOf", "anyOf"})
        if (node.contains(branch))
            for (const auto& b : node[branch]) collect_objects(b, path, out);
    if (!node.contains("properties") || node.value("additionalProperties", true)) return;  // open mapping (inline model)
    auto& keys = out[path];
    for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) {
        keys.insert(it.key());
        collect_objects(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
}

// Places in the file that share a mapping form with a reader section.
std::string reader_section(const std::string& path) {
    const std::string cpu = "hardware.host.cpu";   // a CPU socket is read as a device, like hardware.gpu
    if (path.rfind(cpu, 0) == 0) return "hardware.gpu" + path.substr(cpu.size());
    if (path == "hardware.inter_node") return "hardware.intra_node";
    return path;
}

TEST(DocsJobFile, SchemaHasExactlyTheReaderKeys) {
    std::map<std::string, std::set<std::string>> schema;
    collect_objects(schema_json(), "", schema);
    std::set<std::string> covered;
    for (const auto& [path, keys] : schema) {
        SCOPED_TRACE("schema object at '" + path + "'");
        const std::string section = reader_section(path);
        std::vector<std::string> reader;
        try {
            reader = ftb::job_keys(section);
        } catch (const ftb::InternalError&) {
            ADD_FAILURE() << "the schema has a closed mapping at '" << path << "' that the reader does not read";
            continue;
        }
        covered.insert(section);
        const std::set<std::string> want(reader.begin(), reader.end());
        for (const auto& k : want) EXPECT_TRUE(keys.count(k)) << "reader accepts '" << k << "', the schema lacks it";
        for (const auto& k : keys) EXPECT_TRUE(want.count(k)) << "schema has '" << k << "', the reader rejects it";
    }
    for (const auto& s : ftb::job_key_sections())
        EXPECT_TRUE(covered.count(s.path)) << "reader section '" << s.path << "' has no closed mapping in the schema";
}

TEST(DocsJobFile, ReferenceDocumentsEveryKey) {
    const std::string doc = read("docs/job-file.md");
    for (const auto& s : ftb::job_key_sections())
        for (const auto& k : s.keys) {
            const std::string full = s.path.empty() ? k : s.path + "." + k;
            EXPECT_NE(doc.find("`" + full + "`"), std::string::npos) << "docs/job-file.md does not document `" << full << "`";
        }
}

// Walks the schema to the property at a dotted path (first object branch wherever there is a choice).
const Json* schema_property(const std::string& dotted) {
    const Json* node = &schema_json();
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
        const Json* obj = &resolve_ref(*node);
        if (!obj->contains("properties") && obj->contains("oneOf"))
            for (const auto& b : (*obj)["oneOf"])
                if (resolve_ref(b).contains("properties")) obj = &resolve_ref(b);
        if (!obj->contains("properties") || !(*obj)["properties"].contains(part)) return nullptr;
        node = &(*obj)["properties"][part];
    }
    return node;
}

std::set<std::string> string_enum(const Json& prop) {
    std::set<std::string> out;
    auto take = [&](const Json& n) {
        if (n.contains("enum"))
            for (const auto& v : n["enum"])
                if (v.is_string()) out.insert(v.get<std::string>());
    };
    take(prop);
    if (prop.contains("oneOf"))
        for (const auto& b : prop["oneOf"]) take(b);
    return out;
}

// A job whose every key choice the reader checks: the reader's message "'x' is not one of a | b" must list
// exactly the schema's enum, and every schema value must load.
TEST(DocsJobFile, SchemaChoicesAreTheReaderChoices) {
    const std::string job = spec_test::write_scratch("choices.yaml",
                                                     "model: meta-llama/Llama-3.2-1B\n"
                                                     "train: {seq_len: 512}\n"
                                                     "hardware: {gpu: h100-sxm, gpus_per_node: 1}\n");
    for (const std::string path : {"train.method", "train.precision", "train.weights", "train.optimizer", "train.qlora.kernel",
                                   "train.activation_checkpointing", "train.attention", "train.loss", "parallel.pp_schedule",
                                   "offload.optimizer", "offload.params", "offload.activations", "ops.checkpoint_storage"}) {
        SCOPED_TRACE(path);
        const Json* prop = schema_property(path);
        ASSERT_NE(prop, nullptr);
        const std::set<std::string> schema = string_enum(*prop);
        ASSERT_FALSE(schema.empty());
        std::set<std::string> reader;
        try {
            ftb::load_job(job, {path + "=no-such-choice"});
            ADD_FAILURE() << "a bogus choice loaded";
        } catch (const ftb::InputError& e) {
            EXPECT_EQ(e.field(), path);
            const std::string r = e.reason();
            const auto from = r.find("is not one of ");
            ASSERT_NE(from, std::string::npos) << r;
            std::string list = r.substr(from + 14);
            list = list.substr(0, list.find(" ("));
            std::stringstream ss(list);
            std::string item;
            while (std::getline(ss, item, '|')) {
                item.erase(0, item.find_first_not_of(' '));
                item.erase(item.find_last_not_of(' ') + 1);
                reader.insert(item);
            }
        }
        EXPECT_EQ(schema, reader);
    }
    // Frameworks: the schema's list is the catalog's profiles.
    const std::set<std::string> fw = string_enum(*schema_property("train.framework"));
    const auto names = ftb::Catalog::instance().names("frameworks");
    EXPECT_EQ(fw, std::set<std::string>(names.begin(), names.end()));
}

std::string fmt_default(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

TEST(DocsJobFile, FrameworkDefaultsTableIsTheProfiles) {
    const std::string doc = read("docs/job-file.md");
    std::map<std::string, std::vector<std::string>> rows;
    static const std::regex row(
        R"(^\| ([a-z0-9.-]+) \| ([a-z]+) \| ([a-z]+) \| ([a-z0-9_]+) \| ([a-z0-9_]+) \| ([0-9.]+) \| ([a-z_]+) \| ([a-z]+) \| ([a-z]+) \|$)");
    std::stringstream ss(doc);
    std::string line;
    while (std::getline(ss, line)) {
        std::smatch m;
        if (std::regex_match(line, m, row)) rows[m[1]] = {m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9]};
    }
    for (const auto& name : ftb::Catalog::instance().names("frameworks")) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(rows.count(name)) << "no row for framework " << name << " in docs/job-file.md";
        const ftb::FrameworkProfile p = ftb::load_framework(name, "test", "framework");
        const std::vector<std::string> want = {p.default_weights, p.default_attention, p.default_loss, p.default_optimizer,
                                               fmt_default(p.default_lora_dropout), p.default_optimizer_impl,
                                               p.default_activation_checkpointing, p.default_activation_offload};
        EXPECT_EQ(rows[name], want);
    }
}

// ```yaml blocks of a markdown file.
std::vector<std::string> yaml_blocks(const std::string& md) {
    std::vector<std::string> out;
    size_t at = 0;
    while ((at = md.find("```yaml\n", at)) != std::string::npos) {
        const size_t start = at + 8, end = md.find("```", start);
        out.push_back(md.substr(start, end - start));
        at = end + 3;
    }
    return out;
}

void expect_valid_job(const std::string& path) {
    SCOPED_TRACE(path);
    Json doc;
    try {
        doc = ftb::load_document(path);
    } catch (const ftb::InputError& e) {
        ADD_FAILURE() << e.what();
        return;
    }
    EXPECT_EQ(validator().errors(doc), "");
    try {
        ftb::load_job(path);
    } catch (const ftb::InputError& e) {
        ADD_FAILURE() << "the reader refuses it: " << e.what();
    }
}

TEST(DocsJobFile, ReferenceExamplesValidateAndLoad) {
    const auto blocks = yaml_blocks(read("docs/job-file.md"));
    ASSERT_GE(blocks.size(), 4u);
    int i = 0;
    for (const auto& b : blocks) {
        EXPECT_EQ(b.rfind(kModeline + "\n", 0), 0u) << "an example without the schema modeline:\n" << b;
        expect_valid_job(spec_test::write_scratch("docs/reference_" + std::to_string(i++) + ".yaml", b));
    }
}

std::vector<std::string> yaml_files(const std::string& rel_dir, bool recursive) {
    std::vector<std::string> out;
    const fs::path dir = fs::path(kSource) / rel_dir;
    auto take = [&](const fs::directory_entry& e) {
        if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
            out.push_back(e.path().string());
    };
    if (recursive) for (const auto& e : fs::recursive_directory_iterator(dir)) take(e);
    else for (const auto& e : fs::directory_iterator(dir)) take(e);
    std::sort(out.begin(), out.end());
    return out;
}

TEST(DocsJobFile, ExamplesCarryTheModelineValidateAndLoad) {
    const auto files = yaml_files("examples", false);
    ASSERT_FALSE(files.empty());
    for (const auto& f : files) {
        EXPECT_EQ(spec_test::slurp(f).rfind(kModeline + "\n", 0), 0u) << f << " lacks the schema modeline";
        expect_valid_job(f);
    }
}

// The public validation jobs and the plan test jobs are real jobs too: the schema must take them all.
TEST(DocsJobFile, ValidationAndTestJobsValidate) {
    std::vector<std::string> files = yaml_files("validation", true);
    for (const auto& f : yaml_files("tests/data/plan", false)) files.push_back(f);
    ASSERT_GT(files.size(), 100u);
    size_t jobs = 0;
    for (const auto& f : files) {
        SCOPED_TRACE(f);
        const Json doc = ftb::load_document(f);
        if (!doc.is_object() || !doc.contains("train")) continue;   // system files live beside some jobs
        ++jobs;
        EXPECT_EQ(validator().errors(doc), "");
    }
    EXPECT_GT(jobs, 100u);
}

TEST(DocsJobFile, SchemaRejectsWhatTheReaderRejects) {
    const Json good = ftb::parse_yaml_text("model: meta-llama/Llama-3.2-1B\ntrain: {seq_len: 512}\nhardware: {gpu: h100-sxm}\n", "t");
    EXPECT_EQ(validator().errors(good), "");
    for (const std::string bad : {"model: x\ntrain: {seq_len: 512, micro_bach: 2}\nhardware: {gpu: h100-sxm}\n",
                                  "model: x\ntrain: {seq_len: 512}\nhardware: {gpus_per_node: 2}\n",
                                  "model: x\ntrain: {micro_batch: 2}\nhardware: {gpu: h100-sxm}\n",
                                  "model: x\ntrain: {seq_len: 512}\nhardware: {gpu: {base: h100-sxm, memory: 80 GX}}\n",
                                  "model: x\ntrain: {seq_len: 512}\nparallel: {zero: 4}\nhardware: {gpu: h100-sxm}\n",
                                  "model: x\ntrain: {seq_len: 512}\nops: {checkpoint_storage: s3}\nhardware: {gpu: h100-sxm}\n"}) {
        EXPECT_NE(validator().errors(ftb::parse_yaml_text(bad, "t")), "") << bad;
    }
}

// README and docs/ are read in a clone: no link may leave the repository or point at a missing file.
TEST(DocsJobFile, UserDocsLinkInsideTheRepository) {
    std::vector<std::string> docs = {"README.md", "ARCHITECTURE.md", "data/README.md"};
    for (const auto& e : fs::directory_iterator(fs::path(kSource) / "docs"))
        if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
    static const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
    for (const auto& rel : docs) {
        SCOPED_TRACE(rel);
        const std::string text = read(rel);
        EXPECT_EQ(text.find("../shared"), std::string::npos) << rel << " points outside the repository";
        for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
            const std::string target = (*it)[1];
            if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
            const fs::path resolved = (fs::path(kSource) / rel).parent_path() / target;
            EXPECT_TRUE(fs::exists(resolved)) << rel << " links to missing " << target;
            const std::string canon = fs::weakly_canonical(resolved).string();
            EXPECT_EQ(canon.rfind(fs::weakly_canonical(kSource).string(), 0), 0u) << rel << " links outside: " << target;
        }
    }
}

}  // namespace
