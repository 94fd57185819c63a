#include <algorithm>
#include <cstring>
#include <map>

#include "layoutcheck/nvdla.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::facts_of;
using testing::expect_pass;
using testing::must_case;
using testing::must_offset;

TEST(NvdlaFeatureBoundary, c_lt_atom) { expect_pass("nvdla.feature", "int8", "31,3,17"); }
TEST(NvdlaFeatureBoundary, c_eq_atom) { expect_pass("nvdla.feature", "int8", "32,3,17"); }
TEST(NvdlaFeatureBoundary, c_gt_atom) { expect_pass("nvdla.feature", "int8", "33,3,17"); }
TEST(NvdlaFeatureBoundary, c_lt_atom_fp16) { expect_pass("nvdla.feature", "fp16", "15,2,9"); }
TEST(NvdlaFeatureBoundary, c_eq_atom_fp16) { expect_pass("nvdla.feature", "fp16", "16,2,9"); }
TEST(NvdlaFeatureBoundary, c_gt_atom_int16) { expect_pass("nvdla.feature", "int16", "17,2,9"); }
TEST(NvdlaFeatureBoundary, w_multiple_of_tile) { expect_pass("nvdla.feature", "int8", "64,2,32"); }
TEST(NvdlaFeatureBoundary, unpacked) { expect_pass("nvdla.feature(line_stride=640,surface_stride=1920)", "fp16", "40,3,17"); }
TEST(NvdlaFeatureBoundary, surface_packed_1x1xC) { expect_pass("nvdla.feature", "int8", "100,1,1"); }

TEST(NvdlaWeightBoundary, k_lt_group) { expect_pass("nvdla.weight.dc", "int8", "31,70,3,3"); }
TEST(NvdlaWeightBoundary, k_eq_group) { expect_pass("nvdla.weight.dc", "int8", "32,70,3,3"); }
TEST(NvdlaWeightBoundary, k_gt_group) { expect_pass("nvdla.weight.dc", "int8", "33,70,3,3"); }
TEST(NvdlaWeightBoundary, k_gt_group_fp16) { expect_pass("nvdla.weight.dc", "fp16", "17,65,2,3"); }
TEST(NvdlaWeightBoundary, c_lt_cube) { expect_pass("nvdla.weight.dc", "int16", "16,63,1,1"); }
TEST(NvdlaWeightBoundary, c_eq_cube) { expect_pass("nvdla.weight.dc", "int16", "16,64,1,1"); }
TEST(NvdlaWeightBoundary, c_gt_cube) { expect_pass("nvdla.weight.dc", "int16", "16,65,1,1"); }

TEST(NvdlaImageBoundary, k_gt_group) { expect_pass("nvdla.weight.image", "int8", "33,3,3,3"); }
TEST(NvdlaImageBoundary, line_gt_cube) { expect_pass("nvdla.weight.image", "fp16", "17,4,3,17"); }
TEST(NvdlaImageBoundary, h_lt_ext) { expect_pass("nvdla.weight.image(post_extension=4)", "int16", "17,4,3,4"); }
TEST(NvdlaImageBoundary, h_eq_ext) { expect_pass("nvdla.weight.image(post_extension=2)", "int8", "40,3,2,5"); }
TEST(NvdlaImageBoundary, h_gt_ext) { expect_pass("nvdla.weight.image(post_extension=2)", "fp16", "20,2,7,8"); }

TEST(NvdlaPixelBoundary, w_lt_32_bytes) { expect_pass("nvdla.pixel(format=T_A8R8G8B8,x_offset=7)", "uint8", "3,7,4"); }
TEST(NvdlaPixelBoundary, w_eq_32_bytes) { expect_pass("nvdla.pixel(format=T_R16)", "int16", "3,16,1"); }
TEST(NvdlaPixelBoundary, w_gt_32_bytes) { expect_pass("nvdla.pixel(format=T_A16Y16U16V16_F,x_offset=3)", "fp16", "3,5,4"); }
TEST(NvdlaPixelBoundary, semi_planar) { expect_pass("nvdla.pixel(format=T_Y12___V12U12_N444,x_offset=15)", "uint16", "4,17,3"); }

// Packs one pixel of the given components with both implementations (which
// must agree) and returns the physical bytes.
std::vector<uint8_t> pack_pixel(const std::string& format, const char* dtype, const std::vector<uint16_t>& comps) {
  Case c = must_case("nvdla.pixel(format=" + format + ")", dtype, "1,1," + std::to_string(comps.size()));
  const size_t eb = dtype_bits(c.dtype) / 8;
  std::vector<uint8_t> logical(comps.size() * eb);
  for (size_t i = 0; i < comps.size(); ++i) std::memcpy(&logical[i * eb], &comps[i], eb);
  std::vector<uint8_t> ref(32, 0xAA), opt(32, 0x55);
  EXPECT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), ref.data(), ref.size()).ok()) << format;
  EXPECT_TRUE(optimized_impl().pack(c, logical.data(), logical.size(), opt.data(), opt.size()).ok()) << format;
  EXPECT_EQ(ref, opt) << format;
  return ref;
}

uint32_t word_of(const std::vector<uint8_t>& bytes) {
  uint32_t w = 0;
  std::memcpy(&w, bytes.data(), 4);
  return w;
}

