// simdjson's library loaded at run time by the trace readers (src/trace/simdjson_runtime.hpp).
#include <gtest/gtest.h>

#include "trace/simdjson_runtime.hpp"

namespace ftb {
namespace {

TEST(TraceSimdjsonRuntime, LoadsTheLibraryAndReadsItsErrorTable) {
    ASSERT_NO_THROW(require_simdjson());
    EXPECT_EQ(simdjson_error_text(simdjson::SUCCESS), "No error");
    EXPECT_EQ(simdjson_error_text(simdjson::UTF8_ERROR), "The input is not valid UTF-8");
}

TEST(TraceSimdjsonRuntime, ACodeOutsideTheTableIsNamedByNumber) {
    require_simdjson();
    const auto beyond = static_cast<simdjson::error_code>(simdjson::NUM_ERROR_CODES);
    EXPECT_EQ(simdjson_error_text(beyond), "simdjson error " + std::to_string(int(simdjson::NUM_ERROR_CODES)));
}

}  // namespace
}  // namespace ftb
