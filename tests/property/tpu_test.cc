#include <map>
#include <set>

#include "support.h"  // gtest before rapidcheck/gtest.h
#include "property/round_trip.h"

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

struct Drawn {
  Case c;
  int64_t npus, lmem, addr, eu;
};

// A local TPU tensor of the given layout ("aligned", "compact", "strided"),
// mostly valid: small geometry, aligned address, a dtype its mode allows.
Drawn draw_local(const std::string& kind) {
  Drawn d;
  d.npus = *rc::gen::inRange<int64_t>(1, 9);
  d.lmem = *rc::gen::element<int64_t>(1024, 2048, 4096, 4224);
  d.eu = *rc::gen::element<int64_t>(128, 64);
  const std::string mode = *rc::gen::element<std::string>("1n", "1n", "4n", "2n", "2ic");
  DType t = mode == "4n"   ? *rc::gen::element(DType::kInt8, DType::kUInt8)
            : mode == "2n" ? *rc::gen::element(DType::kInt16, DType::kUInt16)
            : mode == "2ic" ? DType::kFp32
                            : *rc::gen::element(DType::kInt8, DType::kUInt16, DType::kFp16, DType::kBf16,
                                                DType::kInt32, DType::kFp32);
  const int64_t lanes = mode == "4n" ? 4 : mode == "1n" ? 1 : 2;
  const int64_t word = dtype_bits(t) / 8 * lanes;
  const int64_t align = kind == "aligned" ? 128 : kind == "compact" ? 4 : word;
  const int64_t npu = *rc::gen::inRange<int64_t>(0, d.npus);
  d.addr = npu * d.lmem + *rc::gen::inRange<int64_t>(0, 4) * align;
  if (d.addr % align != 0) d.addr -= d.addr % align;
  Shape shape = {*rc::gen::inRange<int64_t>(1, 7), *rc::gen::inRange<int64_t>(1, 2 * d.npus + 3),
                 *rc::gen::inRange<int64_t>(1, 5), *rc::gen::inRange<int64_t>(1, 9)};
  ParamMap p = {{"npus", std::to_string(d.npus)}, {"lmem", std::to_string(d.lmem)},
                {"eu", std::to_string(d.eu)},     {"addr", std::to_string(d.addr)},
                {"mode", mode}};
  if (kind == "strided") {
    const int64_t q = d.addr / d.lmem;
    const int64_t slots = (q + shape[1] + d.npus - 1) / d.npus;
    const int64_t w = *rc::gen::inRange<int64_t>(1, 3);
    const int64_t h = w * shape[3] + *rc::gen::inRange<int64_t>(0, 3);
    const int64_t c = h * shape[2] + *rc::gen::inRange<int64_t>(0, 3);
    const int64_t n = c * slots + *rc::gen::inRange<int64_t>(0, 3);
    p["n"] = std::to_string(n), p["c"] = std::to_string(c), p["h"] = std::to_string(h), p["w"] = std::to_string(w);
  }
  auto layout = make_layout("tpu." + kind, p);
  RC_ASSERT(layout.ok());
  d.c = Case{*layout, t, shape};
  return d;
}

Case draw_any() {
  const std::string kind = *rc::gen::element<std::string>("aligned", "compact", "strided", "matrix", "continuous");
  if (kind == "continuous") {
    return Case{*make_layout("tpu.continuous"), *rc::gen::element(DType::kInt8, DType::kFp16, DType::kFp32),
                {*rc::gen::inRange<int64_t>(1, 5), *rc::gen::inRange<int64_t>(1, 9), *rc::gen::inRange<int64_t>(1, 5),
                 *rc::gen::inRange<int64_t>(1, 9)}};
  }
  if (kind == "matrix") {
    const int64_t cols = *rc::gen::inRange<int64_t>(1, 80);
    ParamMap p = {{"npus", std::to_string(*rc::gen::inRange<int64_t>(1, 9))}, {"lmem", "4096"},
                  {"w", std::to_string(*rc::gen::inRange<int64_t>(1, cols + 1))}};
    return Case{*make_layout("tpu.matrix", p), *rc::gen::element(DType::kInt8, DType::kFp16, DType::kFp32),
                {*rc::gen::inRange<int64_t>(1, 5), cols}};
  }
  return draw_local(kind).c;
}

std::vector<uint64_t> all_offsets(const Impl& impl, const Case& c) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < *element_count(c.shape); ++i) out.push_back(*impl.offset_bits(c, coord_of_index(c.shape, i)));
  return out;
}

RC_GTEST_PROP(TpuProperty, optimized_equals_reference, ()) {
  const Case c = draw_any();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict != Verdict::kFail);
  RC_ASSERT(r.verdict != Verdict::kDeclined);
}