// Names list a little-endian word's components from the most significant bits
// (oracles/ERRATA.md): T_A8B8G8R8 is R, G, B, A in memory.
TEST(NvdlaPixel, names_list_components_from_the_most_significant_bits) {
  EXPECT_EQ(word_of(pack_pixel("T_A8B8G8R8", "uint8", {0xA1, 0xB2, 0xC3, 0xD4})), 0xA1B2C3D4u);
  EXPECT_EQ(word_of(pack_pixel("T_R8G8B8A8", "uint8", {0x11, 0x22, 0x33, 0x44})), 0x11223344u);
  EXPECT_EQ(word_of(pack_pixel("T_A2B10G10R10", "uint16", {3, 0x3FF, 0, 1})), 3u << 30 | 0x3FFu << 20 | 1u);
  EXPECT_EQ(word_of(pack_pixel("T_R10G10B10A2", "int16", {0x201, 0x155, 0x2AA, 2})),
            0x201u << 22 | 0x155u << 12 | 0x2AAu << 2 | 2u);
  EXPECT_EQ(word_of(pack_pixel("T_V10U10Y10A2", "uint16", {1, 2, 3, 1})), 1u << 22 | 2u << 12 | 3u << 2 | 1u);
  // A 64-bit word of 16-bit components: R in bytes 0-1, A in bytes 6-7.
  const std::vector<uint8_t> wide = pack_pixel("T_A16B16G16R16", "uint16", {0xAAAA, 0xBBBB, 0x6666, 0x1234});
  EXPECT_EQ(std::vector<uint8_t>(wide.begin(), wide.begin() + 8),
            (std::vector<uint8_t>{0x34, 0x12, 0x66, 0x66, 0xBB, 0xBB, 0xAA, 0xAA}));
}

TEST(NvdlaPixel, semi_planar_chroma_word_puts_the_second_named_component_low) {
  Case c = must_case("nvdla.pixel(format=T_Y8___U8V8_N444)", "uint8", "1,1,3");
  const uint8_t logical[3] = {0x59, 0x55, 0x56};  // Y, U, V
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(*impl->size_bytes(c));
    ASSERT_TRUE(impl->pack(c, logical, 3, phys.data(), phys.size()).ok());
    EXPECT_EQ(phys[0], 0x59);
    EXPECT_EQ(phys[32], 0x56) << impl->name();  // V: the low byte of the U8V8 word
    EXPECT_EQ(phys[33], 0x55) << impl->name();
  }
}

// At every ISA level: a line of one pixel (a vector kernel's last, partial
// block) and one of 20 (the bad pixel in a whole block of 8).
TEST(NvdlaPixel, packed_ten_bit_values_must_fit_their_field) {
  struct Bad {
    const char* format;
    uint64_t W, at;  // pixels, the bad one
    std::vector<uint16_t> comps;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"T_A2B10G10R10", 1, 0, {4, 0, 0, 0}, "component A of pixel (0, 0) is 4, which does not fit its 2-bit field"},
      {"T_A2B10G10R10", 1, 0, {0, 1024, 0, 0}, "component B of pixel (0, 0) is 1024"},
      {"T_R10G10B10A2", 1, 0, {0, 0, 0xFFFF, 0}, "component B of pixel (0, 0) is -1"},
      {"T_A2B10G10R10", 20, 9, {0, 0, 0, 2048}, "component R of pixel (0, 9) is 2048"}};
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (const Bad& b : bad) {
      Case c = must_case(std::string("nvdla.pixel(format=") + b.format + ")", "int16", "1," + std::to_string(b.W) + ",4");
      std::vector<uint16_t> logical(b.W * 4, 1);
      std::copy(b.comps.begin(), b.comps.end(), logical.begin() + static_cast<std::ptrdiff_t>(4 * b.at));
      std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
      for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
        Status s = impl->pack(c, logical.data(), 2 * logical.size(), phys.data(), phys.size());
        EXPECT_EQ(s.code(), StatusCode::kInvalid) << isa_name(isa) << " " << b.format << " " << impl->name();
        // The reference names the component by its letter, the optimized by its index.
        const std::string says = impl == &reference_impl() ? b.says : std::strstr(b.says, " of pixel");
        EXPECT_NE(s.message().find(says), std::string::npos) << isa_name(isa) << " " << s.message();
      }
    }
  }
}

// At every ISA level, a line of 11 pixels: a whole vector block and a last one.
TEST(NvdlaPixel, packed_ten_bit_unpack_zero_extends_every_field) {
  Case c = must_case("nvdla.pixel(format=T_B10G10R10A2)", "int16", "1,11,4");
  std::vector<uint8_t> phys(64, 0xFF);
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
      uint16_t back[44] = {};
      ASSERT_TRUE(impl->unpack(c, phys.data(), phys.size(), back, sizeof back).ok());
      for (int i = 0; i < 44; ++i) EXPECT_EQ(back[i], i % 4 == 3 ? 3 : 1023) << isa_name(isa) << " " << impl->name() << " " << i;
    }
  }
}

TEST(NvdlaPixelBoundary, packed_ten_bit) { expect_pass("nvdla.pixel(format=T_A2Y10U10V10,x_offset=7)", "uint16", "3,9,4"); }

