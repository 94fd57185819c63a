// layoutcheck/rules.h — the documents' rules as data.
//
// Every rule by which a reference rejects a case has a stable id, the document
// section it comes from and one line of text; the reference names it in the
// Status it returns (Status::rule()):
//
//   const Rule* r = find_rule("nvdla.feature/line-stride-align-32");
//   r->section == "Alignment of Start Address and Stride"
//
// Ids are "<scope>/<name>": the scope is a layout name ("tpu.aligned"), a
// family or layout prefix ("nvdla.weight") or "layout" for the shape rules every
// layout shares; `layouts` is the glob of the layouts the rule applies to, so
// rules_of("nvdla.weight.dc") lists what a case of that layout can break. The
// byte rules of the document's padding (layoutcheck/byte_rules.h) are the other
// half: constraints on bytes of a valid case.
//
// strength_cases(spec) are the cases derived from the rules for `check`: for
// every rule, cases that break only that rule (one parameter, extent or dtype
// moved away from a valid case) and the pair of cases on its boundary (the
// last valid value and the first invalid one), every declared parameter at its
// minimum, maximum and a non-default value, and extents far along every
// dimension (8, 9, 16, 17 and more than 64 periods of its chunk, block, atom,
// group or NPU count, and just under and over 2^8 and 2^16), the other extents 1.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "layoutcheck/layout.h"

namespace layoutcheck {

struct Rule {
  std::string id;        // "nvdla.feature/line-stride-align-32"
  std::string layouts;   // globs of the layouts it applies to, comma-separated: "nvdla.weight.*"
  std::string document;  // "nvdla-in-memory-data-formats.txt"
  std::string section;   // "Alignment of Start Address and Stride"
  std::string text;      // one line
};

// Every rule, in a stable order (family by family).
const std::vector<Rule>& rules();
const Rule* find_rule(std::string_view id);
// Whether the rule is layoutcheck's own, not a document's: sizes and offsets
// must fit its 64-bit arithmetic ("layout/element-count", "*/size-overflow"),
// and it places no empty tensor ("layout/positive-extent"). An implementation
// that accepts such a case breaks no document, so check skips the case.
bool is_limit_rule(std::string_view id);
// The rules a case of the layout can break.
std::vector<const Rule*> rules_of(const std::string& layout);

// The cases check runs first for the layout (see above), deterministic, without
// the layout's own boundary_cases.
// `expected` (the reference) decides which cases are valid. Cached per layout.
const std::vector<Case>& strength_cases(const LayoutSpec& spec, const class Impl& expected);

// A random case of the layout with one extent drawn log-uniformly in
// [1, 2^17] and, where the layout allows, the other extents 1.
Case stretch_case(const LayoutSpec& spec, std::mt19937_64& rng, Case c);

// Which parameter values the cases of a run took, per layout and parameter.
struct ParamReach {
  bool non_default = false, at_min = false, at_max = false;
  std::map<std::string, uint64_t> choices;  // kEnum: cases per value
};
using ParamCoverage = std::map<std::string, ParamReach>;  // parameter key -> reach
void note_params(const LayoutSpec& spec, const Case& c, ParamCoverage* coverage);
// What a parameter of the spec still lacks ("" when complete): "non-default",
// "min", "max" or "choice X".
std::string param_gaps(const ParamSpec& p, const ParamReach& reach);

}  // namespace layoutcheck
