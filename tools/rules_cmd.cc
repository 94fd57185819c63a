#include "tools/rules_cmd.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "layoutcheck/rules.h"
#include "tools/cli_json.h"

namespace layoutcheck::cli {
namespace {

struct Coverage {
  uint64_t fired = 0, total = 0;
  std::vector<std::string> missed_rules;    // "layout: rule"
  std::map<std::string, uint64_t> by_rule;  // rule -> checked cases it rejected
  std::vector<std::string> missed_params;   // "layout.param: gaps"
};

Coverage coverage_of(const std::vector<LayoutTally>& tallies) {
  Coverage c;
  for (const auto& t : tallies) {
    for (const auto& [id, n] : t.rules_fired) c.by_rule[id] += n;
    for (const Rule* r : rules_of(t.layout)) {
      ++c.total;
      if (t.rules_fired.count(r->id)) ++c.fired;
      else c.missed_rules.push_back(t.layout + ": " + r->id);
    }
    const LayoutSpec* spec = find_spec(t.layout);
    if (spec == nullptr) continue;
    for (const ParamSpec& p : spec->params) {
      auto it = t.params.find(p.key);
      const std::string gaps = param_gaps(p, it == t.params.end() ? ParamReach{} : it->second);
      if (!gaps.empty()) c.missed_params.push_back(t.layout + "." + p.key + ": " + gaps);
    }
  }
  return c;
}

}  // namespace

int rules_main(const std::string& glob, bool json) {
  std::vector<const Rule*> matched;
  for (const Rule& r : rules()) {
    bool any = glob_match(glob, r.id);
    for (const auto& s : layout_specs()) {
      if (any) break;
      if (glob_match(glob, s.name)) {
        for (const Rule* of : rules_of(s.name)) any |= of == &r;
      }
    }
    if (any) matched.push_back(&r);
  }
  if (matched.empty()) {
    std::cerr << "layoutcheck rules: no rule or layout matches '" << glob << "'\n";
    return 2;
  }
  if (json) {
    Json out = report_header("rules");
    out["rules"] = Json::array();
    for (const Rule* r : matched) {
      out["rules"].push_back({{"id", r->id}, {"layouts", r->layouts}, {"document", r->document}, {"section", r->section},
                              {"text", r->text}});
    }
    std::cout << dump_json(out);
    return 0;
  }
  for (const Rule* r : matched) {
    std::printf("%-46s %s\n    %s%s%s\n", r->id.c_str(), r->text.c_str(), r->document.empty() ? "" : r->document.c_str(),
                r->document.empty() ? "" : " § ", r->section.c_str());
  }
  std::printf("%zu rule(s)\n", matched.size());
  return 0;
}

std::string coverage_text(const std::vector<LayoutTally>& tallies) {
  const Coverage c = coverage_of(tallies);
  std::string out = "\nrule coverage: " + std::to_string(c.fired) + " of " + std::to_string(c.total) +
                    " (layout, rule) pairs fired and were checked\n";
  for (const auto& m : c.missed_rules) out += "  never fired: " + m + "\n";
  out += "parameter coverage: " +
         (c.missed_params.empty() ? std::string("every parameter took a non-default value, its minimum and its maximum")
                                  : std::to_string(c.missed_params.size()) + " parameter(s) incomplete") +
         "\n";
  for (const auto& m : c.missed_params) out += "  not drawn: " + m + "\n";
  return out;
}

std::string coverage_json(const std::vector<LayoutTally>& tallies) {
  const Coverage c = coverage_of(tallies);
  Json by_rule = Json::object();
  for (const auto& [id, n] : c.by_rule) by_rule[id] = n;
  const Json j = {{"rules", {{"fired", c.fired}, {"total", c.total}, {"missed", c.missed_rules}, {"by_rule", by_rule}}},
                  {"params", {{"missed", c.missed_params}}}};
  return j.dump();
}

}  // namespace layoutcheck::cli
