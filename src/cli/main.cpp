// ftbound command-line entry point: parses the command, runs it, maps errors to exit codes
// (0 done, 2 bad input, 1 internal fault) per CONTRACT.md.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "spec/document.hpp"

namespace ftb::cli {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}
}  // namespace ftb::cli

namespace {

// What the user probably meant when CLI11 refuses the command line: a mistyped command or flag.
std::string command_line_hint(CLI::App& app, int argc, char** argv) {
    if (argc < 2) return "";
    std::vector<std::string> commands;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) commands.push_back(sub->get_name());
    const std::string first = argv[1];
    if (first.empty() || first[0] == '-') return "";
    if (std::find(commands.begin(), commands.end(), first) == commands.end()) {
        const std::string hint = ftb::did_you_mean(first, commands);
        return hint.empty() ? "" : " (did you mean `ftbound " + hint + "`?)";
    }
    std::vector<std::string> flags = {"--help"};
    for (const CLI::Option* o : app.get_subcommand(first)->get_options())
        for (const auto& n : o->get_lnames()) flags.push_back("--" + n);
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(flags.begin(), flags.end(), name) != flags.end()) continue;
        const std::string hint = ftb::did_you_mean(name, flags);
        return " (" + name + ": did you mean " + (hint.empty() ? "one of `ftbound " + first + " --help`" : "'" + hint + "'") + "?)";
    }
    return "";
}

// The commands CLI11 is told about: only the named one when the first argument names a command exactly (setting
// up all of them is about a tenth of a plan's start-up), else all, sorted, for `--help` and the "did you mean" hint.
std::vector<ftb::cli::Command> commands_to_register(const std::vector<ftb::cli::Command>& all, int argc, char** argv) {
    if (argc >= 2) {
        const std::string first = argv[1];
        for (const auto& c : all)
            if (c.name == first) return {c};
    }
    std::vector<ftb::cli::Command> sorted = all;
    std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return sorted;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"ftbound: bottlenecks and weak points of LLM fine-tuning, before and after the run"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("ftbound ") + FTBOUND_VERSION);
    std::map<CLI::App*, std::function<int()>> runners;
    std::vector<ftb::cli::Command> commands = commands_to_register(ftb::cli::registry(), argc, argv);
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
        std::cerr << "error: command line: " << e.what() << command_line_hint(app, argc, argv) << "\n";
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