TEST(NvdlaSdpBoundary, c_lt_atom) { expect_pass("nvdla.sdp.element(use=ew2)", "int8", "31,2,5,2"); }
TEST(NvdlaSdpBoundary, c_eq_atom) { expect_pass("nvdla.sdp.element(use=bias,proc=int8)", "int16", "32,2,5,1"); }
TEST(NvdlaSdpBoundary, c_gt_atom) { expect_pass("nvdla.sdp.element(use=ew,proc=int16)", "int8", "17,3,7,1"); }
TEST(NvdlaSdpBoundary, channel_bn_fp16) { expect_pass("nvdla.sdp.channel(use=bn)", "fp16", "33,2"); }
TEST(NvdlaSdpBoundary, channel_prelu_int8) { expect_pass("nvdla.sdp.channel(use=prelu)", "int8", "1,1"); }
TEST(NvdlaSdpBoundary, element_unpacked) {
  expect_pass("nvdla.sdp.element(use=ew2,line_stride=1024,surface_stride=4096)", "fp16", "20,3,7,2");
}

// The checker sees a feature layout whose atoms hold the channels in reverse.
class ReversedAtoms : public testing::ForwardingImpl {
 public:
  ReversedAtoms() : ForwardingImpl(optimized_impl()) {}
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    Coord flipped = at;
    const int64_t base = at[0] / 32 * 32, last = std::min<int64_t>(base + 31, c.shape[0] - 1);
    flipped[0] = base + (last - at[0]);
    return inner_.offset_bits(c, flipped);
  }
};

TEST(NvdlaChecker, a_planted_bug_is_caught) {
  CheckReport r = check(must_case("nvdla.feature", "int8", "40,2,3"), reference_impl(), ReversedAtoms());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("'nvdla.feature' --dtype int8 --shape 40,2,3"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("step along C"), std::string::npos) << r.message;
}

TEST(NvdlaErrors, name_rule_and_values) {
  struct Bad { const char* layout; const char* dtype; const char* shape; std::vector<const char*> needles; };
  for (const Bad& b : std::vector<Bad>{
           {"nvdla.feature(line_stride=100)", "int8", "8,2,3", {"line stride 100", "32 bytes", "Requirements of alignment"}},
           {"nvdla.feature(line_stride=64)", "int8", "8,2,3", {"line stride 64", "W * 32 = 96"}},
           {"nvdla.feature(surface_stride=96)", "int16", "8,2,3", {"surface stride 96", "H * line stride = 192"}},
           {"nvdla.feature(surface_stride=33)", "int16", "8,2,3", {"surface stride 33", "32 bytes"}},
           {"nvdla.feature(addr=8)", "fp16", "8,2,3", {"start address 8", "32 bytes"}},
           {"nvdla.feature", "fp32", "8,2,3", {"fp32", "Precision Type"}},
           {"nvdla.weight.dc(addr=32)", "int8", "1,1,1,1", {"start address 32", "256 bytes"}},
           {"nvdla.weight.dc", "bf16", "1,1,1,1", {"bf16", "int8, int16 and fp16"}},
           {"nvdla.weight.image(post_extension=4)", "int8", "1,4,3,5", {"W*C = 5*4 = 20", "<= 16"}},
           {"nvdla.weight.dc(post_extension=2)", "int8", "1,4,3,5", {"DC", "NOT support", "Weight formats and options"}},
           {"nvdla.pixel(format=T_R8,uv_offset=64)", "int8", "2,8,1", {"T_R8", "one plane"}},
           {"nvdla.pixel(format=T_Y16___U16V16_N444,uv_line_stride=48)", "int16", "2,8,3", {"UV line stride 48", "32 bytes"}},
           {"nvdla.pixel(format=T_X16B16G16R16,x_offset=4)", "int16", "2,8,4", {"x offset 4", "0~3"}},
           {"nvdla.sdp.channel(use=prelu)", "int8", "8,2", {"prelu", "ComponentsPerElement = 1", "P is 2"}},
           {"nvdla.sdp.element(use=ew,line_stride=64)", "int16", "8,1,3,1", {"line stride 64", "3 atoms of 32 bytes = 96"}},
           {"nvdla.sdp.element(use=ew,proc=int8)", "fp16", "8,1,3,1", {"fp16", "PROC_PRECISION int8"}},
           {"nvdla.sdp.channel(use=bn,addr=4)", "int8", "8,2", {"batch normalization", "start address 4", "32 bytes"}},
       }) {
    Status s = reference_impl().supports(must_case(b.layout, b.dtype, b.shape));
    ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout;
    for (const char* n : b.needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message() << " lacks " << n;
    EXPECT_EQ(optimized_impl().supports(must_case(b.layout, b.dtype, b.shape)).code(), StatusCode::kInvalid) << b.layout;
  }
}

TEST(NvdlaErrors, huge_strides_overflow_cleanly) {
  Case c = must_case("nvdla.feature(surface_stride=9223372036854775776)", "int8", "100,1,1");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->supports(c).code(), StatusCode::kInvalid);
  }
  Case w = must_case("nvdla.weight.dc", "fp16", "4294967296,4294967296,1,1");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->supports(w).code(), StatusCode::kInvalid);
  }
}

TEST(NvdlaDescriptor, round_trip_and_defaults) {
  auto l = parse_layout("nvdla.feature(line_stride=96,surface_stride=0)");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(to_string(*l), "nvdla.feature(line_stride=96)");
  EXPECT_EQ(*parse_layout(to_string(*l)), *l);
  EXPECT_EQ(to_string(*parse_layout("nvdla.weight.dc(addr=0)")), "nvdla.weight.dc");
  EXPECT_FALSE(parse_layout("nvdla.feature(line_stride=-32)").ok());
  EXPECT_FALSE(parse_layout("nvdla.weight.dc(stride=1)").ok());
}

