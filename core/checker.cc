#include "layoutcheck/checker.h"

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/rules.h"
#include "core/guarded.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace layoutcheck {
namespace {

constexpr uint8_t kPoisonExpected = 0xA5;
constexpr uint8_t kPoisonActual = 0x5A;
constexpr uint64_t kMaxDiagnosedElements = 1u << 22;

std::string hex_byte(uint8_t b) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

std::string coord_text(const Coord& c) { return "(" + shape_to_string(c) + ")"; }

struct Failure {
  std::ostringstream out;
  bool failed = false;
  std::ostream& add() { failed = true; return out << "  "; }
};

// Looks at unit steps along every dimension for swapped or shifted dimensions.
std::string diagnose_offsets(const Case& c, const Impl& expected, const Impl& actual) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  Coord origin(c.shape.size(), 0);
  auto e0 = expected.offset_bits(c, origin);
  auto a0 = actual.offset_bits(c, origin);
  if (!e0.ok() || !a0.ok()) return "";
  std::vector<int64_t> es(c.shape.size(), 0), as(c.shape.size(), 0);
  std::vector<bool> has(c.shape.size(), false);
  for (size_t i = 0; i < c.shape.size(); ++i) {
    if (c.shape[i] < 2) continue;
    Coord step = origin;
    step[i] = 1;
    auto e = expected.offset_bits(c, step);
    auto a = actual.offset_bits(c, step);
    if (!e.ok() || !a.ok()) continue;
    es[i] = static_cast<int64_t>(*e - *e0);
    as[i] = static_cast<int64_t>(*a - *a0);
    has[i] = true;
  }
  auto dim = [&](size_t i) { return spec && i < spec->dims.size() ? spec->dims[i] : std::to_string(i); };
  std::string out;
  for (size_t i = 0; i < es.size(); ++i) {
    for (size_t j = i + 1; j < es.size(); ++j) {
      if (has[i] && has[j] && es[i] != es[j] && as[i] == es[j] && as[j] == es[i]) {
        out += "dimensions " + dim(i) + " and " + dim(j) + " look swapped; ";
      }
    }
  }
  for (size_t i = 0; i < es.size(); ++i) {
    if (has[i] && as[i] != es[i]) {
      out += "step along " + dim(i) + ": expected " + std::to_string(es[i] / 8) +
             " bytes, actual " + std::to_string(as[i] / 8) + "; ";
    }
  }
  if (*a0 != *e0) {
    out += "origin shifted by " +
           std::to_string((static_cast<int64_t>(*a0) - static_cast<int64_t>(*e0)) / 8) + " bytes; ";
  }
  if (!out.empty()) out.resize(out.size() - 2);
  return out;
}

// A coordinate of a TLA mode as a tuple congruent with it: an integer mode
// takes the index itself, a nested one splits it first sub-mode fastest (the
// coordinate crd2offset reads back as the same element).
IntTuple congruent_coordinate(const IntTuple& mode, uint64_t index) {
  if (mode.is_integer()) return IntTuple(static_cast<int64_t>(index));
  std::vector<IntTuple> parts;
  for (const IntTuple& sub : mode.items()) {
    const uint64_t n = sub.product().ok() ? *sub.product() : 1;
    parts.push_back(congruent_coordinate(sub, index % n));
    index /= n;
  }
  return IntTuple(std::move(parts));
}

// Element `at` of a TLA layout of shape `shape` as a nested coordinate, in one
// of three forms: every mode split into its sub-modes, the flat indices as a
// tuple, or the first mode split and the others flat.
IntTuple nested_coordinate(const IntTuple& shape, const Coord& at, uint64_t form) {
  if (shape.is_integer()) return congruent_coordinate(shape, static_cast<uint64_t>(at[0]));
  std::vector<IntTuple> parts;
  for (size_t m = 0; m < shape.rank() && m < at.size(); ++m) {
    const bool split = form % 3 == 0 || (form % 3 == 2 && m == 0);
    parts.push_back(split ? congruent_coordinate(shape.items()[m], static_cast<uint64_t>(at[m]))
                          : IntTuple(at[m]));
  }
  return IntTuple(std::move(parts));
}

