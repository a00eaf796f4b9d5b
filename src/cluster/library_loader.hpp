// Loads one of ftbound's run-time libraries (libftbound_mpi.so, libftbound_nccl.so): $ENV_VAR, next to the ftbound
// binary, ../lib/ of it, then the loader's path.
#pragma once
#include <string>

namespace ftb::cluster {

// The handle, or nullptr with the loader's last error in `error`; `path` says which candidate loaded.
void* load_library(const std::string& file, const char* env_var, std::string& path, std::string& error);

}  // namespace ftb::cluster