TEST(NvdlaFeature, padding_channels_and_gaps_are_zero) {
  Case c = must_case("nvdla.feature(line_stride=64,surface_stride=160)", "int8", "33,2,1");
  std::vector<uint8_t> logical(66, 0xFF);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(320, 0xCC);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    for (size_t i = 0; i < phys.size(); ++i) {
      const bool element = (i < 32) || (i >= 64 && i < 96) || i == 160 || i == 224;
      EXPECT_EQ(phys[i], element ? 0xFF : 0x00) << impl->name() << " byte " << i;
    }
  }
  EXPECT_EQ(facts_of(c)["surfaces"], "2");
}

TEST(NvdlaWeight, offsets_agree_with_the_3x3x192_byte_group) {
  Case c = must_case("nvdla.weight.dc", "int16", "16,96,3,3");
  EXPECT_EQ(must_offset(optimized_impl(), c, {3, 70, 1, 2}), 18432u + ((1 * 3 + 2) * 16 + 3) * 64u + 12u);
  EXPECT_EQ(must_offset(reference_impl(), c, {3, 70, 1, 2}), 18432u + ((1 * 3 + 2) * 16 + 3) * 64u + 12u);
}

TEST(NvdlaWeight, out_of_shape_coordinate_is_an_error) {
  Case c = must_case("nvdla.weight.dc", "int8", "2,3,4,5");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->offset_bits(c, {2, 0, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {0, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {0, 0, -1, 0}).status().code(), StatusCode::kInvalid);
  }
}

// ---- sparse compression --------------------------------------------------------

std::vector<uint8_t> packed_weights(const Case& c, const std::vector<uint8_t>& logical) {
  std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
  EXPECT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  return phys;
}

TEST(NvdlaSparse, hand_worked_int8_group) {
  // 33 kernels of one int8 element: group 0 = kernels 0..31, group 1 = kernel 32.
  Case c = must_case("nvdla.weight.dc", "int8", "33,1,1,1");
  std::vector<uint8_t> logical(33, 0);
  logical[0] = 5, logical[9] = 7, logical[31] = 1, logical[32] = 0x80;
  auto phys = packed_weights(c, logical);
  for (auto compress : {&nvdla::compress, &nvdla::compress_reference}) {
    auto z = compress(c, phys.data(), phys.size());
    ASSERT_TRUE(z.ok()) << z.status().message();
    ASSERT_EQ(z->wmb.size(), 128u);
    EXPECT_EQ(z->wmb[0], 0x01);
    EXPECT_EQ(z->wmb[1], 0x02);
    EXPECT_EQ(z->wmb[2], 0x00);
    EXPECT_EQ(z->wmb[3], 0x80);
    EXPECT_EQ(z->wmb[4], 0x01);
    ASSERT_EQ(z->wgs.size(), 128u);
    EXPECT_EQ(std::vector<uint8_t>(z->wgs.begin(), z->wgs.begin() + 9),
              (std::vector<uint8_t>{3, 0, 0, 0, 1, 0, 0, 0, 0}));
    ASSERT_EQ(z->data.size(), 128u);
    EXPECT_EQ(std::vector<uint8_t>(z->data.begin(), z->data.begin() + 5), (std::vector<uint8_t>{5, 7, 1, 0x80, 0}));
  }
}

TEST(NvdlaSparse, fp16_negative_zero_is_kept) {
  Case c = must_case("nvdla.weight.dc", "fp16", "1,2,1,1");
  std::vector<uint8_t> logical = {0x00, 0x80, 0x00, 0x00};  // -0.0, +0.0
  auto phys = packed_weights(c, logical);
  for (auto compress : {&nvdla::compress, &nvdla::compress_reference}) {
    auto z = compress(c, phys.data(), phys.size());
    ASSERT_TRUE(z.ok());
    EXPECT_EQ(z->wmb[0], 0x01);
    EXPECT_EQ(z->wgs[0], 2);
  }
}

