#include <gtest/gtest.h>

#include <cstring>
#include <tuple>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::ForwardingImpl;
using testing::must_case;

ByteRules must_rules(const Case& c) {
  auto r = byte_rules(c);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ByteRules{};
}

// The map covers the buffer exactly, its element bytes are exactly the bytes of
// the elements' offsets, and the reference's own pack keeps every rule.
void expect_consistent_map(const Case& c) {
  SCOPED_TRACE(to_string(c));
  ByteRules rules = must_rules(c);
  ASSERT_TRUE(validate(rules).ok()) << validate(rules).message();
  const uint64_t size = *reference_impl().size_bytes(c);
  ASSERT_EQ(rules.size_bytes, size);
  uint64_t sum = 0;
  for (const ByteRegion& r : rules.regions) sum += r.length;
  EXPECT_EQ(sum, size);
  std::vector<uint8_t> owned(size, 0);
  const uint64_t n = *element_count(c.shape);
  for (uint64_t i = 0; i < n; ++i) {
    const Coord at = coord_of_index(c.shape, i);
    const uint64_t bit = *reference_impl().offset_bits(c, at);
    for (uint64_t b = bit / 8; b < (bit + value_bits(c, at) + 7) / 8; ++b) owned[b] = 1;
  }
  for (const ByteRegion& r : rules.regions) {
    for (uint64_t b = r.first; b < r.first + r.length; ++b) {
      ASSERT_EQ(owned[b] == 1, r.kind == ByteKind::kElement) << "byte " << b << " rule " << rules.rule_of(r).id;
    }
  }
  std::vector<uint8_t> logical, physical(size);
  fill_position_unique(c, 3, &logical);
  ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), physical.data(), size).ok());
  for (const ByteRegion& r : rules.regions) {
    for (uint64_t b = r.first; b < r.first + r.length; ++b) {
      ASSERT_EQ(violation(rules, r, physical.data(), b), "");
    }
  }
}

void expect_maps_of_family(const std::string& family) {
  uint64_t checked = 0;
  for (const LayoutSpec& spec : layout_specs()) {
    if (spec.name.rfind(family + ".", 0) != 0 || !spec.boundary_cases) continue;
    for (const Case& c : spec.boundary_cases()) {
      if (!reference_impl().supports(c).ok() || *reference_impl().size_bytes(c) > (4u << 20)) continue;
      expect_consistent_map(c);
      ++checked;
    }
  }
  EXPECT_GT(checked, 5u);
}

TEST(ByteRules, tpu_maps_cover_every_byte) { expect_maps_of_family("tpu"); }
TEST(ByteRules, htp_maps_cover_every_byte) { expect_maps_of_family("htp"); }
TEST(ByteRules, mge_maps_cover_every_byte) { expect_maps_of_family("mge"); }
TEST(ByteRules, tla_maps_cover_every_byte) { expect_maps_of_family("tla"); }
TEST(ByteRules, nvdla_maps_cover_every_byte) { expect_maps_of_family("nvdla"); }

TEST(ByteRules, tla_notation_gap_is_free) {
  ByteRules r = must_rules(must_case("(_2,4):(_12,_1)", "fp32", "2,4"));
  ASSERT_EQ(r.regions.size(), 3u);
  EXPECT_EQ(r.regions[1].first, 16u);
  EXPECT_EQ(r.regions[1].length, 32u);
  EXPECT_EQ(r.regions[1].kind, ByteKind::kFree);
  EXPECT_EQ(r.rule_of(r.regions[1]).id, "tla.stride-gap");
  expect_consistent_map(must_case("(_2,4):(_12,_1)", "fp32", "2,4"));
}

TEST(ByteRules, nvdla_fp16_channel_padding_is_free_but_not_nan) {
  ByteRules r = must_rules(must_case("nvdla.feature", "fp16", "20,1,1"));
  const ByteRegion* g = r.find(40);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->first, 40u);
  EXPECT_EQ(g->length, 24u);
  EXPECT_EQ(g->kind, ByteKind::kFree);
  EXPECT_EQ(g->constraint, ByteConstraint::kNotFp16NaN);
  EXPECT_EQ(r.rule_of(*g).id, "nvdla.feature.channel-padding");
  EXPECT_EQ(r.rule_of(*g).section, "Feature Data Format");
  EXPECT_EQ(r.bytes_of(ByteKind::kElement), 40u);
  std::vector<uint8_t> buf(64, 0x55);
  EXPECT_EQ(violation(r, *g, buf.data(), 40), "");
  buf[48] = 0x01, buf[49] = 0x7e;
  const std::string why = violation(r, *g, buf.data(), 49);
  EXPECT_NE(why.find("0x7e01"), std::string::npos) << why;
  EXPECT_NE(why.find("is a NaN"), std::string::npos) << why;
  EXPECT_NE(why.find("nvdla-in-memory-data-formats.txt § Feature Data Format"), std::string::npos) << why;
  buf[49] = 0x7c, buf[48] = 0x00;  // infinity is not a NaN
  EXPECT_EQ(violation(r, *g, buf.data(), 48), "");
}

