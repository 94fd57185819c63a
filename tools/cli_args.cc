#include "tools/cli_args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sstream>

#include "layoutcheck/status.h"

namespace layoutcheck::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string usage_line(const CommandSpec& c) {
  std::string line = std::string("usage: layoutcheck ") + c.name;
  if (*c.arguments) line += std::string(" ") + c.arguments;
  return line + " [options]\n";
}

std::string command_help(const CommandSpec& c) {
  std::ostringstream o;
  o << usage_line(c) << "  " << c.summary << "\noptions:\n";
  auto row = [&o](const std::string& left, const char* help) {
    o << "  " << left;
    if (left.size() + 2 <= 28) o << std::string(28 - left.size(), ' ');
    else o << "\n  " << std::string(28, ' ');
    o << help << "\n";
  };
  for (const OptionSpec& opt : c.options) {
    row(std::string("--") + opt.name + (opt.value ? std::string(" ") + opt.value : ""), opt.help);
  }
  row("-h, --help", "print this help");
  return o.str();
}

const CommandSpec* find_command(const std::vector<CommandSpec>& commands, const std::string& name) {
  for (const CommandSpec& c : commands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates, const char* prefix) {
  const std::string near = nearest(word, candidates);
  return near.empty() ? "" : std::string(" (did you mean ") + prefix + near + "?)";
}

}  // namespace

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    const size_t limit = std::min<size_t>(c.size() >= 5 ? 2 : 1, c.size() - 1);
    if (d == 0 || d > limit) continue;
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

Parsed parse_command(const std::vector<CommandSpec>& commands, int argc, char** argv, Args* out) {
  if (argc < 2) throw UsageError{"missing command"};
  out->command = argv[1];
  const CommandSpec* spec = find_command(commands, out->command);
  if (!spec) {
    std::vector<std::string> names;
    for (const CommandSpec& c : commands) names.push_back(c.name);
    throw UsageError{"unknown command " + quote_input(out->command) + suggestion(out->command, names, "")};
  }
  CLI::App app{spec->summary, std::string("layoutcheck ") + spec->name};
  app.allow_extras();
  app.set_help_flag("-h,--help", "print this help");
  std::vector<std::pair<const OptionSpec*, CLI::Option*>> declared;
  for (const OptionSpec& o : spec->options) {
    const std::string flag = std::string("--") + o.name;
    CLI::Option* opt = o.value ? app.add_option(flag, o.help)
                                     ->type_name(o.value)
                                     ->expected(1)
                                     ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                               : app.add_flag(flag, o.help)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    declared.emplace_back(&o, opt);
  }
  // A flag is on when given; a value written to it ("--json=false") would be
  // read as on all the same, so it is refused. An option that takes a value
  // followed by another option ("--shape --dtype int8") lacks its value.
  const auto is_option = [&](const std::string& word) {
    for (const OptionSpec& o : spec->options) {
      const std::string name = std::string("--") + o.name;
      if (word == name || word.compare(0, name.size() + 1, name + "=") == 0) return true;
    }
    return false;
  };
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    for (const OptionSpec& o : spec->options) {
      const std::string name = std::string("--") + o.name;
      if (!o.value && word.compare(0, name.size() + 1, name + "=") == 0) {
        throw UsageError{"option " + name + " takes no value (" + clip_input(word) + ")"};
      }
      if (o.value && word == name && i + 1 < argc && is_option(argv[i + 1])) {
        throw UsageError{"option " + name + " needs a value (" + clip_input(argv[i + 1]) + " is an option)"};
      }
    }
  }
  std::vector<std::string> positional;
  if (spec->max_positional != 0) app.add_option("arguments", positional, spec->arguments);
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::CallForHelp&) {
    std::fputs(command_help(*spec).c_str(), stdout);
    return Parsed::kHelpShown;
  } catch (const CLI::ParseError& e) {
    const std::string last = argv[argc - 1];
    for (const OptionSpec& o : spec->options) {
      if (o.value && last == std::string("--") + o.name) throw UsageError{"option " + last + " needs a value"};
    }
    throw UsageError{std::string(e.what()) + " (layoutcheck " + spec->name + " --help lists the options)"};
  }
  const std::vector<std::string> extra = app.remaining();
  if (!extra.empty()) {
    const std::string& first = extra.front();
    if (first.size() > 1 && first[0] == '-') {
      std::vector<std::string> names;
      for (const OptionSpec& o : spec->options) names.push_back(std::string("--") + o.name);
      const std::string word = first.substr(0, first.find('='));
      throw UsageError{"unknown option " + clip_input(first) + " for '" + spec->name + "'" +
                       suggestion(word, names, "")};
    }
    positional.push_back(first);
  }
  if (spec->max_positional >= 0 && positional.size() > static_cast<size_t>(spec->max_positional)) {
    const std::string takes = spec->max_positional == 0 ? std::string("no arguments")
                                                         : std::string("one ") + spec->arguments + " argument";
    throw UsageError{"'" + std::string(spec->name) + "' takes " + takes + "; unexpected argument " +
                     quote_input(positional[static_cast<size_t>(spec->max_positional)])};
  }
  out->positional = std::move(positional);
  for (const auto& [o, opt] : declared) {
    if (!o->value) {
      if (opt->count()) out->options.emplace(o->name, "1");
      continue;
    }
    for (const std::string& v : opt->results()) out->options.emplace(o->name, v);
  }
  return Parsed::kRun;
}

