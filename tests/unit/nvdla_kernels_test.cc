// The NVDLA optimized kernels with and without their AVX2 paths, and with
// several thread counts (optimized/threads.h): every path equals the reference.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/nvdla.h"
#include "optimized/isa.h"
#include "optimized/threads.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::must_case;

struct Shape {
  const char* layout;
  const char* dtype;
  const char* shape;
};

// Full squares, square tails, chunk boundaries (256 columns), partial surfaces.
const Shape kCases[] = {
    {"nvdla.feature", "int8", "64,3,32"},
    {"nvdla.feature", "int8", "33,2,300"},
    {"nvdla.feature", "int8", "7,5,257"},
    {"nvdla.feature", "fp16", "16,2,16"},
    {"nvdla.feature", "fp16", "40,3,513"},
    {"nvdla.feature", "int16", "17,2,31"},
    {"nvdla.feature(line_stride=9632,surface_stride=28928)", "int8", "65,3,300"},
    {"nvdla.feature(line_stride=320)", "int8", "40,9,7"},
    {"nvdla.feature(line_stride=192,surface_stride=2048)", "fp16", "20,9,5"},
    {"nvdla.feature", "int8", "70,37,1700"},
    {"nvdla.feature(line_stride=27264)", "fp16", "40,64,850"},
    // Surfaces of two blocks in cache, unpacked straight into the rows: 32 +
    // 17 positions (a partial surface), 64 + 64, 32 + 32, 64 + 1, line ends
    // inside the blocks.
    {"nvdla.feature", "fp16", "20,7,7"},
    {"nvdla.feature", "int8", "40,8,16"},
    {"nvdla.feature", "fp16", "16,8,8"},
    {"nvdla.feature", "int8", "33,5,13"},
    {"nvdla.feature(line_stride=256)", "fp16", "20,7,7"},
    // Surfaces of at most 20 positions in cache, by byte permutes: 3 x 3 of
    // both element sizes with a partial last surface, 4 x 4 (8 registers), 1
    // x 5 and 2 x 8, 1 x 2 (several surfaces a block), 4 x 5.
    {"nvdla.feature", "int8", "70,3,3"},
    {"nvdla.feature", "fp16", "40,3,3"},
    {"nvdla.feature", "fp16", "32,4,4"},
    {"nvdla.feature", "int8", "96,4,4"},
    {"nvdla.feature", "int8", "96,1,5"},
    {"nvdla.feature", "fp16", "17,2,8"},
    {"nvdla.feature", "int16", "48,1,2"},
    {"nvdla.feature", "int8", "64,4,5"},  // ten registers
    {"nvdla.sdp.element(use=ew2)", "int16", "20,3,37,2"},
    {"nvdla.sdp.element(use=ew2)", "int16", "33,2,300,2"},
    {"nvdla.sdp.element(use=bias,proc=int8)", "int8", "40,2,33,1"},
    {"nvdla.weight.dc", "int8", "40,70,3,3"},
    // Full blocks by transposes in lanes: two blocks, 33 kernels (a group of
    // one), the last int8 block read from a copy; a block and 6 channels.
    {"nvdla.weight.dc", "int8", "33,128,3,3"},
    {"nvdla.weight.dc", "fp16", "33,128,3,3"},
    {"nvdla.weight.dc", "fp16", "17,70,3,3"},
    {"nvdla.weight.dc", "int8", "33,96,1,3"},
    {"nvdla.weight.dc", "int8", "3,64,3,3"},
    {"nvdla.weight.dc", "int8", "2,128,2,7"},
    {"nvdla.weight.dc", "fp16", "20,33,5,5"},
    {"nvdla.weight.dc", "fp16", "20,140,3,3"},
    {"nvdla.weight.dc", "int8", "33,128,1,9"},
    // More than one channel block by tiles across a group's kernels, position
    // tiles outermost, with AVX2 two channel tiles a register both ways: a
    // tail block of 36 channels and a group of one kernel, 16-bit tiles with a
    // tail of 8 channels (one tile), an int8 tail of one tile.
    {"nvdla.weight.dc", "int8", "33,100,5,5"},
    {"nvdla.weight.dc", "fp16", "9,136,4,5"},
    {"nvdla.weight.dc", "int8", "5,80,7,7"},
    // Kernels of 4 positions (and 2 of 16-bit elements) as lanes of words, of
    // 3 by byte shuffles (AVX2), a group's block of every kernel at once
    // through a stage: tail blocks of 36, 6, 2 and 35 channels, the last ones
    // past the shuffles' 16 bytes.
    {"nvdla.weight.dc", "int8", "9,100,2,2"},
    {"nvdla.weight.dc", "fp16", "17,70,1,4"},
    {"nvdla.weight.dc", "fp16", "5,130,2,1"},
    {"nvdla.weight.dc", "fp16", "20,99,3,1"},
    {"nvdla.weight.dc", "int8", "33,77,1,3"},
    // And of 2 positions of 8-bit elements: two channel blocks and a tail of
    // 36, a tail of 6, one block of 20 channels (a last group of 3 kernels).
    {"nvdla.weight.dc", "int8", "9,100,2,1"},
    {"nvdla.weight.dc", "int8", "33,70,1,2"},
    {"nvdla.weight.dc", "int8", "35,20,2,1"},
    // The same for kernels of one channel block (C <= 64), a group's gk * C
    // rows at once: a group and a partial one, 64 channels of 2 x 2, kernels
    // of 5 and 9 rows (groups' rows past the last 32-byte step, a last group
    // of one kernel), of 3 rows of 4 positions, 16-bit 2 x 1 of 13 channels.
    {"nvdla.weight.dc", "fp16", "20,40,1,3"},
    {"nvdla.weight.dc", "int8", "33,64,2,2"},
    {"nvdla.weight.dc", "int8", "33,5,3,1"},
    {"nvdla.weight.dc", "fp16", "17,9,1,3"},
    {"nvdla.weight.dc", "int8", "35,3,1,4"},
    {"nvdla.weight.dc", "fp16", "18,13,2,1"},
    // Kernels of one channel block through byte permutes: a group and a
    // partial one, positions of 80 bytes (two moves), 64 channels of 1 x 5,
    // 16, 15 and 3 bytes a position, int16; 720-byte kernels (the rows'
    // path).
    {"nvdla.weight.dc", "int8", "40,32,3,3"},
    {"nvdla.weight.dc", "fp16", "20,40,1,5"},
    {"nvdla.weight.dc", "int8", "33,64,1,5"},
    {"nvdla.weight.dc", "int8", "5,16,5,5"},
    {"nvdla.weight.dc", "fp16", "3,8,3,3"},
    {"nvdla.weight.dc", "int16", "17,24,3,3"},
    {"nvdla.weight.dc", "int8", "4,15,3,3"},
    {"nvdla.weight.dc", "int8", "70,3,7,7"},
    // Kernels of one channel block, a group one transpose of gk * C rows: a
    // last group of fewer rows than a tile (7), 16-bit of 9 positions (the
    // byte permutes first where there are some), a whole block of 64.
    {"nvdla.weight.dc", "int8", "33,7,4,5"},
    {"nvdla.weight.dc", "fp16", "17,5,3,3"},
    {"nvdla.weight.dc", "fp16", "40,64,4,4"},
    {"nvdla.weight.dc", "int8", "2,48,3,5"},
    {"nvdla.weight.image", "int8", "40,3,7,7"},
    {"nvdla.weight.image(post_extension=2)", "fp16", "20,2,7,8"},
    // Image weights in runs of kernels: runs of 1, 2, 7 and 32 kernels, 1 to 8
    // vectors and lines, partial last runs, one kernel, and 9 lines (other path).
    {"nvdla.weight.image", "int8", "1,3,7,7"},
    {"nvdla.weight.image", "int8", "70,4,8,16"},
    {"nvdla.weight.image", "int8", "45,64,2,1"},
    {"nvdla.weight.image", "int8", "75,2,1,1"},
    {"nvdla.weight.image", "int8", "38,1,5,9"},
    {"nvdla.weight.image", "int8", "35,1,9,5"},
    {"nvdla.weight.image", "fp16", "20,3,5,5"},
    {"nvdla.weight.image", "int16", "17,5,6,6"},
    {"nvdla.weight.image", "fp16", "37,2,8,2"},
    // Lines of 3 channels of more elements than the shuffles take, by lanes.
    {"nvdla.weight.image", "fp16", "5,3,11,11"},
    {"nvdla.weight.image", "int8", "5,3,2,21"},
    // Without VBMI (AVX2 and up) through a stage of the kernels' transposes by
    // in-lane shuffles: post-extension 4 with a short last line group, fp16
    // lines of 64 elements (128 bytes), 32 and 33 kernels (the last one or two
    // through scratch).
    {"nvdla.weight.image(post_extension=4)", "int8", "33,2,9,8"},
    {"nvdla.weight.image", "fp16", "32,4,3,16"},
    {"nvdla.weight.image(post_extension=2)", "int8", "33,3,5,10"},
    // Runs of 17 to 31 bytes by one 32-byte move each where its 32 bytes
    // stay in the tensor and, unpacking, in the kernel's stage; exact moves
    // elsewhere: 21-byte lines of whole groups (the kernel's last line exact
    // unpacking, the tensor's last runs packing), 27-byte lines of one
    // group, 20-byte line pairs before a last line of 10 bytes (the pair
    // before it exact unpacking: its 32 bytes run past the kernel's 50).
    {"nvdla.weight.image", "int8", "64,3,7,7"},
    {"nvdla.weight.image", "int8", "5,3,3,9"},
    {"nvdla.weight.image(post_extension=2)", "int8", "40,2,5,5"},
    // Without VBMI, lines of 16 to 32 bytes whose channel rows are 4 to 8
    // bytes by two loads and in-lane shuffles a line: 2, 3 and 4 channels,
    // 16-bit elements, lines of exactly 16 and 32 bytes, one line a kernel,
    // post-extension 2 and 4 (line groups of fewer lines than it).
    {"nvdla.weight.image", "int8", "33,4,5,6"},
    {"nvdla.weight.image", "fp16", "35,3,4,3"},
    {"nvdla.weight.image(post_extension=2)", "fp16", "33,2,3,4"},
    {"nvdla.weight.image", "int8", "34,4,6,4"},
    {"nvdla.weight.image", "int8", "9,3,1,7"},
    {"nvdla.weight.image(post_extension=4)", "int16", "17,4,2,4"},
    {"nvdla.weight.image(post_extension=2)", "int8", "3,2,7,8"},
    // Without VBMI, channel rows of 9 to 16 bytes, one register each, from
    // lines of 2 to 4 16-byte pieces: 3 channels of 3 pieces (7 x 7 fp16), 4
    // channels of 9-byte rows (the next plane's bytes at line offset 27), of 3
    // pieces with post-extension 2 and 4 pieces short of 64 bytes, 2 channels
    // of 20-byte fp16 lines with post-extension 4 (a short last group), one kernel
    // of one 36-byte int16 line, 3 channels of 33- and 27-byte lines.
    {"nvdla.weight.image", "fp16", "33,3,7,7"},
    {"nvdla.weight.image", "int8", "34,4,7,9"},
    {"nvdla.weight.image(post_extension=2)", "fp16", "17,4,3,5"},
    {"nvdla.weight.image", "fp16", "9,4,2,7"},
    {"nvdla.weight.image(post_extension=4)", "fp16", "33,2,6,5"},
    {"nvdla.weight.image", "int16", "1,3,1,6"},
    {"nvdla.weight.image", "int8", "40,3,4,11"},
    {"nvdla.weight.image", "int8", "35,3,3,9"},
    // Without VBMI, kernels of at most 64 bytes in lines (line groups) of at
    // most 16 bytes, by 1 to 4 kernel pieces: 3 x 3 of 3 channels (two pieces,
    // 9-byte lines), of 5 (three), one channel of 7 x 7 (49 bytes, four) and
    // of 4 x 8 fp16 (64), 2-byte kernels 257 of them (the last group of one
    // kernel, the group before it through scratch too), fp16 2 x 2 x 2,
    // post-extension 2 (line groups of 12 bytes and a last of 6, int8 and
    // fp16) and 4 (12 and 3), a tensor of one group. Packing, two kernels a
    // register: groups of 32 and 8 kernels (the last pair's second kernel
    // stored exactly), of 32 and 3 (a pair, then the last kernel alone),
    // units of 6 and 5 bytes (the last two and three kernels' units exact,
    // masks in registers and read from memory). Whole groups in one call,
    // each group's last kernel's units ending at their units' ends: three
    // groups and a fourth of 4 kernels, two groups (the second through scratch,
    // 16 bytes past it needed), 45-byte kernels (three pieces, units of 15),
    // fp16 kernels of 16 bytes (one piece, units of 8). Unpacking kernels of
    // 17 to 64 bytes by 32-byte stores: one a kernel (27 bytes above, fp16 24
    // in three units of 8), two (the second ending at the kernel's end) for 60
    // bytes in four units of 15; 36 and 45 bytes below.
    {"nvdla.weight.image", "int8", "40,3,3,3"},
    {"nvdla.weight.image", "int8", "35,3,3,3"},
    {"nvdla.weight.image", "int8", "100,3,3,3"},
    {"nvdla.weight.image", "int8", "64,3,3,3"},
    {"nvdla.weight.image", "int8", "70,5,3,3"},
    {"nvdla.weight.image", "fp16", "48,2,2,2"},
    {"nvdla.weight.image", "fp16", "40,2,3,2"},
    {"nvdla.weight.image", "int8", "33,5,4,3"},
    // One channel without shuffles, the runs moved between the logical
    // tensor and their places: runs of 11 bytes (one 16-byte move each, the
    // last line's unpacked and the last kernel's packed exactly), of 18
    // (32-byte moves), line groups of 22 and 11 bytes, runs of exactly 16.
    {"nvdla.weight.image", "int8", "37,1,11,11"},
    {"nvdla.weight.image", "fp16", "19,1,9,9"},
    {"nvdla.weight.image(post_extension=2)", "int8", "35,1,3,11"},
    {"nvdla.weight.image", "fp16", "17,1,3,8"},
    // Kernels past the shuffles' groups (640 bytes), whole kernels
    // interleaved into a stage and their units copied: 3 channels (AVX2), 4
    // of 16- and 8-bit elements, 2 of 16-bit ones, post-extension 2 (units of
    // two lines and a last of one, int8); a kernel past the stage's 16 KiB line
    // by line.
    {"nvdla.weight.image", "fp16", "19,3,11,11"},
    {"nvdla.weight.image", "fp16", "17,4,11,11"},
    {"nvdla.weight.image", "int8", "33,4,15,15"},
    {"nvdla.weight.image", "fp16", "18,2,13,13"},
    {"nvdla.weight.image(post_extension=2)", "int8", "33,3,31,10"},
    {"nvdla.weight.image", "fp16", "3,4,300,16"},
    {"nvdla.weight.image", "int8", "40,2,3,3"},
    {"nvdla.weight.image", "int8", "37,1,5,5"},
    {"nvdla.weight.image", "int8", "33,5,3,3"},
    {"nvdla.weight.image", "int8", "35,1,7,7"},
    {"nvdla.weight.image", "fp16", "17,1,4,8"},
    {"nvdla.weight.image", "int8", "257,2,1,1"},
    {"nvdla.weight.image", "fp16", "18,2,2,2"},
    {"nvdla.weight.image(post_extension=2)", "int8", "34,2,3,3"},
    {"nvdla.weight.image(post_extension=2)", "fp16", "17,1,5,3"},
    {"nvdla.weight.image(post_extension=4)", "int8", "33,1,5,3"},
    {"nvdla.weight.image", "int8", "20,4,3,3"},
    // Deconvolution weights: stride 1 (the DC copy alone), stride 2 with taps
    // past the kernel in the sets of odd rows and columns, two channel blocks
    // and a group of one kernel, strides 3 x 2 of 16-bit elements. With AVX2
    // the paired tiles place each tap's run in its set where they take every
    // channel block: int8 blocks of 64 and 36 channels above, 16-bit ones of
    // 40 with taps past the kernel in one direction only, every set full (4 x
    // 4, stride 2, a last group of one kernel); through the scratch a last
    // block of 6 channels, too few for the pairs.
    {"nvdla.weight.deconv", "fp16", "17,70,3,3"},
    {"nvdla.weight.deconv(stride_x=2,stride_y=2)", "int8", "33,100,5,5"},
    {"nvdla.weight.deconv(stride_x=3,stride_y=2)", "int16", "17,9,5,7"},
    {"nvdla.weight.deconv(stride_x=2,stride_y=3)", "fp16", "20,40,5,4"},
    {"nvdla.weight.deconv(stride_x=2,stride_y=2)", "int8", "65,64,4,4"},
    {"nvdla.weight.deconv(stride_x=2,stride_y=2)", "int8", "33,70,4,4"},
    {"nvdla.weight.winograd", "fp16", "20,37,4,4"},
    {"nvdla.weight.winograd", "int8", "40,70,4,4"},
    {"nvdla.pixel(format=T_Y8___U8V8_N444,x_offset=3)", "uint8", "5,77,3"},
    // 8-bit semi-planar lines: whole 64-pixel blocks only, a tail only, and
    // tails whose logical bytes end in each of the three vectors of a block.
    {"nvdla.pixel(format=T_Y8___U8V8_N444)", "uint8", "3,64,3"},
    {"nvdla.pixel(format=T_Y8___U8V8_N444)", "uint8", "4,5,3"},
    {"nvdla.pixel(format=T_Y8___U8V8_N444,x_offset=1)", "uint8", "3,150,3"},
    {"nvdla.pixel(format=T_Y8___U8V8_N444,x_offset=31)", "uint8", "2,190,3"},
    {"nvdla.pixel(format=T_A2B10G10R10,x_offset=1)", "uint16", "5,77,4"},
    // Word-reversed lines: a first line cut by the x offset and a cut last
    // line (4- and 8-byte words), and an image past 4 MiB, streamed.
    {"nvdla.pixel(format=T_A8B8G8R8,x_offset=5)", "uint8", "3,37,4"},
    {"nvdla.pixel(format=T_A16Y16U16V16_F,x_offset=3)", "fp16", "3,21,4"},
    {"nvdla.pixel(format=T_A8B8G8R8,x_offset=3)", "uint8", "257,4096,4"},
};

