// The cases derived from the documents' rules (layoutcheck/rules.h): one
// change at a time away from a valid case of the layout, classified by the
// expected implementation, the boundary of every rule found by bisection, every
// parameter at its extremes, and extents far along every dimension.
#include <algorithm>
#include <cctype>
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
constexpr size_t kMaxExtraBases = 48;  // bases tried for the rules the first ones leave unbroken

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

// Texts one edit away from a parameter's text (an IntTuple, a notation): cut
// short, each of its first integers at 0, 2^48 and 2^62, one more top-level mode.
std::vector<std::string> text_variants(const std::string& text) {
  std::vector<std::string> out;
  if (!text.empty()) out.push_back(text.substr(0, text.size() - 1));
  size_t tokens = 0;
  for (size_t i = 0; i < text.size() && tokens < 8;) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    for (const char* x : {"0", "281474976710656", "4611686018427387904"}) out.push_back(text.substr(0, i) + x + text.substr(j));
    ++tokens;
    i = j;
  }
  if (!text.empty() && text.back() == ')') out.push_back(text.substr(0, text.size() - 1) + ",1)");
  return out;
}

// `full`: every candidate value; else the parameters' ends and next values only.
void mutate(Builder& b, const Case& base, std::vector<Case>* valid_variants, bool full) {
  // Parameter values that break a rule on their own, and the ends of a range
  // whose valid case is too large to keep: the second moves to the first, so
  // that a case at that end is kept, rejected before anything is allocated.
  std::vector<std::pair<std::string, std::string>> breaking;
  std::vector<std::pair<std::string, std::string>> large_ends;
  // Text parameters: one edit each, and one more mode in all of them at once
  // (texts that must stay congruent, a shape and its stride).
  {
    Case all = base;
    bool any = false;
    for (const ParamSpec& p : b.spec.params) {
      auto it = base.layout.params.find(p.key);
      if (p.kind != ParamKind::kText || it == base.layout.params.end()) continue;
      for (const std::string& t : text_variants(it->second)) {
        auto c = with_param(base, p.key, t);
        if (c.ok()) b.keep(*c, b.verdict(*c), false);
      }
      if (!it->second.empty() && it->second.back() == ')') {
        auto c = with_param(all, p.key, it->second.substr(0, it->second.size() - 1) + ",1)");
        if (c.ok()) all = *c, any = true;
      }
    }
    if (any) b.keep(all, b.verdict(all), false);
  }
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
      if (!v.empty() && v != "!" && breaking.size() < 16) breaking.push_back({p.key, std::to_string(x)});
      if (v.empty() && (x == p.min || x == p.max) && !b.small(*c)) large_ends.push_back({p.key, std::to_string(x)});
      if (!v.empty() && v != "!") {
        bisect(b, p.key, cur, x, v, [&](int64_t y) { return with_param(base, p.key, std::to_string(y)); });
      }
    }
  }
  for (const auto& [key, value] : large_ends) {
    for (const auto& [other, bad] : breaking) {
      if (other == key) continue;
      auto c = with_param(base, key, value);
      if (c.ok()) c = with_param(*c, other, bad);
      if (!c.ok()) continue;
      const std::string v = b.verdict(*c);
      if (v.empty() || v == "!") continue;
      b.keep(*c, v, true);
      break;
    }
  }
  // The element type.
  std::vector<DType> dtypes = {base.dtype};  // the element types the layout takes here
  for (int t = 0; t <= static_cast<int>(kLastDType); ++t) {
    Case c = base;
    c.dtype = static_cast<DType>(t);
    if (c.dtype == base.dtype) continue;
    const std::string v = b.verdict(c);
    if (v.empty() && dtype_info(c.dtype).logical) dtypes.push_back(c.dtype);
    // Cases hold logical element types; a packed storage type where the layout
    // rejects it, or where a rule of the layout is about them.
    if (!dtype_info(c.dtype).logical && !b.storage_rule && v.empty()) continue;
    b.keep(c, v, false);
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
        bisect(b, "extent " + std::to_string(d) + " of " + to_string(base.layout) + " " + dtype_name(base.dtype),
               base.shape[d], x, v, [&](int64_t y) -> Result<Case> {
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
  // One extent at the element count's limit (2^56) or just under it, or as
  // large as the other extents let the element count be, the others 1 or
  // kept, in every element type the layout takes: the sizes that padding or
  // wide elements carry past 2^60 bytes.
  constexpr uint64_t kMaxElements = uint64_t{1} << 56;
  for (DType t : dtypes) {
    for (size_t d = 0; d < base.shape.size(); ++d) {
      uint64_t others = 1;
      for (size_t o = 0; o < base.shape.size(); ++o) {
        if (o == d || base.shape[o] <= 0) continue;
        const uint64_t e = static_cast<uint64_t>(base.shape[o]);
        others = others > kMaxElements / e ? kMaxElements : others * e;
      }
      const int64_t fill = static_cast<int64_t>(kMaxElements / others);
      for (int64_t x : {int64_t{1} << 56, (int64_t{1} << 56) - 1, fill, fill - 1}) {
        for (bool alone : {true, false}) {
          if (x < 1) continue;
          Case c = base;
          c.dtype = t;
          if (alone) {
            for (auto& e : c.shape) e = 1;
          }
          c.shape[d] = x;
          b.keep(c, b.verdict(c), false);
        }
      }
    }
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
  // Rules no case breaks yet (a rule of another format, mode or element type
  // than the bases'): more bases from the layout's boundary and random cases,
  // whose breaking cases are kept for those rules only.
  auto unbroken = [&] {
    std::set<std::string> out;
    for (const Rule* r : rules_of(spec.name)) {
      if (!b.rule_cases.count(r->id)) out.insert(r->id);
    }
    return out;
  };
  std::set<std::string> missing = unbroken();
  if (!missing.empty()) {
    std::vector<Case> extra;
    if (spec.boundary_cases) extra = spec.boundary_cases();
    if (spec.random_case) {
      std::mt19937_64 rng(2);
      for (int i = 0; i < 64; ++i) extra.push_back(spec.random_case(rng, 0));
    }
    // A base of every format, mode and element type first.
    {
      std::set<std::string> signatures;
      std::vector<Case> first, rest;
      for (Case& c : extra) {
        std::string sig = dtype_name(c.dtype);
        for (const ParamSpec& p : spec.params) {
          auto it = c.layout.params.find(p.key);
          if (p.kind == ParamKind::kEnum && it != c.layout.params.end()) sig += " " + it->second;
        }
        (signatures.insert(sig).second ? first : rest).push_back(std::move(c));
      }
      first.insert(first.end(), rest.begin(), rest.end());
      extra.swap(first);
    }
    size_t tried = 0;
    for (const Case& base : extra) {
      if (missing.empty() || tried >= kMaxExtraBases) break;
      if (!b.verdict(base).empty() || !b.small(base)) continue;
      if (!kinds.insert(to_string(base.layout) + dtype_name(base.dtype)).second) continue;
      ++tried;
      Builder scratch{spec, expected, {}, {}, {}, {}, b.storage_rule, {}};
      std::vector<Case> ignored;
      mutate(scratch, base, &ignored, true);
      for (const Case& c : scratch.out) {
        const std::string v = b.verdict(c);
        if (missing.count(v)) b.keep(c, v, false);
      }
      missing = unbroken();
    }
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