// Nested-coordinate offsets (Impl::offset_bits_nested, plugin ABI 1.2
// offset_bits_tuple) of a sample of the elements of a TLA layout, against the
// expected implementation's. An implementation without the entry is not
// compared. The tuple shape comes from the expected implementation's describe.
void compare_nested_offsets(const Case& c, const Impl& expected, const Impl& actual, uint64_t max_checks,
                            Failure* f) {
  if (max_checks == 0) return;
  if (c.layout.family() != "tla") return;
  auto facts = expected.describe(c);
  if (!facts.ok()) return;
  std::optional<IntTuple> shape;
  for (const Fact& fact : *facts) {
    if (fact.first != "tla_shape") continue;
    if (auto t = parse_int_tuple(fact.second); t.ok()) shape = std::move(t).value();
  }
  if (!shape) return;
  const uint64_t n = *element_count(c.shape);
  const uint64_t step = std::max<uint64_t>(1, n / max_checks);
  uint64_t mismatches = 0, checked = 0;
  for (uint64_t i = 0; i < n; i += step) {
    const Coord at = coord_of_index(c.shape, i);
    const IntTuple crd = nested_coordinate(*shape, at, i / step);
    auto oe = expected.offset_bits_nested(c, crd);
    if (!oe.ok()) {
      if (oe.status().code() != StatusCode::kUnsupported) {
        f->add() << expected.name() << " offset" << to_string(crd) << ": " << oe.status().to_string() << "\n";
      }
      return;
    }
    auto oa = actual.offset_bits_nested(c, crd);
    if (!oa.ok() && oa.status().code() == StatusCode::kUnsupported) return;
    ++checked;
    if (!oa.ok() || *oa != *oe) {
      if (mismatches++ == 0) {
        f->add() << "nested offset of element " << coord_text(at) << " as " << to_string(crd) << ": expected bit "
                 << *oe << " (byte " << *oe / 8 << "), actual "
                 << (oa.ok() ? "bit " + std::to_string(*oa) + " (byte " + std::to_string(*oa / 8) + ")"
                             : oa.status().to_string())
                 << "\n";
      }
    }
  }
  if (mismatches > 0) f->add() << mismatches << " of " << checked << " checked nested-coordinate offsets differ\n";
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kBothInvalid: return "invalid";
    case Verdict::kDeclined: return "declined";
    case Verdict::kSkipped: return "skipped";
    case Verdict::kFail: return "FAIL";
  }
  return "?";
}

namespace {

// A word for a POSIX shell: as is when it holds no special character, else in single quotes.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || (ch != 0 && std::strchr("_-./+=:,@%", ch) != nullptr);
  });
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

namespace {

// repro_command() of a case already written as text (to_string(c)).
std::string repro_line(const std::string& case_text, const std::string& impl_name, const CheckOptions& options) {
  return "layoutcheck repro " + case_text + " --impl " + shell_word(impl_name) + " --seed " +
         std::to_string(options.seed) + (options.strict_padding ? " --strict-padding" : "");
}

}  // namespace

std::string repro_command(const Case& c, const std::string& impl_name, const CheckOptions& options) {
  return repro_line(to_string(c), impl_name, options);
}

