#include "layoutcheck/byte_rules.h"

#include <algorithm>

#include "layoutcheck/impl.h"

namespace layoutcheck {
namespace {

std::string hex8(uint8_t b) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

std::string hex16(uint16_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) out += digits[(v >> shift) & 15];
  return out;
}

bool is_fp16_nan(uint16_t v) { return (v & 0x7C00) == 0x7C00 && (v & 0x03FF) != 0; }

}  // namespace

Result<ByteRules> Impl::byte_rules(const Case& c) const {
  (void)c;
  return Status::unsupported(name() + " does not map byte rules (the reference does)");
}

const char* byte_kind_name(ByteKind k) {
  switch (k) {
    case ByteKind::kElement: return "element";
    case ByteKind::kFixed: return "fixed";
    case ByteKind::kFree: return "free";
  }
  return "?";
}

const ByteRegion* ByteRules::find(uint64_t b) const {
  auto it = std::upper_bound(regions.begin(), regions.end(), b,
                             [](uint64_t v, const ByteRegion& r) { return v < r.first; });
  if (it == regions.begin()) return nullptr;
  --it;
  return b < it->first + it->length ? &*it : nullptr;
}

uint64_t ByteRules::bytes_of(ByteKind kind) const {
  uint64_t n = 0;
  for (const ByteRegion& r : regions) {
    if (r.kind == kind) n += r.length;
  }
  return n;
}

Status validate(const ByteRules& rules) {
  uint64_t next = 0;
  for (const ByteRegion& r : rules.regions) {
    if (r.first != next || r.length == 0) {
      return Status::internal("byte rules: region at " + std::to_string(r.first) + " of length " +
                              std::to_string(r.length) + " does not start where the previous one ends (" +
                              std::to_string(next) + ")");
    }
    if (r.rule >= rules.rules.size()) return Status::internal("byte rules: region names no rule");
    if (r.kind == ByteKind::kFree && r.constraint == ByteConstraint::kNotFp16NaN &&
        (r.first % 2 != 0 || r.length % 2 != 0)) {
      return Status::internal("byte rules: fp16 region at " + std::to_string(r.first) + " holds half an element");
    }
    next = r.first + r.length;
  }
  if (next != rules.size_bytes) {
    return Status::internal("byte rules cover " + std::to_string(next) + " of " + std::to_string(rules.size_bytes) +
                            " bytes");
  }
  return Status();
}

std::string allowed_text(const ByteRegion& r) {
  switch (r.kind) {
    case ByteKind::kElement: return "the element's byte";
    case ByteKind::kFixed: return hex8(r.value);
    case ByteKind::kFree:
      return r.constraint == ByteConstraint::kNotFp16NaN ? "any value but an fp16 NaN" : "any value";
  }
  return "?";
}

std::string byte_role(const ByteRules& rules, const ByteRegion& r, uint64_t b) {
  const ByteRule& rule = rules.rule_of(r);
  return "byte " + std::to_string(b) + " is " + rule.what + " (" + rule.citation() + ", rule " + rule.id + ")";
}

std::string violation(const ByteRules& rules, const ByteRegion& r, const uint8_t* physical, uint64_t b) {
  const ByteRule& rule = rules.rule_of(r);
  if (r.kind == ByteKind::kFixed && physical[b] != r.value) {
    return byte_role(rules, r, b) + ": the document fixes it to " + hex8(r.value) + " (\"" + rule.says +
           "\"); actual " + hex8(physical[b]);
  }
  if (r.kind == ByteKind::kFree && r.constraint == ByteConstraint::kNotFp16NaN) {
    const uint64_t lo = b - (b - r.first) % 2;
    const uint16_t v = static_cast<uint16_t>(physical[lo] | (physical[lo + 1] << 8));
    if (is_fp16_nan(v)) {
      return byte_role(rules, r, b) + ": any value but NaN (\"" + rule.says + "\"); actual fp16 " + hex16(v) +
             " at byte " + std::to_string(lo) + " is a NaN";
    }
  }
  return "";
}