TEST(NvdlaKernels, equal_the_reference_at_every_isa_level) {
  for (const Shape& s : kCases) testing::expect_pass_at_every_isa(s.layout, s.dtype, s.shape);
}

// The first byte of `got` the document's rules do not allow where `want` is
// the reference's image (element and fixed bytes equal to it, free bytes
// within their constraint), or "" when there is none.
std::string first_wrong_byte(const ByteRules& rules, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (const ByteRegion& r : rules.regions) {
    for (uint64_t b = r.first; b < r.first + r.length; ++b) {
      if (r.kind == ByteKind::kFree) {
        const std::string why = violation(rules, r, got.data(), b);
        if (!why.empty()) return why;
      } else if (got[b] != want[b]) {
        return "byte " + std::to_string(b) + " is " + std::to_string(got[b]) + ", not " + std::to_string(want[b]);
      }
    }
  }
  return "";
}

// Small image kernels keep their masks for the last shape converted on a
// thread: packs, then unpacks (of images whose free bytes hold a fill), of
// shapes one field apart in turn (channels, lines, columns, element size,
// post-extension, then back to the first), each against the reference, at
// every ISA level.
TEST(NvdlaKernels, small_image_kernels_of_shapes_one_field_apart_equal_the_reference) {
  const Shape shapes[] = {
      {"nvdla.weight.image", "int8", "8,3,3,3"},
      {"nvdla.weight.image", "int8", "8,2,3,3"},
      {"nvdla.weight.image", "int8", "8,2,2,3"},
      {"nvdla.weight.image", "int8", "8,2,2,2"},
      {"nvdla.weight.image", "fp16", "8,2,2,2"},
      {"nvdla.weight.image(post_extension=2)", "fp16", "8,2,2,2"},
      {"nvdla.weight.image", "int8", "8,3,3,3"},
  };
  struct Bytes {
    Case c;
    ByteRules rules;
    std::vector<uint8_t> logical, physical, filled;  // filled: physical with its free bytes non-zero
  };
  std::vector<Bytes> cases;
  for (const Shape& s : shapes) {
    Bytes b{must_case(s.layout, s.dtype, s.shape), {}, {}, {}, {}};
    auto rules = reference_impl().byte_rules(b.c);
    ASSERT_TRUE(rules.ok()) << rules.status().message();
    b.rules = *rules;
    fill_position_unique(b.c, 7, &b.logical);
    b.physical.resize(*reference_impl().size_bytes(b.c));
    ASSERT_TRUE(reference_impl().pack(b.c, b.logical.data(), b.logical.size(), b.physical.data(), b.physical.size()).ok());
    b.filled = b.physical;
    fill_free_bytes(b.rules, 7, b.filled.data());
    cases.push_back(std::move(b));
  }
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (const Bytes& b : cases) {
      std::vector<uint8_t> physical(b.physical.size());
      ASSERT_TRUE(optimized_impl().pack(b.c, b.logical.data(), b.logical.size(), physical.data(), physical.size()).ok());
      EXPECT_EQ("", first_wrong_byte(b.rules, physical, b.physical)) << isa_name(isa) << " pack " << to_string(b.c);
    }
    for (const Bytes& b : cases) {
      std::vector<uint8_t> logical(b.logical.size());
      ASSERT_TRUE(optimized_impl().unpack(b.c, b.filled.data(), b.filled.size(), logical.data(), logical.size()).ok());
      EXPECT_EQ(logical, b.logical) << isa_name(isa) << " unpack " << to_string(b.c);
    }
  }
}

