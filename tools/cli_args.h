// The command line of layoutcheck (tools/cli_args.cc): one table of commands
// and their options, parsed with CLI11 into an Args that the commands read.
//
//   Args a = parse_command(kCommands, argc, argv);   // argv[1] is the command
//   a.get("dtype"), a.has("json"), a.all("at"), a.positional
//
// The same table makes `layoutcheck COMMAND --help`, the suggestions for a
// mistyped command or option, the man page (`--help-all`) and the bash
// completion (`--bash-completion`).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace layoutcheck::cli {

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;
  bool has(const std::string& k) const { return options.count(k) > 0; }
  // The last occurrence wins, so a script's defaults can be overridden by appending.
  std::string get(const std::string& k, const std::string& def = "") const {
    auto [first, last] = options.equal_range(k);
    return first == last ? def : std::prev(last)->second;
  }
  std::vector<std::string> all(const std::string& k) const {
    std::vector<std::string> out;
    for (auto [it, end] = options.equal_range(k); it != end; ++it) out.push_back(it->second);
    return out;
  }
};

// One option: `value` is the placeholder of its value ("N", "FILE"), or
// nullptr for a switch that takes none. Options may be given more than once
// (Args::all returns every value, Args::get the last).
struct OptionSpec {
  const char* name;   // without the leading "--"
  const char* value;  // nullptr: a switch
  const char* help;   // one line
};

struct CommandSpec {
  const char* name;
  const char* arguments;  // the positional arguments for the usage line ("LAYOUT", "PATH...") or ""
  int max_positional;     // how many positional arguments it takes; -1: any number
  const char* summary;    // one line
  std::vector<OptionSpec> options;
};

// A usage error: exit status 2 with "layoutcheck: MESSAGE".
struct UsageError {
  std::string message;
};

// What parse_command found besides a command to run.
enum class Parsed { kRun, kHelpShown };

// Parses argv[2..] for the command argv[1]. Throws UsageError for an unknown
// command or option (with the nearest name, when one is close), a missing
// value or too many arguments. Prints the command's help for -h/--help and
// returns kHelpShown.
Parsed parse_command(const std::vector<CommandSpec>& commands, int argc, char** argv, Args* out);

// A whole number as the options take it: decimal, or hexadecimal after 0x
// (as the shapes and parameters take theirs); nullopt for anything else,
// a sign, a space or a value past 2^64 - 1 included.
std::optional<uint64_t> parse_whole_number(const std::string& text);

// Option KEY as a whole number in [lo, hi] (the forms parse_whole_number
// takes); DEF when it is absent. Anything else throws UsageError naming the
// option, its value and the range: "--KEY VALUE is out of range: it takes a
// whole number from LO to HI" and UNIT (" seconds") after it.
uint64_t ranged_whole_number(const Args& a, const std::string& key, uint64_t def, uint64_t lo, uint64_t hi,
                             const std::string& unit = "");

// The --threads N of pack and unpack (1..1024; 0 when absent: the default of
// optimized/threads.h). Throws UsageError for another value, or when the
// implementation (--impl) is not the optimized one, which alone takes a count.
unsigned thread_count(const Args& a);

// "did you mean X?" material: the candidate nearest to `word` within a small
// edit distance, or "".
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

// Every command's --help, one after another (the man page is made from it).
std::string help_all(const std::vector<CommandSpec>& commands, const std::string& overview);

// S quoted for a POSIX shell where it needs quoting (a repro line's words).
std::string shell_quote(const std::string& s);

// A bash completion script for the commands and their options.
std::string bash_completion(const std::vector<CommandSpec>& commands);

}  // namespace layoutcheck::cli