TEST(ByteRules, nvdla_int8_channel_padding_and_gaps_are_free) {
  ByteRules r = must_rules(must_case("nvdla.feature(line_stride=96)", "int8", "40,2,2"));
  EXPECT_EQ(r.find(64)->kind, ByteKind::kFree);
  EXPECT_EQ(r.rule_of(*r.find(64)).id, "nvdla.feature.stride-gap");
  EXPECT_EQ(r.find(200)->constraint, ByteConstraint::kAny);
  EXPECT_EQ(r.rule_of(*r.find(200)).id, "nvdla.feature.channel-padding");
  EXPECT_EQ(r.bytes_of(ByteKind::kFixed), 0u);
}

TEST(ByteRules, nvdla_weight_tail_and_winograd_channels_are_fixed_zero) {
  ByteRules dc = must_rules(must_case("nvdla.weight.dc", "int8", "1,5,1,1"));
  ASSERT_EQ(dc.regions.size(), 2u);
  EXPECT_EQ(dc.regions[1].first, 5u);
  EXPECT_EQ(dc.regions[1].kind, ByteKind::kFixed);
  EXPECT_EQ(dc.regions[1].value, 0);
  EXPECT_EQ(dc.rule_of(dc.regions[1]).id, "nvdla.weight.end-alignment");
  ByteRules wg = must_rules(must_case("nvdla.weight.winograd", "int16", "1,5,4,4"));
  EXPECT_EQ(wg.bytes_of(ByteKind::kFree), 0u);
  // Cube 1 holds channel 4 and the appended channels 5..7: channel 5 of (h, w) = (0, 0) is at (64 + 1) * 2.
  EXPECT_EQ(wg.find(128)->kind, ByteKind::kElement);
  EXPECT_EQ(wg.find(130)->kind, ByteKind::kFixed);
  EXPECT_EQ(wg.rule_of(*wg.find(130)).id, "nvdla.weight.winograd.channel-padding");
}

TEST(ByteRules, nvdla_pixel_x_offset_is_free) {
  ByteRules r = must_rules(must_case("nvdla.pixel(format=T_R8,x_offset=3)", "int8", "2,4,1"));
  EXPECT_EQ(r.rule_of(*r.find(0)).id, "nvdla.pixel.x-offset");
  EXPECT_EQ(r.find(3)->kind, ByteKind::kElement);
  EXPECT_EQ(r.rule_of(*r.find(7)).id, "nvdla.pixel.line-padding");
  EXPECT_EQ(r.find(7)->kind, ByteKind::kFree);
}

TEST(ByteRules, tpu_dummy_elements_are_fixed_zero_and_empty_blocks_free) {
  ByteRules r = must_rules(must_case("tpu.aligned(npus=4,lmem=1024,mode=4n)", "int8", "6,1,1,1"));
  // The packed element m = 1 holds n = 4, 5 and two dummy lanes at bytes 130 and 131.
  EXPECT_EQ(r.find(128)->kind, ByteKind::kElement);
  EXPECT_EQ(r.find(130)->kind, ByteKind::kFixed);
  EXPECT_EQ(r.find(130)->length, 2u);
  EXPECT_EQ(r.rule_of(*r.find(130)).id, "tpu.dummy-element");
  EXPECT_EQ(r.rule_of(*r.find(130)).section, "4N-mode");
  EXPECT_EQ(r.find(4)->kind, ByteKind::kFree);
  EXPECT_EQ(r.rule_of(*r.find(4)).id, "tpu.empty-block");
}

TEST(ByteRules, htp_padding_is_the_pad_value) {
  ByteRules r = must_rules(must_case("htp.crouton(pad=31)", "uint8", "1,3,5,30"));
  EXPECT_EQ(r.find(30)->kind, ByteKind::kFixed);
  EXPECT_EQ(r.find(30)->value, 31);
  EXPECT_EQ(r.bytes_of(ByteKind::kFree), 0u);
}

