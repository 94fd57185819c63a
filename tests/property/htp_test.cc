#include <algorithm>
#include <numeric>

#include "core/htp_notation.h"
#include "support.h"  // gtest before rapidcheck/gtest.h

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

// A random notation: the chunk order a permutation of the dimensions, then up
// to four sized pairs (sizes 1..8, now and then 32).
HtpNotation draw_notation(int64_t max_rank = 4) {
  HtpNotation n;
  n.rank = *rc::gen::inRange<int64_t>(1, max_rank + 1);
  std::vector<int64_t> order(static_cast<size_t>(n.rank));
  std::iota(order.begin(), order.end(), 0);
  const auto keys = *rc::gen::container<std::vector<int>>(order.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(order.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  for (size_t i : idx) n.pairs.push_back({order[i], 0});
  const int sized = *rc::gen::inRange(0, 5);
  uint64_t volume = 1;
  for (int i = 0; i < sized; ++i) {
    const uint64_t size = *rc::gen::element<uint64_t>(1, 2, 3, 4, 5, 8, 32);
    if (volume * size > 1024) continue;
    volume *= size;
    n.pairs.push_back({*rc::gen::inRange<int64_t>(0, n.rank), size});
  }
  return n;
}

std::vector<int64_t> extents_of(const HtpNotation& n) {
  std::vector<int64_t> e(static_cast<size_t>(n.rank), 1);
  for (const auto& p : n.pairs) e[static_cast<size_t>(p.dim)] *= static_cast<int64_t>(std::max<uint64_t>(p.size, 1));
  return e;
}

// Each extent below, at or above its chunk extent, or a multiple of it.
Shape draw_shape(const std::vector<int64_t>& chunk) {
  Shape s;
  for (int64_t e : chunk) {
    const int cls = *rc::gen::inRange(0, 5);
    s.push_back(cls == 0 ? std::max<int64_t>(1, e - 1)
                : cls == 1 ? e
                : cls == 2 ? e + 1
                : cls == 3 ? 2 * e
                           : *rc::gen::inRange<int64_t>(1, 2 * e + 2));
  }
  // Keep the padded tensor small: shrink the largest extent.
  auto padded = [&] {
    uint64_t v = 1;
    for (size_t i = 0; i < s.size(); ++i) v *= static_cast<uint64_t>((s[i] + chunk[i] - 1) / chunk[i] * chunk[i]);
    return v;
  };
  while (padded() > (1u << 15)) {
    auto big = std::max_element(s.begin(), s.end());
    if (*big == 1) break;
    *big = *big / 2;
  }
  return s;
}

Layout chunked_layout(const HtpNotation& n, int pad = 0) {
  ParamMap p = {{"rank", std::to_string(n.rank)}, {"pairs", htp_pairs_param(n)}};
  if (pad != 0) p["pad"] = std::to_string(pad % 128);  // a value of every element type
  auto l = make_layout("htp.chunked", p);
  RC_ASSERT(l.ok());
  return *l;
}

DType draw_dtype() {
  return *rc::gen::element(DType::kUInt8, DType::kInt8, DType::kFp16, DType::kBf16, DType::kInt32, DType::kFp32);
}

Case draw_case() {
  const bool named = *rc::gen::arbitrary<bool>();
  if (named) {
    const std::string name = *rc::gen::element<std::string>("htp.nchw", "htp.nchw_prose", "htp.depth32", "htp.crouton", "htp.crouton4x1",
                                                            "htp.crouton2x2", "htp.crouton2", "htp.weights", "htp.channel_major_crouton",
                                                            "htp.spatial_xy_major", "htp.spatial_x_major");
    ParamMap p;
    if (name.rfind("htp.nchw", 0) != 0 && *rc::gen::arbitrary<bool>()) p["pad"] = std::to_string(*rc::gen::inRange(0, 128));
    Layout l = *make_layout(name, p);
    return Case{l, draw_dtype(), draw_shape(extents_of(*htp_notation_of(l)))};
  }
  HtpNotation n = draw_notation();
  return Case{chunked_layout(n, *rc::gen::inRange(0, 256)), draw_dtype(), draw_shape(extents_of(n))};
}

std::vector<uint64_t> offsets(const Impl& impl, const Case& c) {
  std::vector<uint64_t> out;
  const uint64_t n = *element_count(c.shape);
  for (uint64_t i = 0; i < n; ++i) {
    auto o = impl.offset_bits(c, coord_of_index(c.shape, i));
    RC_ASSERT(o.ok());
    out.push_back(*o / 8);
  }
  return out;
}

std::vector<uint8_t> packed(const Impl& impl, const Case& c, const std::vector<uint8_t>& logical) {
  std::vector<uint8_t> phys(*impl.size_bytes(c), 0xCC);
  RC_ASSERT(impl.pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  return phys;
}

RC_GTEST_PROP(HtpProperty, OptimizedEqualsReference, ()) {
  const Case c = draw_case();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_ASSERT(r.verdict == Verdict::kPass);
}

// Over the padded shape every coordinate is an element: offsets are a
// permutation of [0, padded elements).
RC_GTEST_PROP(HtpProperty, PaddedCoordinatesAreABijection, ()) {
  const HtpNotation n = draw_notation();
  const std::vector<int64_t> chunk = extents_of(n);
  Shape s = draw_shape(chunk);
  for (size_t i = 0; i < s.size(); ++i) s[i] = (s[i] + chunk[i] - 1) / chunk[i] * chunk[i];
  const Case c{chunked_layout(n), DType::kUInt8, s};
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint64_t> o = offsets(*impl, c);
    RC_ASSERT(*impl->size_bytes(c) == o.size());
    std::sort(o.begin(), o.end());
    for (size_t i = 0; i < o.size(); ++i) RC_ASSERT(o[i] == i);
  }
}

// On any shape offsets are distinct and inside the buffer.
RC_GTEST_PROP(HtpProperty, OffsetsAreInjective, ()) {
  const Case c = draw_case();
  std::vector<uint64_t> o = offsets(reference_impl(), c);
  const uint64_t size = *reference_impl().size_bytes(c);
  const uint64_t e = dtype_bits(c.dtype) / 8;
  std::sort(o.begin(), o.end());
  for (size_t i = 0; i < o.size(); ++i) {
    RC_ASSERT(o[i] % e == 0);
    RC_ASSERT(o[i] + e <= size);
    if (i > 0) RC_ASSERT(o[i] > o[i - 1]);
  }
}

RC_GTEST_PROP(HtpProperty, FlatEqualsItsChunkedSpelling, ()) {
  const int64_t rank = *rc::gen::inRange<int64_t>(1, 6);
  const Case flat{*parse_layout("FlatMemoryLayout<" + std::to_string(rank) + ">"), draw_dtype(),
                  draw_shape(std::vector<int64_t>(static_cast<size_t>(rank), 3))};
  Case chunked = flat;
  chunked.layout = chunked_layout(flat_htp_notation(rank));
  RC_ASSERT(to_string(flat.layout) != to_string(chunked.layout));
  std::vector<uint8_t> logical;
  fill_position_unique(flat, 7, &logical);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    RC_ASSERT(offsets(*impl, flat) == offsets(*impl, chunked));
    RC_ASSERT(packed(*impl, flat, logical) == packed(*impl, chunked, logical));
    RC_ASSERT(packed(*impl, flat, logical) == logical);  // row-major, no padding
  }
}

// With every chunk size 1 there is no padding and the layout is the flat
// layout of the dimensions taken in chunk order.
RC_GTEST_PROP(HtpProperty, SizeOneChunksArePermutedFlat, ()) {
  HtpNotation n = draw_notation();
  n.pairs.resize(static_cast<size_t>(n.rank));
  const int extra = *rc::gen::inRange(0, 4);
  for (int i = 0; i < extra; ++i) n.pairs.push_back({*rc::gen::inRange<int64_t>(0, n.rank), 1});
  const Case c{chunked_layout(n), DType::kUInt8, draw_shape(std::vector<int64_t>(static_cast<size_t>(n.rank), 3))};
  Shape permuted;
  for (size_t k = 0; k < static_cast<size_t>(n.rank); ++k) permuted.push_back(c.shape[static_cast<size_t>(n.pairs[k].dim)]);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    RC_ASSERT(*impl->size_bytes(c) == *element_count(c.shape));
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      Coord at = coord_of_index(c.shape, i), p;
      for (size_t k = 0; k < static_cast<size_t>(n.rank); ++k) p.push_back(at[static_cast<size_t>(n.pairs[k].dim)]);
      RC_ASSERT(*impl->offset_bits(c, at) == index_of_coord(permuted, p) * 8);
    }
  }
}

