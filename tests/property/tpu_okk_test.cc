#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "support.h"  // gtest before rapidcheck/gtest.h
#include "layoutcheck/okkernel_compat.h"

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

using ChannelsFn = int (*)(int, int, const okk_compat_config*);
using ContinuousFn = void (*)(dim4*, const dim4*);
using StrideFn = void (*)(dim4*, int, const dim4*, const okk_compat_config*);

constexpr int64_t kLocalBytes = int64_t{1} << 20;  // holds every tensor drawn below

struct Args {
  okk_compat_config cfg{};
  int start = 0;
  dim4 shape{};
};

Args draw_args() {
  Args a;
  a.cfg.npu_num = *rc::gen::oneOf(rc::gen::inRange(1, 70), rc::gen::element(64, 255, 1024, 1 << 16));
  a.cfg.eu_bytes = *rc::gen::element(32, 64, 128, 256, 512);
  a.start = *rc::gen::inRange(0, a.cfg.npu_num);
  a.shape = {*rc::gen::inRange(1, 5), *rc::gen::inRange(1, std::min(2 * a.cfg.npu_num + 4, 700)),
             *rc::gen::inRange(1, 41), *rc::gen::inRange(1, 41)};
  return a;
}

// The reference's case of the tensor a function describes.
Case case_of(const std::string& layout, DType t, const Args& a) {
  ParamMap p;
  if (layout != "tpu.continuous") {
    p = {{"npus", std::to_string(a.cfg.npu_num)}, {"lmem", std::to_string(kLocalBytes)},
         {"eu", std::to_string(a.cfg.eu_bytes)}, {"addr", std::to_string(a.start * kLocalBytes)}};
  }
  auto l = make_layout(layout, p);
  RC_ASSERT(l.ok());
  Case c{*l, t, {a.shape.n, a.shape.c, a.shape.h, a.shape.w}};
  RC_ASSERT(reference_impl().supports(c).ok());
  return c;
}

int64_t fact(const Case& c, const std::string& key) {
  auto f = reference_impl().describe(c);
  RC_ASSERT(f.ok());
  for (const Fact& x : *f) {
    if (x.first == key) return std::stoll(x.second);
  }
  RC_FAIL("the reference does not describe " + key);
}

// The byte distance from the first element to the one a step along dimension d
// away, in the reference and in the optimized implementation, which must agree.
int64_t step_bytes(const Case& c, int d, int64_t step) {
  Coord at = {0, 0, 0, 0};
  at[static_cast<size_t>(d)] = step;
  const uint64_t ref = *reference_impl().offset_bits(c, at) - *reference_impl().offset_bits(c, {0, 0, 0, 0});
  const uint64_t opt = *optimized_impl().offset_bits(c, at) - *optimized_impl().offset_bits(c, {0, 0, 0, 0});
  RC_ASSERT(ref == opt);
  return static_cast<int64_t>(ref / 8);
}

// What the document's strides mean: N from n to n + 1, C from c to c + X in
// local memory (c + 1 in system memory), H and W from h to h + 1, w to w + 1.
void assert_strides_step_offsets(const Case& c, const dim4& s, int64_t c_step) {
  const int64_t e = dtype_bits(c.dtype) / 8;
  const int64_t extents[4] = {c.shape[0], c.shape[1], c.shape[2], c.shape[3]};
  const int64_t strides[4] = {s.n, s.c, s.h, s.w};
  for (int d = 0; d < 4; ++d) {
    const int64_t step = d == 1 ? c_step : 1;
    if (extents[d] > step) RC_ASSERT(step_bytes(c, d, step) == strides[d] * e);
  }
}

void assert_same(const dim4& s, const Case& c) {
  RC_ASSERT(s.n == fact(c, "n_stride"));
  RC_ASSERT(s.c == fact(c, "c_stride"));
  RC_ASSERT(s.h == fact(c, "h_stride"));
  RC_ASSERT(s.w == fact(c, "w_stride"));
}

void channels_property(ChannelsFn fn) {
  const Args a = draw_args();
  const okk_compat_config cfg = a.cfg;
  const int got = fn(a.start, a.shape.c, &cfg);
  RC_ASSERT(got == fact(case_of("tpu.compact", DType::kFp32, a), "channels_per_npu"));
  // Channel c goes to NPU (start + c) mod X, in block row (start + c) / X: the
  // rows are the channels per NPU, the NPUs' channels sum to C.
  std::map<int, int> per_npu;
  int rows = 0;
  for (int ch = 0; ch < a.shape.c; ++ch) {
    ++per_npu[(a.start + ch) % a.cfg.npu_num];
    rows = std::max(rows, (a.start + ch) / a.cfg.npu_num + 1);
  }
  int sum = 0;
  for (const auto& [npu, n] : per_npu) {
    sum += n;
    RC_ASSERT(n <= got);
  }
  RC_ASSERT(sum == a.shape.c);
  RC_ASSERT(got == rows);
  RC_ASSERT(int64_t{got} * a.cfg.npu_num >= a.start + a.shape.c);
  RC_ASSERT(int64_t{got - 1} * a.cfg.npu_num < a.start + a.shape.c);
  // And the implementations place channel c there.
  const Case c = case_of("tpu.compact", DType::kFp32, a);
  const int ch = *rc::gen::inRange(0, a.shape.c);
  const int64_t hw = int64_t{a.shape.h} * a.shape.w;
  const int64_t npu = (a.start + ch) % a.cfg.npu_num, row = (a.start + ch) / a.cfg.npu_num;
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    RC_ASSERT(*impl->offset_bits(c, {0, ch, 0, 0}) / 8 == static_cast<uint64_t>(npu * kLocalBytes + row * hw * 4));
  }
}

