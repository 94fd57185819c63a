#include "tools/coverage_cmd.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "layoutcheck/c_api.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/convert_check.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/oracle.h"
#include "layoutcheck/plugin.h"
#include "layoutcheck/precision.h"
#include "layoutcheck/rules.h"
#include "tools/cli_io.h"
#include "tools/cli_json.h"
#include "tools/extension_cli.h"
#include "tools/okk_cmd.h"
#include "tools/precision_lib_cmd.h"
#include "tools/tuple_cmd.h"
#include "tools/sparse_cmd.h"
#include "layoutcheck/tla_api.h"

namespace layoutcheck::cli {
namespace {

const std::set<std::string> kKinds = {"layout", "mode", "parameter", "rule", "table", "example", "function"};
const std::set<std::string> kTargetKinds = {"layout", "param", "rule", "entry", "table", "okk", "tuple", "cases",
                                            "surface", "layer"};

struct Target {
  std::string kind, name;
};

struct Item {
  int line = 0;
  std::string id, kind, document, section, title;
  std::vector<Target> targets;  // without cases:
  std::string cases;            // cases:GLOB, or ""
  std::vector<std::string> properties, fuzzers;
};

struct Row {
  const Item* item = nullptr;
  bool reference = false, optimized = false, plugin = false;
  int oracles = 0;
  std::vector<std::string> fuzzers;
  std::string status;  // complete, partial, missing
};

// One oracle case as the table reads it.
struct OracleRef {
  std::string id, document, section;
  bool parsed = false;
  Case c;
  std::string rule;                       // the rule the reference rejects it by
  std::vector<std::string> checks;        // precision cases: "table conv ...", "convert nvdla ..."
  std::vector<std::string> functions;     // tuple cases: the functions its lines check (rank, get, ...)
};

struct ListError {
  std::string message;
};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  if (out.size() == 1 && out[0] == "-") out.clear();
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1) out.push_back(trim(s.substr(from, at - from)));
  out.push_back(trim(s.substr(from)));
  return out;
}

// "document § section" of an oracle's source line.
std::pair<std::string, std::string> source_parts(const std::string& source) {
  const std::string mark = " § ";
  const size_t at = source.find(mark);
  if (at == std::string::npos) return {trim(source), ""};
  return {trim(source.substr(0, at)), trim(source.substr(at + mark.size()))};
}

