#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "support.h"  // gtest before rapidcheck/gtest.h
#include "property/round_trip.h"

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "layoutcheck/int_tuple.h"
#include "optimized/tla_layout.h"
#include "reference/tla.h"

namespace layoutcheck {
namespace {

// A case from the layout's own generator, seeded by RapidCheck.
Case draw(const std::string& name) {
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  return find_spec(name)->random_case(rng, *rc::gen::inRange(0, 3));
}

Case draw_any() {
  return draw(*rc::gen::element<std::string>("tla.layout", "tla.tile", "tla.rowmajor", "tla.colmajor", "tla.zN",
                                             "tla.nZ", "tla.zZ", "tla.nN"));
}

TlaLayoutText notation_of(const Case& c) {
  return *parse_tla_layout(c.layout.get("shape") + ":" + c.layout.get("stride"));
}

RC_GTEST_PROP(TlaProperty, optimized_equals_reference, ()) {
  const Case c = draw_any();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict != Verdict::kFail);
  RC_ASSERT(r.verdict != Verdict::kDeclined);
}

// Every leaf coordinate of the nested index, odometer style (first leaf
// fastest): the offset is the sum of leaf coordinate * leaf stride, and the
// integer coordinate of the mode is the colexicographic rank. Any number of
// top-level modes; an integer shape is one mode.
RC_GTEST_PROP(TlaProperty, crd2offset_is_the_nested_index, ()) {
  const Case c = draw("tla.layout");
  RC_PRE(reference_impl().supports(c).ok());
  const TlaLayoutText l = notation_of(c);
  const size_t modes = l.shape.is_integer() ? 1 : l.shape.rank();
  RC_ASSERT(c.shape.size() == modes);
  std::vector<std::vector<uint64_t>> mode_offsets(modes);
  for (size_t m = 0; m < modes; ++m) {
    const IntTuple& shape = l.shape.is_integer() ? l.shape : l.shape.items()[m];
    const IntTuple& stride = l.stride.is_integer() ? l.stride : l.stride.items()[m];
    const std::vector<int64_t> extent = shape.leaves(), step = stride.leaves();
    std::vector<int64_t> digit(extent.size(), 0);
    while (true) {
      int64_t off = 0;
      for (size_t i = 0; i < digit.size(); ++i) off += digit[i] * step[i];
      mode_offsets[m].push_back(static_cast<uint64_t>(off));
      size_t i = 0;
      while (i < digit.size() && ++digit[i] == extent[i]) digit[i++] = 0;
      if (i == digit.size()) break;
    }
  }
  Coord at;
  std::vector<IntTuple> parts;
  uint64_t want = 0;
  int64_t linear = 0, below = 1;
  for (size_t m = 0; m < modes; ++m) {
    at.push_back(*rc::gen::inRange<int64_t>(0, c.shape[m]));
    parts.push_back(IntTuple(at.back()));
    want += mode_offsets[m][static_cast<size_t>(at.back())];
    linear += at.back() * below;
    below *= c.shape[m];
  }
  const IntTuple coord = l.shape.is_integer() ? parts[0] : IntTuple(parts);
  RC_ASSERT(*tla_ref::crd2offset(coord, l.shape, l.stride) == want);
  const uint64_t elem = dtype_bits(c.dtype);
  RC_ASSERT(*reference_impl().offset_bits(c, at) == want * elem);
  RC_ASSERT(*optimized_impl().offset_bits(c, at) == want * elem);
  // The linear index over the whole layout splits the same way: first mode first.
  RC_ASSERT(*tla_ref::crd2offset(IntTuple(linear), l.shape, l.stride) == want);
}

// An index of a mode written as a coordinate of the mode's nesting: an
// integer, or (at random, level by level) a tuple of its parts, first fastest.
IntTuple nested_coord(int64_t index, const IntTuple& shape) {
  if (shape.is_integer() || *rc::gen::inRange(0, 3) == 0) return IntTuple(index);
  std::vector<IntTuple> parts;
  for (const IntTuple& sub : shape.items()) {
    const int64_t n = static_cast<int64_t>(*sub.product());
    parts.push_back(nested_coord(index % n, sub));
    index /= n;
  }
  return IntTuple(std::move(parts));
}

RC_GTEST_PROP(TlaProperty, nested_coordinates_are_their_flat_ones, ()) {
  const Case c = draw("tla.layout");
  RC_PRE(reference_impl().supports(c).ok());
  const TlaLayoutText l = notation_of(c);
  Coord at;
  std::vector<IntTuple> parts;
  for (size_t m = 0; m < c.shape.size(); ++m) {
    at.push_back(*rc::gen::inRange<int64_t>(0, c.shape[m]));
    parts.push_back(nested_coord(at.back(), l.shape.is_integer() ? l.shape : l.shape.items()[m]));
  }
  const IntTuple coord = l.shape.is_integer() ? parts[0] : IntTuple(parts);
  RC_LOG() << to_string(coord) << " of " << to_string(l);
  const uint64_t want = *reference_impl().offset_bits(c, at);
  RC_ASSERT(*reference_impl().offset_bits_nested(c, coord) == want);
  RC_ASSERT(*optimized_impl().offset_bits_nested(c, coord) == want);
}

// A tile by its origin shape is the tiled layout with the elements outside the
// tile turned into padding: the same size, the same offsets inside, and a
// check against the reference passes on both implementations.
RC_GTEST_PROP(TlaProperty, tile_origin_shape_pads_the_tiled_layout, ()) {
  Case c = draw("tla.tile");
  const auto tile = parse_int_tuple(c.layout.get("tile"));
  RC_PRE(tile.ok() && tile->is_tuple() && tile->rank() == 2);
  Case origin = c;
  origin.shape = {tile->items()[0].value(), tile->items()[1].value()};
  RC_PRE(reference_impl().supports(origin).ok());
  const auto facts = reference_impl().describe(origin);
  RC_ASSERT(facts.ok());
  const std::map<std::string, std::string> f(facts->begin(), facts->end());
  const TlaLayoutText tiled = *parse_tla_layout(f.at("tla"));
  Case whole = origin;
  whole.shape = {static_cast<int64_t>(*tiled.shape.items()[0].product()),
                 static_cast<int64_t>(*tiled.shape.items()[1].product())};
  RC_ASSERT(reference_impl().supports(whole).ok());
  RC_ASSERT(*reference_impl().size_bytes(origin) == *reference_impl().size_bytes(whole));
  RC_ASSERT(*optimized_impl().size_bytes(origin) == *reference_impl().size_bytes(whole));
  const Coord at = {*rc::gen::inRange<int64_t>(0, origin.shape[0]), *rc::gen::inRange<int64_t>(0, origin.shape[1])};
  RC_ASSERT(*reference_impl().offset_bits(origin, at) == *reference_impl().offset_bits(whole, at));
  RC_ASSERT(*optimized_impl().offset_bits(origin, at) == *reference_impl().offset_bits(whole, at));
  RC_ASSERT((f.count("padded_shape") != 0) == (origin.shape != whole.shape));
  CheckReport r = check(origin, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
}

RC_GTEST_PROP(TlaProperty, aligned_fractals_are_bijections, ()) {
  const std::string name = *rc::gen::element<std::string>("tla.zN", "tla.nZ", "tla.zZ", "tla.nN");
  const DType t = *rc::gen::element(DType::kInt8, DType::kFp16, DType::kBf16, DType::kFp32, DType::kInt32);
  const int64_t c0 = 256 / dtype_bits(t);
  const bool z_inside = name[4] == 'z';
  const int64_t fh = z_inside ? 16 : c0, fw = z_inside ? c0 : 16;
  const Shape shape = {fh * *rc::gen::inRange<int64_t>(1, 4), fw * *rc::gen::inRange<int64_t>(1, 4)};
  const Case c{*make_layout(name), t, shape};
  const uint64_t n = static_cast<uint64_t>(shape[0] * shape[1]), bits = dtype_bits(t);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    RC_ASSERT(*impl->size_bytes(c) * 8 == n * bits);
    std::vector<bool> hit(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t e = *impl->offset_bits(c, coord_of_index(shape, i)) / bits;
      RC_ASSERT(e < n);
      RC_ASSERT(!hit[e]);
      hit[e] = true;
    }
  }
}

RC_GTEST_PROP(TlaProperty, tile_keeps_the_parent_strides, ()) {
  const Case c = draw("tla.tile");
  RC_PRE(reference_impl().supports(c).ok());
  const TlaLayoutText parent = notation_of(c);
  const IntTuple tile = *parse_int_tuple(c.layout.get("tile"));
  const TlaLayoutText t = *tla_ref::make_layout_tile(parent, tile);
  RC_ASSERT(t.stride == parent.stride);
  RC_ASSERT(check_congruent(t.shape, parent.shape).ok());
  for (size_t m = 0; m < 2; ++m) {
    const uint64_t size = *t.shape.items()[m].product();
    RC_ASSERT(size >= static_cast<uint64_t>(tile.items()[m].value()));
    const std::vector<int64_t> a = t.shape.items()[m].leaves(), b = parent.shape.items()[m].leaves();
    RC_ASSERT(std::equal(a.begin(), a.end() - 1, b.begin()));  // only the outermost extent changes
  }
  const auto ref_facts = reference_impl().describe(c), opt_facts = optimized_impl().describe(c);
  RC_ASSERT(ref_facts.ok());
  RC_ASSERT(opt_facts.ok());
  const std::map<std::string, std::string> ref(ref_facts->begin(), ref_facts->end()),
      opt(opt_facts->begin(), opt_facts->end());
  RC_ASSERT(ref.at("tla_stride") == to_string(parent.stride));
  RC_ASSERT(opt.at("tla_stride") == to_string(parent.stride));
  RC_ASSERT(ref.at("tla_shape") == opt.at("tla_shape"));
}

// The compile-time zN/nZ of fp16 and a mixed nested layout, against the
// runtime reference, for dynamic outer extents and random coordinates.
RC_GTEST_PROP(TlaProperty, static_and_dynamic_forms_agree, ()) {
  using namespace tla_opt;
  const int64_t R = *rc::gen::inRange<int64_t>(1, 6), C = *rc::gen::inRange<int64_t>(1, 6);
  const auto zn = make_layout(make_shape(make_shape(_16{}, R), make_shape(_16{}, C)),
                              make_stride(make_stride(_16{}, Int<256>{}), make_stride(_1{}, 256 * R)));
  const auto nz = make_layout(make_shape(make_shape(_16{}, R), make_shape(_16{}, C)),
                              make_stride(make_stride(_1{}, 256 * C), make_stride(_16{}, Int<256>{})));
  const auto mixed = make_layout(make_shape(make_shape(_2{}, make_shape(R, _3{})), C),
                                 make_stride(make_stride(_1{}, make_stride(_2{}, 2 * R)), 6 * R));
  const int64_t r = *rc::gen::inRange<int64_t>(0, 16 * R), k = *rc::gen::inRange<int64_t>(0, 16 * C);
  IntTuple coord(std::vector<IntTuple>{IntTuple(r), IntTuple(k)});
  auto agree = [&](const auto& layout, const std::string& named) {
    const TlaLayoutText rt = *parse_tla_layout(to_string(layout));
    RC_ASSERT(static_cast<uint64_t>(crd2offset(make_coord(r, k), layout)) ==
              *tla_ref::crd2offset(coord, rt.shape, rt.stride));
    RC_ASSERT(static_cast<uint64_t>(cosize(layout)) == *tla_ref::cosize(rt));
    RC_ASSERT(static_cast<uint64_t>(size(layout)) == *tla_ref::size(rt));
    RC_ASSERT(depth(layout.shape()) == rt.shape.depth());
    if (!named.empty()) {
      // The registered format describes the same layout, static marks included.
      const Case c{*make_layout(named), DType::kFp16, {16 * R, 16 * C}};
      const auto facts = optimized_impl().describe(c);
      RC_ASSERT(facts.ok());
      const std::map<std::string, std::string> f(facts->begin(), facts->end());
      RC_ASSERT(f.at("tla") == to_string(layout));
    }
  };
  agree(zn, "tla.zN");
  agree(nz, "tla.nZ");
  const int64_t mr = *rc::gen::inRange<int64_t>(0, 6 * R), mk = *rc::gen::inRange<int64_t>(0, C);
  const TlaLayoutText mt = *parse_tla_layout(to_string(mixed));
  IntTuple mcoord(std::vector<IntTuple>{IntTuple(mr), IntTuple(mk)});
  RC_ASSERT(static_cast<uint64_t>(crd2offset(make_coord(mr, mk), mixed)) ==
            *tla_ref::crd2offset(mcoord, mt.shape, mt.stride));
  RC_ASSERT(static_cast<uint64_t>(cosize(mixed)) == *tla_ref::cosize(mt));
}

RC_GTEST_PROP(TlaProperty, notation_round_trips, ()) {
  const Case c = draw(*rc::gen::element<std::string>("tla.layout", "tla.tile"));
  const std::string text = to_string(c.layout);
  auto parsed = parse_layout(text);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(*parsed == c.layout);
  RC_ASSERT(to_string(*parsed) == text);
  // Spaces around the parts do not change the layout.
  std::string spaced;
  for (char ch : text) spaced += ch == ',' ? std::string(", ") : std::string(1, ch);
  auto again = parse_layout(spaced);
  RC_ASSERT(again.ok());
  RC_ASSERT(to_string(*again) == text);
}

RC_GTEST_PROP(TlaProperty, unpack_inverts_pack, ()) {
  const Case c = draw_any();
  RC_PRE(reference_impl().supports(c).ok());
  testing::assert_unpack_inverts_pack(c);
}

}  // namespace
}  // namespace layoutcheck