// A pad value of the element type and its bytes, little-endian: integers in
// range (two's complement), decimals with their known encodings.
struct PadDraw {
  std::string text;
  std::vector<uint8_t> bytes;
};

PadDraw draw_pad_value(DType t) {
  const DTypeInfo& info = dtype_info(t);
  const size_t n = info.bits / 8;
  PadDraw d;
  if (info.kind != DTypeKind::kFloat) {
    const int64_t lo = info.kind == DTypeKind::kSignedInt ? -(int64_t{1} << (info.bits - 1)) : 0;
    const int64_t hi = info.kind == DTypeKind::kSignedInt ? (int64_t{1} << (info.bits - 1)) - 1
                                                          : static_cast<int64_t>((uint64_t{1} << info.bits) - 1);
    const int64_t v = *rc::gen::oneOf(rc::gen::just(lo), rc::gen::just(hi), rc::gen::inRange<int64_t>(lo, hi));
    d.text = std::to_string(v);
    for (size_t b = 0; b < n; ++b) d.bytes.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b)));
    return d;
  }
  struct Known { const char* text; uint32_t fp16, bf16, fp32; };
  static const Known kKnown[] = {
      {"31.0", 0x4FC0, 0x41F8, 0x41F80000}, {"31", 0x4FC0, 0x41F8, 0x41F80000}, {"-0.0", 0x8000, 0x8000, 0x80000000},
      {"0.1", 0x2E66, 0x3DCD, 0x3DCCCCCD},  {"inf", 0x7C00, 0x7F80, 0x7F800000}, {"-3.25", 0xC280, 0xC050, 0xC0500000},
      {"65504", 0x7BFF, 0x4780, 0x477FE000}, {"1e-7", 0x0002, 0x33D7, 0x33D6BF95}, {"2049", 0x6800, 0x4500, 0x45001000},
      {"0", 0, 0, 0}};
  const Known k = *rc::gen::elementOf(std::vector<Known>(std::begin(kKnown), std::end(kKnown)));
  const uint32_t bits = t == DType::kFp16 ? k.fp16 : t == DType::kBf16 ? k.bf16 : k.fp32;
  d.text = k.text;
  for (size_t b = 0; b < n; ++b) d.bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
  return d;
}