// Every shape at every level, with 512-bit operations whole and split in two
// (Split512Scope): the paths each answer chooses, on any CPU.
template <size_t kN>
void expect_pass_with_512_bit_operations_whole_or_split(const Shape (&shapes)[kN]) {
  for (bool split : {false, true}) {
    Split512Scope halves(split);
    for (const Shape& s : shapes) {
      SCOPED_TRACE(std::string(s.layout) + " " + s.shape + " split " + std::to_string(split));
      testing::expect_pass_at_every_isa(s.layout, s.dtype, s.shape);
    }
  }
}

// Image weights of 9- to 16-byte rows pack through the AVX2 pairs' shuffles
// even with VBMI where 512-bit operations split.
TEST(NvdlaKernels, long_image_rows_equal_the_reference_with_512_bit_operations_whole_or_split) {
  const Shape shapes[] = {{"nvdla.weight.image", "fp16", "33,3,7,7"},
                          {"nvdla.weight.image(post_extension=2)", "fp16", "17,4,3,5"},
                          {"nvdla.weight.image", "int8", "40,3,4,11"}};
  expect_pass_with_512_bit_operations_whole_or_split(shapes);
}

// Full 64-channel blocks of 3 x 3 int8 kernels unpack by the VBMI permutes
// where 512-bit operations split, by the byte transposes in lanes where they
// are whole.
TEST(NvdlaKernels, dc_3x3_blocks_equal_the_reference_with_512_bit_operations_whole_or_split) {
  const Shape shapes[] = {{"nvdla.weight.dc", "int8", "33,128,3,3"}, {"nvdla.weight.dc", "int8", "40,70,3,3"}};
  expect_pass_with_512_bit_operations_whole_or_split(shapes);
}

