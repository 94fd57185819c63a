// The cases derived from the documents' rules (layoutcheck/rules.h): one
// change at a time away from a valid case of the layout, classified by the
// expected implementation, the boundary of every rule found by bisection, every
// parameter at its extremes, and extents far along every dimension.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "layoutcheck/impl.h"
#include "layoutcheck/rules.h"

namespace layoutcheck {
namespace {

// Valid cases larger than this are left out (their invalid neighbours stay).
constexpr uint64_t kMaxValidBytes = uint64_t{2} << 20;
// Far extents whose bytes, extrapolated, exceed this are left out.
constexpr uint64_t kMaxReachBytes = uint64_t{1} << 20;
constexpr size_t kMaxBases = 4;
constexpr size_t kPerRule = 4;  // breaking cases kept per rule and base

constexpr DType kLastDType = DType::kFp32x2;

struct Builder {
  const LayoutSpec& spec;
  const Impl& expected;
  std::vector<Case> out;
  std::set<std::string> seen;                  // to_string of cases in out
  std::map<std::string, size_t> rule_cases;    // rule -> cases kept
  std::set<std::string> bisected;              // rule + what moved: one boundary each

  bool storage_rule = false;  // a rule of the layout rejects packed storage types
  mutable std::map<std::string, std::string> verdicts;  // memo: to_string(case) -> verdict

