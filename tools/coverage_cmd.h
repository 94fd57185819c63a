// `layoutcheck list --coverage`: every documented item and what checks it
// (tools/coverage_cmd.cc).
//
// The items are data (docs/coverage_items.txt, compiled in; its top describes
// the format): an id, a kind, the document section, and the targets that
// implement the item (layout:, param:, rule:, entry:, table:) with the
// properties and fuzzers that cover it. Everything else is derived here:
//
//   reference  the reference accepts cases of every layout the targets reach
//              (a layout, a parameter's layout, the layouts of a rule), rejects
//              a case by every rule, implements every entry, and holds the rows
//              of every precision table named
//   optimized  the optimized implementation accepts every valid case of those
//              layouts, rejects every case the reference rejects by a rule
//              (layoutcheck's own limits aside), and implements every entry
//   oracles    the oracle cases that cite the item's section and use a target
//              (its layout, a non-default value of its parameter, its
//              conversion or table), or that the reference rejects by one of
//              its rules; only those matching cases:GLOB when the item has one
//   fuzzer     the listed fuzzers, and fuzz_differential wherever the targets
//              reach a layout both implementations accept
//   plugin     the plugin ABI can drive every target: the cases of its layouts
//              reach a plugin intact (a probe plugin built in memory rebuilds
//              them), entries are ABI 1.1 members, tables are not in the ABI
//
//   layoutcheck list --coverage            a table and the totals
//   layoutcheck list --coverage --json     one object per item
//   layoutcheck list --coverage --markdown docs/coverage.md
//
// The list is checked against the registry: an item naming a layout, rule,
// parameter, entry or table that does not exist, a section that is not a
// heading of its document, and a registered layout or documented rule that no
// item names are errors (exit status 2).
#pragma once

#include <string>

namespace layoutcheck::cli {

struct CoverageRequest {
  std::string items_path;  // "" = the compiled-in docs/coverage_items.txt
  std::string oracle_dir;  // the *.oracle and *.precision files
  std::string spec_dir;    // the documents they cite
  enum class Format { kText, kJson, kMarkdown } format = Format::kText;
};

// Prints the coverage table; returns the exit status (2 with a message on
// standard error when the item list does not hold against the registry).
int coverage_main(const CoverageRequest& request);

// The text of docs/coverage_items.txt as built in.
const char* builtin_coverage_items();

}  // namespace layoutcheck::cli