// Tensors of 4 MiB and more below AVX-512 stream their atoms (pack) and rows
// (unpack) out of the stage, and so do unpacks with AVX-512 where 512-bit
// operations split in two (Split512Scope: both ways on any CPU): a partial
// last surface and a last chunk of a line shorter than the stage's, line and
// surface gaps, SDP data of 64-byte atoms.
TEST(NvdlaKernels, streamed_atom_lines_equal_the_reference) {
  const Shape shapes[] = {{"nvdla.feature", "int8", "40,240,280"},
                          {"nvdla.feature(line_stride=9312,surface_stride=2142272)", "fp16", "20,230,290"},
                          {"nvdla.sdp.element(use=ew2)", "int16", "64,128,130,2"}};
  for (Isa isa : available_isas()) {
    if (isa != Isa::kAvx2 && isa != available_isas().back()) continue;
    IsaCapScope cap(isa);
    for (const Shape& s : shapes) {
      const Case c = must_case(s.layout, s.dtype, s.shape);
      ASSERT_GE(*reference_impl().size_bytes(c), uint64_t{4} << 20) << s.layout;
      // The AVX-512 unpacks and, where 512-bit operations split, the AVX2 squares instead.
      for (bool split : {false, true}) {
        Split512Scope halves(split);
        CheckReport r = check(c, reference_impl(), optimized_impl());
        EXPECT_EQ(r.verdict, Verdict::kPass)
            << isa_name(isa) << " split " << split << " " << s.layout << " " << r.message;
      }
    }
    // Each thread fences its own streaming stores.
    testing::expect_same_bytes_at_every_thread_count(shapes[0].layout, shapes[0].dtype, shapes[0].shape, {1, 3});
  }
}

