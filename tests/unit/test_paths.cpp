#include "test_paths.hpp"

namespace ftb_test {
const char* source_dir() { return FTBOUND_SOURCE_DIR; }
const char* data_dir() { return FTBOUND_DATA_DIR; }
const char* test_data() { return FTBOUND_TEST_DATA; }
const char* binary() { return FTBOUND_BINARY; }
const char* cmake() { return FTBOUND_CMAKE; }
const char* build_dir() { return FTBOUND_BUILD_DIR; }
}  // namespace ftb_test
