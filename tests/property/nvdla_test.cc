#include <algorithm>
#include <set>

#include "layoutcheck/nvdla.h"
#include "support.h"  // gtest before rapidcheck/gtest.h
#include "property/round_trip.h"

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

DType draw_precision() { return *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16); }

Case draw_feature() {
  const DType t = draw_precision();
  const int64_t C = *rc::gen::inRange<int64_t>(1, 80), H = *rc::gen::inRange<int64_t>(1, 6),
                W = *rc::gen::inRange<int64_t>(1, 40);
  ParamMap p;
  int64_t line = W * 32;
  if (*rc::gen::arbitrary<bool>()) {
    line += 32 * *rc::gen::inRange<int64_t>(0, 4);
    p["line_stride"] = std::to_string(line);
  }
  if (*rc::gen::arbitrary<bool>()) p["surface_stride"] = std::to_string(H * line + 32 * *rc::gen::inRange<int64_t>(0, 4));
  auto layout = make_layout("nvdla.feature", p);
  RC_ASSERT(layout.ok());
  return Case{*layout, t, {C, H, W}};
}

Case draw_weights() {
  const DType t = draw_precision();
  if (*rc::gen::inRange(0, 4) == 0) {
    return Case{*make_layout("nvdla.weight.winograd"), t,
                {*rc::gen::inRange<int64_t>(1, 40), *rc::gen::inRange<int64_t>(1, 40), 4, 4}};
  }
  if (*rc::gen::arbitrary<bool>()) {
    const int64_t ext = *rc::gen::element<int64_t>(1, 2, 4);
    const int64_t C = *rc::gen::inRange<int64_t>(1, 5);
    const int64_t max_w = ext == 1 ? 20 : (ext == 2 ? 32 : 16) / C;
    Shape s = {*rc::gen::inRange<int64_t>(1, 40), C, *rc::gen::inRange<int64_t>(1, 9),
               *rc::gen::inRange<int64_t>(1, max_w + 1)};
    return Case{*make_layout("nvdla.weight.image", {{"post_extension", std::to_string(ext)}}), t, s};
  }
  Shape s = {*rc::gen::inRange<int64_t>(1, 70), *rc::gen::inRange<int64_t>(1, 140), *rc::gen::inRange<int64_t>(1, 4),
             *rc::gen::inRange<int64_t>(1, 4)};
  return Case{*make_layout("nvdla.weight.dc"), t, s};
}

Case draw_sdp() {
  const bool per_element = *rc::gen::arbitrary<bool>();
  const std::string use = per_element ? *rc::gen::element<std::string>("bias", "ew", "ew2")
                                      : *rc::gen::element<std::string>("bias", "prelu", "bn");
  const std::string proc = *rc::gen::element<std::string>("int8", "int16", "fp16");
  const DType t = proc == "fp16" ? DType::kFp16 : *rc::gen::element(DType::kInt8, DType::kInt16);
  const int64_t P = use == "bn" || use == "ew2" ? 2 : 1, C = *rc::gen::inRange<int64_t>(1, 70);
  auto layout = make_layout(per_element ? "nvdla.sdp.element" : "nvdla.sdp.channel", {{"use", use}, {"proc", proc}});
  RC_ASSERT(layout.ok());
  if (!per_element) return Case{*layout, t, {C, P}};
  return Case{*layout, t, {C, *rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 20), P}};
}

// Elements of the mapped weight surface: the logical ones, plus the appended
// zero channels of Winograd kernels (C padded to 32 bytes).
uint64_t mapped_elements(const Case& c) {
  if (c.layout.name != "nvdla.weight.winograd") return *element_count(c.shape);
  const uint64_t lanes = 32 / (dtype_bits(c.dtype) / 8);
  return c.shape[0] * ((c.shape[1] + lanes - 1) / lanes * lanes) * 16;
}

std::vector<uint64_t> all_offsets(const Impl& impl, const Case& c) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < *element_count(c.shape); ++i) out.push_back(*impl.offset_bits(c, coord_of_index(c.shape, i)));
  return out;
}

RC_GTEST_PROP(NvdlaProperty, optimized_equals_reference, ()) {
  const Case c = *rc::gen::arbitrary<bool>() ? draw_feature() : draw_weights();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
}