  // "" valid, else the rule id ("?" when the rejection names none).
  std::string verdict(const Case& c) const {
    const std::string key = to_string(c);
    auto it = verdicts.find(key);
    if (it != verdicts.end()) return it->second;
    Status s = expected.supports(c);
    std::string v = s.ok() ? "" : s.code() != StatusCode::kInvalid ? "!" : s.rule().empty() ? "?" : s.rule();
    verdicts.emplace(key, v);
    return v;
  }
  bool small(const Case& c) const {
    auto size = expected.size_bytes(c);
    return size.ok() && *size <= kMaxValidBytes;
  }
  bool add(const Case& c) {
    if (!seen.insert(to_string(c)).second) return false;
    out.push_back(c);
    return true;
  }
  // Keeps an invalid case for its rule (up to kPerRule unless `always`), a
  // valid one when `always` and it is small.
  void keep(const Case& c, const std::string& v, bool always) {
    if (v == "!") return;
    if (v.empty()) {
      if (always && small(c)) add(c);
      return;
    }
    if (always || rule_cases[v] < kPerRule) {
      if (add(c)) ++rule_cases[v];
    }
  }
};

Result<Case> with_param(const Case& base, const std::string& key, const std::string& value) {
  ParamMap p = base.layout.params;
  p[key] = value;
  auto layout = make_layout(base.layout.name, p);
  if (!layout.ok()) return layout.status();
  Case c = base;
  c.layout = *layout;
  return c;
}

std::vector<int64_t> int_candidates(const ParamSpec& p, int64_t cur) {
  std::set<int64_t> v = {p.min, p.max};
  for (int64_t d : {-2, -1, 1, 2, 31, 32, 33}) {
    if ((d < 0 && cur >= p.min - d) || (d > 0 && cur <= p.max - d)) v.insert(cur + d);
  }
  // Parameters of a small range (counts, sizes of a block) near their ends;
  // addresses, strides and memory sizes at every power of two too.
  const bool wide = p.max > (int64_t{1} << 20);
  if (!wide) {
    for (int64_t x : {cur / 2, cur * 2}) v.insert(x);
  }
  for (int k = 0; k <= 62; ++k) {
    if (!wide && k > 8) break;
    if (k > 20 && k != 24 && k != 31 && k != 32 && k != 40 && k != 60 && k != 62) continue;
    const int64_t base = int64_t{1} << k;
    for (int64_t x : {base - 1, base, base + 1}) v.insert(x);
  }
  std::vector<int64_t> out;
  for (int64_t x : v) {
    if (x >= p.min && x <= p.max && x != cur) out.push_back(x);
  }
  return out;
}

// Moves one integer (a parameter or an extent) of a valid case to `bad`, and
// bisects between the two for the last valid and the first invalid value.
template <typename Make>
void bisect(Builder& b, const std::string& what, int64_t good, int64_t bad, const std::string& rule, Make make) {
  if (!b.bisected.insert(rule + " " + what).second) return;
  int64_t lo = good, hi = bad;  // lo valid, hi invalid
  for (int steps = 0; steps < 70; ++steps) {
    const int64_t gap = hi > lo ? hi - lo : lo - hi;
    if (gap <= 1) break;
    const int64_t mid = lo + (hi - lo) / 2;
    auto c = make(mid);
    if (!c.ok()) return;
    if (b.verdict(*c).empty()) lo = mid;
    else hi = mid;
  }
  auto v = make(lo), i = make(hi);
  if (!v.ok() || !i.ok()) return;
  const std::string vi = b.verdict(*i);
  if (!b.verdict(*v).empty() || vi.empty()) return;
  b.keep(*i, vi, true);
  b.keep(*v, "", true);
}

// `full`: every candidate value; else the parameters' ends and next values only.
void mutate(Builder& b, const Case& base, std::vector<Case>* valid_variants, bool full) {
  // Parameters.
  for (const ParamSpec& p : b.spec.params) {
    auto it = base.layout.params.find(p.key);
    if (it == base.layout.params.end()) continue;
    if (p.kind == ParamKind::kEnum) {
      for (const std::string& choice : p.choices) {
        if (choice == it->second) continue;
        auto c = with_param(base, p.key, choice);
        if (!c.ok()) continue;
        const std::string v = b.verdict(*c);
        b.keep(*c, v, true);
        if (v.empty()) valid_variants->push_back(*c);
      }
      continue;
    }
    if (p.kind != ParamKind::kInt) continue;
    auto cur = base.layout.get_int(p.key);
    bool moved = false;  // one valid non-default value per parameter and base
    std::vector<int64_t> xs = int_candidates(p, cur);
    if (!full) {
      xs.erase(std::remove_if(xs.begin(), xs.end(),
                              [&](int64_t x) { return x != p.min && x != p.max && x != cur - 1 && x != cur + 1; }),
               xs.end());
    }
    for (int64_t x : xs) {
      auto c = with_param(base, p.key, std::to_string(x));
      if (!c.ok()) continue;
      const std::string v = b.verdict(*c);
      const bool first_valid = v.empty() && !moved && b.small(*c);
      moved |= first_valid;
      b.keep(*c, v, x == p.min || x == p.max || first_valid);
      if (!v.empty() && v != "!") {
        bisect(b, p.key, cur, x, v, [&](int64_t y) { return with_param(base, p.key, std::to_string(y)); });
      }
    }
  }
  // The element type.
  for (int t = 0; t <= static_cast<int>(kLastDType); ++t) {
    Case c = base;
    c.dtype = static_cast<DType>(t);
    // Cases hold logical element types; the packed storage types only where a
    // rule of the layout is about them.
    if (c.dtype == base.dtype || (!dtype_info(c.dtype).logical && !b.storage_rule)) continue;
    b.keep(c, b.verdict(c), false);
  }
  // Extents: zero, huge, and the rank.
  for (size_t d = 0; d < base.shape.size(); ++d) {
    for (int64_t x : {int64_t{0}, int64_t{2}, int64_t{3}, int64_t{4096}, int64_t{1} << 31, int64_t{1} << 40,
                      int64_t{1} << 62, INT64_MAX}) {
      if (x == base.shape[d]) continue;
      Case c = base;
      c.shape[d] = x;
      const std::string v = b.verdict(c);
      b.keep(c, v, false);
      // The boundary of an overflow has no small valid side: bisect small extents only.
      if (!v.empty() && v != "!" && x > base.shape[d] && x <= 4096) {
        bisect(b, "extent " + std::to_string(d), base.shape[d], x, v, [&](int64_t y) -> Result<Case> {
          Case m = base;
          m.shape[d] = y;
          return m;
        });
      }
    }
  }
  // Two extents of 2^31: a product past 2^60 with an element count that fits.
  for (size_t d = 0; d + 1 < base.shape.size(); ++d) {
    Case c = base;
    for (auto& x : c.shape) x = 1;
    c.shape[d] = c.shape[d + 1] = int64_t{1} << 31;
    b.keep(c, b.verdict(c), false);
  }
  Case shorter = base, longer = base;
  if (!shorter.shape.empty()) shorter.shape.pop_back();
  longer.shape.push_back(1);
  b.keep(shorter, b.verdict(shorter), false);
  b.keep(longer, b.verdict(longer), false);
}

// The period of a dimension: the extent after which the physical size first
// grows when the size is a step function of the extent (chunk, block, atom,
// group or NPU count); 1 when every element adds bytes, 0 when none does.
int64_t period_of(const Builder& b, const Case& base, size_t d) {
  std::vector<uint64_t> size;
  for (int64_t e = 1; e <= 65; ++e) {
    Case c = base;
    c.shape[d] = e;
    auto s = b.expected.supports(c).ok() ? b.expected.size_bytes(c) : Result<uint64_t>(Status::invalid("-"));
    if (!s.ok()) return 0;
    size.push_back(*s);
  }
  for (size_t e = 1; e < size.size(); ++e) {
    if (size[e] != size[e - 1]) return static_cast<int64_t>(e);  // extent e -> e+1 grows
  }
  return 0;
}

void reach(Builder& b, const Case& base) {
  for (size_t d = 0; d < base.shape.size(); ++d) {
    // The other extents 1 where the layout allows it.
    Case thin = base;
    for (size_t o = 0; o < thin.shape.size(); ++o) {
      if (o == d) continue;
      Case t = thin;
      t.shape[o] = 1;
      if (b.verdict(t).empty()) thin = t;
    }
    std::set<int64_t> extents = {255, 256, 257, 65535, 65536, 65537};
    const int64_t p = period_of(b, thin, d);
    if (p > 1) {
      for (int64_t k : {8, 9, 16, 17, 65}) extents.insert(k * p);
      extents.insert(8 * p + 1);
      extents.insert(16 * p - 1);
    }
    // Extents past 257 only where the bytes, extrapolated from 257, stay small:
    // a valid case larger than that is not kept, and asking about it costs.
    Case probe = thin;
    probe.shape[d] = 257;
    uint64_t bytes_257 = UINT64_MAX;
    if (b.verdict(probe).empty()) {
      auto size = b.expected.size_bytes(probe);
      if (size.ok()) bytes_257 = *size;
    }
    for (int64_t e : extents) {
      if (e > 257 && (bytes_257 == UINT64_MAX || bytes_257 / 257 * static_cast<uint64_t>(e) > kMaxReachBytes)) continue;
      Case c = thin;
      c.shape[d] = e;
      const std::string v = b.verdict(c);
      b.keep(c, v, v.empty());
    }
  }
}

std::vector<Case> build(const LayoutSpec& spec, const Impl& expected) {
  Builder b{spec, expected, {}, {}, {}, {}, false, {}};
  for (const Rule* r : rules_of(spec.name)) b.storage_rule |= r->id.find("logical-dtype") != std::string::npos;
  std::vector<Case> bases;
  std::set<std::string> kinds;  // one base per parameters and dtype
  if (spec.boundary_cases) {
    for (const Case& c : spec.boundary_cases()) {
      if (bases.size() >= kMaxBases) break;
      if (!b.verdict(c).empty() || !b.small(c)) continue;
      if (kinds.insert(to_string(c.layout) + dtype_name(c.dtype)).second) bases.push_back(c);
    }
  }
  if (bases.empty() && spec.random_case) {
    std::mt19937_64 rng(1);
    for (int i = 0; i < 200 && bases.size() < 2; ++i) {
      Case c = spec.random_case(rng, 0);
      if (b.verdict(c).empty() && b.small(c)) bases.push_back(c);
    }
  }
  std::vector<Case> variants;
  for (size_t i = 0; i < bases.size(); ++i) mutate(b, bases[i], &variants, i == 0);
  // One more step from the valid variants (another format, mode or dtype)
  // reaches the rules that hold for them only.
  std::set<std::string> done;
  size_t more = 0;
  for (const Case& v : variants) {
    if (more >= kMaxBases) break;
    if (!b.small(v) || !done.insert(to_string(v.layout) + dtype_name(v.dtype)).second) continue;
    std::vector<Case> ignored;
    mutate(b, v, &ignored, false);
    ++more;
  }
  if (!bases.empty()) reach(b, bases.front());
  // Cheapest first.
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < b.out.size(); ++i) {
    auto size = expected.supports(b.out[i]).ok() ? expected.size_bytes(b.out[i]) : Result<uint64_t>(uint64_t{0});
    order.push_back({size.ok() ? *size : 0, i});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Case> sorted;
  for (const auto& [size, i] : order) sorted.push_back(b.out[i]);
  return sorted;
}

}  // namespace

const std::vector<Case>& strength_cases(const LayoutSpec& spec, const Impl& expected) {
  static std::mutex m;
  static std::map<std::string, std::unique_ptr<std::vector<Case>>> cache;
  const std::string key = spec.name + "\n" + expected.name();
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = cache.find(key);
    if (it != cache.end()) return *it->second;
  }
  auto built = std::make_unique<std::vector<Case>>(build(spec, expected));
  std::lock_guard<std::mutex> lock(m);
  auto& slot = cache[key];
  if (!slot) slot = std::move(built);
  return *slot;
}

