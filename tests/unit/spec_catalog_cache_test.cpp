// A Catalog remembers the entries it read (spec/catalog.hpp): a system by its file and the name it was asked
// for, so that an entry without `name:` is still called what it was asked for; a failed lookup is not remembered.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"

namespace ftb {
namespace {

namespace fs = std::filesystem;

// A catalog folder of its own (`tag`) with one system, bare-box: no `name:` field, an inline GPU and CPU.
fs::path bare_catalog(const std::string& tag) {
    const fs::path dir = fs::temp_directory_path() / ("ftbound_catalog_cache_" + tag + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "systems");
    std::ofstream(dir / "systems" / "bare-box.yaml") << "gpu: {name: g, memory: 80GiB, memory_bandwidth_GBps: 2000}\n"
                                                         "cpu: {name: c, cores: 32, memory_bandwidth_GBps: 300}\n"
                                                         "gpus_per_node: 2\nhost_memory: 512GiB\n";
    return dir;
}

const InputSite kSite{"test", "hardware.system"};

TEST(SpecCatalogCache, AnEntryIsNamedAsItWasAskedFor) {
    const fs::path dir = bare_catalog("named");
    const Catalog cat(dir.string());
    EXPECT_EQ(cat.system("bare-box", kSite).name, "bare-box");
    EXPECT_EQ(cat.system("Bare_Box", kSite).name, "Bare_Box");   // the same file, by another spelling
    EXPECT_EQ(cat.system("bare-box", kSite).name, "bare-box");
    EXPECT_EQ(cat.system("Bare_Box", kSite).devices_per_node, 2);
    fs::remove_all(dir);
}

TEST(SpecCatalogCache, AFailedLookupIsNotRemembered) {
    const fs::path dir = bare_catalog("failed");
    const Catalog cat(dir.string());
    EXPECT_THROW(cat.system("later-box", kSite), InputError);
    EXPECT_THROW(cat.system("later-box", kSite), InputError);
    fs::copy_file(dir / "systems" / "bare-box.yaml", dir / "systems" / "later-box.yaml");
    EXPECT_EQ(cat.system("later-box", kSite).devices_per_node, 2);
    fs::remove_all(dir);
}

TEST(SpecCatalogCache, RepeatedLookupsGiveTheSameEntry) {
    const Catalog& cat = Catalog::instance();
    const SystemSpec first = cat.system("dell-poweredge-r760xa-4x-h100-pcie", kSite);
    const SystemSpec again = cat.system("dell-poweredge-r760xa-4x-h100-pcie", kSite);
    ASSERT_EQ(first.links.size(), again.links.size());
    ASSERT_FALSE(first.links.empty());
    for (size_t i = 0; i < first.links.size(); ++i) {
        EXPECT_EQ(first.links[i].link.name, again.links[i].link.name);
        EXPECT_EQ(first.links[i].link.bandwidth_GBps, again.links[i].link.bandwidth_GBps);
    }
    const LinkSpec link = cat.link("pcie5", kSite);
    EXPECT_EQ(cat.link("pcie5", kSite).bandwidth_GBps, link.bandwidth_GBps);
    EXPECT_EQ(link.name, "pcie5");
}

}  // namespace
}  // namespace ftb