RC_GTEST_PROP(NvdlaProperty, feature_offsets_are_injective_within_the_padded_cube, ()) {
  const Case c = draw_feature();
  RC_PRE(reference_impl().supports(c).ok());
  const uint64_t eb = dtype_bits(c.dtype) / 8, per_atom = 32 / eb;
  const uint64_t surfaces = (c.shape[0] + per_atom - 1) / per_atom;
  const uint64_t size = *reference_impl().size_bytes(c);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::set<uint64_t> seen;
    for (uint64_t bit : all_offsets(*impl, c)) {
      const uint64_t byte = bit / 8;
      RC_ASSERT(bit % 8 == 0);
      RC_ASSERT(byte % eb == 0);
      RC_ASSERT(byte + eb <= size);
      RC_ASSERT(seen.insert(byte).second);
    }
  }
  // The padded cube: every atom of every surface, line and column holds its
  // channels at the same in-atom positions, and distinct (c, h, w) map to
  // distinct atoms or positions.
  const uint64_t ls = std::stoull(c.layout.get("line_stride")) ? std::stoull(c.layout.get("line_stride"))
                                                                 : static_cast<uint64_t>(c.shape[2]) * 32;
  const uint64_t ss = std::stoull(c.layout.get("surface_stride")) ? std::stoull(c.layout.get("surface_stride"))
                                                                    : static_cast<uint64_t>(c.shape[1]) * ls;
  RC_ASSERT(size == surfaces * ss);
  const Coord last = {c.shape[0] - 1, c.shape[1] - 1, c.shape[2] - 1};
  RC_ASSERT(*optimized_impl().offset_bits(c, last) / 8 ==
            (surfaces - 1) * ss + (c.shape[1] - 1) * ls + (c.shape[2] - 1) * 32 + (c.shape[0] - 1) % per_atom * eb);
}

RC_GTEST_PROP(NvdlaProperty, sdp_optimized_equals_reference_and_offsets_are_injective, ()) {
  const Case c = draw_sdp();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
  const uint64_t eb = dtype_bits(c.dtype) / 8, size = *reference_impl().size_bytes(c);
  RC_ASSERT(size % 32 == 0);
  std::set<uint64_t> seen;
  for (uint64_t bit : all_offsets(reference_impl(), c)) {
    RC_ASSERT(bit / 8 + eb <= size);
    RC_ASSERT(seen.insert(bit).second);
  }
}

RC_GTEST_PROP(NvdlaProperty, pixel_optimized_equals_reference_and_offsets_are_injective, ()) {
  const std::string f = *rc::gen::element<std::string>("T_R8", "T_R12", "T_R16_F", "T_A16B16G16R16", "T_A16Y16U16V16_F",
                                                       "T_B8G8R8X8", "T_V8U8Y8A8", "T_Y8___U8V8_N444", "T_Y16___V16U16_N444");
  const bool planar = f.find("___") != std::string::npos, fp = f.back() == 'F' && f.size() > 8;
  const bool wide = f.find("16") != std::string::npos || f.find("12") != std::string::npos;
  const int64_t C = planar ? 3 : f.size() <= 7 ? 1 : 4, pixel = planar ? (wide ? 2 : 1) : (wide ? 2 : 1) * C;
  const DType t = fp ? DType::kFp16 : wide ? DType::kInt16 : DType::kUInt8;
  const int64_t x = *rc::gen::inRange<int64_t>(0, 32 / pixel);
  auto layout = make_layout("nvdla.pixel", {{"format", f}, {"x_offset", std::to_string(x)}});
  RC_ASSERT(layout.ok());
  const Case c{*layout, t, {*rc::gen::inRange<int64_t>(1, 5), *rc::gen::inRange<int64_t>(1, 40), C}};
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
  std::set<uint64_t> seen;
  for (uint64_t bit : all_offsets(optimized_impl(), c)) {
    RC_ASSERT(bit / 8 >= static_cast<uint64_t>(x * (planar ? 1 : pixel)));  // the x offset is skipped
    RC_ASSERT(seen.insert(bit).second);
  }
}