RC_GTEST_PROP(TpuProperty, offsets_are_injective_and_inside_the_buffer, ()) {
  const Case c = draw_any();
  RC_PRE(reference_impl().supports(c).ok());
  const uint64_t size_bits = *reference_impl().size_bytes(c) * 8, elem_bits = dtype_bits(c.dtype);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::set<uint64_t> seen;
    for (uint64_t bit : all_offsets(*impl, c)) {
      RC_ASSERT(bit % elem_bits == 0);
      RC_ASSERT(bit + elem_bits <= size_bits);
      RC_ASSERT(seen.insert(bit / elem_bits).second);
    }
  }
}

RC_GTEST_PROP(TpuProperty, unpack_inverts_pack, ()) {
  const Case c = draw_any();
  RC_PRE(reference_impl().supports(c).ok());
  testing::assert_unpack_inverts_pack(c);
}

RC_GTEST_PROP(TpuProperty, bytes_of_no_element_are_zero, ()) {
  const Case c = draw_any();
  RC_PRE(reference_impl().supports(c).ok());
  const uint64_t bytes = dtype_bits(c.dtype) / 8;
  std::vector<uint8_t> logical(*logical_bytes(c), 0xFF);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(*impl->size_bytes(c), 0x77);
    RC_ASSERT(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    std::vector<bool> owned(phys.size(), false);
    for (uint64_t bit : all_offsets(reference_impl(), c)) {
      for (uint64_t b = 0; b < bytes; ++b) owned[bit / 8 + b] = true;
    }
    for (size_t i = 0; i < phys.size(); ++i) RC_ASSERT(phys[i] == (owned[i] ? 0xFF : 0x00));
  }
}

std::map<std::string, std::string> facts(const Case& c) {
  auto f = reference_impl().describe(c);
  std::map<std::string, std::string> out;
  if (f.ok()) out.insert(f->begin(), f->end());
  return out;
}

RC_GTEST_PROP(TpuProperty, channels_per_npu_is_the_brute_force_count, ()) {
  const Drawn d = draw_local(*rc::gen::element<std::string>("aligned", "compact"));
  RC_PRE(reference_impl().supports(d.c).ok());
  // Deal the channels out one NPU after another from the start NPU; count block rows.
  int64_t npu = (d.addr / d.lmem), rows = 1;
  for (int64_t ch = 1; ch < d.c.shape[1]; ++ch) {
    if (++npu == d.npus) npu = 0, ++rows;
  }
  RC_ASSERT(facts(d.c).at("channels_per_npu") == std::to_string(rows));
}

RC_GTEST_PROP(TpuProperty, stride_formulas_hold, ()) {
  const std::string kind = *rc::gen::element<std::string>("aligned", "compact");
  const Drawn d = draw_local(kind);
  RC_PRE(reference_impl().supports(d.c).ok());
  auto f = facts(d.c);
  const std::string mode = d.c.layout.get("mode");
  const int64_t word = dtype_bits(d.c.dtype) / 8 * (mode == "4n" ? 4 : mode == "1n" ? 1 : 2);
  const int64_t hw = d.c.shape[2] * d.c.shape[3];
  int64_t c_stride = hw;
  if (kind == "aligned") {
    while ((c_stride * word) % d.eu != 0) ++c_stride;  // smallest multiple of the EU's elements >= H*W
  }
  RC_ASSERT(f.at("w_stride") == "1");
  RC_ASSERT(f.at("h_stride") == std::to_string(d.c.shape[3]));
  RC_ASSERT(f.at("c_stride") == std::to_string(c_stride));
  RC_ASSERT(f.at("n_stride") == std::to_string(c_stride * std::stoll(f.at("channels_per_npu"))));
  // And the offsets step by them (in bytes of the stored word) where the step exists.
  const Impl& opt = optimized_impl();
  const Coord o = {0, 0, 0, 0};
  const uint64_t base = *opt.offset_bits(d.c, o) / 8;
  if (d.c.shape[3] > 1) RC_ASSERT(*opt.offset_bits(d.c, {0, 0, 0, 1}) / 8 - base == static_cast<uint64_t>(word));
  if (d.c.shape[2] > 1) RC_ASSERT(*opt.offset_bits(d.c, {0, 0, 1, 0}) / 8 - base == static_cast<uint64_t>(word * d.c.shape[3]));
  if (d.c.shape[1] > d.npus) {
    RC_ASSERT(*opt.offset_bits(d.c, {0, d.npus, 0, 0}) / 8 - base == static_cast<uint64_t>(word * c_stride));
  }
}

}  // namespace
}  // namespace layoutcheck