const ParamSpec* find_param(const LayoutSpec& spec, const std::string& key) {
  for (const ParamSpec& p : spec.params) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

// "nvdla.weight.dc.addr" -> the layout nvdla.weight.dc and its parameter addr.
std::pair<const LayoutSpec*, const ParamSpec*> find_layout_param(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {nullptr, nullptr};
  const LayoutSpec* spec = find_spec(name.substr(0, dot));
  if (spec == nullptr) return {nullptr, nullptr};
  return {spec, find_param(*spec, name.substr(dot + 1))};
}

bool is_entry(const std::string& name) {
  const auto& names = extension_entry_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A text file of the coverage list (the items, a document): at most 16 MiB.
std::string read_file(const std::string& path, const std::string& what) {
  auto text = read_text_file(path, 16u << 20, what);
  if (!text.ok()) throw ListError{text.status().message()};
  return *text;
}

std::vector<Item> parse_items(const std::string& text, const std::string& file, const std::string& spec_dir) {
  std::vector<Item> items;
  std::set<std::string> ids;
  std::map<std::string, std::string> documents;  // name -> text
  std::string document;
  std::istringstream in(text);
  int line_no = 0;
  auto fail = [&](const std::string& what) { throw ListError{file + ":" + std::to_string(line_no) + ": " + what}; };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("document:", 0) == 0) {
      document = trim(line.substr(9));
      if (!documents.count(document)) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(spec_dir + "/" + document, ec)) {
          fail("document " + document + " is not a file of " + spec_dir);
        }
        documents[document] = read_file(spec_dir + "/" + document, "a document");
      }
      continue;
    }
    const std::vector<std::string> f = split(line, '|');
    if (f.size() != 7) fail("an item has 7 fields separated by '|', this line " + std::to_string(f.size()));
    if (document.empty()) fail("an item before the first 'document:' line");
    Item item;
    item.line = line_no;
    item.id = f[0];
    item.kind = f[1];
    item.document = document;
    item.section = f[2];
    item.title = f[6];
    if (item.id.empty() || item.id.find_first_of(" \t") != std::string::npos) fail("the id '" + item.id + "' is empty or has blanks");
    if (!ids.insert(item.id).second) fail("the id " + item.id + " is used twice");
    if (!kKinds.count(item.kind)) fail("unknown kind '" + item.kind + "' (layout mode parameter rule table example function)");
    if (!document_has_heading(documents[document], item.section)) {
      fail("'" + item.section + "' is not a section heading of " + document);
    }
    for (const std::string& t : words(f[3])) {
      const size_t colon = t.find(':');
      if (colon == std::string::npos || !kTargetKinds.count(t.substr(0, colon))) {
        fail("target '" + t + "' is not layout:, param:, rule:, entry:, table:, okk:, tuple:, surface:, layer: or cases:");
      }
      Target target{t.substr(0, colon), t.substr(colon + 1)};
      if (target.kind == "cases") {
        item.cases = target.name;
        continue;
      }
      if (target.kind == "layout" && find_spec(target.name) == nullptr) fail("no registered layout " + target.name);
      if (target.kind == "param" && find_layout_param(target.name).second == nullptr) {
        fail("no registered layout parameter " + target.name + " (layout.key)");
      }
      if (target.kind == "rule" && find_rule(target.name) == nullptr) fail("no rule " + target.name + " in the rules table");
      if (target.kind == "entry" && !is_entry(target.name)) fail("no ABI entry " + target.name);
      if (target.kind == "table" && !parse_precision_layer(target.name).ok()) fail("no precision table " + target.name);
      if (target.kind == "okk" && okk_reference_layout(target.name) == nullptr) {
        fail("no function " + target.name + " that `layoutcheck okk` checks");
      }
      if (target.kind == "tuple" && tuple_symbol(target.name) == nullptr) {
        fail("no function " + target.name + " that `layoutcheck tuple` checks (rank get depth shape stride)");
      }
      if (target.kind == "surface" && !sparse_function(target.name)) {
        fail("no function " + target.name + " that `layoutcheck sparse` checks (nvdla_sparse_surfaces_valid)");
      }
      if (target.kind == "layer" && (find_rule(target.name) == nullptr || !find_rule(target.name)->layouts.empty())) {
        fail("no SDP layer rule " + target.name + " (a rule of the rules table that no layout has)");
      }
      item.targets.push_back(target);
    }
    if (!item.cases.empty() && item.targets.empty()) fail("cases: narrows the oracles of a target; the item has none");
    item.properties = words(f[4]);
    item.fuzzers = words(f[5]);
    if (item.title.empty()) fail("the item has no title");
    items.push_back(std::move(item));
  }
  // Every registered layout and every rule of a document has an item.
  std::string missing;
  for (const LayoutSpec& s : layout_specs()) {
    bool named = false;
    for (const Item& i : items) {
      for (const Target& t : i.targets) named |= t.kind == "layout" && t.name == s.name;
    }
    if (!named) missing += " layout:" + s.name;
  }
  for (const Rule& r : rules()) {
    if (r.document.empty()) continue;  // layoutcheck's own (the shape of a case)
    bool named = false;
    for (const Item& i : items) {
      for (const Target& t : i.targets) named |= t.kind == "rule" && t.name == r.id;
    }
    if (!named) missing += " rule:" + r.id;
  }
  if (!missing.empty()) throw ListError{file + ": no item names" + missing};
  return items;
}

// The layouts a target reaches: its own, a parameter's, every layout a rule applies to.
std::vector<const LayoutSpec*> layouts_of(const Target& t) {
  std::vector<const LayoutSpec*> out;
  if (t.kind == "layout") out.push_back(find_spec(t.name));
  if (t.kind == "param") out.push_back(find_layout_param(t.name).first);
  if (t.kind == "okk") out.push_back(find_spec(okk_reference_layout(t.name)));
  if (t.kind == "rule") {
    for (const LayoutSpec& s : layout_specs()) {
      for (const Rule* r : rules_of(s.name)) {
        if (r->id == t.name) out.push_back(&s);
      }
    }
  }
  return out;
}