// Every element no coordinate owns holds the pad value, in the element type;
// every element's bytes are its own.
RC_GTEST_PROP(HtpProperty, PaddingElementsHoldThePadValue, ()) {
  const HtpNotation n = draw_notation();
  const DType t = draw_dtype();
  const PadDraw pad = draw_pad_value(t);
  ParamMap p = {{"rank", std::to_string(n.rank)}, {"pairs", htp_pairs_param(n)}, {"pad", pad.text}};
  const Case c{*make_layout("htp.chunked", p), t, draw_shape(extents_of(n))};
  std::vector<uint8_t> logical;
  fill_position_unique(c, 3, &logical);
  const uint64_t e = dtype_bits(c.dtype) / 8;
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys = packed(*impl, c, logical);
    std::vector<bool> owned(phys.size(), false);
    const std::vector<uint64_t> o = offsets(*impl, c);
    for (size_t i = 0; i < o.size(); ++i) {
      for (uint64_t b = 0; b < e; ++b) {
        owned[o[i] + b] = true;
        RC_ASSERT(phys[o[i] + b] == logical[i * e + b]);
      }
    }
    for (size_t b = 0; b < phys.size(); ++b) {
      if (!owned[b]) RC_ASSERT(phys[b] == pad.bytes[b % e]);
    }
  }
}

// A scale/offset tensor pads with its quantized 0, the offset, unless told otherwise.
RC_GTEST_PROP(HtpProperty, ScaleOffsetPadsWithTheQuantizedZero, ()) {
  const HtpNotation n = draw_notation();
  const DType t = *rc::gen::element(DType::kUInt8, DType::kInt8, DType::kInt16, DType::kUInt16, DType::kInt32);
  const PadDraw zero = draw_pad_value(t);  // an integer of the type: the offset
  ParamMap p = {{"rank", std::to_string(n.rank)}, {"pairs", htp_pairs_param(n)}, {"interface", "scale_offset"},
                {"offset", zero.text}};
  const Case c{*make_layout("htp.chunked", p), t, draw_shape(extents_of(n))};
  RC_ASSERT(c.layout.get("pad") == zero.text);
  auto element = htp_pad_element(c.layout, t);
  RC_ASSERT(element.ok());
  RC_ASSERT(*element == zero.bytes);
  std::vector<uint8_t> logical;
  fill_position_unique(c, 9, &logical);
  const uint64_t e = dtype_bits(t) / 8;
  const std::vector<uint8_t> a = packed(reference_impl(), c, logical), b = packed(optimized_impl(), c, logical);
  RC_ASSERT(a == b);
  std::vector<bool> owned(a.size(), false);
  for (uint64_t o : offsets(reference_impl(), c)) {
    for (uint64_t k = 0; k < e; ++k) owned[o + k] = true;
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (!owned[k]) RC_ASSERT(a[k] == zero.bytes[k % e]);
  }
}

