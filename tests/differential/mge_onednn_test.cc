// oneDNN as an external oracle for the MegEngine layouts: oneDNN's reorder
// from plain NCHW must produce exactly the bytes of our reference pack, and
// its reorder back must produce exactly our reference unpack.
#include "support.h"

#if defined(LAYOUTCHECK_HAVE_DNNL)

#include <cstring>
#include <random>

#include <oneapi/dnnl/dnnl.hpp>

namespace layoutcheck {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& cpu() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

struct TypePair {
  DType ours;
  dt theirs;
};
const TypePair kTypes[] = {{DType::kFp32, dt::f32}, {DType::kInt8, dt::s8},   {DType::kUInt8, dt::u8},
                           {DType::kInt32, dt::s32}, {DType::kBf16, dt::bf16}, {DType::kFp16, dt::f16}};

// Position-unique values that are ordinary numbers in every type, so no
// reorder can canonicalize them (no NaNs, no denormals).
std::vector<uint8_t> logical_values(const Case& c) {
  const uint64_t n = *element_count(c.shape);
  std::vector<uint8_t> out;
  fill_position_unique(c, 7, &out);
  for (uint64_t i = 0; i < n; ++i) {
    if (c.dtype == DType::kFp32) {
      const float f = static_cast<float>(i % (1u << 23)) + 0.5f;
      std::memcpy(&out[i * 4], &f, 4);
    } else if (c.dtype == DType::kFp16) {
      const uint16_t h = static_cast<uint16_t>(0x3C00 + i % 0x3800);
      std::memcpy(&out[i * 2], &h, 2);
    } else if (c.dtype == DType::kBf16) {
      const uint16_t b = static_cast<uint16_t>(0x3F80 + i % 0x3F00);
      std::memcpy(&out[i * 2], &b, 2);
    }
  }
  return out;
}

// The MegEngine blocked formats as oneDNN blocking descriptors: one inner
// block of `block` channels; outer strides (in elements) per dimension.
dnnl::memory::desc blocked(const Shape& s, dt type, int64_t block, bool chwn) {
  dnnl_memory_desc_t md{};
  md.ndims = 4;
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  const int64_t Cp = (C + block - 1) / block * block;
  const int64_t dims[4] = {N, C, H, W}, padded[4] = {N, Cp, H, W};
  for (int i = 0; i < 4; ++i) md.dims[i] = dims[i], md.padded_dims[i] = padded[i];
  md.data_type = static_cast<dnnl_data_type_t>(type);
  md.format_kind = dnnl_blocked;
  auto& b = md.format_desc.blocking;
  b.inner_nblks = 1;
  b.inner_blks[0] = block;
  b.inner_idxs[0] = 1;
  if (chwn) {  // [C/4, H, W, N, 4]
    b.strides[0] = block;
    b.strides[3] = N * block;
    b.strides[2] = W * N * block;
    b.strides[1] = H * W * N * block;
  } else {  // [N, C/X, H, W, X]
    b.strides[3] = block;
    b.strides[2] = W * block;
    b.strides[1] = H * W * block;
    b.strides[0] = Cp * H * W;
  }
  return dnnl::memory::desc(md);
}

// oneDNN's description of a MegEngine case, and of its logical (plain) tensor.
struct Descs {
  dnnl::memory::desc logical, physical;
};

Descs descs_of(const Case& c, dt type) {
  const std::string f = c.layout.name;
  if (f == "mge.matrix") {
    const dnnl::memory::dims d = {c.shape[0], c.shape[1]};
    const bool col = c.layout.get("order") == "col";
    return {dnnl::memory::desc(d, type, tag::ab),
            dnnl::memory::desc(d, type, col ? dnnl::memory::dims{1, c.shape[0]} : dnnl::memory::dims{c.shape[1], 1})};
  }
  const dnnl::memory::dims d(c.shape.begin(), c.shape.end());
  dnnl::memory::desc plain(d, type, tag::nchw);
  if (f == "mge.nchw") return {plain, plain};
  if (f == "mge.nhwc") return {plain, dnnl::memory::desc(d, type, tag::nhwc)};
  if (f == "mge.nchw4") return {plain, blocked(c.shape, type, 4, false)};
  if (f == "mge.nchw32") return {plain, blocked(c.shape, type, 32, false)};
  if (f == "mge.nchw64") return {plain, blocked(c.shape, type, 64, false)};
  return {plain, blocked(c.shape, type, 4, true)};
}

// Reorders src (described by from) into a buffer described by to, pre-filled with poison.
std::vector<uint8_t> reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to, std::vector<uint8_t> src,
                             uint8_t poison) {
  std::vector<uint8_t> dst(to.get_size(), poison);
  dnnl::memory a(from, cpu(), src.data()), b(to, cpu(), dst.data());
  dnnl::stream s(cpu());
  dnnl::reorder(a, b).execute(s, a, b);
  s.wait();
  return dst;
}

