// ftbound command-line entry point: parses the command, runs it, maps errors to exit codes
// (0 done, 2 bad input, 1 internal fault) per CONTRACT.md.
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "ftbound/error.hpp"

namespace ftb::cli {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}
}  // namespace ftb::cli

int main(int argc, char** argv) {
    CLI::App app{"ftbound: bottlenecks and weak points of LLM fine-tuning, before and after the run"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "ftbound 0.1.0");
    std::map<CLI::App*, std::function<int()>> runners;
    std::vector<ftb::cli::Command> commands = ftb::cli::registry();
    std::sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.name < b.name; });
    for (auto& c : commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.help);
        runners[sub] = c.setup(*sub);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "error: command line: " << e.what() << "\n";
        return 2;
    }
    try {
        for (auto& [sub, run] : runners)
            if (sub->parsed()) return run();
        return 2;
    } catch (const ftb::InputError& e) {
        std::cout.flush();
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const ftb::InternalError& e) {
        std::cerr << "internal error (a bug in ftbound): " << e.what() << "\n";
        return 1;
    } catch (const std::bad_alloc&) {
        std::cerr << "internal error: out of memory\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "internal error (a bug in ftbound): " << e.what() << "\n";
        return 1;
    }
}