TEST(NvdlaSparse, decompress_rejects_inconsistent_surfaces) {
  Case c = must_case("nvdla.weight.dc", "int16", "17,3,1,1");
  std::vector<uint8_t> logical(17 * 3 * 2);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : i);
  auto phys = packed_weights(c, logical);
  auto z = nvdla::compress_reference(c, phys.data(), phys.size());
  ASSERT_TRUE(z.ok());
  std::vector<uint8_t> back(phys.size());
  for (auto decompress : {&nvdla::decompress, &nvdla::decompress_reference}) {
    ASSERT_TRUE(decompress(c, *z, back.data(), back.size()).ok());
    EXPECT_EQ(back, phys);
    nvdla::CompressedWeights bad = *z;
    bad.wgs[0] ^= 2;
    EXPECT_EQ(decompress(c, bad, back.data(), back.size()).code(), StatusCode::kInvalid);
    bad = *z;
    bad.wmb[127] = 0x80;
    EXPECT_EQ(decompress(c, bad, back.data(), back.size()).code(), StatusCode::kInvalid);
    bad = *z;
    bad.data.resize(256);
    EXPECT_EQ(decompress(c, bad, back.data(), back.size()).code(), StatusCode::kInvalid);
    bad = *z;
    bad.wmb[0] ^= 0x01;  // the mask now disagrees with WGS
    EXPECT_EQ(decompress(c, bad, back.data(), back.size()).code(), StatusCode::kInvalid);
    EXPECT_EQ(decompress(c, *z, back.data(), back.size() - 1).code(), StatusCode::kInvalid);
  }
  Case image = must_case("nvdla.weight.image(post_extension=2)", "fp16", "17,3,5,3");
  std::vector<uint8_t> il(17 * 3 * 5 * 3 * 2);
  for (size_t i = 0; i < il.size(); ++i) il[i] = static_cast<uint8_t>(i % 5 == 0 ? 0 : i * 7);
  auto ip = packed_weights(image, il);
  auto iz = nvdla::compress(image, ip.data(), ip.size());
  ASSERT_TRUE(iz.ok()) << iz.status().message();
  EXPECT_EQ(*iz, *nvdla::compress_reference(image, ip.data(), ip.size()));
  std::vector<uint8_t> iback(ip.size());
  ASSERT_TRUE(nvdla::decompress(image, *iz, iback.data(), iback.size()).ok());
  EXPECT_EQ(iback, ip);
  Case f = must_case("nvdla.feature", "int8", "8,1,1");
  std::vector<uint8_t> fp(32);
  EXPECT_EQ(nvdla::compress(f, fp.data(), fp.size()).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(nvdla::compress_reference(f, fp.data(), fp.size()).status().code(), StatusCode::kInvalid);
}

// ---- Winograd ---------------------------------------------------------------------

TEST(NvdlaWinogradBoundary, c_lt_atom) { expect_pass("nvdla.weight.winograd", "int8", "33,31,4,4"); }
TEST(NvdlaWinogradBoundary, c_eq_atom) { expect_pass("nvdla.weight.winograd", "fp16", "16,16,4,4"); }
TEST(NvdlaWinogradBoundary, c_gt_atom) { expect_pass("nvdla.weight.winograd", "int16", "17,17,4,4"); }

std::vector<uint16_t> transform16(DType t, const std::vector<uint16_t>& w, bool reference) {
  auto f = reference ? &nvdla::winograd_transform_reference : &nvdla::winograd_transform;
  auto r = f(t, {1, 1, 3, 3}, w.data(), w.size() * 2);
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::vector<uint16_t> out(16);
  if (r.ok()) std::memcpy(out.data(), r->data(), 32);
  return out;
}

// "Basic Weight for Winograd Convolution": G W G^T with the document's G on a known kernel.
TEST(NvdlaWinograd, g_matrix_on_a_known_kernel) {
  // W = [[1,2,3],[4,5,6],[7,8,9]]: U = [[1,3,1,3],[6,45/4,15/4,9],[2,15/4,5/4,3],[7,12,4,9]].
  const std::vector<uint16_t> w16 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (bool reference : {true, false}) {
    EXPECT_EQ(transform16(DType::kInt16, w16, reference),
              (std::vector<uint16_t>{1, 3, 1, 3, 6, 11, 4, 9, 2, 4, 1, 3, 7, 12, 4, 9}));
    // fp16: 1.0 = 0x3C00 ... 9.0 = 0x4880; 45/4 = 11.25 = 0x49A0, 15/4 = 0x4380, 5/4 = 0x3D00.
    const std::vector<uint16_t> wf = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800, 0x4880};
    EXPECT_EQ(transform16(DType::kFp16, wf, reference),
              (std::vector<uint16_t>{0x3C00, 0x4200, 0x3C00, 0x4200, 0x4600, 0x49A0, 0x4380, 0x4880, 0x4000, 0x4380,
                                     0x3D00, 0x4200, 0x4700, 0x4A00, 0x4400, 0x4880}));
  }
}