void fill_free_bytes(const ByteRules& rules, uint64_t seed, uint8_t* physical) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0xC3;
  for (const ByteRegion& r : rules.regions) {
    if (r.kind != ByteKind::kFree) continue;
    for (uint64_t b = r.first; b < r.first + r.length; ++b) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const uint8_t v = static_cast<uint8_t>(state >> 56);
      physical[b] = v == 0 ? 0xC3 : v;
    }
    if (r.constraint == ByteConstraint::kNotFp16NaN) {
      // Clearing one exponent bit of a NaN's high byte leaves a finite, non-zero value.
      for (uint64_t b = r.first; b + 1 < r.first + r.length; b += 2) {
        const uint16_t v = static_cast<uint16_t>(physical[b] | (physical[b + 1] << 8));
        if (is_fp16_nan(v)) physical[b + 1] = static_cast<uint8_t>(physical[b + 1] & ~0x40);
      }
    }
  }
}

std::vector<Fact> byte_rule_facts(const ByteRules& rules) {
  constexpr size_t kListed = 8;
  std::vector<Fact> out;
  out.push_back({"byte_rules", "element " + std::to_string(rules.bytes_of(ByteKind::kElement)) + ", fixed " +
                                   std::to_string(rules.bytes_of(ByteKind::kFixed)) + ", free " +
                                   std::to_string(rules.bytes_of(ByteKind::kFree))});
  for (uint32_t i = 0; i < rules.rules.size(); ++i) {
    uint64_t bytes = 0;
    std::vector<const ByteRegion*> regions;
    for (const ByteRegion& r : rules.regions) {
      if (r.rule == i && r.kind != ByteKind::kElement) bytes += r.length, regions.push_back(&r);
    }
    if (regions.empty()) continue;
    std::string where;
    for (size_t k = 0; k < regions.size() && k < kListed; ++k) {
      where += (k ? " " : "") + std::to_string(regions[k]->first) + "+" + std::to_string(regions[k]->length);
    }
    if (regions.size() > kListed) where += " ...";
    const ByteRule& rule = rules.rules[i];
    out.push_back({std::string(byte_kind_name(regions[0]->kind)) + "." + rule.id,
                   std::to_string(bytes) + " bytes in " + std::to_string(regions.size()) + " regions (" + where +
                       "): " + rule.what + ", " + allowed_text(*regions[0]) + "; \"" + rule.says + "\" (" +
                       rule.citation() + ")"});
  }
  return out;
}

ByteRule element_rule(const std::string& document, const std::string& section) {
  return {"element", document, section, "a byte of an element", "the element's value"};
}

ByteRulesBuilder::ByteRulesBuilder(uint64_t size_bytes, ByteRule base_rule, ByteKind base_kind, uint8_t base_value,
                                   ByteConstraint base_constraint)
    : bytes_(size_bytes, 0) {
  add(std::move(base_rule), base_kind, base_value, base_constraint);
}

uint8_t ByteRulesBuilder::add(ByteRule rule, ByteKind kind, uint8_t value, ByteConstraint constraint) {
  uint32_t index = 0;
  while (index < rules_.size() && rules_[index].id != rule.id) ++index;
  if (index == rules_.size()) rules_.push_back(std::move(rule));
  classes_.push_back({kind, value, constraint, index});
  return static_cast<uint8_t>(classes_.size() - 1);
}

void ByteRulesBuilder::paint(uint64_t first, uint64_t length, uint8_t cls) {
  if (first >= bytes_.size()) return;
  length = std::min<uint64_t>(length, bytes_.size() - first);
  std::fill(bytes_.begin() + static_cast<std::ptrdiff_t>(first),
            bytes_.begin() + static_cast<std::ptrdiff_t>(first + length), cls);
}

ByteRules ByteRulesBuilder::finish() && {
  ByteRules out;
  out.size_bytes = bytes_.size();
  out.rules = std::move(rules_);
  for (uint64_t b = 0; b < bytes_.size();) {
    uint64_t end = b + 1;
    while (end < bytes_.size() && bytes_[end] == bytes_[b]) ++end;
    const Class& k = classes_[bytes_[b]];
    out.regions.push_back({b, end - b, k.kind, k.value, k.constraint, k.rule});
    b = end;
  }
  bytes_.clear();
  bytes_.shrink_to_fit();
  return out;
}

}  // namespace layoutcheck