void fill_position_unique(const Case& c, uint64_t seed, std::vector<uint8_t>* logical) {
  const uint32_t bits = dtype_bits(c.dtype);
  const uint64_t n = element_count(c.shape).ok() ? *element_count(c.shape) : 0;
  logical->assign((n * bits + 7) / 8, 0);
  const uint64_t salt = seed * 0x2545F4914F6CDD1Dull;
  // Formats with fields narrower than the dtype keep only a field's bits: the
  // value is drawn within the field, zero-extended in its dtype.
  const LayoutSpec* spec = find_spec(c.layout.name);
  const bool narrow = spec != nullptr && static_cast<bool>(spec->value_bits);
  for (uint64_t i = 0; i < n; ++i) {
    // An odd multiplier is a bijection modulo 2^bits: unique within each period
    // of 2^bits elements. Each further digit of i in base 2^bits (i >> bits,
    // i >> 2 bits, ...) adds itself times another odd number, so that elements
    // m * 2^(k bits) apart (0 < m < 2^bits) differ too wherever the digits
    // above do not carry: with 8-bit elements a kernel that put element i + 256
    // where i belongs would otherwise have written the expected bytes, and
    // with 4-bit ones, while only the second digit had a term, element i + 256
    // equalled element i.
    uint64_t v = i * 0x9E3779B97F4A7C15ull + salt;
    uint64_t odd = 0xD1B54A32D192ED03ull;
    for (uint32_t shift = bits; shift < 64 && (i >> shift) != 0; shift += bits, odd += 0x632BE59BD9B4E01Aull) {
      v += (i >> shift) * odd;
    }
    if (narrow) {
      const uint32_t keep = value_bits(c, coord_of_index(c.shape, i));
      if (keep < 64) v &= (uint64_t{1} << keep) - 1;
    }
    if (bits % 8 == 0) {
      std::memcpy(logical->data() + i * (bits / 8), &v, bits / 8);
    } else {
      for (uint32_t b = 0; b < bits; ++b) {
        uint64_t bit = i * bits + b;
        if ((v >> b) & 1) (*logical)[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
      }
    }
  }
  // Elements that read one physical element (a broadcast view) carry its value.
  if (spec != nullptr && spec->value_source) {
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t from = spec->value_source(c, i);
      if (from >= i) continue;
      for (uint32_t b = 0; b < bits; ++b) {
        const uint64_t src = from * bits + b, dst = i * bits + b;
        const uint8_t mask = static_cast<uint8_t>(1u << (dst % 8));
        if (((*logical)[src / 8] >> (src % 8)) & 1) (*logical)[dst / 8] |= mask;
        else (*logical)[dst / 8] &= static_cast<uint8_t>(~mask);
      }
    }
  }
}