// The plugin ABI's view of a case: a plugin built in memory whose supports()
// rebuilds the case from the lc_case the host hands it. A layout can be driven
// through the ABI when that is the case the host was given.
const Case* g_probe_expected = nullptr;

lc_status probe_supports(const lc_case* c, char* why, size_t why_size) {
  const Case& e = *g_probe_expected;
  std::string differs;
  auto layout = parse_layout(c->layout ? c->layout : "");
  if (!layout.ok() || *layout != e.layout) differs = "the layout text";
  if (!c->layout_name || e.layout.name != c->layout_name) differs = "the layout name";
  ParamMap params;
  for (uint32_t i = 0; i < c->param_count; ++i) params[c->param_keys[i]] = c->param_values[i];
  if (params != e.layout.params) differs = "the parameters";
  if (!c->dtype || std::string(c->dtype) != dtype_name(e.dtype) || c->dtype_bits != dtype_bits(e.dtype)) differs = "the dtype";
  if (c->rank != e.shape.size() || !std::equal(e.shape.begin(), e.shape.end(), c->shape)) differs = "the shape";
  if (differs.empty()) return LC_OK;
  std::snprintf(why, why_size, "%s arrived changed", differs.c_str());
  return LC_INVALID;
}

lc_status probe_size(const lc_case*, uint64_t*) { return LC_ERROR; }
lc_status probe_pack(const lc_case*, const void*, size_t, void*, size_t) { return LC_ERROR; }

bool reaches_plugin(const Case& c) {
  static const lc_plugin kProbe = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "coverage-probe", nullptr, 0,
                                   probe_supports, probe_size, nullptr, probe_pack, probe_pack,
                                   nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  static auto probe = plugin_from_table(&kProbe, "coverage-probe");
  if (!probe.ok()) return false;
  g_probe_expected = &c;
  const bool ok = (*probe)->supports(c).ok();
  g_probe_expected = nullptr;
  return ok;
}

// What the implementations make of a layout's first boundary cases and a
// fixed draw of random ones: whether the reference accepts any, whether the
// optimized implementation accepts every case the reference accepts, and
// whether those cases reach a plugin intact.
struct LayoutVerdict {
  bool reference = false, optimized = false, plugin = false;
};

const LayoutVerdict& layout_verdict(const LayoutSpec& spec) {
  static std::map<std::string, LayoutVerdict> cache;
  if (auto it = cache.find(spec.name); it != cache.end()) return it->second;
  std::vector<Case> cases;
  if (spec.boundary_cases) cases = spec.boundary_cases();
  if (cases.size() > 64) cases.resize(64);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 64 && spec.random_case; ++i) cases.push_back(spec.random_case(rng, i % 2));
  LayoutVerdict v;
  v.optimized = v.plugin = true;
  for (const Case& c : cases) {
    if (!reference_impl().supports(c).ok()) continue;
    v.reference = true;
    v.optimized &= optimized_impl().supports(c).ok();
    v.plugin &= reaches_plugin(c);
  }
  v.optimized &= v.reference;
  v.plugin &= v.reference;
  return cache[spec.name] = v;
}

// Whether the reference rejects some case by the rule (among the cases that
// break the rules of its layouts, and the oracle cases), and whether the
// optimized implementation rejects every such case. A limit of layoutcheck's
// own (is_limit_rule) binds the reference only.
struct RuleVerdict {
  bool reference = false, optimized = false;
};

RuleVerdict rule_verdict(const std::string& id, const std::vector<const Case*>& oracle_rejections) {
  static std::map<std::string, RuleVerdict> cache;
  if (auto it = cache.find(id); it != cache.end()) return it->second;
  std::vector<const Case*> broken = oracle_rejections;
  for (const LayoutSpec& s : layout_specs()) {
    bool applies = false;
    for (const Rule* r : rules_of(s.name)) applies |= r->id == id;
    if (!applies) continue;
    for (const Case& c : strength_cases(s, reference_impl())) {
      if (reference_impl().supports(c).rule() == id) broken.push_back(&c);
    }
  }
  RuleVerdict v;
  v.reference = !broken.empty();
  v.optimized = v.reference;
  for (const Case* c : broken) {
    if (!is_limit_rule(id)) v.optimized &= !optimized_impl().supports(*c).ok();
  }
  return cache[id] = v;
}

