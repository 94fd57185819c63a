// layoutcheck/byte_rules.h — what the document requires of every physical byte.
//
// pack() must produce a buffer the document accepts, which is not always one
// buffer: the bytes of elements are given, some other bytes have a value the
// document states (HTP's pad value, the 0s NVDLA appends to weights), and the
// rest are free, at most under a constraint ("can be any value except NaN when
// it's fp16"). The reference answers this for any case as a run-length map:
//
//   ByteRules r = *byte_rules(*parse_case("nvdla.feature", "fp16", "20,1,1"));
//   // r.regions: [0,40) element, [40,64) free "not an fp16 NaN" (channel padding)
//   const ByteRegion* g = r.find(50);
//   r.rule_of(*g).id == "nvdla.feature.channel-padding";
//   std::string why = violation(r, *g, physical, 50);  // "" if the byte is allowed
//
// The checker compares element and fixed bytes exactly and free bytes only
// against their constraint (CheckOptions::strict_padding compares them all).
// Optimized code and plugins never state rules: the map is the reference's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

enum class ByteKind : uint8_t {
  kElement,  // a byte of a logical element (or shared with one)
  kFixed,    // a byte the document gives a value
  kFree,     // a byte the document leaves open, under `constraint`
};

enum class ByteConstraint : uint8_t {
  kAny,         // anything
  kNotFp16NaN,  // 2-byte little-endian fp16 elements from the region's start; none a NaN
};

// One rule of a document about bytes, with a stable id and the document's words.
struct ByteRule {
  std::string id;        // "nvdla.feature.channel-padding"
  std::string document;  // "nvdla-in-memory-data-formats.txt"
  std::string section;   // "Feature Data Format"
  std::string what;      // "channel padding of an atom"
  std::string says;      // the document's words (or the reading, see oracles/ERRATA.md)
  std::string citation() const { return document + " § " + section; }
};

struct ByteRegion {
  uint64_t first = 0, length = 0;
  ByteKind kind = ByteKind::kElement;
  uint8_t value = 0;  // kFixed
  ByteConstraint constraint = ByteConstraint::kAny;  // kFree
  uint32_t rule = 0;  // index into ByteRules::rules
};

struct ByteRules {
  uint64_t size_bytes = 0;
  std::vector<ByteRule> rules;
  std::vector<ByteRegion> regions;  // in order, adjacent, covering [0, size_bytes) exactly
  // The region holding byte `b` (nullptr past the end).
  const ByteRegion* find(uint64_t b) const;
  const ByteRule& rule_of(const ByteRegion& r) const { return rules[r.rule]; }
  uint64_t bytes_of(ByteKind kind) const;
};

// The byte rules of a case, from the reference (reference_impl().byte_rules(c)).
Result<ByteRules> byte_rules(const Case& c);

// Checks the map covers [0, size_bytes) with adjacent non-empty regions, names
// known rules, and that constrained regions hold whole constrained elements.
Status validate(const ByteRules& rules);

// "" when `physical[b]` (a byte of region r) satisfies the region's rule in a
// buffer of rules.size_bytes bytes; otherwise why not, naming the rule. Element
// bytes are not judged here (they are compared with the expected bytes).
std::string violation(const ByteRules& rules, const ByteRegion& r, const uint8_t* physical, uint64_t b);

// "byte 96 is channel padding of an atom (nvdla-in-memory-data-formats.txt §
// Feature Data Format, rule nvdla.feature.channel-padding)".
std::string byte_role(const ByteRules& rules, const ByteRegion& r, uint64_t b);

// Writes a non-zero pattern (salted by seed) into every free byte, keeping
// each region's constraint; element and fixed bytes are left alone.
void fill_free_bytes(const ByteRules& rules, uint64_t seed, uint8_t* physical);

// For `describe`: a summary ("byte_rules" = "element 360, fixed 0, free 24"),
// then one fact per rule of the fixed and free bytes, keyed "free.<rule id>" or
// "fixed.<rule id>": bytes, regions (listed when few), what is allowed, citation.
std::vector<Fact> byte_rule_facts(const ByteRules& rules);

// "0x00", "any value", "any value but an fp16 NaN": what a region allows.
std::string allowed_text(const ByteRegion& r);
const char* byte_kind_name(ByteKind k);

// Builds a map by painting: every byte starts as `base`; later paints win.
// Painting is per byte, so a reference can follow its pack loop literally.
class ByteRulesBuilder {
 public:
  ByteRulesBuilder(uint64_t size_bytes, ByteRule base_rule, ByteKind base_kind, uint8_t base_value = 0,
                   ByteConstraint base_constraint = ByteConstraint::kAny);
  // A class of bytes: kind, value/constraint and rule. Returns its handle.
  uint8_t add(ByteRule rule, ByteKind kind, uint8_t value = 0, ByteConstraint constraint = ByteConstraint::kAny);
  void paint(uint64_t first, uint64_t length, uint8_t cls);
  ByteRules finish() &&;

 private:
  struct Class {
    ByteKind kind;
    uint8_t value;
    ByteConstraint constraint;
    uint32_t rule;
  };
  std::vector<ByteRule> rules_;
  std::vector<Class> classes_;
  std::vector<uint8_t> bytes_;
};

// The rule of element bytes (one per family, citing the family's document).
ByteRule element_rule(const std::string& document, const std::string& section);

}  // namespace layoutcheck