// The four fields of a 2+10+10+10 pixel tile its 32-bit word exactly, and
// random in-range values survive pack and unpack in both implementations.
RC_GTEST_PROP(NvdlaProperty, packed_ten_bit_fields_tile_the_word_and_round_trip, ()) {
  const std::string f = *rc::gen::element<std::string>("T_A2B10G10R10", "T_A2R10G10B10", "T_B10G10R10A2", "T_R10G10B10A2",
                                                       "T_A2Y10U10V10", "T_V10U10Y10A2");
  const int64_t x = *rc::gen::inRange<int64_t>(0, 8);
  auto layout = make_layout("nvdla.pixel", {{"format", f}, {"x_offset", std::to_string(x)}});
  RC_ASSERT(layout.ok());
  const Case c{*layout, *rc::gen::element(DType::kInt16, DType::kUInt16),
               {*rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 30), 4}};
  for (int64_t h = 0; h < c.shape[0]; ++h) {
    for (int64_t w = 0; w < c.shape[1]; ++w) {
      uint64_t covered = 0, word = UINT64_MAX;
      for (int64_t ch = 0; ch < 4; ++ch) {
        const uint64_t bit = *optimized_impl().offset_bits(c, {h, w, ch}), width = value_bits(c, {h, w, ch});
        RC_ASSERT(*reference_impl().offset_bits(c, {h, w, ch}) == bit);
        RC_ASSERT(width == 2 || width == 10);
        if (word == UINT64_MAX) word = bit / 32;
        RC_ASSERT(bit / 32 == word && (bit + width - 1) / 32 == word);  // inside one word
        const uint64_t mask = ((uint64_t{1} << width) - 1) << (bit % 32);
        RC_ASSERT((covered & mask) == 0);
        covered |= mask;
      }
      RC_ASSERT(covered == 0xFFFFFFFFull);
    }
  }
  const uint64_t n = static_cast<uint64_t>(c.shape[0] * c.shape[1] * 4);
  std::vector<uint16_t> logical(n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t width = value_bits(c, coord_of_index(c.shape, i));
    logical[i] = static_cast<uint16_t>(*rc::gen::inRange<uint32_t>(0, 1u << width));
  }
  const uint64_t size = *reference_impl().size_bytes(c);
  std::vector<uint8_t> ref(size), opt(size);
  RC_ASSERT(reference_impl().pack(c, logical.data(), n * 2, ref.data(), size).ok());
  RC_ASSERT(optimized_impl().pack(c, logical.data(), n * 2, opt.data(), size).ok());
  RC_ASSERT(ref == opt);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint16_t> back(n, 0xDEAD);
    RC_ASSERT(impl->unpack(c, ref.data(), size, back.data(), n * 2).ok());
    RC_ASSERT(back == logical);
  }
}

RC_GTEST_PROP(NvdlaProperty, weight_mapping_is_a_bijection_onto_the_data_bytes, ()) {
  const Case c = draw_weights();
  const uint64_t eb = dtype_bits(c.dtype) / 8, n = mapped_elements(c);
  RC_ASSERT(*reference_impl().size_bytes(c) == (n * eb + 127) / 128 * 128);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<bool> hit(n, false);
    for (uint64_t bit : all_offsets(*impl, c)) {
      RC_ASSERT(bit % (8 * eb) == 0);
      const uint64_t slot = bit / (8 * eb);
      RC_ASSERT(slot < n);
      RC_ASSERT(!hit[slot]);
      hit[slot] = true;
    }
  }
}

Case draw_deconv() {
  const DType t = draw_precision();
  const int64_t sx = *rc::gen::inRange<int64_t>(1, 5), sy = *rc::gen::inRange<int64_t>(1, 5);
  Shape s = {*rc::gen::inRange<int64_t>(1, 40), *rc::gen::inRange<int64_t>(1, 140), *rc::gen::inRange<int64_t>(1, 3 * sy + 1),
             *rc::gen::inRange<int64_t>(1, 3 * sx + 1)};
  auto layout = make_layout("nvdla.weight.deconv", {{"stride_x", std::to_string(sx)}, {"stride_y", std::to_string(sy)}});
  RC_ASSERT(layout.ok());
  return Case{*layout, t, s};
}