// The *.tuple oracle cases (load_oracles keeps them for tuple_verdict).
std::vector<TupleOracleCase> g_tuple_oracles;

// Whether the reference answers every oracle line of a tuple function as the
// document does, and whether the optimized implementation answers them too
// and agrees with the reference on every tuple `layoutcheck tuple` checks
// (shape and stride are get of the shape and of the stride).
struct TupleVerdict {
  bool reference = false, optimized = false;
};

TupleVerdict tuple_verdict(const std::string& function) {
  static std::map<std::string, TupleVerdict> cache;
  if (auto it = cache.find(function); it != cache.end()) return it->second;
  TupleVerdict v;
  v.reference = v.optimized = true;
  bool any = false;
  for (const TupleOracleCase& oc : g_tuple_oracles) {
    TupleOracleCase only = oc;
    only.lines.clear();
    for (const TupleOracleLine& l : oc.lines) {
      if (l.function == function) only.lines.push_back(l);
    }
    if (only.lines.empty()) continue;
    any = true;
    v.reference &= run_tuple_oracle(only, reference_tuple_api()).empty();
    v.optimized &= run_tuple_oracle(only, optimized_tuple_api()).empty();
  }
  const TupleApi& ref = reference_tuple_api();
  const TupleApi& opt = optimized_tuple_api();
  for (const IntTuple& t : tuple_check_inputs()) {
    if (function == "rank") {
      auto a = ref.rank(t), b = opt.rank(t);
      v.optimized &= a.ok() && b.ok() && *a == *b;
    } else if (function == "depth") {
      auto a = ref.depth(t), b = opt.depth(t);
      v.optimized &= a.ok() && b.ok() && *a == *b;
    } else {
      for (uint64_t i = 0; i <= t.rank(); ++i) {
        auto a = ref.get(t, i), b = opt.get(t, i);
        v.optimized &= a.ok() == b.ok() && (!a.ok() || *a == *b);
      }
    }
  }
  v.reference &= any;
  v.optimized &= v.reference;
  return cache[function] = v;
}

bool entry_implemented(const std::string& name, bool reference) {
  const Extensions e = builtin_extensions(reference);
  if (name.rfind("convert.", 0) == 0) return e.converter != nullptr;
  if (name == "nvdla.sparse") return e.compress && e.decompress;
  if (name == "nvdla.winograd.phase1") return e.extend && e.transform;
  return false;
}

// The rows the reference's precision tables hold for a layer.
size_t table_rows(const std::string& layer) {
  const auto parsed = parse_precision_layer(layer);
  size_t count = 0, rows = 0;
  const PrecisionRow* all = nvdla_precision_rows(&count);
  for (size_t i = 0; i < count && parsed.ok(); ++i) rows += all[i].layer == *parsed;
  return rows;
}

// Whether the optimized library's own encoding of a layer's table
// (precision_supported_optimized) answers every (input, output) as the
// reference's rows do, and whether `precision nvdla --lib` asks a user's library
// about every row of it.
bool table_optimized(const std::string& layer) {
  const auto parsed = parse_precision_layer(layer);
  if (!parsed.ok()) return false;
  for (PrecisionInput in : {PrecisionInput::kImageInt, PrecisionInput::kImageFp16, PrecisionInput::kInt8,
                            PrecisionInput::kInt16, PrecisionInput::kFp16}) {
    size_t dtypes = 0;
    const DType* all = logical_dtypes(&dtypes);
    for (size_t d = 0; d < dtypes; ++d) {
      const DType out = all[d];
      const PrecisionSupport got = precision_supported_optimized(*parsed, in, out);
      auto row = nvdla_precision(*parsed, in, out);
      if (got.row != row.ok()) return false;
      if (!row.ok()) continue;
      const PrecisionRow& r = **row;
      if (got.valid != r.valid) return false;
      if (r.valid && (got.pipeline != r.pipeline || got.has_weight != r.has_weight || (r.has_weight && got.weight != r.weight))) {
        return false;
      }
    }
  }
  return true;
}

