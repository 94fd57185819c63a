// `layoutcheck rules [GLOB]` and the rule and parameter coverage of `check`
// (tools/rules_cmd.cc).
#pragma once

#include <string>
#include <vector>

#include "layoutcheck/checker.h"

namespace layoutcheck::cli {

// Lists the rules whose id or layouts match the glob: id, document section,
// one line of text; with json, one object per rule. Returns the exit status
// (2 when nothing matches, with a message on stderr).
int rules_main(const std::string& glob, bool json);

// Rule coverage of a run: for every layout, the rules it can break and how many
// checked cases each rejected; then the parameters that never took a
// non-default value, their minimum or their maximum.
std::string coverage_text(const std::vector<LayoutTally>& tallies);
// The same as a JSON object: {"rules": {"fired": N, "total": M, "missed": [...],
// "by_rule": {id: cases}}, "params": {"missed": ["layout.param: min", ...]}}
std::string coverage_json(const std::vector<LayoutTally>& tallies);

}  // namespace layoutcheck::cli