TEST(ByteRules, mge_padding_channels_are_fixed_zero) {
  ByteRules r = must_rules(must_case("mge.nchw4", "int8", "1,6,1,1"));
  ASSERT_EQ(r.regions.size(), 2u);
  EXPECT_EQ(r.regions[1].first, 6u);
  EXPECT_EQ(r.regions[1].kind, ByteKind::kFixed);
  EXPECT_EQ(r.rule_of(r.regions[1]).id, "mge.padding-channel");
  EXPECT_EQ(r.bytes_of(ByteKind::kFree), 0u);
}

TEST(ByteRules, fill_free_bytes_keeps_constraints_and_leaves_the_rest) {
  Case c = must_case("nvdla.feature(surface_stride=128)", "fp16", "20,1,2");
  ByteRules r = must_rules(c);
  for (uint64_t seed = 1; seed < 40; ++seed) {
    std::vector<uint8_t> buf(r.size_bytes, 0);
    fill_free_bytes(r, seed, buf.data());
    for (const ByteRegion& g : r.regions) {
      for (uint64_t b = g.first; b < g.first + g.length; ++b) {
        ASSERT_EQ(violation(r, g, buf.data(), b), "");
        if (g.kind == ByteKind::kFree) ASSERT_NE(buf[b], 0);
        else ASSERT_EQ(buf[b], 0);
      }
    }
  }
}

// ---- the checker on free, fixed and element bytes --------------------------

// Writes `fill` into every byte the document leaves free, after a correct pack.
class FillsFreeBytes : public ForwardingImpl {
 public:
  FillsFreeBytes(const Impl& inner, uint8_t fill) : ForwardingImpl(inner, "lenient"), fill_(fill) {}
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    LC_ASSIGN_OR_RETURN(ByteRules r, ::layoutcheck::byte_rules(c));
    for (const ByteRegion& g : r.regions) {
      if (g.kind == ByteKind::kFree) std::memset(static_cast<uint8_t*>(p) + g.first, fill_, g.length);
    }
    return Status();
  }

 private:
  uint8_t fill_;
};

// Writes `fill` into every byte that holds no element, fixed bytes included.
class FillsAllPadding : public ForwardingImpl {
 public:
  FillsAllPadding(const Impl& inner, uint8_t fill) : ForwardingImpl(inner, "sloppy"), fill_(fill) {}
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    LC_ASSIGN_OR_RETURN(ByteRules r, ::layoutcheck::byte_rules(c));
    for (const ByteRegion& g : r.regions) {
      if (g.kind != ByteKind::kElement) std::memset(static_cast<uint8_t*>(p) + g.first, fill_, g.length);
    }
    return Status();
  }

 private:
  uint8_t fill_;
};

// Puts an fp16 NaN into the first element of fp16 channel padding.
class NaNPadding : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    LC_ASSIGN_OR_RETURN(ByteRules r, ::layoutcheck::byte_rules(c));
    for (const ByteRegion& g : r.regions) {
      if (g.constraint == ByteConstraint::kNotFp16NaN) {
        static_cast<uint8_t*>(p)[g.first] = 0x01;
        static_cast<uint8_t*>(p)[g.first + 1] = 0x7e;
        break;
      }
    }
    return Status();
  }
};

// Leaves the last element unwritten: its bytes keep the checker's poison.
class SkipsLastElement : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    std::vector<uint8_t> keep(static_cast<uint8_t*>(p), static_cast<uint8_t*>(p) + ps);
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    const Coord last = coord_of_index(c.shape, *element_count(c.shape) - 1);
    const uint64_t at = *inner_.offset_bits(c, last) / 8;
    std::memcpy(static_cast<uint8_t*>(p) + at, keep.data() + at, dtype_bits(c.dtype) / 8);
    return Status();
  }
};

// Unpacks correctly only while the free bytes are zero.
class UnpackReadsFreeBytes : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status unpack(const Case& c, const void* p, size_t ps, void* l, size_t ls) const override {
    LC_RETURN_IF_ERROR(inner_.unpack(c, p, ps, l, ls));
    LC_ASSIGN_OR_RETURN(ByteRules r, ::layoutcheck::byte_rules(c));
    for (const ByteRegion& g : r.regions) {
      if (g.kind == ByteKind::kFree) static_cast<uint8_t*>(l)[0] ^= static_cast<const uint8_t*>(p)[g.first];
    }
    return Status();
  }
};