bool table_plugin(const std::string& layer) {
  const auto parsed = parse_precision_layer(layer);
  size_t count = 0, rows = 0;
  const PrecisionRow* all = nvdla_precision_rows(&count);
  for (size_t i = 0; i < count && parsed.ok(); ++i) {
    if (all[i].layer != *parsed) continue;
    if (!precision_lib_covers(all[i])) return false;
    ++rows;
  }
  return rows > 0;
}

std::vector<OracleRef> load_oracles(const std::string& dir, const std::string& spec_dir) {
  std::vector<OracleRef> out;
  auto cases = load_oracle_dir(dir, spec_dir);
  if (!cases.ok()) throw ListError{cases.status().message()};
  for (const OracleCase& oc : *cases) {
    OracleRef r;
    r.id = oc.id;
    std::tie(r.document, r.section) = source_parts(oc.source);
    auto c = parse_case(oc.layout, oc.dtype, oc.shape);
    if (c.ok()) {
      r.parsed = true;
      r.c = *c;
      r.rule = reference_impl().supports(r.c).rule();
    } else {
      r.rule = c.status().rule();
    }
    out.push_back(std::move(r));
  }
  auto tuples = load_tuple_oracle_dir(dir, spec_dir);
  if (!tuples.ok()) throw ListError{tuples.status().message()};
  g_tuple_oracles = *tuples;
  for (const TupleOracleCase& tc : *tuples) {
    OracleRef r;
    r.id = tc.id;
    std::tie(r.document, r.section) = source_parts(tc.source);
    for (const TupleOracleLine& l : tc.lines) r.functions.push_back(l.function);
    out.push_back(std::move(r));
  }
  auto precision = load_precision_oracle_dir(dir, spec_dir);
  if (!precision.ok()) throw ListError{precision.status().message()};
  for (const PrecisionOracleCase& pc : *precision) {
    OracleRef r;
    r.id = pc.id;
    std::tie(r.document, r.section) = source_parts(pc.source);
    for (const auto& [line, check] : pc.checks) r.checks.push_back(check);
    out.push_back(std::move(r));
  }
  // The value oracles (*.values): tests/oracle/nvdla_values_test.cc runs every
  // check of every case on the reference and the optimized functions.
  auto values = load_values_oracle_dir(dir, spec_dir);
  if (!values.ok()) throw ListError{values.status().message()};
  for (const ValuesOracleCase& vc : *values) {
    OracleRef r;
    r.id = vc.id;
    std::tie(r.document, r.section) = source_parts(vc.source);
    for (const auto& [line, check] : vc.checks) r.checks.push_back(check);
    out.push_back(std::move(r));
  }
  return out;
}

// The ABI entry a value oracle's check exercises: "" for none.
std::string values_entry(const std::string& verb) {
  if (verb == "extend" || verb == "transform") return "nvdla.winograd.phase1";
  if (verb == "compress" || verb == "decompress" || verb == "surfaces") return "nvdla.sparse";
  return "";
}

bool exercises(const Item& item, const Target& t, const OracleRef& o) {
  if (t.kind == "rule" || t.kind == "layer") {
    if (o.rule == t.name) return true;
    // A precision layer line and a value oracle's placement lines name the rule
    // they expect: "layer ... -> RULE", "surfaces ... -> RULE".
    for (const std::string& check : o.checks) {
      const std::vector<std::string> w = words(check);
      const bool names_rule = w.size() >= 3 && (w[0] == "layer" || w[0] == "surfaces" || w[0] == "decompress");
      if (names_rule && w[w.size() - 2] == "->" && w.back() == t.name) return true;
    }
    return false;
  }
  if (o.document != item.document || o.section != item.section) return false;
  if (t.kind == "layout") return o.parsed && o.c.layout.name == t.name;
  if (t.kind == "okk") return o.parsed && o.c.layout.name == okk_reference_layout(t.name);
  if (t.kind == "tuple") return std::find(o.functions.begin(), o.functions.end(), t.name) != o.functions.end();
  if (t.kind == "param") {
    auto [spec, param] = find_layout_param(t.name);
    if (!o.parsed || o.c.layout.name != spec->name) return false;
    auto it = o.c.layout.params.find(param->key);
    return it != o.c.layout.params.end() && param->default_value && it->second != param->default_value(o.c.layout.params);
  }
  for (const std::string& check : o.checks) {
    const std::vector<std::string> w = words(check);
    if (w.size() < 2) continue;
    if (t.kind == "table" && w[0] == "table" && w[1] == t.name) return true;
    if (t.kind == "entry" && w[0] == "convert" && "convert." + w[1] == t.name) return true;
    if (t.kind == "entry" && values_entry(w[0]) == t.name) return true;
  }
  return false;
}