TEST(NvdlaKernels, every_thread_count_writes_the_same_bytes) {
  for (const Shape& s : kCases) testing::expect_same_bytes_at_every_thread_count(s.layout, s.dtype, s.shape, {1, 2, 3, 7, 64});
}

// Sparse (de)compression at every level: dense, empty and mixed 64-element
// steps, group tails and partial last groups.
TEST(NvdlaKernels, sparse_compression_equals_the_reference_at_every_isa_level) {
  const Shape shapes[] = {{"nvdla.weight.dc", "int8", "40,70,3,3"},  {"nvdla.weight.dc", "fp16", "20,33,5,5"},
                          {"nvdla.weight.dc", "int8", "33,96,1,3"},  {"nvdla.weight.image", "int8", "40,3,7,7"},
                          {"nvdla.weight.dc", "fp16", "17,64,1,1"}, {"nvdla.weight.winograd", "int8", "40,70,4,4"}};
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (const Shape& s : shapes) {
      const Case c = must_case(s.layout, s.dtype, s.shape);
      std::vector<uint8_t> logical;
      fill_position_unique(c, 5, &logical);
      const uint64_t eb = dtype_bits(c.dtype) / 8;
      for (uint64_t i = 0; i < logical.size() / eb; ++i) {
        const uint64_t block = i / 64 % 4;  // mixed, all kept, none kept, mixed
        if (block == 2 || ((block == 0 || block == 3) && (i * 2654435761u >> 9) % 3 == 0)) {
          for (uint64_t b = 0; b < eb; ++b) logical[i * eb + b] = 0;
        } else if (block == 1) {
          logical[i * eb] |= 1;
        }
      }
      std::vector<uint8_t> phys(*reference_impl().size_bytes(c));
      ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
      auto z = nvdla::compress(c, phys.data(), phys.size());
      auto zr = nvdla::compress_reference(c, phys.data(), phys.size());
      ASSERT_TRUE(z.ok() && zr.ok());
      EXPECT_TRUE(*z == *zr) << isa_name(isa) << " " << s.layout << " " << s.dtype << " " << s.shape;
      std::vector<uint8_t> back(phys.size(), 0x5A);
      ASSERT_TRUE(nvdla::decompress(c, *z, back.data(), back.size()).ok());
      EXPECT_EQ(back, phys) << isa_name(isa) << " " << s.shape;
      // A kept element moved to a dropped place decompresses to other bytes.
      nvdla::CompressedWeights moved = *z;
      uint64_t bit = 0;
      while (!((moved.wmb[bit / 8] >> (bit % 8)) & 1) || ((moved.wmb[(bit + 1) / 8] >> ((bit + 1) % 8)) & 1)) ++bit;
      moved.wmb[bit / 8] = static_cast<uint8_t>(moved.wmb[bit / 8] ^ (1u << (bit % 8)));
      moved.wmb[(bit + 1) / 8] = static_cast<uint8_t>(moved.wmb[(bit + 1) / 8] ^ (1u << ((bit + 1) % 8)));
      ASSERT_TRUE(nvdla::decompress(c, moved, back.data(), back.size()).ok());
      EXPECT_NE(back, phys) << isa_name(isa) << " " << s.shape;
    }
  }
}

