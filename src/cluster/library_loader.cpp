#include "cluster/library_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace ftb::cluster {

void* load_library(const std::string& file, const char* env_var, std::string& path, std::string& error) {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv(env_var); env && *env) candidates.emplace_back(env);
    char buf[PATH_MAX];
    if (const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1); n > 0) {
        buf[n] = 0;
        const std::string dir = std::filesystem::path(buf).parent_path().string();
        candidates.push_back(dir + "/" + file);
        candidates.push_back(dir + "/../lib/" + file);
    }
    candidates.push_back(file);
    for (const auto& c : candidates) {
        // RTLD_GLOBAL: Open MPI's components, themselves loaded with dlopen, look up libmpi's symbols globally.
        if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
            path = c;
            return lib;
        }
        if (const char* e = dlerror()) error = e;
    }
    return nullptr;
}

}  // namespace ftb::cluster