Row derive(const Item& item, const std::vector<OracleRef>& oracles) {
  Row row;
  row.item = &item;
  row.fuzzers = item.fuzzers;
  if (!item.targets.empty()) {
    row.reference = true;
    bool optimized = true, table_plugin_ok = true, layer_plugin_ok = true;
    std::set<const LayoutSpec*> layouts;
    for (const Target& t : item.targets) {
      for (const LayoutSpec* s : layouts_of(t)) layouts.insert(s);
      // A rule no case of a layout can break (its `layouts` empty: the parser
      // or pack enforces it, or the parameter ranges keep it from firing) has
      // nothing to observe; the item's other targets decide.
      if (t.kind == "rule" && !find_rule(t.name)->layouts.empty()) {
        std::vector<const Case*> rejected;
        for (const OracleRef& o : oracles) {
          if (o.parsed && o.rule == t.name) rejected.push_back(&o.c);
        }
        const RuleVerdict v = rule_verdict(t.name, rejected);
        row.reference &= v.reference;
        optimized &= v.optimized;
      }
      // A precision layer rule: the optimized encoding of the layer rules must
      // reject every oracle layer line expecting it by the same rule.
      if (t.kind == "rule" && find_rule(t.name)->layouts.empty()) {
        for (const OracleRef& o : oracles) {
          for (const std::string& check : o.checks) {
            const std::vector<std::string> w = words(check);
            if (w.size() < 3 || w[0] != "layer" || w[w.size() - 2] != "->" || w.back() != t.name) continue;
            auto layer = parse_sdp_layer(check.substr(6, check.rfind(" -> ") - 6));
            optimized &= layer.ok() && sdp_layer_rule_optimized(*layer) == t.name;
          }
        }
      }
      if (t.kind == "entry") {
        row.reference &= entry_implemented(t.name, true);
        optimized &= entry_implemented(t.name, false);
      }
      if (t.kind == "table") {
        row.reference &= table_rows(t.name) > 0;
        optimized &= table_optimized(t.name);
        table_plugin_ok &= table_plugin(t.name);
      }
      // An SDP layer rule a user's nvdla_layer_supported is asked about: some
      // layer `precision nvdla --lib` asks breaks it first.
      if (t.kind == "layer") layer_plugin_ok &= precision_lib_layer_reaches(t.name);
      if (t.kind == "tuple") {
        const TupleVerdict v = tuple_verdict(t.name);
        row.reference &= v.reference;
        optimized &= v.optimized;
      }
    }
    // A surface placement function is checked on a user's library by `sparse
    // --lib`: it reaches the item when that command asks, for every rule of the
    // item, a placement breaking only that rule, and a valid one.
    bool surface_plugin_ok = true;
    for (const Target& t : item.targets) {
      if (t.kind != "surface") continue;
      surface_plugin_ok &= sparse_lib_covers("ok");
      for (const Target& r : item.targets) surface_plugin_ok &= r.kind != "rule" || sparse_lib_covers(r.name);
    }
    bool random = false, plugin = true;
    for (const LayoutSpec* s : layouts) {
      const LayoutVerdict& v = layout_verdict(*s);
      row.reference &= v.reference;
      optimized &= v.optimized;
      plugin &= v.plugin;
      random |= static_cast<bool>(s->random_case) && v.optimized;
    }
    // A table is checked against the optimized library's own encoding of it, and
    // on a user's library by `precision nvdla --lib`. An entry is an ABI 1.1 member;
    // okk and tuple functions are checked in a user's library. An item with none of
    // these and no layout (a precision layer rule alone) has nothing a user's code
    // is asked through, unless `precision nvdla --lib` asks nvdla_layer_supported
    // about it (layer:).
    const bool reachable = !layouts.empty() || std::any_of(item.targets.begin(), item.targets.end(), [](const Target& t) {
      return t.kind == "entry" || t.kind == "table" || t.kind == "okk" || t.kind == "tuple" || t.kind == "surface" ||
             t.kind == "layer";
    });
    row.optimized = optimized;
    row.plugin = reachable && plugin && table_plugin_ok && surface_plugin_ok && layer_plugin_ok;
    if (random && std::find(row.fuzzers.begin(), row.fuzzers.end(), "fuzz_differential") == row.fuzzers.end()) {
      row.fuzzers.insert(row.fuzzers.begin(), "fuzz_differential");
    }
    for (const OracleRef& o : oracles) {
      if (!item.cases.empty() && !glob_match(item.cases, o.id)) continue;
      bool any = false;
      for (const Target& t : item.targets) any = any || exercises(item, t, o);
      row.oracles += any;
    }
  }
  const bool complete = row.reference && row.optimized && row.oracles > 0 && !item.properties.empty() &&
                        !row.fuzzers.empty() && row.plugin;
  const bool none = !row.reference && !row.optimized && row.oracles == 0 && item.properties.empty() &&
                    row.fuzzers.empty() && !row.plugin;
  row.status = complete ? "complete" : none ? "missing" : "partial";
  return row;
}