TEST(NvdlaKernels, large_outputs_are_right_at_every_buffer_alignment) {
  for (const char* layout : {"nvdla.feature", "nvdla.feature(line_stride=54464)"}) {
    const Case c = must_case(layout, "int8", "70,37,1700");
    std::vector<uint8_t> logical;
    fill_position_unique(c, 5, &logical);
    const uint64_t size = *reference_impl().size_bytes(c);
    std::vector<uint8_t> expected(size, 0xA5);
    ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), expected.data(), size).ok());
    for (size_t offset : {0u, 1u, 16u, 32u, 48u}) {
      std::vector<uint8_t> physical(size + 64, 0x5A), back(logical.size() + 64, 0x5A);
      ASSERT_TRUE(optimized_pack(c, logical.data(), logical.size(), physical.data() + offset, size, 1).ok());
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), physical.begin() + offset)) << layout << " " << offset;
      EXPECT_EQ(physical[offset + size], 0x5A) << layout << " " << offset;
      ASSERT_TRUE(optimized_unpack(c, physical.data() + offset, size, back.data() + offset, logical.size(), 1).ok());
      EXPECT_TRUE(std::equal(logical.begin(), logical.end(), back.begin() + offset)) << layout << " " << offset;
      EXPECT_EQ(back[offset == 0 ? back.size() - 1 : offset - 1], 0x5A) << layout << " " << offset;
    }
  }
}

