// `ftbound validate --leave-out CASES.csv...`: every calibrated setting refitted without each source, that source
// predicted with the refits (validate/leave_out.hpp); text, --json or --csv; --pins checks (or --update-pins
// writes) the left-out figures against their own pins file (validation/pins_left_out.csv).
#pragma once
#include <string>
#include <vector>

namespace ftb::cli {

struct LeaveOutOptions {
    std::vector<std::string> cases_files;   // one pool
    std::string pins, reason;
    bool json = false, csv = false, update_pins = false;
};

// Exit 0, or 3 when a left-out figure is above its pin (as validate --pins).
int run_leave_out(const LeaveOutOptions& o);

}  // namespace ftb::cli
