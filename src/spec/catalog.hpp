// The built-in catalog (data/): models, devices, links, networks, systems, framework profiles.
// Entries are found by catalog name; names that look like paths are read as files.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/model_spec.hpp"
#include "ftbound/price.hpp"
#include "ftbound/storage.hpp"
#include "ftbound/system_spec.hpp"
#include "spec/document.hpp"

namespace ftb {

// Where a reference appears in the user's input, for error messages.
struct InputSite {
    std::string file;
    std::string field;
};

class Catalog {
public:
    // The data folder: $FTBOUND_DATA, else <exe>/../share/ftbound/data (an installed binary), else the source
    // tree's data/ compiled in (a binary in the build tree).
    static const Catalog& instance();
    explicit Catalog(std::string data_dir);

    const std::string& data_dir() const { return data_dir_; }
    // Names in one section: models, gpus, cpus, links, networks, systems, frameworks. Listed once per process.
    const std::vector<std::string>& names(const std::string& section) const;
    std::string path_of(const std::string& section, const std::string& name) const;
    // Other names an entry's file lists (`aliases:`); models have none (their file is the config.json).
    std::vector<std::string> aliases_of(const std::string& section, const std::string& name) const;

    ModelSpec model(const std::string& name_or_path, const InputSite& site) const;
    DeviceSpec gpu(const std::string& name, const InputSite& site) const;
    DeviceSpec cpu(const std::string& name, const InputSite& site) const;
    LinkSpec link(const std::string& name, const InputSite& site) const;
    NetworkSpec network(const std::string& name, const InputSite& site) const;
    SystemSpec system(const std::string& name_or_path, const InputSite& site) const;
    // Whether catalog system `name`'s file lists a component of `kind` (e.g. "nvswitch"), read from the file's tree
    // alone: a search over servers passes most of them over without composing their topology.
    bool system_lists_component(const std::string& name, const std::string& kind) const;
    // Storage tiers (data/storage/) and node prices (data/prices/): catalog_ops.cpp.
    StorageTier storage(const std::string& name, const InputSite& site) const;
    std::optional<NodePrice> price(const std::string& system_name) const;   // empty: no price for it

    // Readers for one entry's fields (also used for inline mappings in job files).
    // `base`: a catalog device whose fields the mapping replaces (a variant part), or null for a new device.
    DeviceSpec read_device(const Fields& f, DeviceKind kind, const DeviceSpec* base = nullptr) const;
    LinkSpec read_link(const Fields& f) const;
    NetworkSpec read_network(const Fields& f) const;
    SystemSpec read_system(const Fields& f) const;

private:
    // Parts of read_system that read catalog entries by name.
    void read_system_devices(const Fields& f, SystemSpec& s) const;
    std::vector<TopologyLink> read_topology_links(const Fields& f, const std::vector<Component>& components) const;
    // Catalog files are parsed once per process (a plan reads the same link files many times).
    const Json& document(const std::string& path) const;
    // The file of a catalog entry: its name, the same name up to case and separators (docs/job-file.md), or an alias.
    std::vector<std::string> list_names(const std::string& section) const;   // walks the section's folder
    // Remembers what it found (resolved_): a plan looks up the same links and systems many times.
    std::string resolve(const std::string& section, const std::string& name, const InputSite& site,
                        const char* what) const;
    std::string find_entry(const std::string& section, const std::string& name, const InputSite& site,
                           const char* what) const;
    std::string data_dir_;
    mutable std::mutex cache_mutex_;
    mutable std::map<std::string, Json> cache_;
    mutable std::map<std::string, std::vector<std::string>> names_cache_;   // by section, under cache_mutex_
    // Entries read once per process, each a function of its key and the (cached) files; errors are not kept.
    // Under cache_mutex_, which is not held while an entry is read (a system reads its links).
    mutable std::map<std::pair<std::string, std::string>, std::string> resolved_;   // (section, name) -> file
    mutable std::map<std::string, LinkSpec> links_;                                 // by file
    mutable std::map<std::pair<std::string, std::string>, SystemSpec> systems_;     // (file, name as given)
};

bool looks_like_path(const std::string& s);

}  // namespace ftb