CheckReport check(const Case& c, const Impl& expected, const Impl& actual,
                  const CheckOptions& options) {
  CheckReport report;
  const std::string case_text = to_string(c);
  const std::string header = case_text + ": " + actual.name() + " vs " + expected.name();
  report.repro = repro_line(case_text, actual.name(), options);
  auto finish = [&](Verdict v, const std::string& body) {
    report.verdict = v;
    report.message = std::string(verdict_name(v)) + " " + header + "\n" + body;
    if (v == Verdict::kFail) report.message += "  repro: " + report.repro + "\n";
    return report;
  };

  Status se = expected.supports(c);
  Status sa = actual.supports(c);
  if (se.code() == StatusCode::kInvalid) {
    report.rule = se.rule();
    if (sa.ok() && is_limit_rule(se.rule())) {
      // A limit of layoutcheck's own; no document forbids accepting the case.
      return finish(Verdict::kSkipped, "  beyond layoutcheck's own limits (" + se.rule() + "): " + se.message() + "\n");
    }
    if (sa.ok()) {
      return finish(Verdict::kFail, "  " + actual.name() + " accepts a case " + expected.name() +
                                        " rejects: " + se.message() + "\n");
    }
    return finish(Verdict::kBothInvalid, "  " + se.message() + "\n");
  }
  if (!se.ok()) return finish(Verdict::kSkipped, "  " + expected.name() + ": " + se.to_string() + "\n");
  if (sa.code() == StatusCode::kUnsupported) return finish(Verdict::kDeclined, "  " + sa.message() + "\n");
  if (!sa.ok()) {
    return finish(Verdict::kFail, "  " + actual.name() + " rejects a valid case: " + sa.to_string() + "\n");
  }

  Failure f;
  auto size_e = expected.size_bytes(c);
  auto size_a = actual.size_bytes(c);
  if (!size_e.ok()) return finish(Verdict::kSkipped, "  " + size_e.status().to_string() + "\n");
  if (!size_a.ok() || *size_a != *size_e) {
    f.add() << "size_bytes: expected " << *size_e << ", actual "
            << (size_a.ok() ? std::to_string(*size_a) : size_a.status().to_string()) << "\n";
    return finish(Verdict::kFail, f.out.str());
  }
  const uint64_t phys = *size_e;
  if (phys > options.max_physical_bytes) {
    return finish(Verdict::kSkipped, "  physical size " + std::to_string(phys) +
                                         " bytes exceeds the check limit\n");
  }
  const uint64_t n = *element_count(c.shape);
  std::vector<uint8_t> logical;
  fill_position_unique(c, options.seed, &logical);

  // Offsets, element by element (a strided sample of very large cases).
  const uint64_t step = std::max<uint64_t>(1, n / std::max<uint64_t>(1, options.max_offset_checks));
  uint64_t offset_mismatches = 0;
  bool actual_has_offsets = true;
  Coord at(c.shape.size(), 0);  // the coordinate of element i, advanced in place when step is 1
  for (uint64_t i = 0; i < n && actual_has_offsets; i += step) {
    if (i > 0 && step == 1) {
      for (size_t d = at.size(); d-- > 0;) {
        if (++at[d] < c.shape[d]) break;
        at[d] = 0;
      }
    } else if (i > 0) {
      at = coord_of_index(c.shape, i);
    }
    auto oe = expected.offset_bits(c, at);
    auto oa = actual.offset_bits(c, at);
    if (!oe.ok()) {
      f.add() << expected.name() << " offset" << coord_text(at) << ": " << oe.status().to_string() << "\n";
      break;
    }
    if (!oa.ok() && oa.status().code() == StatusCode::kUnsupported) {
      actual_has_offsets = false;
      break;
    }
    if (!oa.ok() || *oa != *oe) {
      if (offset_mismatches++ == 0) {
        f.add() << "offset of element " << coord_text(at) << ": expected bit " << *oe << " (byte "
                << *oe / 8 << "), actual "
                << (oa.ok() ? "bit " + std::to_string(*oa) + " (byte " + std::to_string(*oa / 8) + ")"
                            : oa.status().to_string())
                << "\n";
      }
    }
  }
  if (offset_mismatches > 0) {
    f.add() << offset_mismatches << " of " << (n + step - 1) / step << " checked offsets differ\n";
    std::string d = diagnose_offsets(c, expected, actual);
    if (!d.empty()) f.add() << "diagnosis: " << d << "\n";
  }

  compare_nested_offsets(c, expected, actual, std::min(options.max_offset_checks, options.max_nested_checks), &f);

  // The document's rules for every byte (the expected implementation's map,
  // normally the reference's); without a map every byte is compared.
  std::optional<ByteRules> rules;
  if (auto br = expected.byte_rules(c); br.ok()) {
    Status valid = validate(*br);
    if (!valid.ok() || br->size_bytes != phys) {
      f.add() << expected.name() << " byte rules: "
              << (valid.ok() ? "they cover " + std::to_string(br->size_bytes) + " bytes of " + std::to_string(phys)
                             : valid.to_string())
              << "\n";
    } else {
      rules = std::move(br).value();
    }
  }

  // Pack with poisoned buffers.
  Guarded pe(phys, options.guard_bytes, kPoisonExpected);
  Guarded pa(phys, options.guard_bytes, kPoisonActual);
  Status ke = expected.pack(c, logical.data(), logical.size(), pe.data(), phys);
  if (!ke.ok()) return finish(Verdict::kSkipped, "  " + expected.name() + " pack: " + ke.to_string() + "\n");
  Status ka = actual.pack(c, logical.data(), logical.size(), pa.data(), phys);
  int64_t where = 0;
  if (!ka.ok()) {
    f.add() << "pack: " << ka.to_string() << "\n";
  } else {
    if (!pa.guards_intact(&where)) {
      f.add() << "pack wrote outside the physical buffer, at byte " << where << " (size " << phys << ")\n";
    }
    // Element and fixed bytes are compared exactly, free bytes against their
    // constraint (all bytes exactly under strict_padding, or without rules).
    // Region by region: a region that compares equal costs one memcmp, and
    // only a differing one is walked byte by byte. When the two images are
    // equal as a whole (a passing case), the exact regions are equal too and
    // only the constrained free bytes are looked at.
    const bool identical = std::memcmp(pe.data(), pa.data(), phys) == 0;
    uint64_t diff_count = 0, first = 0;
    std::string first_violation;
    auto record = [&](uint64_t b, const ByteRegion* r, std::string why) {
      if (r) ++report.broken_rules[rules->rule_of(*r).id];
      if (diff_count++ == 0) first = b, first_violation = std::move(why);
    };
    auto compare_exact = [&](uint64_t from, uint64_t to, const ByteRegion* r) {
      if (identical || std::memcmp(pe.data() + from, pa.data() + from, to - from) == 0) return;
      for (uint64_t b = from; b < to; ++b) {
        if (pe.data()[b] != pa.data()[b]) record(b, r, "");
      }
    };
    if (!rules) {
      compare_exact(0, phys, nullptr);
    } else {
      for (const ByteRegion& r : rules->regions) {
        const uint64_t end = r.first + r.length;
        if (options.strict_padding || r.kind != ByteKind::kFree) {
          compare_exact(r.first, end, &r);
        } else if (r.constraint != ByteConstraint::kAny) {
          // Constrained elements start at the region's start (validate()).
          for (uint64_t b = r.first; b < end; b += 2) {
            std::string why = violation(*rules, r, pa.data(), b);
            if (!why.empty()) record(b, &r, std::move(why));
          }
        }
      }
    }
    if (diff_count > 0) {
      std::ostream& o = f.add();
      const ByteRegion* r = rules ? rules->find(first) : nullptr;
      o << "pack: " << diff_count << " of " << phys << " physical bytes differ"
        << (rules && !options.strict_padding ? " or break their byte rule" : "") << "; first at byte " << first;
      if (!first_violation.empty()) {
        o << ": " << first_violation << "\n";
      } else {
        o << ": expected " << hex_byte(pe.data()[first]) << ", actual " << hex_byte(pa.data()[first]);
        if (pa.data()[first] == kPoisonActual) o << " (never written)";
        if (r != nullptr && r->kind == ByteKind::kFixed) {
          o << "; it belongs to no element (padding must be " << allowed_text(*r) << "): " << byte_role(*rules, *r, first)
            << ", which the document fixes (\"" << rules->rule_of(*r).says << "\")";
        } else if (r != nullptr && r->kind == ByteKind::kFree) {
          o << "; it belongs to no element: " << byte_role(*rules, *r, first) << ", " << allowed_text(*r)
            << " under the document, compared because of --strict-padding";
        } else if (n <= kMaxDiagnosedElements) {
          // Which element should be there?
          bool owned = false;
          for (uint64_t i = 0; i < n && !owned; ++i) {
            const Coord owner = coord_of_index(c.shape, i);
            auto oe = expected.offset_bits(c, owner);
            if (oe.ok() && *oe / 8 <= first && first < (*oe + value_bits(c, owner) + 7) / 8) {
              owned = true;
              o << "; it belongs to element " << coord_text(owner);
              if (actual_has_offsets) {
                auto oa = actual.offset_bits(c, owner);
                if (oa.ok()) o << ", which " << actual.name() << " places at byte " << *oa / 8;
              }
            }
          }
          if (!owned) o << "; it belongs to no element (padding must be " << hex_byte(pe.data()[first]) << ")";
        }
        o << "\n";
      }
      if (report.broken_rules.size() > 0) {
        std::ostream& by = f.add();
        by << "bytes by rule:";
        for (const auto& [id, count] : report.broken_rules) by << " " << id << " " << count << ";";
        by << "\n";
      }
      if (offset_mismatches == 0) {
        std::string d = diagnose_offsets(c, expected, actual);
        if (!d.empty()) f.add() << "diagnosis: " << d << "\n";
      }
    }
  }

  // Round trips: each implementation unpacks the expected physical image with
  // its free bytes filled with a non-zero pattern: unpack may not depend on them.
  std::vector<uint8_t> image(pe.data(), pe.data() + phys);
  if (rules) fill_free_bytes(*rules, options.seed, image.data());
  for (const Impl* impl : {&expected, &actual}) {
    Guarded back(logical.size(), options.guard_bytes, impl == &expected ? kPoisonExpected : kPoisonActual);
    Status u = impl->unpack(c, image.data(), phys, back.data(), logical.size());
    if (!u.ok()) {
      f.add() << impl->name() << " unpack: " << u.to_string() << "\n";
      continue;
    }
    if (!back.guards_intact(&where)) {
      f.add() << impl->name() << " unpack wrote outside the logical buffer, at byte " << where << "\n";
    }
    clear_spare_bits(n, dtype_bits(c.dtype), back.data(), logical.size());
    if (std::memcmp(back.data(), logical.data(), logical.size()) != 0) {
      uint64_t b = 0;
      while (back.data()[b] == logical[b]) ++b;
      uint64_t elem = b * 8 / dtype_bits(c.dtype);
      f.add() << impl->name() << " unpack(pack(x)) != x: first at logical byte " << b << ", element "
              << coord_text(coord_of_index(c.shape, elem)) << ": expected " << hex_byte(logical[b])
              << ", actual " << hex_byte(back.data()[b]) << "\n";
    }
  }
  if (f.failed) return finish(Verdict::kFail, f.out.str());
  return finish(Verdict::kPass, "");
}

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<LayoutTally> run_checks(const Impl& expected, const Impl& actual,
                                    const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  std::vector<const LayoutSpec*> specs;
  for (const auto& s : layout_specs()) {
    if (glob_match(options.layout_glob, s.name)) specs.push_back(&s);
  }
  // This shard's layouts; each keeps its index among the matched ones, which
  // seeds its random cases, so the shards together are the unsharded run.
  std::vector<size_t> index_of;
  {
    const uint64_t shards = std::max<uint64_t>(options.shard_count, 1);
    std::vector<const LayoutSpec*> mine;
    for (size_t k = 0; k < specs.size(); ++k) {
      if (k % shards == options.shard_index % shards) mine.push_back(specs[k]), index_of.push_back(k);
    }
    specs.swap(mine);
  }
  const size_t count = specs.size();
  std::vector<LayoutTally> tallies(count);
  for (size_t k = 0; k < count; ++k) tallies[k].layout = specs[k]->name;
  std::vector<std::mutex> locks(count);
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(options.seconds);
  // A fixed case count reads no clock: its cases and verdicts depend on the seed only.
  const bool counted = options.cases > 0;
  const unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(std::max<size_t>(1, count))));
  std::mutex progress_mutex;
  std::atomic<bool> stop{false};
  auto parallel = [&](const std::function<void()>& work) {
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < jobs; ++w) workers.emplace_back(work);
    for (auto& w : workers) w.join();
  };
  // Runs one case of layout k; the caller holds locks[k].
  auto record = [&](size_t k, const Case& c, uint64_t seed) {
    LayoutTally& t = tallies[k];
    CheckOptions co = options.check;
    co.seed = seed;
    CheckReport r = options.runner ? options.runner(c, co) : check(c, expected, actual, co);
    if (r.verdict == Verdict::kDeclined && options.claimed && options.claimed(c)) {
      r.verdict = Verdict::kFail;
      r.message = "FAIL " + to_string(c) + ": " + actual.name() +
                  " claims this case in its capabilities but answers unsupported:\n" + r.message +
                  "  repro: " + r.repro + "\n";
    }
    ++t.cases;
    note_params(*specs[k], c, &t.params);
    // A case skipped under one of layoutcheck's own limits fired that rule too.
    if (r.verdict == Verdict::kBothInvalid || r.verdict == Verdict::kFail || r.verdict == Verdict::kSkipped) {
      // A runner in another process may not carry the rule back: ask the expected one.
      std::string rule = r.rule;
      if (rule.empty()) {
        Status se = expected.supports(c);
        if (se.code() == StatusCode::kInvalid) rule = se.rule();
      }
      if (r.verdict == Verdict::kSkipped && !is_limit_rule(rule)) rule.clear();
      if (!rule.empty()) ++t.rules_fired[rule];
    }
    switch (r.verdict) {
      case Verdict::kPass: ++t.passed, ++t.passed_by_dtype[dtype_name(c.dtype)]; break;
      case Verdict::kBothInvalid: ++t.invalid; break;
      case Verdict::kDeclined: ++t.declined; break;
      case Verdict::kSkipped: ++t.skipped; break;
      case Verdict::kFail:
        if (t.failed++ == 0) t.first_failure = r.message, t.first_failing_case = c, t.first_failing_seed = seed;
        if (options.fail_fast) stop = true;
        break;
    }
    if (options.on_case) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.on_case(specs[k]->name, t.cases, t.failed);
    }
  };
  auto out_of_time = [&] { return !counted && clock::now() >= deadline; };

  // Phase 1: the boundary and rule cases of every layout, cheapest first. They
  // run whole whatever the time budget: they are what the run stands on.
  std::vector<std::vector<Case>> boundary(count);
  std::atomic<size_t> next{0};
  parallel([&] {
    for (size_t k; (k = next++) < count;) {
      const LayoutSpec& spec = *specs[k];
      std::vector<Case>& list = boundary[k];
      list = strength_cases(spec, expected);
      if (spec.boundary_cases) {
        for (Case& c : spec.boundary_cases()) list.push_back(std::move(c));
      }
      // Under a case budget (--cases, --max-cases) the random phase keeps half
      // of it, up to 64 cases, and these take the rest: first one case of every
      // rule the list breaks, then the rest of the share spread evenly over it.
      const uint64_t cap = counted ? options.cases : options.max_cases;
      const size_t share = static_cast<size_t>(cap - std::min<uint64_t>(cap / 2, 64));
      if (cap && list.size() > share) {
        std::map<std::string, size_t> first_of_rule;  // rule -> its first case
        for (size_t i = 0; i < list.size(); ++i) {
          const Status st = expected.supports(list[i]);
          if (st.code() == StatusCode::kInvalid) first_of_rule.emplace(st.rule(), i);
        }
        std::vector<size_t> picked, rest;
        std::vector<char> taken(list.size(), 0);
        for (const auto& [rule, i] : first_of_rule) {
          if (picked.size() < share) picked.push_back(i), taken[i] = 1;
        }
        for (size_t i = 0; i < list.size(); ++i) {
          if (!taken[i]) rest.push_back(i);
        }
        const size_t more = share - picked.size();
        for (size_t j = 0; j < more && !rest.empty(); ++j) picked.push_back(rest[j * rest.size() / more]);
        std::sort(picked.begin(), picked.end());
        std::vector<Case> kept;
        for (size_t i : picked) kept.push_back(std::move(list[i]));
        list.swap(kept);
      }
    }
  });
  struct Item {
    uint64_t cost;
    size_t layout, index;
  };
  std::vector<Item> items;
  for (size_t k = 0; k < count; ++k) {
    for (size_t i = 0; i < boundary[k].size(); ++i) {
      const Case& c = boundary[k][i];
      uint64_t cost = 0;
      if (expected.supports(c).ok()) {
        auto size = expected.size_bytes(c);
        cost = size.ok() ? *size : UINT64_MAX;
      }
      items.push_back({cost, k, i});
    }
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.cost < b.cost; });
  next = 0;
  parallel([&] {
    for (size_t n; (n = next++) < items.size();) {
      if (stop) break;
      const Item& it = items[n];
      std::lock_guard<std::mutex> lock(locks[it.layout]);
      record(it.layout, boundary[it.layout][it.index], options.seed + it.index);
    }
  });

  // Phase 2: whatever the caller runs between (the documents' examples).
  if (!stop && options.after_boundary && !options.after_boundary()) stop = true;

  // Phase 3: random cases, the layouts in turn.
  std::vector<std::mt19937_64> rngs;
  for (size_t k = 0; k < count; ++k) rngs.emplace_back(options.seed * 1000003u + index_of[k]);
  std::vector<uint64_t> drawn(count, 0);
  std::vector<char> done(count, 0);
  std::atomic<size_t> remaining{count};
  auto finished = [&](size_t k) {
    const LayoutSpec& spec = *specs[k];
    const LayoutTally& t = tallies[k];
    if (!spec.random_case || stop) return true;
    if (counted) return t.cases >= options.cases;
    if (options.max_cases && t.cases >= options.max_cases) return true;
    // An implementation that declines every case of a layout does not implement it.
    if (t.cases >= 20 && t.declined == t.cases) return true;
    return t.cases >= options.min_cases && out_of_time();
  };
  next = 0;
  parallel([&] {
    while (remaining > 0 && !stop) {
      const size_t k = next++ % std::max<size_t>(1, count);
      std::unique_lock<std::mutex> lock(locks[k], std::try_to_lock);
      if (!lock.owns_lock() || done[k]) continue;
      if (finished(k)) {
        done[k] = 1;
        --remaining;
        continue;
      }
      LayoutTally& t = tallies[k];
      const LayoutSpec& spec = *specs[k];
      const int size_class = static_cast<int>(t.cases % 4 == 3 ? 2 : t.cases % 2);
      Case c = spec.random_case(rngs[k], size_class);
      if (drawn[k]++ % 8 == 7) c = stretch_case(spec, rngs[k], c);
      record(k, c, options.seed + t.cases);
    }
  });
  if (options.progress) {
    for (size_t k = 0; k < count; ++k) {
      std::ostringstream line;
      line << "[" << (k + 1) << "/" << count << "] " << specs[k]->name << ": " << tallies[k].cases << " cases, "
           << tallies[k].failed << " failed";
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(line.str());
    }
  }
  return tallies;
}

}  // namespace layoutcheck
