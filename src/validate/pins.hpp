// Accuracy pins: the MAPE each quantity (per source, or over all cases) may reach on a public cases file, kept in
// the repository (validation/pins.csv) and checked by CI, so a change that makes accuracy worse fails unless it
// raises the pin with a reason (docs/validation.md).
#pragma once
#include <string>
#include <vector>

#include "validate/validation.hpp"

namespace ftb {

struct Pin {
    std::string cases;        // cases file, relative to the pins file's folder
    std::string source;       // "all" or a case-id prefix
    std::string quantity;
    std::string qualities;    // "high+medium" or "all"
    int count = 0;            // cases predicted: a case that stops being predicted fails the pin
    double max_mape_percent = 0;
    int max_beyond_30 = 0;
    int min_in_band = -1;     // memory figures: cases whose measured value lies inside the plan's band (-1: not pinned)
    std::string reason;
    int line = 0;
};

// Columns cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30[,min_in_band],reason
// (min_in_band empty or absent: band coverage not pinned).
std::vector<Pin> read_pins(const std::string& path);

struct PinCheck {
    Pin pin;
    bool found = false;       // a summary exists for the pin's source, quantity and qualities
    QuantitySummary got;
    bool ok = false;
    std::string message;      // what moved, when not ok
};

// Checks the pins of one cases file against its summaries (overall and by source). MAPE is compared at the
// precision it is pinned and printed with (0.1 percentage point).
std::vector<PinCheck> check_pins(const std::vector<Pin>& pins, const std::string& cases_relative,
                                 const std::vector<QuantitySummary>& summaries);

// The pins of one cases file set to its current figures (every summary row, overall and by source); the other
// cases files' pins are kept. A pin that rises takes `reason` (and is listed in `rising`); the others keep theirs.
std::vector<Pin> updated_pins(const std::vector<Pin>& pins, const std::string& cases_relative,
                              const std::vector<QuantitySummary>& summaries, const std::string& reason,
                              std::vector<std::string>& rising);
void write_pins(const std::string& path, const std::vector<Pin>& pins);
// A cases file as a pins file names it: relative to the pins file's folder.
std::string cases_relative_to_pins(const std::string& cases, const std::string& pins);

}  // namespace ftb