TEST(NvdlaWinograd, rounding_saturation_inf_and_nan) {
  for (bool reference : {true, false}) {
    // int16: 32767 everywhere: U[1][1] = 9/4 * 32767 saturates; U[1][0] = 3/2 * 32767 too.
    auto sat = transform16(DType::kInt16, std::vector<uint16_t>(9, 32767), reference);
    EXPECT_EQ(sat[0], 32767);
    EXPECT_EQ(sat[5], 32767);
    // fp16 infinity counts as 65504; 65504 * 9/4 is clipped to 65504.
    auto inf = transform16(DType::kFp16, std::vector<uint16_t>(9, 0x7C00), reference);
    EXPECT_EQ(inf[0], 0x7BFF);
    EXPECT_EQ(inf[5], 0x7BFF);
    // A NaN at W[0][0] reaches U[a][b] where G[a][0] and G[b][0] are non-zero: rows/cols 0, 1, 2.
    std::vector<uint16_t> w(9, 0x3C00);
    w[0] = 0x7E01;
    auto nan = transform16(DType::kFp16, w, reference);
    EXPECT_EQ(nan[0], 0x7E00);
    EXPECT_EQ(nan[2 * 4 + 1], 0x7E00);
    EXPECT_EQ(nan[3], 0x3C00);   // U[0][3] = W[0][2]
    EXPECT_EQ(nan[15], 0x3C00);  // U[3][3] = W[2][2]
    // Ties to even: int8 W[1][1] = 1 alone gives U[1][1] = 1/4 -> 0, W[1][1] = 2 gives 1/2 -> 0, 6 gives 3/2 -> 2.
    for (auto [v, want] : {std::pair{1, 0}, std::pair{2, 0}, std::pair{6, 2}, std::pair{-6, -2}, std::pair{10, 2}}) {
      std::vector<int8_t> k(9, 0);
      k[4] = static_cast<int8_t>(v);
      auto f = reference ? &nvdla::winograd_transform_reference : &nvdla::winograd_transform;
      auto r = f(DType::kInt8, {1, 1, 3, 3}, k.data(), 9);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(static_cast<int8_t>((*r)[5]), want) << v;
    }
  }
  std::vector<uint8_t> k(2 * 9);
  EXPECT_EQ(nvdla::winograd_transform(DType::kFp32, {1, 1, 3, 3}, k.data(), k.size()).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(nvdla::winograd_transform_reference(DType::kInt8, {1, 1, 5, 5}, k.data(), k.size()).status().code(),
            StatusCode::kInvalid);
  EXPECT_EQ(nvdla::winograd_transform_reference(DType::kInt8, {1, 2, 3, 3}, k.data(), 17).status().code(),
            StatusCode::kInvalid);
}

TEST(NvdlaWinograd, stride_two_channel_extension) {
  // One int8 4x5 kernel (values 1..20), stride 2: padded to 6x6, four 3x3 phases.
  std::vector<uint8_t> w(20);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i + 1);
  for (auto extend : {&nvdla::winograd_extend, &nvdla::winograd_extend_reference}) {
    auto e = extend(DType::kInt8, {1, 1, 4, 5}, 2, w.data(), w.size());
    ASSERT_TRUE(e.ok()) << e.status().message();
    ASSERT_EQ(e->size(), 36u);
    // Phase (0,0): rows 0, 2, (4 = pad) x cols 0, 2, 4.
    EXPECT_EQ(std::vector<uint8_t>(e->begin(), e->begin() + 9), (std::vector<uint8_t>{1, 3, 5, 11, 13, 15, 0, 0, 0}));
    // Phase (0,1): rows 0, 2 x cols 1, 3, (5 = pad).
    EXPECT_EQ(std::vector<uint8_t>(e->begin() + 9, e->begin() + 18), (std::vector<uint8_t>{2, 4, 0, 12, 14, 0, 0, 0, 0}));
    // Phase (1,0): rows 1, 3 x cols 0, 2, 4.
    EXPECT_EQ(std::vector<uint8_t>(e->begin() + 18, e->begin() + 27), (std::vector<uint8_t>{6, 8, 10, 16, 18, 20, 0, 0, 0}));
    EXPECT_EQ((*e)[27], 7);
    // Stride 1 keeps a 3x3 kernel; a 4x4 kernel at stride 1 or a 7x7 at stride 2 does not become 3x3.
    std::vector<uint8_t> k9(9, 1), k16(16, 1), k49(49, 1);
    EXPECT_EQ(*extend(DType::kInt8, {1, 1, 3, 3}, 1, k9.data(), 9), k9);
    EXPECT_EQ(extend(DType::kInt8, {1, 1, 4, 4}, 1, k16.data(), 16).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(extend(DType::kInt8, {1, 1, 7, 7}, 2, k49.data(), 49).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(extend(DType::kInt8, {1, 1, 3, 3}, 0, k9.data(), 9).status().code(), StatusCode::kInvalid);
  }
  auto s = nvdla::winograd_extend_reference(DType::kInt8, {1, 1, 4, 4}, 1, w.data(), 16).status();
  EXPECT_NE(s.message().find("should be 3 after extension"), std::string::npos) << s.message();
}

TEST(NvdlaWinograd, transformed_kernels_map_and_compress) {
  std::vector<uint8_t> w(17 * 5 * 9 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i % 7 == 0 ? 0 : i % 61);
  auto u = nvdla::winograd_transform(DType::kFp16, {17, 5, 3, 3}, w.data(), w.size());
  ASSERT_TRUE(u.ok());
  Case c = must_case("nvdla.weight.winograd", "fp16", "17,5,4,4");
  std::vector<uint8_t> phys(*optimized_impl().size_bytes(c));
  ASSERT_TRUE(optimized_impl().pack(c, u->data(), u->size(), phys.data(), phys.size()).ok());
  auto z = nvdla::compress(c, phys.data(), phys.size());
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(*z, *nvdla::compress_reference(c, phys.data(), phys.size()));
  EXPECT_EQ(z->wmb.size(), 640u);  // 17 kernels x 16 padded channels x 16 bits = 4352 bits = 544 bytes -> 640
  std::vector<uint8_t> back(phys.size());
  ASSERT_TRUE(nvdla::decompress_reference(c, *z, back.data(), back.size()).ok());
  EXPECT_EQ(back, phys);
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

using testing::expect_pass;
using testing::must_case;
using testing::must_offset;

// ---- deconvolution weights ---------------------------------------------------------

TEST(NvdlaDeconvBoundary, kernel_lt_stride) { expect_pass("nvdla.weight.deconv(stride_x=3,stride_y=3)", "int8", "33,5,2,2"); }
TEST(NvdlaDeconvBoundary, kernel_eq_stride) { expect_pass("nvdla.weight.deconv(stride_x=2,stride_y=2)", "fp16", "17,65,2,2"); }
TEST(NvdlaDeconvBoundary, kernel_gt_stride) { expect_pass("nvdla.weight.deconv(stride_x=2,stride_y=3)", "int16", "16,70,5,3"); }
TEST(NvdlaDeconvBoundary, c_gt_cube) { expect_pass("nvdla.weight.deconv(stride_y=2)", "int8", "40,130,3,1"); }

TEST(NvdlaDeconv, stride_1_is_weight_for_dc) {
  Case d = must_case("nvdla.weight.deconv", "int16", "17,66,2,3");
  Case dc = must_case("nvdla.weight.dc", "int16", "17,66,2,3");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(*impl->size_bytes(d), *impl->size_bytes(dc));
    for (uint64_t i = 0; i < 17 * 66 * 6; i += 7) {
      const Coord at = coord_of_index(d.shape, i);
      EXPECT_EQ(*impl->offset_bits(d, at), *impl->offset_bits(dc, at)) << impl->name() << " " << i;
    }
  }
}

TEST(NvdlaDeconv, set_q_of_a_row_starts_256_bytes_apart) {
  Case d = must_case("nvdla.weight.deconv(stride_x=2,stride_y=2)", "int8", "1,3,3,3");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(must_offset(*impl, d, {0, 1, 0, 1}), 257u);
    EXPECT_EQ(must_offset(*impl, d, {0, 2, 1, 1}), 770u);
    EXPECT_EQ(must_offset(*impl, d, {0, 0, 2, 2}), 9u);
  }
}

TEST(NvdlaDeconv, appended_taps_and_set_tails_are_zero) {
  Case d = must_case("nvdla.weight.deconv(stride_y=3)", "fp16", "1,1,4,1");
  std::vector<uint8_t> logical(8, 0xAB);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(*impl->size_bytes(d), 0xCC);
    ASSERT_TRUE(impl->pack(d, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    for (size_t i = 0; i < phys.size(); ++i) {
      const bool element = i < 4 || (i >= 256 && i < 258) || (i >= 512 && i < 514);
      if (i % 256 >= 128) continue;
      EXPECT_EQ(phys[i], element ? 0xAB : 0x00) << impl->name() << " byte " << i;
    }
  }
}

TEST(NvdlaDeconv, errors_name_their_rule) {
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.weight.deconv(post_extension=2)", "int8", "1,1,3,3")).rule(),
            "nvdla.weight.deconv/no-post-extension");
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.weight.winograd(post_extension=4)", "int8", "1,1,4,4")).rule(),
            "nvdla.weight.winograd/no-post-extension");
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.weight.deconv(addr=32,stride_x=2)", "int8", "1,1,3,3")).rule(),
            "nvdla.weight/start-address-align-256");
  Case huge = must_case("nvdla.weight.deconv(stride_x=32,stride_y=32)", "fp16", "67108864,67108864,1,1");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->supports(huge).code(), StatusCode::kInvalid) << impl->name();
  }
  EXPECT_EQ(reference_impl().supports(huge).rule(), "nvdla.weight/size-overflow");
  EXPECT_FALSE(parse_layout("nvdla.weight.deconv(stride_x=0)").ok());
  EXPECT_FALSE(parse_layout("nvdla.weight.deconv(stride_y=33)").ok());
}

