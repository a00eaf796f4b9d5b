// The catalog parsed at build time (src/spec/catalog_index.hpp): every catalog YAML file and model config.json of
// this build is indexed,
// its prebuilt tree is the one the YAML reader gives (values and JSON types), and any other text, an edited catalog
// file included, is parsed as before.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "spec/catalog_index.hpp"
#include "spec/document.hpp"
#include "spec/yaml_source.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Same values and the same JSON type at every node (== alone takes 1 and 1u, 2 and 2.0 as equal).
void expect_same_tree(const Json& got, const Json& want, const std::string& where) {
    ASSERT_EQ(got.type(), want.type()) << where;
    if (got.is_object()) {
        ASSERT_EQ(got.size(), want.size()) << where;
        for (auto it = want.begin(); it != want.end(); ++it) {
            ASSERT_TRUE(got.contains(it.key())) << where << "." << it.key();
            expect_same_tree(got.at(it.key()), it.value(), where + "." + it.key());
        }
    } else if (got.is_array()) {
        ASSERT_EQ(got.size(), want.size()) << where;
        for (size_t i = 0; i < got.size(); ++i) expect_same_tree(got[i], want[i], where + "[" + std::to_string(i) + "]");
    } else {
        EXPECT_EQ(got, want) << where;
    }
}

TEST(SpecCatalogIndex, FingerprintIsFnv1a64) {
    // Published FNV-1a 64-bit test vectors (offset basis for the empty text).
    EXPECT_EQ(text_fingerprint(""), 0xcbf29ce484222325ull);
    EXPECT_EQ(text_fingerprint("a"), 0xaf63dc4c8601ec8cull);
    EXPECT_EQ(text_fingerprint("foobar"), 0x85944171f73967e8ull);
}

TEST(SpecCatalogIndex, EveryCatalogFileGivesTheParsersTree) {
    size_t files = 0, models = 0;
    for (const auto& e : fs::recursive_directory_iterator(ftb_test::data_dir())) {
        if (!e.is_regular_file() || !indexed_catalog_file(e.path())) continue;
        ++files;
        models += e.path().extension() == ".json";
        const std::string text = slurp(e.path());
        const std::optional<Json> prebuilt = prebuilt_document(text);
        ASSERT_TRUE(prebuilt.has_value()) << e.path() << " is not in the index (rebuild?)";
        expect_same_tree(*prebuilt, parse_yaml_source(text, e.path().string()), e.path().string());
    }
    EXPECT_GT(files - models, 100u);   // data/ holds over a hundred YAML files
    EXPECT_GT(models, 50u);            // and the config.json of every catalog model
    EXPECT_EQ(prebuilt_document_count(), files);
}

TEST(SpecCatalogIndex, IntegersKeepTheirSignedType) {
    // links/none.yaml: `bandwidth_GBps: 0` is an int64 from the reader; CBOR alone would give it back unsigned.
    const std::optional<Json> none = prebuilt_document(slurp(fs::path(ftb_test::data_dir()) / "links" / "none.yaml"));
    ASSERT_TRUE(none.has_value());
    EXPECT_TRUE(none->at("bandwidth_GBps").is_number_integer());
    EXPECT_FALSE(none->at("bandwidth_GBps").is_number_unsigned());
    EXPECT_EQ(none->at("name"), "none");
}

TEST(SpecCatalogIndex, AnEditedCatalogFileIsParsedAgain) {
    const std::string text = slurp(fs::path(ftb_test::data_dir()) / "links" / "none.yaml");
    ASSERT_NE(text.find("name: none"), std::string::npos);
    std::string renamed = text;
    renamed.replace(renamed.find("name: none"), 10, "name: nine");   // same length, other bytes
    EXPECT_FALSE(prebuilt_document(renamed).has_value());
    EXPECT_EQ(parse_yaml_text(renamed, "none.yaml").at("name"), "nine");
    const std::string longer = text + "# a comment\n";
    EXPECT_FALSE(prebuilt_document(longer).has_value());
    expect_same_tree(parse_yaml_text(longer, "none.yaml"), parse_yaml_source(text, "none.yaml"), "none.yaml");
    EXPECT_FALSE(prebuilt_document("").has_value());
}

}  // namespace
}  // namespace ftb