// Tap (h, w) lies in set (h mod sy, w mod sx), 256-byte aligned sets apart, at
// the place weight for DC gives tap (h / sy, w / sx) of the set's kernel.
RC_GTEST_PROP(NvdlaProperty, deconv_sets_are_dc_weights_of_the_subsampled_kernel, ()) {
  const Case c = draw_deconv();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
  const int64_t sx = c.layout.get_int("stride_x"), sy = c.layout.get_int("stride_y");
  const Case set = Case{*make_layout("nvdla.weight.dc"), c.dtype,
                        {c.shape[0], c.shape[1], (c.shape[2] + sy - 1) / sy, (c.shape[3] + sx - 1) / sx}};
  const uint64_t set_size = *reference_impl().size_bytes(set), set_stride = (set_size + 255) / 256 * 256;
  RC_ASSERT(*reference_impl().size_bytes(c) == (sx * sy - 1) * set_stride + set_size);
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < *element_count(c.shape); ++i) {
    const Coord at = coord_of_index(c.shape, i);
    const uint64_t in_set = *optimized_impl().offset_bits(set, {at[0], at[1], at[2] / sy, at[3] / sx});
    RC_ASSERT(*reference_impl().offset_bits(c, at) == ((at[2] % sy) * sx + at[3] % sx) * set_stride * 8 + in_set);
    RC_ASSERT(seen.insert(in_set + ((at[2] % sy) * sx + at[3] % sx) * set_stride * 8).second);
  }
  testing::assert_unpack_inverts_pack(c);
}

// Batch n's cube is the feature data of its C,H,W at n * batch stride.
RC_GTEST_PROP(NvdlaProperty, batches_are_feature_cubes_a_batch_stride_apart, ()) {
  const Case one = draw_feature();
  ParamMap p;
  for (const char* key : {"line_stride", "surface_stride"}) p[key] = one.layout.get(key);
  const uint64_t cube = *reference_impl().size_bytes(one);
  const uint64_t bs = *rc::gen::arbitrary<bool>() ? cube + 32 * *rc::gen::inRange<uint64_t>(0, 5) : 0;
  p["batch_stride"] = std::to_string(bs);
  const Case c{*make_layout("nvdla.feature.batch", p), one.dtype,
               {*rc::gen::inRange<int64_t>(1, 5), one.shape[0], one.shape[1], one.shape[2]}};
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
  const uint64_t stride = bs ? bs : cube;
  RC_ASSERT(*optimized_impl().size_bytes(c) == c.shape[0] * stride);
  for (uint64_t i = 0; i < *element_count(c.shape); i += 3) {
    const Coord at = coord_of_index(c.shape, i);
    RC_ASSERT(*reference_impl().offset_bits(c, at) ==
              at[0] * stride * 8 + *optimized_impl().offset_bits(one, {at[1], at[2], at[3]}));
  }
  testing::assert_unpack_inverts_pack(c);
}

RC_GTEST_PROP(NvdlaProperty, unpack_inverts_pack, ()) {
  const Case c = *rc::gen::arbitrary<bool>() ? draw_feature() : draw_weights();
  RC_PRE(reference_impl().supports(c).ok());
  testing::assert_unpack_inverts_pack(c);
}

// Random sparse weights: each element zero with a drawn probability.
std::vector<uint8_t> sparse_logical(const Case& c) {
  const uint64_t eb = dtype_bits(c.dtype) / 8, n = *element_count(c.shape);
  const int zero_percent = *rc::gen::inRange(0, 101);
  std::vector<uint8_t> logical(n * eb, 0);
  const auto values = *rc::gen::container<std::vector<uint16_t>>(n, rc::gen::arbitrary<uint16_t>());
  const auto dice = *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(0, 100));
  for (uint64_t i = 0; i < n; ++i) {
    if (dice[i] < zero_percent) continue;
    logical[i * eb] = static_cast<uint8_t>(values[i]);
    if (eb == 2) logical[i * eb + 1] = static_cast<uint8_t>(values[i] >> 8);
  }
  return logical;
}