CheckOptions strict_options() {
  CheckOptions o;
  o.strict_padding = true;
  return o;
}

TEST(CheckerByteRules, lenient_nvdla_feature_passes) {
  FillsFreeBytes lenient(optimized_impl(), 0x55);
  for (const char* layout : {"nvdla.feature", "nvdla.feature(line_stride=96,surface_stride=256)"}) {
    for (const char* dtype : {"int8", "int16", "fp16"}) {
      CheckReport r = check(must_case(layout, dtype, "20,2,2"), reference_impl(), lenient);
      EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    }
  }
}

TEST(CheckerByteRules, lenient_passes_on_every_family_with_free_bytes) {
  FillsFreeBytes lenient(optimized_impl(), 0x55);
  for (const auto& [layout, dtype, shape] :
       std::vector<std::tuple<const char*, const char*, const char*>>{
           {"tpu.aligned(npus=4,lmem=1024,addr=128,mode=4n)", "int8", "6,5,2,3"},
           {"tpu.strided(npus=4,lmem=2048,n=200,c=60,h=9,w=2)", "fp32", "2,5,2,3"},
           {"(_2,4):(_12,_1)", "fp16", "2,4"},
           {"nvdla.pixel(format=T_A8B8G8R8,x_offset=3)", "int8", "2,3,4"},
           {"nvdla.sdp.element(use=ew2)", "fp16", "20,2,2,2"},
       }) {
    CheckReport r = check(must_case(layout, dtype, shape), reference_impl(), lenient);
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  }
}

TEST(CheckerByteRules, lenient_fails_with_strict_padding) {
  FillsFreeBytes lenient(optimized_impl(), 0x55);
  CheckReport r = check(must_case("nvdla.feature", "fp16", "20,2,2"), reference_impl(), lenient, strict_options());
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("rule nvdla.feature.channel-padding"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("--strict-padding"), std::string::npos) << r.message;
  EXPECT_EQ(r.broken_rules.count("nvdla.feature.channel-padding"), 1u);
}

TEST(CheckerByteRules, nan_in_fp16_channel_padding_fails_naming_the_rule) {
  NaNPadding mutant(optimized_impl());
  CheckReport r = check(must_case("nvdla.feature", "fp16", "20,1,1"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("byte 40 is channel padding of an fp16 atom (nvdla-in-memory-data-formats.txt § Feature "
                           "Data Format, rule nvdla.feature.channel-padding): any value but NaN"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("actual fp16 0x7e01 at byte 40 is a NaN"), std::string::npos) << r.message;
  EXPECT_EQ(r.broken_rules.at("nvdla.feature.channel-padding"), 1u);
}

TEST(CheckerByteRules, wrong_tpu_dummy_element_fails) {
  FillsAllPadding mutant(optimized_impl(), 0x55);
  CheckReport r =
      check(must_case("tpu.aligned(npus=4,lmem=1024,mode=4n)", "int8", "6,1,1,1"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("rule tpu.dummy-element"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("padding must be 0x00"), std::string::npos) << r.message;
  EXPECT_EQ(r.broken_rules.count("tpu.empty-block"), 0u);
}

TEST(CheckerByteRules, wrong_htp_pad_value_fails) {
  FillsAllPadding mutant(optimized_impl(), 0x55);
  CheckReport r = check(must_case("htp.crouton(pad=31)", "uint8", "1,3,5,30"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("padding must be 0x1f"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("rule htp.pad"), std::string::npos) << r.message;
}

TEST(CheckerByteRules, wrong_nvdla_weight_tail_fails) {
  FillsAllPadding mutant(optimized_impl(), 0x55);
  CheckReport r = check(must_case("nvdla.weight.dc", "int8", "1,5,1,1"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("rule nvdla.weight.end-alignment"), std::string::npos) << r.message;
}

TEST(CheckerByteRules, never_written_element_byte_fails) {
  SkipsLastElement mutant(optimized_impl());
  CheckReport r = check(must_case("nvdla.feature", "fp16", "20,2,2"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("(never written)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("it belongs to element (19,1,1)"), std::string::npos) << r.message;
}

TEST(CheckerByteRules, round_trip_does_not_depend_on_free_bytes) {
  UnpackReadsFreeBytes mutant(optimized_impl());
  CheckReport r = check(must_case("nvdla.feature", "int8", "20,1,1"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("mutant unpack(pack(x)) != x"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace layoutcheck