std::optional<uint64_t> parse_whole_number(const std::string& text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* first = text.data() + (hex ? 2 : 0);
  const char* last = text.data() + text.size();
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
  if (first == last || ec != std::errc() || end != last) return std::nullopt;
  return v;
}

uint64_t ranged_whole_number(const Args& a, const std::string& key, uint64_t def, uint64_t lo, uint64_t hi,
                             const std::string& unit) {
  if (!a.has(key)) return def;
  const std::string text = a.get(key);
  const std::optional<uint64_t> v = parse_whole_number(text);
  if (!v || *v < lo || *v > hi) {
    throw UsageError{"--" + key + " " + clip_input(text) + " is out of range: it takes a whole number from " +
                     std::to_string(lo) + " to " + std::to_string(hi) + unit};
  }
  return *v;
}

unsigned thread_count(const Args& a) {
  if (!a.has("threads")) return 0;
  constexpr unsigned kMax = 1024;  // optimized/threads.h: kMaxThreads
  const uint64_t n = ranged_whole_number(a, "threads", 0, 1, kMax);
  const std::string impl = a.get("impl", "optimized");
  if (impl != "optimized") {
    throw UsageError{"--threads applies to the optimized implementation, not --impl " + clip_input(impl)};
  }
  return static_cast<unsigned>(n);
}

std::string help_all(const std::vector<CommandSpec>& commands, const std::string& overview) {
  // Laid out for help2man: "Name:" at column 0 starts a section of the man page.
  std::string out = "usage: layoutcheck COMMAND [options]\n\nCommands:\n";
  for (const CommandSpec& c : commands) {
    std::string left = std::string("  ") + c.name;
    out += left + std::string(left.size() < 14 ? 14 - left.size() : 1, ' ') + c.summary + "\n";
  }
  for (const CommandSpec& c : commands) {
    // "Command check:", then the help indented (help2man lists the options).
    std::istringstream help(command_help(c));
    out += std::string("\nCommand ") + c.name + ":\n";
    for (std::string line; std::getline(help, line);) {
      if (line.rfind("usage: ", 0) == 0) line = "  " + line.substr(7) + "\n";
      if (line == "options:") line = "";
      out += (line.rfind("  ", 0) == 0 || line.empty() ? "" : "  ") + line + "\n";
    }
  }
  return out + "\n" + overview;
}

std::string bash_completion(const std::vector<CommandSpec>& commands) {
  std::ostringstream o;
  o << "# bash completion for layoutcheck, made by `layoutcheck --bash-completion`\n"
       "_layoutcheck() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts files\n"
       "  if ((COMP_CWORD == 1)); then\n"
       "    COMPREPLY=($(compgen -W \"";
  for (const CommandSpec& c : commands) o << c.name << " ";
  o << "help --help --version\" -- \"$cur\"))\n"
       "    return\n"
       "  fi\n"
       "  case ${COMP_WORDS[1]} in\n";
  for (const CommandSpec& c : commands) {
    o << "    " << c.name << ") opts=\"";
    for (const OptionSpec& opt : c.options) o << "--" << opt.name << " ";
    o << "--help\"; files=\"";
    for (const OptionSpec& opt : c.options) {
      if (opt.value && (std::strstr(opt.value, "FILE") || std::strstr(opt.value, "DIR") || std::strstr(opt.value, "PATH"))) {
        o << " --" << opt.name << " ";
      }
    }
    o << "\" ;;\n";
  }
  o << "    *) return ;;\n"
       "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
       "  elif [[ $files == *\" $prev \"* || $prev != -* ]]; then\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o filenames -F _layoutcheck layoutcheck\n";
  return o.str();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,=+:@%") ==
                        std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace layoutcheck::cli