RC_GTEST_PROP(NvdlaProperty, compressed_size_equals_the_formula, ()) {
  const Case c = draw_weights();
  const std::vector<uint8_t> logical = sparse_logical(c);
  std::vector<uint8_t> phys(*optimized_impl().size_bytes(c));
  RC_ASSERT(optimized_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  const uint64_t eb = dtype_bits(c.dtype) / 8, n = mapped_elements(c), logical_n = *element_count(c.shape);
  const uint64_t group = eb == 1 ? 32 : 16, groups = (c.shape[0] + group - 1) / group;
  uint64_t nonzero = 0;
  for (uint64_t i = 0; i < logical_n; ++i) nonzero += logical[i * eb] != 0 || (eb == 2 && logical[i * eb + 1] != 0);
  auto up128 = [](uint64_t v) { return (v + 127) / 128 * 128; };
  auto z = nvdla::compress(c, phys.data(), phys.size());
  auto zr = nvdla::compress_reference(c, phys.data(), phys.size());
  RC_ASSERT(z.ok());
  RC_ASSERT(zr.ok());
  RC_ASSERT(*z == *zr);
  RC_ASSERT(z->wmb.size() == up128((n + 7) / 8));
  RC_ASSERT(z->data.size() == up128(nonzero * eb));
  RC_ASSERT(z->wgs.size() == up128(4 * groups));
  uint64_t wgs_total = 0;
  for (uint64_t g = 0; g < groups; ++g) {
    wgs_total += z->wgs[4 * g] | z->wgs[4 * g + 1] << 8 | z->wgs[4 * g + 2] << 16 | uint64_t{z->wgs[4 * g + 3]} << 24;
  }
  RC_ASSERT(wgs_total == nonzero * eb);
}

RC_GTEST_PROP(NvdlaProperty, decompress_inverts_compress, ()) {
  const Case c = draw_weights();
  const std::vector<uint8_t> logical = sparse_logical(c);
  std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
  RC_ASSERT(reference_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  auto z = nvdla::compress(c, phys.data(), phys.size());
  RC_ASSERT(z.ok());
  for (auto decompress : {&nvdla::decompress, &nvdla::decompress_reference}) {
    std::vector<uint8_t> back(phys.size(), 0x5A);
    RC_ASSERT(decompress(c, *z, back.data(), back.size()).ok());
    RC_ASSERT(back == phys);
  }
}

// "Requirements of alignment", the WGS, WMB and weight rows: surfaces from a
// random compression, placed at random addresses, some sizes broken. The verdict
// is the table's, surface by surface (start address, then data size).
RC_GTEST_PROP(NvdlaProperty, surface_placement_follows_the_alignment_table, ()) {
  const Case c = draw_weights();
  const std::vector<uint8_t> logical = sparse_logical(c);
  std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
  RC_ASSERT(reference_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  auto z = nvdla::compress(c, phys.data(), phys.size());
  RC_ASSERT(z.ok());
  RC_ASSERT(nvdla::check_surfaces(*z, {0, uint64_t{1} << 40, uint64_t{1} << 41}).ok());
  nvdla::CompressedWeights placed = *z;
  std::vector<uint8_t>* surface[3] = {&placed.wgs, &placed.wmb, &placed.data};
  uint64_t addr[3];
  bool size_broken = false;
  for (int i = 0; i < 3; ++i) {
    addr[i] = (uint64_t{1} << (40 + i)) + 256 * *rc::gen::inRange<uint64_t>(0, 1u << 20);  // apart: no overlap
    if (*rc::gen::inRange(0, 4) == 0) addr[i] += *rc::gen::inRange<uint64_t>(1, 256);
    if (*rc::gen::inRange(0, 4) == 0) {
      surface[i]->resize(surface[i]->size() + *rc::gen::inRange<uint64_t>(1, 128), 0);
      size_broken = true;
    }
  }
  const char* start_rule[3] = {"nvdla.sparse/wgs-start-address-align-256", "nvdla.sparse/wmb-start-address-align-256",
                               "nvdla.weight/start-address-align-256"};
  const char* size_rule[3] = {"nvdla.sparse/wgs-size-align-128", "nvdla.sparse/wmb-size-align-128",
                              "nvdla.sparse/data-size-align-128"};
  std::string expected, expected_size;
  for (int i = 0; i < 3; ++i) {
    if (expected.empty() && addr[i] % 256 != 0) expected = start_rule[i];
    if (surface[i]->size() % 128 != 0) {
      if (expected.empty()) expected = size_rule[i];
      if (expected_size.empty()) expected_size = size_rule[i];
    }
  }
  const Status placement = nvdla::check_surfaces(placed, {addr[0], addr[1], addr[2]});
  RC_LOG() << placement.to_string();
  RC_ASSERT((placement.ok() ? std::string() : placement.rule()) == expected);
  RC_ASSERT(placement.ok() || placement.message().find("aligned to 256") != std::string::npos ||
            placement.message().find("multiple of 128") != std::string::npos);
  std::vector<uint8_t> back(phys.size());
  const Status ref = nvdla::decompress_reference(c, placed, back.data(), back.size());
  const Status opt = nvdla::decompress(c, placed, back.data(), back.size());
  RC_ASSERT(ref.ok() == !size_broken);
  RC_ASSERT(opt.ok() == !size_broken);
  if (size_broken) RC_ASSERT(ref.rule() == expected_size);
}

__extension__ typedef unsigned __int128 Wide;

uint64_t placement_number(uint64_t unit) {
  switch (*rc::gen::inRange(0, 6)) {
    case 0: return *rc::gen::element<uint64_t>(0, 1, 127, 128, 255, 256, 384, 512);
    case 1: return UINT64_MAX - *rc::gen::element<uint64_t>(0, 127, 255, 383, 511);
    case 2: return unit * *rc::gen::inRange<uint64_t>(0, 64);
    case 3: return unit * *rc::gen::inRange<uint64_t>(0, 64) + *rc::gen::inRange<uint64_t>(1, unit);
    default: return *rc::gen::arbitrary<uint64_t>();
  }
}

// Placements by addresses and sizes (oracles/ERRATA.md, NVDLA 26): every rule
// placement_breaks names, in its order, from 128-bit byte ranges.
RC_GTEST_PROP(NvdlaProperty, placement_rules_follow_the_byte_ranges_of_the_surfaces, ()) {
  uint64_t addr[3], size[3];
  for (int i = 0; i < 3; ++i) {
    addr[i] = placement_number(256);
    size[i] = placement_number(128);
  }
  const char* start_rule[3] = {"nvdla.sparse/wgs-start-address-align-256", "nvdla.sparse/wmb-start-address-align-256",
                               "nvdla.weight/start-address-align-256"};
  const char* size_rule[3] = {"nvdla.sparse/wgs-size-align-128", "nvdla.sparse/wmb-size-align-128",
                              "nvdla.sparse/data-size-align-128"};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) {
    if (addr[i] % 256) expected.push_back(start_rule[i]);
    if (size[i] % 128) expected.push_back(size_rule[i]);
    if (Wide{addr[i]} + size[i] > (Wide{1} << 64)) expected.push_back("nvdla.sparse/address-overflow");
  }
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      const Wide first_end = std::min(Wide{addr[a]} + size[a], Wide{addr[b]} + size[b]);
      if (size[a] && size[b] && std::max(addr[a], addr[b]) < first_end) expected.push_back("nvdla.sparse/surfaces-overlap");
    }
  }
  const nvdla::SurfacePlacement p{addr[0], size[0], addr[1], size[1], addr[2], size[2]};
  std::vector<std::string> got;
  for (const Status& s : nvdla::placement_breaks(p)) got.push_back(s.rule());
  RC_ASSERT(got == expected);
  const Status first = nvdla::check_placement(p);
  RC_ASSERT(first.ok() == expected.empty());
  if (!first.ok()) RC_ASSERT(first.rule() == expected.front());
}