Case stretch_case(const LayoutSpec& spec, std::mt19937_64& rng, Case c) {
  (void)spec;
  if (c.shape.empty()) return c;
  const size_t d = std::uniform_int_distribution<size_t>(0, c.shape.size() - 1)(rng);
  // Log-uniform in [1, 2^12].
  const double e = std::exp(std::uniform_real_distribution<double>(0, std::log(4097.0))(rng));
  for (auto& x : c.shape) x = 1;
  c.shape[d] = std::max<int64_t>(1, static_cast<int64_t>(e));
  return c;
}

void note_params(const LayoutSpec& spec, const Case& c, ParamCoverage* coverage) {
  for (const ParamSpec& p : spec.params) {
    auto it = c.layout.params.find(p.key);
    if (it == c.layout.params.end()) continue;
    ParamReach& r = (*coverage)[p.key];
    const std::string def = p.default_value ? p.default_value(c.layout.params) : std::string();
    if (it->second != def) r.non_default = true;
    if (p.kind == ParamKind::kEnum) ++r.choices[it->second];
    if (p.kind == ParamKind::kInt) {
      const std::string& v = it->second;
      if (v == std::to_string(p.min)) r.at_min = true;
      if (v == std::to_string(p.max)) r.at_max = true;
    }
  }
}

std::string param_gaps(const ParamSpec& p, const ParamReach& reach) {
  std::string gaps;
  auto add = [&](const std::string& g) { gaps += (gaps.empty() ? "" : ", ") + g; };
  if (!reach.non_default) add("non-default");
  if (p.kind == ParamKind::kInt) {
    if (!reach.at_min) add("min");
    if (!reach.at_max) add("max");
  }
  if (p.kind == ParamKind::kEnum) {
    for (const auto& choice : p.choices) {
      if (!reach.choices.count(choice)) add("choice " + choice);
    }
  }
  return gaps;
}

}  // namespace layoutcheck