TEST(Threads, the_default_is_one_thread_below_16_mib_and_every_core_above) {
  EXPECT_EQ(resolve_threads(kAutoThreads, kThreadedBytes - 1), 1u);
  EXPECT_EQ(resolve_threads(kAutoThreads, kThreadedBytes), hardware_threads());
  EXPECT_EQ(resolve_threads(3, 1), 3u);
  EXPECT_EQ(resolve_threads(kMaxThreads + 5, 1), kMaxThreads);
  EXPECT_GE(hardware_threads(), 1u);
}

TEST(Threads, scopes_nest_and_restore) {
  EXPECT_EQ(requested_threads(), kAutoThreads);
  {
    ThreadCountScope a(4);
    EXPECT_EQ(requested_threads(), 4u);
    {
      ThreadCountScope b(1);
      EXPECT_EQ(requested_threads(), 1u);
    }
    EXPECT_EQ(requested_threads(), 4u);
  }
  EXPECT_EQ(requested_threads(), kAutoThreads);
}

TEST(Threads, ranges_are_disjoint_and_cover_everything) {
  for (unsigned threads : {1u, 2u, 3u, 5u, 16u}) {
    for (uint64_t n : {0u, 1u, 2u, 7u, 100u}) {
      ThreadCountScope scope(threads);
      std::vector<std::atomic<int>> seen(n);
      std::atomic<unsigned> calls{0};
      parallel_ranges(n, 0, [&](uint64_t begin, uint64_t end) {
        ++calls;
        for (uint64_t i = begin; i < end; ++i) ++seen[i];
      });
      for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "n " << n << " threads " << threads;
      EXPECT_LE(calls.load(), std::max<uint64_t>(1, std::min<uint64_t>(threads, n)));
    }
  }
}

