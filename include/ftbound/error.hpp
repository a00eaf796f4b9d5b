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
    // Each part at most kMaxPartChars: a value echoed from hostile input (a 40,000-digit number, a --set of a
    // whole document) must not turn the one error line into megabytes (issue #30).
    static constexpr size_t kMaxPartChars = 400;
    static std::string clipped(const std::string& part) {
        if (part.size() <= kMaxPartChars) return part;
        // The head and the tail: a reason's advice ("(allowed 1 to 64)", "give --set ...") comes last.
        return part.substr(0, 200) + "...[" + std::to_string(part.size() - 300) + " characters]..." +
               part.substr(part.size() - 100);
    }
    static std::string format(const std::string& file, const std::string& field, const std::string& reason) {
        std::string s = file.empty() ? std::string("<input>") : clipped(file);
        if (!field.empty()) s += ": " + clipped(field);
        return s + ": " + clipped(reason);
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