// 10- and 12-bit components in 16-bit containers (oracles/ERRATA.md, NVDLA 25):
// each value sits in the low bits of its little-endian container, the bits
// above are 0, and a value wider than its field is rejected.
RC_GTEST_PROP(NvdlaProperty, ten_and_twelve_bit_components_are_lsb_justified_in_their_container, ()) {
  const std::string f = *rc::gen::element<std::string>("T_R10", "T_R12", "T_Y10___U10V10_N444", "T_Y10___V10U10_N444",
                                                       "T_Y12___U12V12_N444", "T_Y12___V12U12_N444");
  const uint32_t bits = f.find("12") != std::string::npos ? 12 : 10;
  const int64_t C = f.size() > 6 ? 3 : 1;
  auto layout = make_layout("nvdla.pixel", {{"format", f}, {"x_offset", std::to_string(*rc::gen::inRange(0, 16))}});
  RC_ASSERT(layout.ok());
  const Case c{*layout, *rc::gen::element(DType::kInt16, DType::kUInt16),
               {*rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 40), C}};
  const uint64_t n = *element_count(c.shape);
  std::vector<uint16_t> logical(n);
  for (uint16_t& v : logical) v = static_cast<uint16_t>(*rc::gen::inRange<uint32_t>(0, 1u << bits));
  const uint64_t size = *reference_impl().size_bytes(c);
  std::vector<uint8_t> ref(size), opt(size);
  RC_ASSERT(reference_impl().pack(c, logical.data(), n * 2, ref.data(), size).ok());
  RC_ASSERT(optimized_impl().pack(c, logical.data(), n * 2, opt.data(), size).ok());
  RC_ASSERT(ref == opt);
  for (uint64_t i = 0; i < n; ++i) {
    const Coord at = coord_of_index(c.shape, i);
    RC_ASSERT(value_bits(c, at) == bits);
    const uint64_t bit = *reference_impl().offset_bits(c, at);
    RC_ASSERT(*optimized_impl().offset_bits(c, at) == bit);
    RC_ASSERT(bit % 16 == 0);  // the value starts at bit 0 of its container
    const uint32_t container = ref[bit / 8] | uint32_t{ref[bit / 8 + 1]} << 8;
    RC_ASSERT((container & ((1u << bits) - 1)) == logical[i]);
    RC_ASSERT((container >> bits) == 0u);
  }
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint16_t> back(n, 0xDEAD);
    RC_ASSERT(impl->unpack(c, ref.data(), size, back.data(), n * 2).ok());
    RC_ASSERT(back == logical);
  }
  const uint64_t wide = *rc::gen::inRange<uint64_t>(0, n);
  logical[wide] = static_cast<uint16_t>(*rc::gen::inRange<uint32_t>(1u << bits, 1u << 16));
  RC_ASSERT(reference_impl().pack(c, logical.data(), n * 2, ref.data(), size).rule() == "nvdla.pixel/component-fits");
  RC_ASSERT(!optimized_impl().pack(c, logical.data(), n * 2, opt.data(), size).ok());
}