// parallel_chunks: every index once, in ranges that start on a multiple of the
// chunk and are one chunk long but the last (or [0, n) on one thread); a chunk
// of 0 counts as 1.
TEST(Threads, chunks_are_disjoint_whole_and_cover_everything) {
  for (unsigned threads : {1u, 2u, 3u, 16u}) {
    for (uint64_t n : {0u, 1u, 7u, 100u}) {
      for (uint64_t chunk : {0u, 1u, 3u, 64u, 200u}) {
        ThreadCountScope scope(threads);
        std::vector<std::atomic<int>> seen(n);
        std::atomic<unsigned> calls{0}, bad{0};
        const uint64_t c = std::max<uint64_t>(chunk, 1);
        const bool one_range = threads == 1 || n <= c;
        parallel_chunks(n, chunk, 0, [&](uint64_t begin, uint64_t end) {
          ++calls;
          const bool whole = one_range ? begin == 0 && end == n : begin % c == 0 && (end - begin == c || end == n);
          if (!whole || begin >= end) ++bad;
          for (uint64_t i = begin; i < end; ++i) ++seen[i];
        });
        for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "n " << n << " threads " << threads;
        EXPECT_EQ(bad.load(), 0u) << "n " << n << " chunk " << chunk << " threads " << threads;
        EXPECT_EQ(calls.load(), n == 0 ? 0u : one_range ? 1u : static_cast<unsigned>((n + c - 1) / c));
      }
    }
  }
}

}  // namespace
}  // namespace layoutcheck