void continuous_property(ContinuousFn fn) {
  const Args a = draw_args();
  const dim4 shape = a.shape;
  dim4 s{-1, -1, -1, -1};
  fn(&s, &shape);
  const Case c = case_of("tpu.continuous", *rc::gen::element(DType::kInt8, DType::kFp16, DType::kFp32), a);
  assert_same(s, c);
  RC_ASSERT(s.w == 1);
  RC_ASSERT(s.h == shape.w);
  RC_ASSERT(s.c == shape.h * shape.w);
  RC_ASSERT(s.n == shape.c * s.c);
  assert_strides_step_offsets(c, s, 1);
}

void aligned_property(StrideFn fn, int element_bytes, StrideFn compact) {
  const Args a = draw_args();
  const dim4 shape = a.shape;
  const okk_compat_config cfg = a.cfg;
  dim4 s{-1, -1, -1, -1}, k{-1, -1, -1, -1};
  fn(&s, a.start, &shape, &cfg);
  compact(&k, a.start, &shape, &cfg);
  const DType t = element_bytes == 4 ? DType::kFp32 : element_bytes == 2 ? DType::kFp16 : DType::kInt8;
  const Case c = case_of("tpu.aligned", t, a);
  assert_same(s, c);
  // The C stride is H*W rounded up to whole EUs: a multiple of the elements of
  // one EU, at least the compact one and less than one EU more.
  const int per_eu = a.cfg.eu_bytes / element_bytes;
  RC_ASSERT(s.c % per_eu == 0);
  RC_ASSERT(int64_t{s.c} * element_bytes % a.cfg.eu_bytes == 0);
  RC_ASSERT(s.c >= k.c);
  RC_ASSERT(s.c - k.c < per_eu);
  RC_ASSERT(s.n >= k.n);
  RC_ASSERT(s.h == k.h);
  RC_ASSERT(s.w == 1);
  RC_ASSERT(s.n == s.c * okk_channle_num_per_npu(a.start, shape.c, &cfg));
  assert_strides_step_offsets(c, s, a.cfg.npu_num);
}

void compact_property(StrideFn fn) {
  const Args a = draw_args();
  const dim4 shape = a.shape;
  const okk_compat_config cfg = a.cfg;
  dim4 s{-1, -1, -1, -1};
  fn(&s, a.start, &shape, &cfg);
  const Case c = case_of("tpu.compact", *rc::gen::element(DType::kInt8, DType::kFp16, DType::kFp32), a);
  assert_same(s, c);
  RC_ASSERT(s.w == 1);
  RC_ASSERT(s.h == shape.w);
  RC_ASSERT(s.c == shape.h * shape.w);
  RC_ASSERT(s.n == s.c * fact(c, "channels_per_npu"));
  assert_strides_step_offsets(c, s, a.cfg.npu_num);
}

RC_GTEST_PROP(TpuOkkProperty, channels_per_npu_is_the_references_and_deals_out_c, ()) {
  channels_property(okk_channle_num_per_npu);
}

RC_GTEST_PROP(TpuOkkProperty, continuous_stride_is_the_references, ()) { continuous_property(okk_continuous_stride); }

RC_GTEST_PROP(TpuOkkProperty, aligned_stride_is_whole_eus_covering_the_compact_one, ()) {
  const int e = *rc::gen::element(4, 2, 1);
  aligned_property(e == 4   ? okk_128_byte_aligned_stride_for_32bit
                   : e == 2 ? okk_128_byte_aligned_stride_for_16bit
                            : okk_128_byte_aligned_stride_for_8bit,
                   e, okk_compact_stride);
}

RC_GTEST_PROP(TpuOkkProperty, compact_stride_is_the_references, ()) { compact_property(okk_compact_stride); }

// Each property fails for a realistic mistake in the function it checks.
int channels_ignoring_start(int, int c, const okk_compat_config* cfg) { return (c + cfg->npu_num - 1) / cfg->npu_num; }
void continuous_w_for_c(dim4* s, const dim4* shape) {
  okk_continuous_stride(s, shape);
  s->n = shape->w * shape->h * shape->w;
}
void aligned_in_bytes(dim4* s, int start, const dim4* shape, const okk_compat_config* cfg) {
  okk_compact_stride(s, start, shape, cfg);
  s->c = (shape->h * shape->w + cfg->eu_bytes - 1) / cfg->eu_bytes * cfg->eu_bytes;
  s->n = s->c * okk_channle_num_per_npu(start, shape->c, cfg);
}
void compact_floor(dim4* s, int start, const dim4* shape, const okk_compat_config* cfg) {
  okk_compact_stride(s, start, shape, cfg);
  s->n = s->c * std::max(1, (start + shape->c) / cfg->npu_num);
}

TEST(TpuOkkProperty, each_property_catches_a_wrong_function) {
  EXPECT_FALSE(rc::check("channels ignoring the start NPU", [] { channels_property(channels_ignoring_start); }));
  EXPECT_FALSE(rc::check("continuous N stride from W", [] { continuous_property(continuous_w_for_c); }));
  EXPECT_FALSE(rc::check("aligned C stride in bytes", [] { aligned_property(aligned_in_bytes, 4, okk_compact_stride); }));
  EXPECT_FALSE(rc::check("compact channels without the ceil", [] { compact_property(compact_floor); }));
}

}  // namespace
}  // namespace layoutcheck