TEST(NvdlaDeconv, sparse_compression_goes_set_by_set) {
  Case d = must_case("nvdla.weight.deconv(stride_x=2)", "int8", "2,1,1,3");
  std::vector<uint8_t> phys(*reference_impl().size_bytes(d));
  EXPECT_EQ(nvdla::compress_reference(d, phys.data(), phys.size()).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(nvdla::compress(d, phys.data(), phys.size()).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(testing::facts_of(d)["set_layout"], "nvdla.weight.dc --shape 2,1,1,2");
}

// ---- the compressed surfaces in memory ------------------------------------------------

TEST(NvdlaSparse, surfaces_start_256_aligned_and_hold_multiples_of_128) {
  Case c = must_case("nvdla.weight.dc", "int8", "33,1,1,1");
  std::vector<uint8_t> logical(33, 3);
  std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
  ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  auto z = nvdla::compress_reference(c, phys.data(), phys.size());
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(nvdla::check_surfaces(*z, {0x1000, 0x1100, 0x2000}).ok());
  EXPECT_EQ(nvdla::check_surfaces(*z, {0x1080, 0x1100, 0x2000}).rule(), "nvdla.sparse/wgs-start-address-align-256");
  EXPECT_EQ(nvdla::check_surfaces(*z, {0x1000, 0x1180, 0x2000}).rule(), "nvdla.sparse/wmb-start-address-align-256");
  EXPECT_EQ(nvdla::check_surfaces(*z, {0x1000, 0x1100, 0x2020}).rule(), "nvdla.weight/start-address-align-256");
  nvdla::CompressedWeights bad = *z;
  bad.wmb.resize(64);
  EXPECT_EQ(nvdla::check_surfaces(bad, {}).rule(), "nvdla.sparse/wmb-size-align-128");
  std::vector<uint8_t> back(phys.size());
  EXPECT_EQ(nvdla::decompress_reference(c, bad, back.data(), back.size()).rule(), "nvdla.sparse/wmb-size-align-128");
  bad = *z;
  bad.wgs.resize(132);
  EXPECT_EQ(nvdla::check_surfaces(bad, {}).rule(), "nvdla.sparse/wgs-size-align-128");
  EXPECT_EQ(nvdla::decompress_reference(c, bad, back.data(), back.size()).rule(), "nvdla.sparse/wgs-size-align-128");
  bad = *z;
  bad.data.resize(200);
  EXPECT_EQ(nvdla::check_surfaces(bad, {}).rule(), "nvdla.sparse/data-size-align-128");
  EXPECT_EQ(nvdla::decompress_reference(c, bad, back.data(), back.size()).rule(), "nvdla.sparse/data-size-align-128");
  EXPECT_NE(nvdla::decompress(c, bad, back.data(), back.size()).code(), StatusCode::kOk);
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

using testing::expect_pass;
using testing::must_case;

TEST(NvdlaBatchBoundary, n_eq_1) { expect_pass("nvdla.feature.batch", "int8", "1,33,3,5"); }
TEST(NvdlaBatchBoundary, c_lt_atom) { expect_pass("nvdla.feature.batch(batch_stride=1024)", "fp16", "3,15,2,9"); }
TEST(NvdlaBatchBoundary, c_gt_atom_unpacked) {
  expect_pass("nvdla.feature.batch(line_stride=640,surface_stride=1920,batch_stride=6400)", "int16", "2,17,3,17");
}

TEST(NvdlaBatch, errors_name_their_rule) {
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.feature.batch(batch_stride=400)", "int8", "2,33,2,3")).rule(),
            "nvdla.feature/batch-stride-align-32");
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.feature.batch(batch_stride=352)", "int8", "2,33,2,3")).rule(),
            "nvdla.feature/batch-stride-covers-cube");
  EXPECT_EQ(reference_impl().supports(must_case("nvdla.feature.batch(line_stride=48)", "int8", "2,3,2,1")).rule(),
            "nvdla.feature/line-stride-align-32");
  Case huge = must_case("nvdla.feature.batch(batch_stride=9223372036854775776)", "int8", "2,1,1,1");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) EXPECT_EQ(impl->supports(huge).code(), StatusCode::kInvalid);
  EXPECT_EQ(reference_impl().supports(huge).rule(), "nvdla.feature/size-overflow");
  EXPECT_TRUE(reference_impl().supports(must_case("nvdla.feature.batch(batch_stride=384)", "int8", "2,33,2,3")).ok());
}

