// Each command lives in its own cmd_*.cpp and registers itself here at static-initialisation time,
// so adding a command touches no other file. A command's run() returns the exit code; user errors
// are thrown as ftb::InputError and turned into `error:` lines by main().
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace ftb::cli {

struct Command {
    std::string name;
    std::string help;
    // Adds options to `sub` and returns the function that runs the command after parsing.
    std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& registry();

struct Register {
    explicit Register(Command c) { registry().push_back(std::move(c)); }
};

}  // namespace ftb::cli
