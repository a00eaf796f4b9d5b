// Error policy (see ARCHITECTURE.md):
//  - Anything a user can get wrong (a file, a field, a value) raises InputError. It names the file,
//    the dotted field path and the reason; the CLI prints it as `error: FILE: FIELD: REASON` and exits 2.
//  - Bugs are asserts (FTB_ASSERT) or any other exception; the CLI turns those into exit 1.
//  - Nothing below main() calls exit().
#pragma once
#include <stdexcept>
#include <string>

namespace ftb {

class InputError : public std::runtime_error {
public:
    InputError(std::string file, std::string field, std::string reason)
        : std::runtime_error(format(file, field, reason)),
          file_(std::move(file)), field_(std::move(field)), reason_(std::move(reason)) {}

    const std::string& file() const { return file_; }
    const std::string& field() const { return field_; }
    const std::string& reason() const { return reason_; }

private:
    static std::string format(const std::string& file, const std::string& field, const std::string& reason) {
        std::string s = file.empty() ? std::string("<input>") : file;
        if (!field.empty()) s += ": " + field;
        return s + ": " + reason;
    }
    std::string file_, field_, reason_;
};

// A broken internal invariant: a bug, never a user error.
class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

}  // namespace ftb

#define FTB_ASSERT(cond)                                                                       \
    do {                                                                                       \
        if (!(cond)) throw ::ftb::InternalError(std::string("assertion failed: ") + #cond +   \
                                                " at " + __FILE__ + ":" + std::to_string(__LINE__)); \
    } while (0)
