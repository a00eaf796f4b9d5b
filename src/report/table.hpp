// A plain aligned text table: add rows of cells, print with columns padded to their widest cell.
#pragma once
#include <string>
#include <vector>

namespace ftb {

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header, std::vector<bool> right_aligned = {});
    void add(std::vector<std::string> row);
    void add_rule();                       // a separator line
    std::string str(const std::string& indent = "") const;
    size_t rows() const { return rows_.size(); }

private:
    std::vector<std::string> header_;
    std::vector<bool> right_;
    std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

// Human-readable sizes and numbers.
std::string fmt_bytes(double bytes);           // "12.34 GiB"
std::string fmt_seconds(double seconds);       // "1.23 ms", "4.5 s", "3.2 h", "5.1 days"
std::string fmt_count(double n);               // "6.74B", "124M", "8,192"
std::string fmt_percent(double fraction, int decimals = 1);

}  // namespace ftb