struct Totals {
  int items = 0, reference = 0, optimized = 0, oracles = 0, oracle_cases = 0, property = 0, fuzzer = 0, plugin = 0;
  int complete = 0, partial = 0, missing = 0;
};

Totals totals_of(const std::vector<Row>& rows) {
  Totals t;
  for (const Row& r : rows) {
    ++t.items;
    t.reference += r.reference;
    t.optimized += r.optimized;
    t.oracles += r.oracles > 0;
    t.oracle_cases += r.oracles;
    t.property += !r.item->properties.empty();
    t.fuzzer += !r.fuzzers.empty();
    t.plugin += r.plugin;
    t.complete += r.status == "complete";
    t.partial += r.status == "partial";
    t.missing += r.status == "missing";
  }
  return t;
}

std::string yes(bool b) { return b ? "yes" : "-"; }

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out.empty() ? "-" : out;
}

std::string totals_line(const Totals& t) {
  return std::to_string(t.items) + " items: " + std::to_string(t.complete) + " complete, " + std::to_string(t.partial) +
         " partial, " + std::to_string(t.missing) + " missing; reference " + std::to_string(t.reference) +
         ", optimized " + std::to_string(t.optimized) + ", oracles " + std::to_string(t.oracles) + " (" +
         std::to_string(t.oracle_cases) + " cases), property " + std::to_string(t.property) + ", fuzzer " +
         std::to_string(t.fuzzer) + ", plugin " + std::to_string(t.plugin);
}

void print_text(const std::vector<Row>& rows) {
  std::printf("%-38s %-9s %-4s %-4s %7s %-4s %-4s %-4s %s\n", "ITEM", "KIND", "REF", "OPT", "ORACLES", "PROP", "FUZZ",
              "PLUG", "STATUS");
  for (const Row& r : rows) {
    std::printf("%-38s %-9s %-4s %-4s %7d %-4s %-4s %-4s %s\n", r.item->id.c_str(), r.item->kind.c_str(),
                yes(r.reference).c_str(), yes(r.optimized).c_str(), r.oracles, yes(!r.item->properties.empty()).c_str(),
                yes(!r.fuzzers.empty()).c_str(), yes(r.plugin).c_str(), r.status.c_str());
  }
  std::printf("%s\n", totals_line(totals_of(rows)).c_str());
}

