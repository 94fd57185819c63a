#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "layoutcheck/okkernel_compat.h"
#include "optimized/isa.h"
#include "optimized/threads.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::facts_of;
using testing::expect_pass;
using testing::expect_pass_at_every_isa;
using testing::expect_same_bytes_at_every_thread_count;
using testing::must_case;
using testing::must_offset;

// Boundary classes: C against the NPU count, H*W against the EU block, N against the lanes.
TEST(TpuBoundary, c_lt_npus) { expect_pass("tpu.aligned(npus=4,lmem=2048)", "fp32", "2,3,2,3"); }
TEST(TpuBoundary, c_eq_npus) { expect_pass("tpu.aligned(npus=4,lmem=2048)", "fp32", "2,4,2,3"); }
TEST(TpuBoundary, c_gt_npus) { expect_pass("tpu.aligned(npus=4,lmem=2048)", "fp32", "2,5,2,3"); }
TEST(TpuBoundary, c_div_npus_from_last_npu) { expect_pass("tpu.compact(npus=4,lmem=2048,addr=3200)", "fp32", "2,8,2,3"); }
TEST(TpuBoundary, hw_lt_block) { expect_pass("tpu.aligned(npus=4,lmem=4096)", "fp32", "2,5,1,31"); }
TEST(TpuBoundary, hw_eq_block) { expect_pass("tpu.aligned(npus=4,lmem=4096)", "fp32", "2,5,4,8"); }
TEST(TpuBoundary, hw_gt_block) { expect_pass("tpu.aligned(npus=4,lmem=4096)", "fp32", "2,5,1,33"); }
TEST(TpuBoundary, n_lt_lanes) { expect_pass("tpu.aligned(npus=4,lmem=4096,mode=4n)", "int8", "3,5,2,3"); }
TEST(TpuBoundary, n_eq_lanes) { expect_pass("tpu.aligned(npus=4,lmem=4096,mode=4n)", "uint8", "4,5,2,3"); }
TEST(TpuBoundary, n_gt_lanes) { expect_pass("tpu.compact(npus=4,lmem=4096,mode=2n)", "int16", "3,5,2,3"); }
TEST(TpuBoundary, two_ic_odd) { expect_pass("tpu.strided(npus=4,lmem=4096,n=64,c=16,h=4,w=1,mode=2ic)", "fp32", "3,5,3,3"); }
TEST(TpuBoundary, strided_c_innermost) { expect_pass("tpu.strided(npus=2,lmem=4096,n=48,c=1,h=12,w=2)", "fp16", "2,4,2,6"); }
TEST(TpuBoundary, matrix_tail) { expect_pass("tpu.matrix(npus=4,lmem=4096,w=7)", "int8", "3,40"); }
TEST(TpuBoundary, real_chip) { expect_pass("tpu.aligned(chip=bm1684x,addr=128)", "bf16", "2,65,3,7"); }

TEST(TpuErrors, name_rule_and_values) {
  struct Bad { const char* layout; const char* dtype; const char* shape; std::vector<const char*> needles; };
  for (const Bad& b : std::vector<Bad>{
           {"tpu.aligned(npus=4,lmem=1024,addr=192)", "fp32", "1,1,1,1", {"192", "128", "128-Byte Aligned Layout"}},
           {"tpu.compact(npus=4,lmem=1024,addr=6)", "fp32", "1,1,1,1", {"6", "4", "Compact Layout"}},
           {"tpu.compact(npus=4,lmem=1024)", "fp32", "1,1,20,20", {"1600", "S = 1024"}},
           {"tpu.compact(npus=4,lmem=1024,mode=4n)", "fp16", "4,1,1,1", {"4N-mode", "fp16"}},
           {"tpu.strided(npus=4,lmem=1024,addr=2)", "fp32", "1,1,1,1", {"address 2", "4-byte"}},
           {"tpu.compact(npus=4,lmem=1024)", "int4", "1,1,1,1", {"int4"}},
           {"tpu.compact(npus=4,lmem=1024,addr=5000)", "fp32", "1,1,1,1", {"5000", "[0, 4095]"}},
       }) {
    Status s = reference_impl().supports(must_case(b.layout, b.dtype, b.shape));
    ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout;
    for (const char* n : b.needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message() << " lacks " << n;
    EXPECT_EQ(optimized_impl().supports(must_case(b.layout, b.dtype, b.shape)).code(), StatusCode::kInvalid);
  }
}

TEST(TpuPack, unused_bytes_are_zero_and_elements_land) {
  Case c = must_case("tpu.aligned(npus=4,lmem=512,addr=640)", "int8", "1,5,1,3");
  std::vector<uint8_t> logical(15), phys(2048, 0xCC);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(optimized_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  size_t nonzero = static_cast<size_t>(std::count_if(phys.begin(), phys.end(), [](uint8_t b) { return b != 0; }));
  EXPECT_EQ(nonzero, 15u);
  // Start NPU 1 at offset 128; channel 3 wraps to NPU 0, slot 1 (128 bytes on).
  EXPECT_EQ(phys[512 + 128], 1);
  EXPECT_EQ(phys[0 + 128 + 128 + 2], 12);
  EXPECT_EQ(phys[3 * 512 + 128 + 1], 8);
}

TEST(TpuCompat, okkernel_helpers_agree_with_the_reference) {
  okk_compat_config cfg = okk_compat_bm1684();
  cfg.npu_num = 4;
  dim4 shape = {2, 3, 4, 5}, stride;
  EXPECT_EQ(okk_channle_num_per_npu(2, 3, &cfg), 2);
  okk_128_byte_aligned_stride_for_32bit(&stride, 2, &shape, &cfg);
  auto f = facts_of(must_case("tpu.aligned(npus=4,lmem=1024,addr=2048)", "fp32", "2,3,4,5"));
  EXPECT_EQ(std::to_string(stride.n), f["n_stride"]);
  EXPECT_EQ(std::to_string(stride.c), f["c_stride"]);
  EXPECT_EQ(std::to_string(stride.h), f["h_stride"]);
  okk_128_byte_aligned_stride_for_16bit(&stride, 0, &shape, &cfg);
  EXPECT_EQ(stride.c, 64);
  okk_128_byte_aligned_stride_for_8bit(&stride, 0, &shape, &cfg);
  EXPECT_EQ(stride.c, 128);
  okk_compact_stride(&stride, 3, &shape, &cfg);
  f = facts_of(must_case("tpu.compact(npus=4,lmem=1024,addr=3072)", "fp32", "2,3,4,5"));
  EXPECT_EQ(std::to_string(stride.n), f["n_stride"]);
  okk_continuous_stride(&stride, &shape);
  EXPECT_EQ(stride.n, 60);
  EXPECT_EQ(stride.c, 20);
}

TEST(TpuOffsets, out_of_shape_coordinate_is_an_error) {
  Case c = must_case("tpu.compact(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->offset_bits(c, {0, 2, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {0, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {0, -1, 0, 0}).status().code(), StatusCode::kInvalid);
  }
  EXPECT_EQ(must_offset(optimized_impl(), c, {0, 1, 2, 3}), 1024u + 44u);
}

TEST(TpuBuffers, wrong_sizes_are_rejected) {
  Case c = must_case("tpu.continuous", "fp32", "1,2,3,4");
  std::vector<uint8_t> logical(96), phys(95);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    Status s = impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size());
    EXPECT_EQ(s.code(), StatusCode::kInvalid);
    EXPECT_NE(s.message().find("physical buffer is 95 bytes"), std::string::npos) << s.message();
  }
}