TEST(NvdlaBatch, gap_between_cubes_is_zero) {
  Case c = must_case("nvdla.feature.batch(batch_stride=64)", "int8", "2,3,1,1");
  std::vector<uint8_t> logical(6, 0x5A);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(128, 0xCC);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    for (size_t i = 0; i < phys.size(); ++i) EXPECT_EQ(phys[i], i % 64 < 3 ? 0x5A : 0x00) << impl->name() << " byte " << i;
  }
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

using testing::must_case;

TEST(NvdlaPixel, ten_and_twelve_bit_values_are_the_low_bits_of_their_container) {
  struct F { const char* layout; const char* shape; uint16_t top; };
  for (F f : {F{"nvdla.pixel(format=T_R10)", "1,1,1", 0x03FF}, F{"nvdla.pixel(format=T_R12)", "1,1,1", 0x0FFF},
              F{"nvdla.pixel(format=T_Y10___U10V10_N444)", "1,1,3", 0x03FF},
              F{"nvdla.pixel(format=T_Y12___V12U12_N444)", "1,1,3", 0x0FFF}}) {
    Case c = must_case(f.layout, "uint16", f.shape);
    const uint64_t n = c.shape[2];
    std::vector<uint16_t> logical(n, f.top);
    for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
      std::vector<uint8_t> phys(*impl->size_bytes(c), 0xCC);
      ASSERT_TRUE(impl->pack(c, logical.data(), n * 2, phys.data(), phys.size()).ok()) << impl->name() << " " << f.layout;
      EXPECT_EQ(phys[0], 0xFF) << impl->name() << " " << f.layout;          // LSB-justified: bits 7:0 of the value
      EXPECT_EQ(phys[1], f.top >> 8) << impl->name() << " " << f.layout;    // MSB-justified would give 0xFF here
      std::vector<uint16_t> wide(n, static_cast<uint16_t>(f.top + 1));
      EXPECT_EQ(impl->pack(c, wide.data(), n * 2, phys.data(), phys.size()).code(), StatusCode::kInvalid) << impl->name();
      std::vector<uint8_t> ones(phys.size(), 0xFF);
      std::vector<uint16_t> back(n, 0);
      ASSERT_TRUE(impl->unpack(c, ones.data(), ones.size(), back.data(), n * 2).ok());
      for (uint16_t v : back) EXPECT_EQ(v, f.top) << impl->name() << " " << f.layout;
    }
  }
  std::vector<uint16_t> wide(1, 1024);
  Case r10 = must_case("nvdla.pixel(format=T_R10)", "int16", "1,1,1");
  std::vector<uint8_t> phys(32);
  EXPECT_EQ(reference_impl().pack(r10, wide.data(), 2, phys.data(), phys.size()).rule(), "nvdla.pixel/component-fits");
  Case r16 = must_case("nvdla.pixel(format=T_R16)", "uint16", "1,1,1");
  std::vector<uint16_t> full(1, 0xFFFF);
  EXPECT_TRUE(reference_impl().pack(r16, full.data(), 2, phys.data(), phys.size()).ok());
}

}  // namespace
}  // namespace layoutcheck
