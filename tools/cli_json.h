// The CLI's JSON reports (tools/cli_json.cc), through nlohmann-json. Every
// --json output is one object that starts with report_header(); docs/json.md
// describes the fields. dump_json() replaces bytes that are not UTF-8 (a
// plugin's name or message) with U+FFFD, so the output is always valid JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace layoutcheck::cli {

using Json = nlohmann::ordered_json;

// The schema version of the reports; raised when a field changes meaning or goes away.
constexpr int kJsonSchema = 1;

// {"schema", "command", "layoutcheck_version", "abi_version"}
Json report_header(const std::string& command);

// A value that reads as a whole number ("64") as a number, anything else as a string.
Json number_or_string(const std::string& value);

// Two-space indented, invalid UTF-8 replaced, with a final newline.
std::string dump_json(const Json& j);

}  // namespace layoutcheck::cli