RC_GTEST_PROP(NvdlaProperty, winograd_extension_equals_the_reference_and_keeps_every_weight, ()) {
  const DType t = draw_precision();
  const int64_t stride = *rc::gen::inRange<int64_t>(1, 4);
  const Shape s = {*rc::gen::inRange<int64_t>(1, 3), *rc::gen::inRange<int64_t>(1, 5),
                   stride == 1 ? 3 : *rc::gen::inRange<int64_t>(1, 3 * stride + 1),
                   stride == 1 ? 3 : *rc::gen::inRange<int64_t>(1, 3 * stride + 1)};
  const uint64_t eb = dtype_bits(t) / 8, n = *element_count(s);
  std::vector<uint8_t> w(n * eb);
  for (uint64_t i = 0; i < n; ++i) w[i * eb] = static_cast<uint8_t>(i % 255 + 1);  // no zeros
  auto fast = nvdla::winograd_extend(t, s, stride, w.data(), w.size());
  auto exact = nvdla::winograd_extend_reference(t, s, stride, w.data(), w.size());
  RC_ASSERT(fast.ok());
  RC_ASSERT(exact.ok());
  RC_ASSERT(*fast == *exact);
  RC_ASSERT(fast->size() == static_cast<uint64_t>(s[0] * s[1] * stride * stride * 9) * eb);
  uint64_t kept = 0;
  for (uint64_t i = 0; i < fast->size(); i += eb) kept += (*fast)[i] != 0;
  RC_ASSERT(kept == n);  // every weight once, the rest padding
}

RC_GTEST_PROP(NvdlaProperty, winograd_transform_equals_the_exact_reference, ()) {
  const DType t = draw_precision();
  const Shape s = {*rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 6), 3, 3};
  const uint64_t eb = dtype_bits(t) / 8, n = static_cast<uint64_t>(s[0] * s[1] * 9);
  std::vector<uint8_t> w(n * eb);
  const auto values = *rc::gen::container<std::vector<uint16_t>>(n, rc::gen::arbitrary<uint16_t>());
  for (uint64_t i = 0; i < n; ++i) {
    w[i * eb] = static_cast<uint8_t>(values[i]);
    if (eb == 2) w[i * eb + 1] = static_cast<uint8_t>(values[i] >> 8);
  }
  auto fast = nvdla::winograd_transform(t, s, w.data(), w.size());
  auto exact = nvdla::winograd_transform_reference(t, s, w.data(), w.size());
  RC_ASSERT(fast.ok());
  RC_ASSERT(exact.ok());
  RC_ASSERT(*fast == *exact);
}

}  // namespace
}  // namespace layoutcheck