// The storage modes interleave whole vectors of every lane with AVX-512 and
// finish with the SSE2 and scalar loops: runs longer than a vector, starting
// off a cache line, with a dummy lane, at every instruction-set level.
TEST(TpuModes, lanes_interleave_at_every_isa_level) {
  expect_pass_at_every_isa("tpu.aligned(npus=4,lmem=65536,mode=4n)", "int8", "7,5,13,21");
  expect_pass_at_every_isa("tpu.compact(npus=4,lmem=65536,addr=4,mode=4n)", "uint8", "5,6,9,31");
  expect_pass_at_every_isa("tpu.compact(npus=4,lmem=65536,mode=2n)", "int16", "3,5,11,23");
  expect_pass_at_every_isa("tpu.aligned(npus=4,lmem=65536,mode=2n)", "uint16", "4,8,16,16");
  expect_pass_at_every_isa("tpu.strided(npus=4,lmem=65536,n=4096,c=1024,h=40,w=1,mode=2ic)", "fp32", "3,5,20,40");
}

// Images of 16 MiB and more are written with streaming stores where the
// written side starts on a line (aligned) or after a first partial line
// (compact at an odd address); every mode, at every instruction-set level.
TEST(TpuModes, streamed_images_at_every_isa_level) {
  expect_pass_at_every_isa("tpu.aligned(npus=64,lmem=262144,mode=4n)", "int8", "7,67,61,65");
  expect_pass_at_every_isa("tpu.compact(npus=64,lmem=262144,addr=4,mode=2n)", "int16", "3,64,63,65");
  expect_pass_at_every_isa("tpu.compact(npus=64,lmem=262144,addr=4)", "fp32", "2,65,61,67");
  expect_pass_at_every_isa("tpu.aligned(npus=64,lmem=262144,mode=2ic)", "fp32", "3,65,61,67");
}


// Large images split by NPU (aligned, compact, storage modes, matrix), the
// general strides (zeroed by ranges, then split by feature) and system
// memory (split into ranges of the copy).
TEST(TpuThreads, every_thread_count_writes_the_same_bytes) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"tpu.aligned(chip=bm1684x)", "fp32", "4,64,127,129"},
           {"tpu.compact(npus=64,lmem=262144,addr=4)", "fp32", "2,65,61,67"},
           {"tpu.aligned(npus=64,lmem=262144,mode=4n)", "int8", "7,67,61,65"},
           {"tpu.compact(npus=64,lmem=262144,addr=4,mode=2n)", "int16", "3,64,63,65"},
           {"tpu.matrix(chip=bm1684x,w=16384)", "fp32", "4,1000001"},
           {"tpu.strided(npus=4,lmem=524288,n=65536,c=1,h=1024,w=16)", "fp16", "4,64,64,64"},
           {"tpu.aligned(npus=4,lmem=4096)", "fp32", "2,5,1,33"},
           {"tpu.continuous", "fp32", "1,16,256,257"},
       }) {
    expect_same_bytes_at_every_thread_count(layout, dtype, shape);
  }
}

}  // namespace
}  // namespace layoutcheck
