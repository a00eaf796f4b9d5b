// Where the fast tier finds the source tree, its test data, the built binary and CMake. The paths come from
// tests/CMakeLists.txt as compile definitions on test_paths.cpp alone, so every other test file compiles to the same
// command line in any checkout and ccache shares it between worktrees.
#pragma once

namespace ftb_test {
const char* source_dir();   // the repository root
const char* data_dir();     // the catalog (<source>/data), as the product reads it
const char* test_data();    // tests/data
const char* binary();       // the built ftbound
const char* cmake();        // the cmake that configured this build
const char* build_dir();    // the build folder
}  // namespace ftb_test