void print_json(const std::vector<Row>& rows) {
  Json j = report_header("coverage");
  j["items"] = Json::array();
  for (const Row& r : rows) {
    Json targets = Json::array();
    for (const Target& t : r.item->targets) targets.push_back(t.kind + ":" + t.name);
    j["items"].push_back({{"id", r.item->id},
                          {"kind", r.item->kind},
                          {"document", r.item->document},
                          {"section", r.item->section},
                          {"title", r.item->title},
                          {"targets", targets},
                          {"reference", r.reference},
                          {"optimized", r.optimized},
                          {"oracles", r.oracles},
                          {"properties", r.item->properties},
                          {"fuzzers", r.fuzzers},
                          {"plugin", r.plugin},
                          {"status", r.status}});
  }
  const Totals t = totals_of(rows);
  j["totals"] = {{"items", t.items},         {"complete", t.complete}, {"partial", t.partial},
                 {"missing", t.missing},     {"reference", t.reference}, {"optimized", t.optimized},
                 {"oracles", t.oracles},     {"oracle_cases", t.oracle_cases}, {"property", t.property},
                 {"fuzzer", t.fuzzer},       {"plugin", t.plugin}};
  std::cout << dump_json(j);
}

// Text in a table cell: | ends the cell and * emphasizes, so both are escaped.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|' || ch == '*') out += '\\';
    out += ch;
  }
  return out;
}

void print_markdown(const std::vector<Row>& rows) {
  const Totals t = totals_of(rows);
  std::cout << "# Coverage of the documents\n\n"
               "Generated by `layoutcheck list --coverage --markdown` (`scripts/coverage_doc.sh` rewrites this file;\n"
               "the `cli.coverage` test fails when it differs). The items, their sections, targets, properties and\n"
               "fuzzers are listed in `docs/coverage_items.txt`; every other column is derived from the code: the\n"
               "layout registry, the rules table, the oracle files that cite the section, the layouts the optimized\n"
               "implementation accepts, and what the plugin ABI can drive. `-` means no.\n\n"
               "**Totals:** "
            << totals_line(t) << ".\n";
  std::string document;
  for (const Row& r : rows) {
    if (r.item->document != document) {
      document = r.item->document;
      std::cout << "\n## " << document << "\n\n"
                << "| item | kind | section | reference | optimized | oracles | property | fuzzer | plugin | status |\n"
                << "|---|---|---|---|---|---|---|---|---|---|\n";
    }
    std::cout << "| `" << r.item->id << "` " << md_cell(r.item->title) << " | " << r.item->kind << " | "
              << md_cell(r.item->section) << " | " << yes(r.reference) << " | " << yes(r.optimized) << " | "
              << r.oracles << " | " << joined(r.item->properties, "<br>") << " | " << joined(r.fuzzers, "<br>")
              << " | " << yes(r.plugin) << " | " << r.status << " |\n";
  }
}

}  // namespace

int coverage_main(const CoverageRequest& request) {
  try {
    std::string text = builtin_coverage_items();
    std::string file = "docs/coverage_items.txt";
    if (!request.items_path.empty()) {
      text = read_file(request.items_path, "a list of items");
      file = request.items_path;
    }
    const std::vector<Item> items = parse_items(text, file, request.spec_dir);
    const std::vector<OracleRef> oracles = load_oracles(request.oracle_dir, request.spec_dir);
    for (const Item& i : items) {
      if (i.cases.empty()) continue;
      bool any = false;
      for (const OracleRef& o : oracles) any = any || glob_match(i.cases, o.id);
      if (!any) throw ListError{file + ":" + std::to_string(i.line) + ": cases:" + i.cases + " matches no oracle case"};
    }
    std::vector<Row> rows;
    for (const Item& i : items) rows.push_back(derive(i, oracles));
    switch (request.format) {
      case CoverageRequest::Format::kText: print_text(rows); break;
      case CoverageRequest::Format::kJson: print_json(rows); break;
      case CoverageRequest::Format::kMarkdown: print_markdown(rows); break;
    }
    return 0;
  } catch (const ListError& e) {
    std::cerr << "layoutcheck list --coverage: " << e.message << "\n";
    return 2;
  }
}

}  // namespace layoutcheck::cli