// A named layout equals its notation spelled out.
RC_GTEST_PROP(HtpProperty, NamedEqualsItsNotation, ()) {
  const std::string name = *rc::gen::element<std::string>("htp.nchw", "htp.nchw_prose", "htp.depth32", "htp.crouton", "htp.crouton4x1",
                                                          "htp.crouton2x2", "htp.crouton2", "htp.weights", "htp.channel_major_crouton",
                                                            "htp.spatial_xy_major", "htp.spatial_x_major");
  const Layout named = *make_layout(name);
  const HtpNotation n = *htp_notation_of(named);
  const Case a{named, DType::kFp16, draw_shape(extents_of(n))};
  Case b = a;
  b.layout = *parse_layout(htp_notation_text(n));
  RC_ASSERT(b.layout.name == "htp.chunked");
  RC_ASSERT(offsets(reference_impl(), a) == offsets(reference_impl(), b));
}

RC_GTEST_PROP(HtpProperty, NotationTextRoundTrips, ()) {
  const HtpNotation n = draw_notation(8);
  const Layout l = chunked_layout(n, *rc::gen::inRange(0, 256));
  const std::string text = to_string(l);
  RC_ASSERT(text.rfind("ChunkedMemoryLayout<", 0) == 0);
  auto again = parse_layout(text);
  RC_ASSERT(again.ok());
  RC_ASSERT(*again == l);
  RC_ASSERT(to_string(*again) == text);
  auto parsed = parse_htp_notation(text);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(*parsed == n);
}

// A chunk table moves whole chunks: chunk k of the consecutive layout, byte for
// byte, lands at its own start, and every element with it.
RC_GTEST_PROP(HtpProperty, ChunkTableMovesWholeChunks, ()) {
  const HtpNotation n = draw_notation();
  const int pad = *rc::gen::inRange(0, 256);
  const Case consecutive{chunked_layout(n, pad), draw_dtype(), draw_shape(extents_of(n))};
  const uint64_t e = dtype_bits(consecutive.dtype) / 8;
  uint64_t chunk_bytes = e, chunks = 1;
  const std::vector<int64_t> ext = extents_of(n);
  for (size_t d = 0; d < ext.size(); ++d) {
    chunk_bytes *= static_cast<uint64_t>(ext[d]);
    chunks *= static_cast<uint64_t>((consecutive.shape[d] + ext[d] - 1) / ext[d]);
  }
  RC_PRE(chunks <= 64);
  std::vector<uint64_t> start(chunks);
  ParamMap p = consecutive.layout.params;
  if (*rc::gen::arbitrary<bool>()) {
    const uint64_t stride = chunk_bytes + e * *rc::gen::inRange<uint64_t>(0, 9);
    p["chunk_stride"] = std::to_string(stride);
    for (uint64_t k = 0; k < chunks; ++k) start[k] = k * stride;
  } else {
    const auto keys = *rc::gen::container<std::vector<int>>(chunks, rc::gen::arbitrary<int>());
    std::vector<uint64_t> slot(chunks);
    std::iota(slot.begin(), slot.end(), 0);
    std::stable_sort(slot.begin(), slot.end(), [&](uint64_t a, uint64_t b) { return keys[a] < keys[b]; });
    const uint64_t pitch = chunk_bytes + e * *rc::gen::inRange<uint64_t>(0, 5);
    std::string table;
    for (uint64_t k = 0; k < chunks; ++k) {
      start[k] = e + slot[k] * pitch;
      table += (k ? " " : "") + std::to_string(start[k]);
    }
    p["bases"] = table;
  }
  Case placed = consecutive;
  placed.layout = *make_layout("htp.chunk_table", p);
  std::vector<uint8_t> logical;
  fill_position_unique(consecutive, 5, &logical);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    RC_ASSERT(impl->supports(placed).ok());
    const std::vector<uint64_t> a = offsets(*impl, consecutive), b = offsets(*impl, placed);
    for (size_t i = 0; i < a.size(); ++i) RC_ASSERT(b[i] == start[a[i] / chunk_bytes] + a[i] % chunk_bytes);
    const std::vector<uint8_t> flat = packed(*impl, consecutive, logical), moved = packed(*impl, placed, logical);
    for (uint64_t k = 0; k < chunks; ++k) {
      RC_ASSERT(std::equal(flat.begin() + static_cast<std::ptrdiff_t>(k * chunk_bytes),
                           flat.begin() + static_cast<std::ptrdiff_t>((k + 1) * chunk_bytes),
                           moved.begin() + static_cast<std::ptrdiff_t>(start[k])));
    }
  }
  RC_ASSERT(check(placed, reference_impl(), optimized_impl()).verdict == Verdict::kPass);
}

}  // namespace
}  // namespace layoutcheck