class MgeOneDnn : public ::testing::TestWithParam<std::string> {};

TEST(MgeOneDnnDescs, blocked_descriptors_match_onednn_tags) {
  const Shape s = {2, 37, 3, 5};
  const dnnl::memory::dims d(s.begin(), s.end());
  EXPECT_TRUE(blocked(s, dt::f32, 4, false) == dnnl::memory::desc(d, dt::f32, tag::nChw4c));
  EXPECT_TRUE(blocked(s, dt::s8, 32, false) == dnnl::memory::desc(d, dt::s8, tag::nChw32c));
  EXPECT_TRUE(blocked(s, dt::s8, 32, false) == dnnl::memory::desc(d, dt::s8, tag::aBcd32b));
}

TEST_P(MgeOneDnn, reorder_bytes_equal_reference) {
  const std::string layout = GetParam();
  std::mt19937_64 rng(4);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  uint64_t compared = 0;
  for (const TypePair& t : kTypes) {
    for (int iter = 0; iter < 12; ++iter) {
      Case c;
      c.dtype = t.ours;
      if (layout.rfind("mge.matrix", 0) == 0) {
        c.layout = *parse_layout(layout);
        c.shape = {pick(1, 40), pick(1, 40)};
      } else {
        c.layout = *make_layout(layout);
        const int64_t x = layout == "mge.nchw64" ? 64 : layout == "mge.nchw32" ? 32 : 4;
        // C below, at and above the block, with and without a tail.
        const int64_t channels[] = {1, x - 1, x, x + 1, 2 * x + pick(1, x - 1), pick(1, 3 * x)};
        c.shape = {pick(1, 3), std::max<int64_t>(1, channels[iter % 6]), pick(1, 4), pick(1, 9)};
      }
      SCOPED_TRACE(to_string(c));
      ASSERT_TRUE(reference_impl().supports(c).ok());
      const std::vector<uint8_t> logical = logical_values(c);
      std::vector<uint8_t> ours(*reference_impl().size_bytes(c));
      ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), ours.data(), ours.size()).ok());
      Descs d = descs_of(c, t.theirs);
      ASSERT_EQ(d.physical.get_size(), ours.size());
      std::vector<uint8_t> theirs;
      try {
        theirs = reorder(d.logical, d.physical, logical, 0x5A);
      } catch (const dnnl::error& e) {
        // This oneDNN build has no reorder for the type on this CPU (f16 on older cores).
        if (t.ours == DType::kFp16) break;
        FAIL() << "oneDNN reorder failed: " << e.what();
      }
      ASSERT_EQ(theirs, ours) << "oneDNN's " << layout << " bytes differ from the reference";
      // And back: oneDNN's reorder to plain NCHW equals our unpack.
      std::vector<uint8_t> back(logical.size(), 0xA5);
      ASSERT_TRUE(reference_impl().unpack(c, ours.data(), ours.size(), back.data(), back.size()).ok());
      ASSERT_EQ(reorder(d.physical, d.logical, ours, 0x3C), back);
      ASSERT_EQ(back, logical);
      ++compared;
    }
  }
  EXPECT_GE(compared, 12u * 5);
}

INSTANTIATE_TEST_SUITE_P(Layouts, MgeOneDnn,
                         ::testing::Values("mge.nchw", "mge.nhwc", "mge.nchw4", "mge.nchw32", "mge.nchw64",
                                           "mge.chwn4", "mge.matrix", "mge.matrix(order=col)"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string name;
                           for (char ch : p.param) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

}  // namespace
}  // namespace layoutcheck

#else

TEST(MgeOneDnn, not_built) { GTEST_SKIP() << LAYOUTCHECK_DNNL_MISSING << "; the external oracle is off"; }

#endif
