// The NVDLA in-memory data formats in executable form.
// Document: ../shared/spec/nvdla-in-memory-data-formats.txt
//
// Offsets come from the document's formulas; pack and unpack walk the
// document's scan orders literally ("C' -> W -> H -> C" for feature data,
// "C' -> K -> W -> H -> C" inside a weight group) and place each element at
// the next free place of the scan, so the two readings check each other.
#include <algorithm>
#include <cstring>

#include "core/case_cache.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

constexpr uint64_t kMaxBytes = uint64_t{1} << 60;  // offsets are reported in bits
constexpr uint64_t kMaxMappedBytes = uint64_t{1} << 30;  // byte rules hold one byte per byte while built

uint64_t round_up32(uint64_t v) { return ceil_div(v, 32) * 32; }

// "Precision Type": int8, int16 and fp16; one element is 1 or 2 bytes.
Status check_precision(DType t) {
  if (t != DType::kInt8 && t != DType::kInt16 && t != DType::kFp16) {
    return Status::invalid(std::string("NVDLA data precisions are int8, int16 and fp16, not ") + dtype_name(t) +
                           " (Precision Type)").with_rule("nvdla/precision");
  }
  return Status();
}

// "Alignment of Start Address and Stride", table "Requirements of alignment".
Status check_alignment(const char* rule, const char* format, const char* what, uint64_t value, uint64_t align) {
  if (value % align != 0) {
    return Status::invalid(std::string(format) + ": " + what + " " + num(value) + " is not aligned to " + num(align) +
                           " bytes (Alignment of Start Address and Stride, Requirements of alignment)")
        .with_rule(rule);
  }
  return Status();
}

// ---- Feature Data Format -------------------------------------------------------

constexpr uint64_t kFeatureAtomBytes = 32;  // "Split the data cube into 1x1x32byte small atom cubes."

struct Feature {
  uint64_t C = 0, H = 0, W = 0;
  uint64_t element_bytes = 1;
  uint64_t atom_elements = 32;   // C' = 32 bytes of channels
  uint64_t surfaces = 0;         // ceil(C / C'): C padded to the atom
  uint64_t line_stride = 0, surface_stride = 0, addr = 0;
  bool packed_lines = true, packed_surfaces = true;
  uint64_t size = 0;
};

Result<Feature> feature_model(const Case& c) {
  LC_RETURN_IF_ERROR(check_precision(c.dtype));
  Feature f;
  f.C = c.shape[0], f.H = c.shape[1], f.W = c.shape[2];
  f.element_bytes = dtype_bits(c.dtype) / 8;
  // "Adding data into end of channel if the original data is not 32byte aligned in C direction."
  f.atom_elements = kFeatureAtomBytes / f.element_bytes;
  f.surfaces = ceil_div(f.C, f.atom_elements);
  // "All atom cubes in the same line are mapped compactly": a line is W atoms.
  Checked line_bytes = Checked(f.W) * kFeatureAtomBytes;
  if (!line_bytes.ok()) return Status::invalid("feature data: W * 32 overflows (W = " + num(f.W) + ")").with_rule("nvdla.feature/size-overflow");
  f.addr = c.layout.get_int("addr");
  // "Line stride and surface stride of feature data shall always align to 32bytes.
  //  Start address has same alignment as well."
  LC_RETURN_IF_ERROR(check_alignment("nvdla.feature/start-address-align-32", "feature data cube", "start address", f.addr, kFeatureAtomBytes));
  const uint64_t ls = c.layout.get_int("line_stride");
  f.packed_lines = ls == 0;
  f.line_stride = f.packed_lines ? line_bytes.value() : ls;
  if (!f.packed_lines) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.feature/line-stride-align-32", "feature data cube", "line stride", ls, kFeatureAtomBytes));
    if (ls < line_bytes.value()) {
      return Status::invalid("feature data cube: line stride " + num(ls) + " is smaller than one line of W = " +
                             num(f.W) + " atoms, W * 32 = " + num(line_bytes.value()) + " bytes (Feature Data Format)").with_rule("nvdla.feature/line-stride-covers-line");
    }
  }
  Checked surface_bytes = Checked(f.H) * f.line_stride;
  if (!surface_bytes.ok()) return Status::invalid("feature data: H * line stride overflows").with_rule("nvdla.feature/size-overflow");
  const uint64_t ss = c.layout.get_int("surface_stride");
  f.packed_surfaces = ss == 0;
  f.surface_stride = f.packed_surfaces ? surface_bytes.value() : ss;
  if (!f.packed_surfaces) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.feature/surface-stride-align-32", "feature data cube", "surface stride", ss, kFeatureAtomBytes));
    if (ss < surface_bytes.value()) {
      return Status::invalid("feature data cube: surface stride " + num(ss) + " is smaller than one surface of H = " +
                             num(f.H) + " lines, H * line stride = " + num(surface_bytes.value()) +
                             " bytes (Feature Data Format)").with_rule("nvdla.feature/surface-stride-covers-surface");
    }
  }
  Checked size = Checked(f.surfaces) * f.surface_stride;
  if (!size.ok() || size.value() > kMaxBytes) {
    return Status::invalid("feature data: surfaces * surface stride overflows 2^60 bytes (bit offsets are 64-bit)").with_rule("nvdla.feature/size-overflow");
  }
  f.size = size.value();
  return f;
}

// "The order is C' (32byte) -> W -> H -> C (surfaces)": element (c, h, w) is
// element c mod C' of the atom at (w, h) of surface floor(c / C').
uint64_t feature_offset(const Feature& f, uint64_t c, uint64_t h, uint64_t w) {
  return (c / f.atom_elements) * f.surface_stride + h * f.line_stride + w * kFeatureAtomBytes +
         (c % f.atom_elements) * f.element_bytes;
}

// Walks the scan order "W (line) -> H (height) -> C (channel)" over the atoms,
// C' inside each atom, and hands every (place, logical element) pair to `visit`;
// channels past C (the padding added "into end of channel") have no element.
template <typename Visit>
void feature_scan(const Feature& f, Visit visit) {
  for (uint64_t s = 0; s < f.surfaces; ++s) {          // C (surfaces), slowest
    for (uint64_t h = 0; h < f.H; ++h) {                // H
      for (uint64_t w = 0; w < f.W; ++w) {              // W (line)
        const uint64_t atom = s * f.surface_stride + h * f.line_stride + w * kFeatureAtomBytes;
        for (uint64_t ci = 0; ci < f.atom_elements; ++ci) {  // C' (32 bytes), fastest
          const uint64_t c = s * f.atom_elements + ci;
          if (c < f.C) visit(atom + ci * f.element_bytes, (c * f.H + h) * f.W + w);
        }
      }
    }
  }
}

// ---- Multi-batch feature data ------------------------------------------------------
//
// "To improve the performance DLA engine also applies some options like
// Winograd, weight compression and multi-batch mode." The data cube of each
// batch is feature data; table "Requirements of alignment" gives feature data
// cubes a 32-byte "alignment of planar/cube stride": batch n's cube starts
// n * batch stride bytes after batch 0's. A cube must fit its stride, like a
// surface its lines (oracles/ERRATA.md, NVDLA 24).

struct Batch {
  Feature f;  // the cube of one batch
  uint64_t N = 0, batch_stride = 0, size = 0;
};

Result<Batch> batch_model(const Case& c) {
  Batch b;
  b.N = c.shape[0];
  Case cube = c;
  cube.shape = {c.shape[1], c.shape[2], c.shape[3]};
  LC_ASSIGN_OR_RETURN(b.f, feature_model(cube));
  const uint64_t bs = c.layout.get_int("batch_stride");
  b.batch_stride = bs == 0 ? b.f.size : bs;
  if (bs != 0) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.feature/batch-stride-align-32", "feature data cube", "batch (cube) stride", bs,
                                       kFeatureAtomBytes));
    if (bs < b.f.size) {
      return Status::invalid("feature data cube: batch stride " + num(bs) + " is smaller than one cube of " +
                             num(b.f.surfaces) + " surfaces, surfaces * surface stride = " + num(b.f.size) +
                             " bytes (Feature Data Format)").with_rule("nvdla.feature/batch-stride-covers-cube");
    }
  }
  Checked size = Checked(b.N) * b.batch_stride;
  if (!size.ok() || size.value() > kMaxBytes) {
    return Status::invalid("feature data: N * batch stride overflows 2^60 bytes (bit offsets are 64-bit)").with_rule("nvdla.feature/size-overflow");
  }
  b.size = size.value();
  return b;
}

uint64_t batch_offset(const Batch& b, uint64_t n, uint64_t c, uint64_t h, uint64_t w) {
  return n * b.batch_stride + feature_offset(b.f, c, h, w);
}

// Batch by batch, the feature data scan of its cube.
template <typename Visit>
void batch_scan(const Batch& b, Visit visit) {
  const uint64_t cube_elements = b.f.C * b.f.H * b.f.W;
  for (uint64_t n = 0; n < b.N; ++n) {
    feature_scan(b.f, [&](uint64_t place, uint64_t index) { visit(n * b.batch_stride + place, n * cube_elements + index); });
  }
}

// ---- Basic Weight for Direct Convolution ---------------------------------------

constexpr uint64_t kCubeElements = 64;    // "Divide each kernel to 1x1x64-element small cubes."
constexpr uint64_t kWeightEndAlign = 128; // "Append 0s at end of all mapped weight for 128-byte alignment."
constexpr uint64_t kWeightAddrAlign = 256;

struct Weights {
  uint64_t K = 0, C = 0, H = 0, W = 0;
  uint64_t element_bytes = 1;
  uint64_t group_kernels = 32;  // 32 for int8, 16 for int16 / fp16
  uint64_t groups = 0;
  uint64_t data_bytes = 0, size = 0, addr = 0;
  // Weight for image input: the pre-extended line has W*C channels; with
  // post-extension e, e lines make one line of e*W*C channels.
  bool image = false;
  uint64_t ext = 1, line_channels = 0, lines = 0, full_width = 0;
};

Result<Weights> weight_model(const Case& c) {
  LC_RETURN_IF_ERROR(check_precision(c.dtype));
  Weights m;
  m.K = c.shape[0], m.C = c.shape[1], m.H = c.shape[2], m.W = c.shape[3];
  m.element_bytes = dtype_bits(c.dtype) / 8;
  // "For int16 and fp16 weight, one group has 16 kernels. For int8, one group has 32 kernels."
  m.group_kernels = c.dtype == DType::kInt8 ? 32 : 16;
  m.groups = ceil_div(m.K, m.group_kernels);
  m.addr = c.layout.get_int("addr");
  LC_RETURN_IF_ERROR(check_alignment("nvdla.weight/start-address-align-256", "weight", "start address", m.addr, kWeightAddrAlign));
  m.image = c.layout.name == "nvdla.weight.image";
  m.ext = c.layout.get_int("post_extension");
  // Table "Weight formats and options": post-extension is supported for weight
  // for image input only.
  if (!m.image && m.ext != 1) {
    return Status::invalid("post_extension=" + num(m.ext) + ": weight for DC does NOT support the post-extension "
                           "option (Weight formats and options)").with_rule("nvdla.weight.dc/no-post-extension");
  }
  if (m.image) {
    // "Channel post-extension only support 2-line and 4-line." "1, 2 and 4 parameters are available."
    if (m.ext != 1 && m.ext != 2 && m.ext != 4) {
      return Status::invalid("post_extension=" + num(m.ext) + ": channel post-extension takes 1, 2 or 4 lines "
                             "(Channel Post-extension for image input)").with_rule("nvdla.weight.image/post-extension-1-2-4");
    }
    // Pre-extension: "turn all weights in same line to a single channel".
    Checked line_channels = Checked(m.W) * m.C;
    if (!line_channels.ok()) return Status::invalid("weight: W * C overflows").with_rule("nvdla.weight/size-overflow");
    m.line_channels = line_channels.value();
    // "It allows two-line (C<=32) or four-line (C<=16) combination", C being the
    // pre-extended channel size W*C (oracles/ERRATA.md).
    const uint64_t limit = m.ext == 2 ? 32 : 16;
    if (m.ext != 1 && m.line_channels > limit) {
      return Status::invalid("post_extension=" + num(m.ext) + " needs the pre-extended channel size W*C = " + num(m.W) +
                             "*" + num(m.C) + " = " + num(m.line_channels) + " <= " + num(limit) +
                             " (Channel Post-extension for image input)").with_rule("nvdla.weight.image/post-extension-channels");
    }
    m.lines = ceil_div(m.H, m.ext);
    m.full_width = m.ext * m.line_channels;
  }
  Checked data = Checked(m.K) * m.C * m.H * m.W * m.element_bytes;
  if (!data.ok()) return Status::invalid("weight: K * C * H * W * element bytes overflows").with_rule("nvdla.weight/size-overflow");
  m.data_bytes = data.value();
  // "Append 0s at end of all mapped weight for 128-byte alignment."
  Checked size = Checked(ceil_div(m.data_bytes, kWeightEndAlign)) * kWeightEndAlign;
  if (!size.ok() || size.value() > kMaxBytes) {
    return Status::invalid("weight: size overflows 2^60 bytes (bit offsets are 64-bit)").with_rule("nvdla.weight/size-overflow");
  }
  m.size = size.value();
  return m;
}

uint64_t kernels_in_group(const Weights& m, uint64_t g) {
  // "Last group can have fewer kernels."
  return std::min(m.group_kernels, m.K - g * m.group_kernels);
}

// Offset of (k, c, h, w). Groups are mapped compactly one after another; inside
// a group, the cubes of channel block cc come after the full 64-element cubes
// of the blocks before; within block cc, (h, w, kernel) select a cube of C'
// elements, C' = 64 or what is left of C ("Do not append 0 if channel size is
// not divisible").
uint64_t weight_offset(const Weights& m, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  const uint64_t g = k / m.group_kernels, kk = k % m.group_kernels, gk = kernels_in_group(m, g);
  const uint64_t group_base = g * m.group_kernels * m.C * m.H * m.W;  // elements of the full groups before
  const uint64_t cc = c / kCubeElements, c0 = cc * kCubeElements;
  const uint64_t cw = std::min(kCubeElements, m.C - c0);
  const uint64_t element = group_base + c0 * m.H * m.W * gk + ((h * m.W + w) * gk + kk) * cw + (c - c0);
  return element * m.element_bytes;
}

// "Scan the 1x1xC' small cubes in a group with C'->K->W->H->C sequence. Here C'
// changes fastest and C changes slowest. And map them compactly as scanning
// sequence." "Map the weight groups compactly."
template <typename Visit>
void weight_scan(const Weights& m, Visit visit) {
  uint64_t place = 0;
  for (uint64_t g = 0; g < m.groups; ++g) {
    const uint64_t k0 = g * m.group_kernels, gk = kernels_in_group(m, g);
    for (uint64_t c0 = 0; c0 < m.C; c0 += kCubeElements) {   // C, slowest
      const uint64_t cw = std::min(kCubeElements, m.C - c0);
      for (uint64_t h = 0; h < m.H; ++h) {                   // H
        for (uint64_t w = 0; w < m.W; ++w) {                 // W
          for (uint64_t kk = 0; kk < gk; ++kk) {             // K
            for (uint64_t ci = 0; ci < cw; ++ci) {           // C', fastest
              const uint64_t k = k0 + kk, c = c0 + ci;
              visit(place, ((k * m.C + c) * m.H + h) * m.W + w);
              place += m.element_bytes;
            }
          }
        }
      }
    }
  }
}

// ---- Basic Weight for image input --------------------------------------------------

// Channels of extended line j: e lines of W*C channels, fewer in the last line
// when H is not divisible by e ("do NOT append 0s").
uint64_t image_line_width(const Weights& m, uint64_t j) {
  return std::min(m.ext, m.H - j * m.ext) * m.line_channels;
}

// Pre-extension: weight (c, h, w) becomes channel w*C + c of line h (a line of
// an image is W pixels of C interleaved components). Post-extension: lines
// e*j .. e*j+e-1 become line j, line h's channels after those of line h-1.
void image_extend(const Weights& m, uint64_t c, uint64_t h, uint64_t w, uint64_t* line, uint64_t* channel) {
  const uint64_t pre_channel = w * m.C + c;
  *line = h / m.ext;
  *channel = (h % m.ext) * m.line_channels + pre_channel;
}

// "Then all extended kernels follow the same steps of weight for direct
// convolution": the extended kernel is lines x 1 x width, mapped C' -> K -> W
// (of 1) -> H (lines) -> C (64-element blocks).
uint64_t image_offset(const Weights& m, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  uint64_t j = 0, ci = 0;
  image_extend(m, c, h, w, &j, &ci);
  const uint64_t g = k / m.group_kernels, kk = k % m.group_kernels, gk = kernels_in_group(m, g);
  const uint64_t group_base = g * m.group_kernels * m.C * m.H * m.W;
  const uint64_t c0 = ci / kCubeElements * kCubeElements;
  // Blocks before c0 are full in every line (widths past 64 only without post-extension).
  const uint64_t before_blocks = c0 * m.lines * gk;
  // Lines before j are full width; only the last line can be narrower.
  const uint64_t before_lines = j * gk * std::min(kCubeElements, m.full_width - c0);
  const uint64_t cw = std::min(kCubeElements, image_line_width(m, j) - c0);
  return (group_base + before_blocks + before_lines + kk * cw + (ci - c0)) * m.element_bytes;
}

template <typename Visit>
void image_scan(const Weights& m, Visit visit) {
  // The extended kernels, as the inverse of image_extend: line j, channel ci.
  auto logical = [&](uint64_t k, uint64_t j, uint64_t ci) {
    const uint64_t h = j * m.ext + ci / m.line_channels, pre = ci % m.line_channels;
    const uint64_t w = pre / m.C, c = pre % m.C;
    return ((k * m.C + c) * m.H + h) * m.W + w;
  };
  uint64_t place = 0;
  for (uint64_t g = 0; g < m.groups; ++g) {
    const uint64_t k0 = g * m.group_kernels, gk = kernels_in_group(m, g);
    for (uint64_t c0 = 0; c0 < m.full_width; c0 += kCubeElements) {  // C, slowest
      for (uint64_t j = 0; j < m.lines; ++j) {                       // H (extended lines); W is 1
        const uint64_t width = image_line_width(m, j);
        if (width <= c0) continue;
        const uint64_t cw = std::min(kCubeElements, width - c0);
        for (uint64_t kk = 0; kk < gk; ++kk) {                       // K
          for (uint64_t ci = 0; ci < cw; ++ci) {                     // C', fastest
            visit(place, logical(k0 + kk, j, c0 + ci));
            place += m.element_bytes;
          }
        }
      }
    }
  }
}

// ---- Weight for deconvolution: "Set split for deconvolution" ---------------------
//
// The document lists deconvolution weights and their mandatory "Set split for
// deconvolution" without describing them (oracles/ERRATA.md, NVDLA 22). The
// reading: a deconvolution of stride (stride_x, stride_y) runs as
// stride_x * stride_y direct convolutions, one per output phase; set (p, q)
// holds the taps of rows p, p + sy, p + 2sy, ... and columns q, q + sx, ... of
// every kernel, a K x C x ceil(H/sy) x ceil(W/sx) kernel whose taps past the
// original kernel are appended 0s. Sets are mapped in order y phase, then x
// phase (q fastest), each as weight for direct convolution (with its 128-byte
// tail), and each set starts at a 256-byte boundary after the previous one
// ("uncompressed/compressed weight: alignment of start address 256 bytes").

constexpr uint64_t kDeconvSetAlign = 256;

struct Deconv {
  uint64_t K = 0, C = 0, H = 0, W = 0, sx = 1, sy = 1;
  uint64_t set_h = 0, set_w = 0, sets = 0;
  uint64_t set_size = 0, set_stride = 0, size = 0, addr = 0;
  Weights set;  // the weight-for-DC model of one set
};

Result<Deconv> deconv_model(const Case& c) {
  LC_RETURN_IF_ERROR(check_precision(c.dtype));
  Deconv d;
  d.K = c.shape[0], d.C = c.shape[1], d.H = c.shape[2], d.W = c.shape[3];
  d.sx = c.layout.get_int("stride_x"), d.sy = c.layout.get_int("stride_y");
  d.addr = c.layout.get_int("addr");
  LC_RETURN_IF_ERROR(check_alignment("nvdla.weight/start-address-align-256", "weight", "start address", d.addr, kWeightAddrAlign));
  // Table "Weight formats and options": "Weight for deconvolution | Support | NOT support".
  const uint64_t ext = c.layout.get_int("post_extension");
  if (ext != 1) {
    return Status::invalid("post_extension=" + num(ext) + ": weight for deconvolution does NOT support the "
                           "post-extension option (Weight formats and options)").with_rule("nvdla.weight.deconv/no-post-extension");
  }
  d.set_h = ceil_div(d.H, d.sy), d.set_w = ceil_div(d.W, d.sx);
  d.sets = d.sx * d.sy;
  Case set_case = c;
  set_case.layout = Layout{"nvdla.weight.dc", {{"addr", "0"}, {"post_extension", "1"}}};
  set_case.shape = {static_cast<int64_t>(d.K), static_cast<int64_t>(d.C), static_cast<int64_t>(d.set_h),
                    static_cast<int64_t>(d.set_w)};
  Result<Weights> set = weight_model(set_case);
  if (!set.ok()) {
    return Status::invalid("deconvolution weight: a set of " + num(d.K) + "x" + num(d.C) + "x" + num(d.set_h) + "x" +
                           num(d.set_w) + " overflows 2^60 bytes").with_rule("nvdla.weight/size-overflow");
  }
  d.set = *set;
  d.set_size = d.set.size;
  d.set_stride = ceil_div(d.set_size, kDeconvSetAlign) * kDeconvSetAlign;
  // The last set ends at its own 128-byte tail.
  Checked size = Checked(d.sets - 1) * d.set_stride + d.set_size;
  if (!size.ok() || size.value() > kMaxBytes) {
    return Status::invalid("deconvolution weight: " + num(d.sets) + " sets of " + num(d.set_stride) +
                           " bytes overflow 2^60 bytes").with_rule("nvdla.weight/size-overflow");
  }
  d.size = size.value();
  return d;
}

// Tap (h, w) of a kernel is tap (h / sy, w / sx) of set (h mod sy, w mod sx).
uint64_t deconv_offset(const Deconv& d, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  const uint64_t set = (h % d.sy) * d.sx + (w % d.sx);
  return set * d.set_stride + weight_offset(d.set, k, c, h / d.sy, w / d.sx);
}

// Set by set, the weight-for-DC scan of the set's kernels; a tap of the set
// past the original kernel has no element (an appended 0).
template <typename Visit, typename Pad>
void deconv_scan(const Deconv& d, Visit visit, Pad pad) {
  for (uint64_t p = 0; p < d.sy; ++p) {
    for (uint64_t q = 0; q < d.sx; ++q) {
      const uint64_t base = (p * d.sx + q) * d.set_stride;
      weight_scan(d.set, [&](uint64_t place, uint64_t set_index) {
        const uint64_t j = set_index % d.set_w, i = set_index / d.set_w % d.set_h, kc = set_index / (d.set_w * d.set_h);
        const uint64_t h = i * d.sy + p, w = j * d.sx + q;
        if (h < d.H && w < d.W) visit(base + place, kc * d.H * d.W + h * d.W + w);
        else pad(base + place);
      });
    }
  }
}

// ---- Basic Weight for Winograd Convolution (phase 2) ---------------------------------
//
// The layout is over the converted kernels (K, C, 4, 4); phase 1 (padding C,
// G W G^T) is nvdla::winograd_transform (reference/nvdla_winograd.cc).

constexpr uint64_t kWinogradCubeChannels = 4;  // "4x4x4 elements small cubes"

struct Winograd {
  uint64_t K = 0, C = 0, padded_C = 0, element_bytes = 1, group_kernels = 32, groups = 0;
  uint64_t data_bytes = 0, size = 0, addr = 0;
};

Result<Winograd> winograd_model(const Case& c) {
  LC_RETURN_IF_ERROR(check_precision(c.dtype));
  Winograd m;
  m.K = c.shape[0], m.C = c.shape[1];
  // "The width and height of a kernel should be 4 after conversion."
  if (c.shape[2] != 4 || c.shape[3] != 4) {
    return Status::invalid("Winograd weight: the converted kernel is " + num(c.shape[2]) + "x" + num(c.shape[3]) +
                           ", the width and height of a kernel should be 4 after conversion (Basic Weight for "
                           "Winograd Convolution)").with_rule("nvdla.weight.winograd/kernel-4x4");
  }
  // Table "Weight formats and options": "Weight for Winograd | Support | NOT support";
  // "Channel post-extension cannot be used in Winograd convolution".
  const uint64_t ext = c.layout.get_int("post_extension");
  if (ext != 1) {
    return Status::invalid("post_extension=" + num(ext) + ": weight for Winograd does NOT support the post-extension "
                           "option (Weight formats and options)").with_rule("nvdla.weight.winograd/no-post-extension");
  }
  m.element_bytes = dtype_bits(c.dtype) / 8;
  // "Divide kernels to 1x1x32Byte small cubes. If the channel size is not divisible by 32, append 0s."
  m.padded_C = ceil_div(m.C, 32 / m.element_bytes) * (32 / m.element_bytes);
  // "For int16 and fp16 weight, one group has 16 kernels. For int8, one group has 32 kernels."
  m.group_kernels = c.dtype == DType::kInt8 ? 32 : 16;
  m.groups = ceil_div(m.K, m.group_kernels);
  m.addr = c.layout.get_int("addr");
  LC_RETURN_IF_ERROR(check_alignment("nvdla.weight/start-address-align-256", "weight", "start address", m.addr, kWeightAddrAlign));
  Checked data = Checked(m.K) * m.padded_C * 16 * m.element_bytes;
  Checked size = Checked(ceil_div(data.value(), kWeightEndAlign)) * kWeightEndAlign;
  if (!data.ok() || !size.ok() || size.value() > kMaxBytes) return Status::invalid("Winograd weight: size overflows").with_rule("nvdla.weight/size-overflow");
  m.data_bytes = data.value();
  m.size = size.value();
  return m;
}

uint64_t winograd_kernels_in_group(const Winograd& m, uint64_t g) { return std::min(m.group_kernels, m.K - g * m.group_kernels); }

// Inside a 4x4x4 cube the 4 channels change fastest, then W, then H (the C'
// first convention of every other NVDLA format; oracles/ERRATA.md).
uint64_t winograd_in_cube(uint64_t ci, uint64_t h, uint64_t w) { return (h * 4 + w) * kWinogradCubeChannels + ci; }

// "Scan the 4x4x4 elements small cubes in a group with K->C sequence ... small
// cube 0 of K0, small cube 0 of K1, ..., small cube 0 of K15, small cube 1 of K0"
uint64_t winograd_offset(const Winograd& m, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  const uint64_t g = k / m.group_kernels, kk = k % m.group_kernels, gk = winograd_kernels_in_group(m, g);
  const uint64_t group_base = g * m.group_kernels * m.padded_C * 16;
  const uint64_t cube = c / kWinogradCubeChannels;
  return (group_base + (cube * gk + kk) * 64 + winograd_in_cube(c % kWinogradCubeChannels, h, w)) * m.element_bytes;
}

template <typename Visit>
void winograd_scan(const Winograd& m, Visit visit) {
  uint64_t place = 0;
  for (uint64_t g = 0; g < m.groups; ++g) {           // "Maps the weight groups one by one closely"
    const uint64_t k0 = g * m.group_kernels, gk = winograd_kernels_in_group(m, g);
    for (uint64_t cube = 0; cube < m.padded_C / kWinogradCubeChannels; ++cube) {  // C
      for (uint64_t kk = 0; kk < gk; ++kk) {                                      // K
        for (uint64_t h = 0; h < 4; ++h) {
          for (uint64_t w = 0; w < 4; ++w) {
            for (uint64_t ci = 0; ci < kWinogradCubeChannels; ++ci) {
              const uint64_t c = cube * kWinogradCubeChannels + ci;
              // Channels past C are the appended 0s.
              if (c < m.C) visit(place, (((k0 + kk) * m.C + c) * 4 + h) * 4 + w);
              place += m.element_bytes;
            }
          }
        }
      }
    }
  }
}

// ---- Pixel Format ------------------------------------------------------------------

// Table "Pixel formats and valid setting": name, # of planar, valid channel size,
// valid input precision, valid X offset range; plus what the name spells: its
// components and the bits each one occupies in memory. 10-, 12- and 16-bit
// components of the other formats sit in 16-bit containers; the 2+10+10+10
// formats are 32-bit words of bit fields (oracles/ERRATA.md).
struct PixelFormat {
  const char* name;
  uint64_t planes, channels;
  DType precision;
  uint64_t x_max;
  const char* letters;     // the components, in the order of the name
  uint64_t field_bits[4];  // bits of each component, in the order of the name
  // 10- and 12-bit components in 16-bit containers: the bits of the value, the
  // low bits of its container (LSB-justified, oracles/ERRATA.md, NVDLA 25); 0:
  // the value fills its field.
  uint64_t value_bits = 0;
};

// The bits of component c's value: the name's component width.
uint64_t value_width(const PixelFormat& f, uint64_t c) { return f.value_bits ? f.value_bits : f.field_bits[c]; }

constexpr PixelFormat kPixelFormats[] = {
    {"T_R8", 1, 1, DType::kInt8, 31, "R", {8}},
    {"T_R10", 1, 1, DType::kInt16, 15, "R", {16}, 10},
    {"T_R12", 1, 1, DType::kInt16, 15, "R", {16}, 12},
    {"T_R16", 1, 1, DType::kInt16, 15, "R", {16}},
    {"T_R16_I", 1, 1, DType::kInt16, 15, "R", {16}},
    {"T_R16_F", 1, 1, DType::kInt16, 15, "R", {16}},
    {"T_A16B16G16R16", 1, 4, DType::kInt16, 3, "ABGR", {16, 16, 16, 16}},
    {"T_X16B16G16R16", 1, 4, DType::kInt16, 3, "XBGR", {16, 16, 16, 16}},
    {"T_A16B16G16R16_F", 1, 4, DType::kFp16, 3, "ABGR", {16, 16, 16, 16}},
    {"T_A16Y16U16V16", 1, 4, DType::kInt16, 3, "AYUV", {16, 16, 16, 16}},
    {"T_V16U16Y16A16", 1, 4, DType::kInt16, 3, "VUYA", {16, 16, 16, 16}},
    {"T_A16Y16U16V16_F", 1, 4, DType::kFp16, 3, "AYUV", {16, 16, 16, 16}},
    {"T_A8B8G8R8", 1, 4, DType::kInt8, 7, "ABGR", {8, 8, 8, 8}},
    {"T_A8R8G8B8", 1, 4, DType::kInt8, 7, "ARGB", {8, 8, 8, 8}},
    {"T_B8G8R8A8", 1, 4, DType::kInt8, 7, "BGRA", {8, 8, 8, 8}},
    {"T_R8G8B8A8", 1, 4, DType::kInt8, 7, "RGBA", {8, 8, 8, 8}},
    {"T_X8B8G8R8", 1, 4, DType::kInt8, 7, "XBGR", {8, 8, 8, 8}},
    {"T_X8R8G8B8", 1, 4, DType::kInt8, 7, "XRGB", {8, 8, 8, 8}},
    {"T_B8G8R8X8", 1, 4, DType::kInt8, 7, "BGRX", {8, 8, 8, 8}},
    {"T_R8G8B8X8", 1, 4, DType::kInt8, 7, "RGBX", {8, 8, 8, 8}},
    {"T_A2B10G10R10", 1, 4, DType::kInt16, 7, "ABGR", {2, 10, 10, 10}},
    {"T_A2R10G10B10", 1, 4, DType::kInt16, 7, "ARGB", {2, 10, 10, 10}},
    {"T_B10G10R10A2", 1, 4, DType::kInt16, 7, "BGRA", {10, 10, 10, 2}},
    {"T_R10G10B10A2", 1, 4, DType::kInt16, 7, "RGBA", {10, 10, 10, 2}},
    {"T_A2Y10U10V10", 1, 4, DType::kInt16, 7, "AYUV", {2, 10, 10, 10}},
    {"T_V10U10Y10A2", 1, 4, DType::kInt16, 7, "VUYA", {10, 10, 10, 2}},
    {"T_A8Y8U8V8", 1, 4, DType::kInt8, 7, "AYUV", {8, 8, 8, 8}},
    {"T_V8U8Y8A8", 1, 4, DType::kInt8, 7, "VUYA", {8, 8, 8, 8}},
    {"T_Y8___U8V8_N444", 2, 3, DType::kInt8, 31, "YUV", {8, 8, 8}},
    {"T_Y8___V8U8_N444", 2, 3, DType::kInt8, 31, "YVU", {8, 8, 8}},
    {"T_Y10___U10V10_N444", 2, 3, DType::kInt16, 15, "YUV", {16, 16, 16}, 10},
    {"T_Y10___V10U10_N444", 2, 3, DType::kInt16, 15, "YVU", {16, 16, 16}, 10},
    {"T_Y12___U12V12_N444", 2, 3, DType::kInt16, 15, "YUV", {16, 16, 16}, 12},
    {"T_Y12___V12U12_N444", 2, 3, DType::kInt16, 15, "YVU", {16, 16, 16}, 12},
    {"T_Y16___U16V16_N444", 2, 3, DType::kInt16, 15, "YUV", {16, 16, 16}},
    {"T_Y16___V16U16_N444", 2, 3, DType::kInt16, 15, "YVU", {16, 16, 16}},
};

struct Pixel {
  const PixelFormat* format = nullptr;
  uint64_t H = 0, W = 0, C = 0;
  uint64_t y_pixel_bytes = 1, uv_pixel_bytes = 0;  // plane 0 and (semi-planar) plane 1
  uint64_t x_offset = 0, line_stride = 0, uv_line_stride = 0, uv_offset = 0, size = 0, addr = 0;
};

Result<Pixel> pixel_model(const Case& c) {
  Pixel m;
  const std::string name = c.layout.get("format");
  for (const PixelFormat& f : kPixelFormats) {
    if (name == f.name) m.format = &f;
  }
  if (m.format == nullptr) return Status::invalid("unknown pixel format " + name + " (Pixel Format)").with_rule("nvdla.pixel/format");
  const PixelFormat& f = *m.format;
  m.H = c.shape[0], m.W = c.shape[1], m.C = c.shape[2];
  // "Channel size. The valid channel size highly depends on each format."
  if (m.C != f.channels) {
    return Status::invalid(name + " has a valid channel size of " + num(f.channels) + ", the shape has C = " +
                           num(m.C) + " (Pixel formats and valid setting)").with_rule("nvdla.pixel/channels");
  }
  // "Input precision. The input precision highly depends on pixel each format."
  // "DMA logic will turn unsigned integer value to signed integer value
  // automatically": the unsigned type of the same width is accepted too.
  const bool unsigned_twin = (f.precision == DType::kInt8 && c.dtype == DType::kUInt8) ||
                             (f.precision == DType::kInt16 && c.dtype == DType::kUInt16);
  if (c.dtype != f.precision && !unsigned_twin) {
    return Status::invalid(name + " has input precision " + dtype_name(f.precision) + ", not " + dtype_name(c.dtype) +
                           " (Pixel formats and valid setting)").with_rule("nvdla.pixel/precision");
  }
  // A pixel is one word per plane: semi-planar formats ("___" between the
  // planes) hold Y in plane 0 and the two chroma components of each pixel
  // ("N444": one pair per pixel) as one word of plane 1.
  if (f.planes == 2) {
    m.y_pixel_bytes = f.field_bits[0] / 8;
    m.uv_pixel_bytes = (f.field_bits[1] + f.field_bits[2]) / 8;
  } else {
    uint64_t word_bits = 0;
    for (uint64_t i = 0; i < f.channels; ++i) word_bits += f.field_bits[i];
    m.y_pixel_bytes = word_bits / 8;
  }
  m.x_offset = c.layout.get_int("x_offset");
  // "NVDLA use x offset to indicate how many redundant data are. The unit of offset is pixel."
  if (m.x_offset > f.x_max) {
    return Status::invalid(name + ": x offset " + num(m.x_offset) + " is outside the valid X offset range 0~" +
                           num(f.x_max) + " (Pixel formats and valid setting)").with_rule("nvdla.pixel/x-offset-range");
  }
  m.addr = c.layout.get_int("addr");
  // "Both start address and line stride of pitch linear shall aligned to 32 bytes."
  LC_RETURN_IF_ERROR(check_alignment("nvdla.pixel/start-address-align-32", "pitch linear pixel", "start address", m.addr, 32));
  Checked line = (Checked(m.x_offset) + m.W) * m.y_pixel_bytes;
  if (!line.ok() || line.value() > kMaxBytes) return Status::invalid("pixel: line overflows").with_rule("nvdla.pixel/size-overflow");
  const uint64_t ls = c.layout.get_int("line_stride");
  m.line_stride = ls == 0 ? round_up32(line.value()) : ls;
  if (ls != 0) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.pixel/line-stride-align-32", "pitch linear pixel", "line stride", ls, 32));
    if (ls < line.value()) {
      return Status::invalid("pitch linear pixel: line stride " + num(ls) + " is smaller than x offset + W = " +
                             num(m.x_offset) + " + " + num(m.W) + " pixels of " + num(m.y_pixel_bytes) + " bytes = " +
                             num(line.value()) + " bytes (Pixel Format)").with_rule("nvdla.pixel/line-stride-covers-line");
    }
  }
  Checked plane = Checked(m.H) * m.line_stride;
  if (!plane.ok() || plane.value() > kMaxBytes) return Status::invalid("pixel: plane overflows").with_rule("nvdla.pixel/size-overflow");
  m.size = plane.value();
  if (f.planes == 2) {
    Checked uv_line = (Checked(m.x_offset) + m.W) * m.uv_pixel_bytes;
    if (!uv_line.ok() || uv_line.value() > kMaxBytes) return Status::invalid("pixel: UV line overflows").with_rule("nvdla.pixel/size-overflow");
    const uint64_t uls = c.layout.get_int("uv_line_stride");
    m.uv_line_stride = uls == 0 ? round_up32(uv_line.value()) : uls;
    if (uls != 0) {
      LC_RETURN_IF_ERROR(check_alignment("nvdla.pixel/uv-line-stride-align-32", "pitch linear pixel", "UV line stride", uls, 32));
      if (uls < uv_line.value()) {
        return Status::invalid("pitch linear pixel: UV line stride " + num(uls) + " is smaller than x offset + W = " +
                               num(m.x_offset) + " + " + num(m.W) + " pixels of " + num(m.uv_pixel_bytes) +
                               " bytes = " + num(uv_line.value()) + " bytes (Pixel Format)").with_rule("nvdla.pixel/uv-line-stride-covers-line");
      }
    }
    const uint64_t uo = c.layout.get_int("uv_offset");
    m.uv_offset = uo == 0 ? plane.value() : uo;
    if (uo != 0) {
      // The UV plane starts at its own 32-byte aligned address.
      LC_RETURN_IF_ERROR(check_alignment("nvdla.pixel/uv-offset-align-32", "pitch linear pixel", "UV plane offset", uo, 32));
      if (uo < plane.value()) {
        return Status::invalid("pitch linear pixel: UV plane offset " + num(uo) + " overlaps the Y plane of H * line "
                               "stride = " + num(plane.value()) + " bytes (Pixel Format)").with_rule("nvdla.pixel/uv-offset-after-y");
      }
    }
    Checked size = Checked(m.uv_offset) + Checked(m.H) * m.uv_line_stride;
    if (!size.ok() || size.value() > kMaxBytes) return Status::invalid("pixel: size overflows").with_rule("nvdla.pixel/size-overflow");
    m.size = size.value();
  } else if (c.layout.get_int("uv_line_stride") != 0 || c.layout.get_int("uv_offset") != 0) {
    return Status::invalid(name + " has one plane: uv_line_stride and uv_offset do not apply (Pixel Format)").with_rule("nvdla.pixel/single-plane-no-uv");
  }
  return m;
}

// Pitch linear: line h at h * line stride, pixel w at (x offset + w) pixels of
// its plane; for semi-planar formats, c = 0 (Y) in plane 0, c = 1, 2 in plane 1.
// Within a pixel's little-endian word the name lists components from the most
// significant bits to the least (NVIDIA's color format naming, ERRATA), so a
// component lies above the bits of the components named after it in its word.
uint64_t bits_below(const PixelFormat& f, uint64_t c) {
  const uint64_t word_end = f.planes == 2 && c == 0 ? 1 : f.channels;  // components of c's word end here
  uint64_t below = 0;
  for (uint64_t j = c + 1; j < word_end; ++j) below += f.field_bits[j];
  return below;
}

uint64_t pixel_offset_bits(const Pixel& m, uint64_t h, uint64_t w, uint64_t c) {
  const bool uv = m.format->planes == 2 && c > 0;
  const uint64_t word = uv ? m.uv_offset + h * m.uv_line_stride + (m.x_offset + w) * m.uv_pixel_bytes
                           : h * m.line_stride + (m.x_offset + w) * m.y_pixel_bytes;
  return word * 8 + bits_below(*m.format, c);
}

// A value that does not fit its field (the 2- and 10-bit fields of the packed
// formats) is an error, not a silent truncation.
Status pixel_value_error(const Pixel& m, DType t, uint64_t h, uint64_t w, uint64_t ch, uint64_t value) {
  const uint64_t bits = value_width(*m.format, ch);
  const int64_t shown = t == DType::kInt16 ? static_cast<int16_t>(value) : t == DType::kInt8 ? static_cast<int8_t>(value)
                                                                                           : static_cast<int64_t>(value);
  return Status::invalid(std::string(m.format->name) + ": component " + m.format->letters[ch] + " of pixel (" + num(h) +
                         ", " + num(w) + ") is " + std::to_string(shown) + ", which does not fit its " + num(bits) +
                         "-bit field (0~" + num((uint64_t{1} << bits) - 1) + ") (Pixel formats and valid setting)").with_rule("nvdla.pixel/component-fits");
}

// ---- SDP auxiliary data: bias, PReLU, batch normalization, element-wise -------------

struct Sdp {
  bool per_element = false;
  std::string use;
  uint64_t C = 0, H = 1, W = 1, P = 1;
  uint64_t element_per_atom = 32, bytes_per_component = 1, bytes_per_atom = 32;
  uint64_t atoms_in_c = 0;  // ceil(C / ElementPerAtom): surfaces (per element) or atoms (per channel)
  uint64_t line_stride = 0, surface_stride = 0, size = 0, addr = 0;
};


Result<Sdp> sdp_model(const Case& c) {
  LC_RETURN_IF_ERROR(check_precision(c.dtype));
  Sdp m;
  m.per_element = c.layout.name == "nvdla.sdp.element";
  m.use = c.layout.get("use");
  std::string proc = c.layout.get("proc");
  if (proc == "same") proc = dtype_name(c.dtype);
  // "In FP16 types, each ... is 2 byte": fp16 data goes with fp16 processing.
  if ((proc == "fp16") != (c.dtype == DType::kFp16)) {
    return Status::invalid("SDP data: " + std::string(dtype_name(c.dtype)) + " components with PROC_PRECISION " + proc +
                           ": fp16 data needs fp16 processing and fp16 processing needs fp16 data (Batch "
                           "Normalization Data Format)").with_rule("nvdla.sdp/proc-precision");
  }
  // "ElementPerAtom is decided by PROC_PRECISION": INT8 32, INT16/FP16 16.
  m.element_per_atom = proc == "int8" ? 32 : 16;
  // "ComponentsPerElement is decided by use case": Bias 1, PReLU 1,
  // BatchNormalization 2, Element-wise (only ALU or MUL) 1, (both ALU/MUL) 2.
  const uint64_t components = (m.use == "bn" || m.use == "ew2") ? 2 : 1;
  // "BytesPerComponent is decided by precision (or DATA_SIZE register)": ONE_BYTE 1, TWO_BYTE 2.
  m.bytes_per_component = dtype_bits(c.dtype) / 8;
  // "BytesPerAtom=ElementPerAtom * ComponentsPerElement * BytesPerComponent"
  m.bytes_per_atom = m.element_per_atom * components * m.bytes_per_component;
  m.C = c.shape[0];
  m.P = c.shape.back();
  if (m.P != components) {
    return Status::invalid("SDP data: use " + m.use + " has ComponentsPerElement = " + num(components) +
                           ", the shape's last dimension P is " + num(m.P) + " (Bias Data Format, BytesPerAtom)").with_rule("nvdla.sdp/components-per-element");
  }
  m.atoms_in_c = ceil_div(m.C, m.element_per_atom);
  m.addr = c.layout.get_int("addr");
  const char* format = m.use == "bias" ? "bias" : m.use == "prelu" ? "PReLU" : m.use == "bn" ? "batch normalization"
                                                                                             : "element-wise";
  LC_RETURN_IF_ERROR(check_alignment("nvdla.sdp/start-address-align-32", format, "start address", m.addr, 32));
  if (!m.per_element) {
    // "Per channel ... data is stored in memory in a continuous 1x1xC space": a
    // surface-packed 1x1xC cube of BytesPerAtom atoms, padded to 32 bytes (ERRATA).
    Checked size = Checked(m.atoms_in_c) * m.bytes_per_atom;
    if (!size.ok() || size.value() > kMaxBytes) return Status::invalid("SDP data: size overflows").with_rule("nvdla.sdp/size-overflow");
    m.size = round_up32(size.value());
    return m;
  }
  m.H = c.shape[1], m.W = c.shape[2];
  // Per element: a W x H x C cube in BytesPerAtom atoms, mapped like feature data
  // (C' -> W -> H -> C); line and surface strides aligned to 32 bytes.
  Checked line = Checked(m.W) * m.bytes_per_atom;
  if (!line.ok() || line.value() > kMaxBytes) return Status::invalid("SDP data: W * BytesPerAtom overflows").with_rule("nvdla.sdp/size-overflow");
  const uint64_t ls = c.layout.get_int("line_stride");
  m.line_stride = ls == 0 ? round_up32(line.value()) : ls;
  if (ls != 0) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.sdp/line-stride-align-32", format, "line stride", ls, 32));
    if (ls < line.value()) {
      return Status::invalid(std::string(format) + ": line stride " + num(ls) + " is smaller than one line of W = " +
                             num(m.W) + " atoms of " + num(m.bytes_per_atom) + " bytes = " + num(line.value()) +
                             " bytes (Bias Data Format, BytesPerAtom)").with_rule("nvdla.sdp/line-stride-covers-line");
    }
  }
  Checked surface = Checked(m.H) * m.line_stride;
  if (!surface.ok()) return Status::invalid("SDP data: H * line stride overflows").with_rule("nvdla.sdp/size-overflow");
  const uint64_t ss = c.layout.get_int("surface_stride");
  m.surface_stride = ss == 0 ? surface.value() : ss;
  if (ss != 0) {
    LC_RETURN_IF_ERROR(check_alignment("nvdla.sdp/surface-stride-align-32", format, "surface stride", ss, 32));
    if (ss < surface.value()) {
      return Status::invalid(std::string(format) + ": surface stride " + num(ss) + " is smaller than H = " + num(m.H) +
                             " lines, H * line stride = " + num(surface.value()) + " bytes").with_rule("nvdla.sdp/surface-stride-covers-surface");
    }
  }
  Checked size = Checked(m.atoms_in_c) * m.surface_stride;
  if (!size.ok() || size.value() > kMaxBytes) return Status::invalid("SDP data: size overflows").with_rule("nvdla.sdp/size-overflow");
  m.size = size.value();
  return m;
}

// Element (c, h, w, p): component p of channel c mod ElementPerAtom of the atom
// at (w, h) of surface floor(c / ElementPerAtom); "The pair data of each element
// are always packed together in memory."
uint64_t sdp_offset(const Sdp& m, uint64_t c, uint64_t h, uint64_t w, uint64_t p) {
  const uint64_t atom = m.per_element
                            ? (c / m.element_per_atom) * m.surface_stride + h * m.line_stride + w * m.bytes_per_atom
                            : (c / m.element_per_atom) * m.bytes_per_atom;
  return atom + ((c % m.element_per_atom) * m.P + p) * m.bytes_per_component;
}

// The atoms in order C' -> W -> H -> C, the components of each element together.
template <typename Visit>
void sdp_scan(const Sdp& m, Visit visit) {
  for (uint64_t s = 0; s < m.atoms_in_c; ++s) {
    for (uint64_t h = 0; h < m.H; ++h) {
      for (uint64_t w = 0; w < m.W; ++w) {
        const uint64_t atom = m.per_element ? s * m.surface_stride + h * m.line_stride + w * m.bytes_per_atom
                                            : s * m.bytes_per_atom;
        for (uint64_t ci = 0; ci < m.element_per_atom; ++ci) {
          const uint64_t c = s * m.element_per_atom + ci;
          if (c >= m.C) continue;
          for (uint64_t p = 0; p < m.P; ++p) {
            visit(atom + (ci * m.P + p) * m.bytes_per_component, ((c * m.H + h) * m.W + w) * m.P + p);
          }
        }
      }
    }
  }
}

// ---- the Impl -------------------------------------------------------------------

enum class Kind { kFeature, kBatch, kWeightDc, kWeightImage, kWeightWinograd, kWeightDeconv, kSdp, kPixel, kUnknown };

Kind kind_of(const Case& c) {
  if (c.layout.name == "nvdla.feature") return Kind::kFeature;
  if (c.layout.name == "nvdla.feature.batch") return Kind::kBatch;
  if (c.layout.name == "nvdla.weight.dc") return Kind::kWeightDc;
  if (c.layout.name == "nvdla.weight.image") return Kind::kWeightImage;
  if (c.layout.name == "nvdla.pixel") return Kind::kPixel;
  if (c.layout.name == "nvdla.weight.winograd") return Kind::kWeightWinograd;
  if (c.layout.name == "nvdla.weight.deconv") return Kind::kWeightDeconv;
  if (c.layout.name == "nvdla.sdp.channel" || c.layout.name == "nvdla.sdp.element") return Kind::kSdp;
  return Kind::kUnknown;
}

Status check_case(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr || kind_of(c) == Kind::kUnknown) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  return check_shape(*spec, c.shape);
}

// ---- what the document requires of each byte ----------------------------------------
//
// Element bytes are painted by the same scans pack uses; every other byte gets
// the rule of the document for the place it is in (oracles/ERRATA.md, NVDLA 1).

constexpr const char* kDoc = "nvdla-in-memory-data-formats.txt";

// Feature data, "Feature Data Format":
//   "Adding data into end of channel if the original data is not 32byte aligned in C direction.
//    The attached data can be any value except NaN when it's fp16."
//   "Atom cube mapping at line boundary and/or surface boundary can be either adjacently or
//    incompactly. But they are always 32-byte aligned."
// So the channels past C in the atoms of the last surface are free (fp16: not a NaN,
// judged per 2-byte element), and the bytes between lines and surfaces are free.
// Feature data of N cubes a batch stride apart (N = 1: one cube): "Atom cube
// mapping at line boundary and/or surface boundary can be either adjacently or
// incompactly", so the gaps between lines, surfaces and cubes are free; the
// channel padding of an atom is free too, not NaN for fp16. scan visits the
// place of every element.
template <typename Scan>
ByteRules cube_rules(const Feature& f, uint64_t N, uint64_t batch_stride, uint64_t size, DType t, const Scan& scan) {
  const bool fp16 = t == DType::kFp16;
  ByteRulesBuilder b(size,
                     {"nvdla.feature.stride-gap", kDoc, "Feature Data Format",
                      N > 1 ? "a gap at a line, surface or cube boundary" : "a gap at a line or surface boundary",
                      "Atom cube mapping at line boundary and/or surface boundary can be either adjacently or "
                      "incompactly"},
                     ByteKind::kFree);
  const uint8_t padding = b.add({"nvdla.feature.channel-padding", kDoc, "Feature Data Format",
                                 fp16 ? "channel padding of an fp16 atom" : "channel padding of an atom",
                                 "The attached data can be any value except NaN when it's fp16"},
                                ByteKind::kFree, 0, fp16 ? ByteConstraint::kNotFp16NaN : ByteConstraint::kAny);
  const uint8_t element = b.add(element_rule(kDoc, "Feature Data Format"), ByteKind::kElement);
  for (uint64_t n = 0; n < N; ++n) {
    for (uint64_t s = 0; s < f.surfaces; ++s) {
      for (uint64_t h = 0; h < f.H; ++h) {
        for (uint64_t w = 0; w < f.W; ++w) {
          b.paint(n * batch_stride + s * f.surface_stride + h * f.line_stride + w * kFeatureAtomBytes, kFeatureAtomBytes,
                  padding);
        }
      }
    }
  }
  scan([&](uint64_t place, uint64_t) { b.paint(place, f.element_bytes, element); });
  return std::move(b).finish();
}

ByteRules feature_rules(const Feature& f, DType t) {
  return cube_rules(f, 1, 0, f.size, t, [&](const auto& visit) { feature_scan(f, visit); });
}

ByteRules batch_rules(const Batch& m, DType t) {
  return cube_rules(m.f, m.N, m.batch_stride, m.size, t, [&](const auto& visit) { batch_scan(m, visit); });
}

// Weights: "Append 0s at end of all mapped weight for 128-byte alignment." The
// groups and cubes are mapped compactly ("Do not append 0 if channel size is not
// divisible", "Do not append any 0s between group boundaries"), so every byte
// before the tail is an element's.
ByteRulesBuilder weight_rules_base(uint64_t size, const char* section) {
  return ByteRulesBuilder(size,
                          {"nvdla.weight.end-alignment", kDoc, section, "an appended 0 of the 128-byte alignment",
                           "Append 0s at end of all mapped weight for 128-byte alignment."},
                          ByteKind::kFixed, 0);
}

// Winograd: "Divide kernels to 1x1x32Byte small cubes. If the channel size is
// not divisible by 32, append 0s." The appended channels are fixed 0.
ByteRules winograd_rules(const Winograd& m) {
  ByteRulesBuilder b = weight_rules_base(m.size, "Basic Weight for Winograd Convolution");
  const uint8_t padding = b.add({"nvdla.weight.winograd.channel-padding", kDoc, "Basic Weight for Winograd Convolution",
                                 "an appended 0 channel of a 32-byte cube",
                                 "If the channel size is not divisible by 32, append 0s."},
                                ByteKind::kFixed, 0);
  const uint8_t element = b.add(element_rule(kDoc, "Basic Weight for Winograd Convolution"), ByteKind::kElement);
  b.paint(0, m.data_bytes, padding);
  winograd_scan(m, [&](uint64_t place, uint64_t) { b.paint(place, m.element_bytes, element); });
  return std::move(b).finish();
}

// Deconvolution: each set is weight for DC, its tail to 128 bytes "Append 0s";
// the taps of a set past the original kernel are appended 0s too (a 0 weight
// adds nothing to the convolution of its phase); the bytes from a set's tail
// to the next 256-byte boundary lie between two weight surfaces: free.
ByteRules deconv_rules(const Deconv& d) {
  const char* section = "Weight Format";
  ByteRulesBuilder b(d.size,
                     {"nvdla.weight.deconv.set-gap", kDoc, section, "between a set's tail and the next 256-byte set",
                      "uncompressed/compressed weight: alignment of start address 256 bytes (Requirements of alignment)"},
                     ByteKind::kFree);
  const uint8_t tail = b.add({"nvdla.weight.end-alignment", kDoc, section, "an appended 0 of the 128-byte alignment",
                              "Append 0s at end of all mapped weight for 128-byte alignment."},
                             ByteKind::kFixed, 0);
  const uint8_t split = b.add({"nvdla.weight.deconv.split-padding", kDoc, section,
                               "an appended 0 tap of a set past the original kernel", "Set split for deconvolution"},
                              ByteKind::kFixed, 0);
  const uint8_t element = b.add(element_rule(kDoc, section), ByteKind::kElement);
  for (uint64_t s = 0; s < d.sets; ++s) b.paint(s * d.set_stride, d.set_size, tail);
  deconv_scan(
      d, [&](uint64_t place, uint64_t) { b.paint(place, d.set.element_bytes, element); },
      [&](uint64_t place) { b.paint(place, d.set.element_bytes, split); });
  return std::move(b).finish();
}

// Pixels: "It may have redundant data between 32-byte aligned address and first
// element. NVDLA use x offset to indicate how many redundant data are." The
// redundant data is free; so is the rest of a line up to the line stride and
// the space between the planes, of which the document says nothing but the
// 32-byte alignment (a pitch linear surface; oracles/ERRATA.md, NVDLA 16).
ByteRules pixel_rules(const Pixel& m) {
  ByteRulesBuilder b(m.size,
                     {"nvdla.pixel.line-padding", kDoc, "Pixel Format",
                      "line padding past the last pixel or between the planes",
                      "Both start address and line stride of pitch linear shall aligned to 32 bytes."},
                     ByteKind::kFree);
  const uint8_t redundant = b.add({"nvdla.pixel.x-offset", kDoc, "Pixel Format", "redundant data before the first pixel",
                                   "It may have redundant data between 32-byte aligned address and first element. "
                                   "NVDLA use x offset to indicate how many redundant data are."},
                                  ByteKind::kFree);
  const uint8_t element = b.add(element_rule(kDoc, "Pixel Format"), ByteKind::kElement);
  for (uint64_t h = 0; h < m.H; ++h) {
    b.paint(h * m.line_stride, m.x_offset * m.y_pixel_bytes, redundant);
    if (m.format->planes == 2) b.paint(m.uv_offset + h * m.uv_line_stride, m.x_offset * m.uv_pixel_bytes, redundant);
    for (uint64_t w = 0; w < m.W; ++w) {
      for (uint64_t ch = 0; ch < m.C; ++ch) {
        const uint64_t at = pixel_offset_bits(m, h, w, ch);
        const uint64_t first = at / 8, end = ceil_div(at + m.format->field_bits[ch], 8);
        b.paint(first, end - first, element);
      }
    }
  }
  return std::move(b).finish();
}

// SDP data (bias, PReLU, batch normalization, element-wise) is read as feature
// data in BytesPerAtom atoms (oracles/ERRATA.md, NVDLA 8); the document gives no
// words of its own about the channels past C, so the feature data rule applies:
// free, not a NaN in fp16 (a NaN there would become NaN in the padding channels
// of the output feature data, which the same rule forbids). Gaps at line and
// surface boundaries and the per-channel tail to 32 bytes are free.
ByteRules sdp_rules(const Sdp& m, DType t) {
  const bool fp16 = t == DType::kFp16;
  const char* section = m.per_element ? "Element-Wise Data Format" : "Bias Data Format";
  ByteRulesBuilder b(m.size,
                     {"nvdla.sdp.gap", kDoc, section, "a gap at a line or surface boundary or past the last atom",
                      "Atom cube mapping at line boundary and/or surface boundary can be either adjacently or "
                      "incompactly (Feature Data Format)"},
                     ByteKind::kFree);
  const uint8_t padding = b.add({"nvdla.sdp.channel-padding", kDoc, section,
                                 fp16 ? "channel padding of an fp16 atom" : "channel padding of an atom",
                                 "The attached data can be any value except NaN when it's fp16 (Feature Data Format)"},
                                ByteKind::kFree, 0, fp16 ? ByteConstraint::kNotFp16NaN : ByteConstraint::kAny);
  const uint8_t element = b.add(element_rule(kDoc, section), ByteKind::kElement);
  for (uint64_t s = 0; s < m.atoms_in_c; ++s) {
    for (uint64_t h = 0; h < m.H; ++h) {
      for (uint64_t w = 0; w < m.W; ++w) {
        const uint64_t atom = m.per_element ? s * m.surface_stride + h * m.line_stride + w * m.bytes_per_atom
                                            : s * m.bytes_per_atom;
        b.paint(atom, m.bytes_per_atom, padding);
      }
    }
  }
  sdp_scan(m, [&](uint64_t place, uint64_t) { b.paint(place, m.bytes_per_component, element); });
  return std::move(b).finish();
}

// The checker asks one case many questions: each derives the model once (core/case_cache.h).
Result<std::shared_ptr<const Feature>> cached_feature_model(const Case& c) {
  thread_local CaseCache<Feature> cache;
  return cache.get(c, feature_model);
}
Result<std::shared_ptr<const Batch>> cached_batch_model(const Case& c) {
  thread_local CaseCache<Batch> cache;
  return cache.get(c, batch_model);
}
Result<std::shared_ptr<const Weights>> cached_weight_model(const Case& c) {
  thread_local CaseCache<Weights> cache;
  return cache.get(c, weight_model);
}
Result<std::shared_ptr<const Winograd>> cached_winograd_model(const Case& c) {
  thread_local CaseCache<Winograd> cache;
  return cache.get(c, winograd_model);
}
Result<std::shared_ptr<const Deconv>> cached_deconv_model(const Case& c) {
  thread_local CaseCache<Deconv> cache;
  return cache.get(c, deconv_model);
}
Result<std::shared_ptr<const Pixel>> cached_pixel_model(const Case& c) {
  thread_local CaseCache<Pixel> cache;
  return cache.get(c, pixel_model);
}
Result<std::shared_ptr<const Sdp>> cached_sdp_model(const Case& c) {
  thread_local CaseCache<Sdp> cache;
  return cache.get(c, sdp_model);
}

class NvdlaReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return size_bytes(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      return f.size;
    }
    if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      return m.size;
    }
    if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      return m.size;
    }
    if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      return m.size;
    }
    if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      return d_ptr->size;
    }
    if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      return b_ptr->size;
    }
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
    return m.size;
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    LC_RETURN_IF_ERROR(check_coord(c, at));
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      return feature_offset(f, at[0], at[1], at[2]) * 8;
    }
    if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      return pixel_offset_bits(m, at[0], at[1], at[2]);
    }
    if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      return winograd_offset(m, at[0], at[1], at[2], at[3]) * 8;
    }
    if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      return deconv_offset(*d_ptr, at[0], at[1], at[2], at[3]) * 8;
    }
    if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      return batch_offset(*b_ptr, at[0], at[1], at[2], at[3]) * 8;
    }
    if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      if (!m.per_element) return sdp_offset(m, at[0], 0, 0, at[1]) * 8;
      return sdp_offset(m, at[0], at[1], at[2], at[3]) * 8;
    }
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
    if (m.image) return image_offset(m, at[0], at[1], at[2], at[3]) * 8;
    return weight_offset(m, at[0], at[1], at[2], at[3]) * 8;
  }

  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    // Channel padding, stride gaps and the 128-byte tail are 0 (oracles/ERRATA.md).
    std::memset(physical, 0, physical_size);
    auto* dst = static_cast<uint8_t*>(physical);
    const auto* src = static_cast<const uint8_t*>(logical);
    const uint64_t eb = dtype_bits(c.dtype) / 8;
    auto put = [&](uint64_t place, uint64_t index) { std::memcpy(dst + place, src + index * eb, eb); };
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      feature_scan(f, put);
    } else if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      sdp_scan(m, put);
    } else if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      winograd_scan(m, put);
    } else if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      deconv_scan(*d_ptr, put, [](uint64_t) {});  // appended 0s: memset above
    } else if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      batch_scan(*b_ptr, put);
    } else if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      // Lines top to bottom, pixels left to right, components in name order,
      // each written bit by bit into its field; the x-offset bytes and the rest
      // of each line stay 0.
      for (uint64_t h = 0; h < m.H; ++h) {
        for (uint64_t w = 0; w < m.W; ++w) {
          for (uint64_t ch = 0; ch < m.C; ++ch) {
            const uint64_t bits = value_width(*m.format, ch);
            uint64_t value = 0;
            std::memcpy(&value, src + ((h * m.W + w) * m.C + ch) * eb, eb);  // little-endian host
            if (bits < 64 && (value >> bits) != 0) return pixel_value_error(m, c.dtype, h, w, ch, value);
            const uint64_t at = pixel_offset_bits(m, h, w, ch);
            for (uint64_t b = 0; b < bits; ++b) {
              if ((value >> b) & 1) dst[(at + b) / 8] |= static_cast<uint8_t>(1u << ((at + b) % 8));
            }
          }
        }
      }
    } else {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
      if (m.image) image_scan(m, put);
      else weight_scan(m, put);
    }
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    auto* dst = static_cast<uint8_t*>(logical);
    const auto* src = static_cast<const uint8_t*>(physical);
    const uint64_t eb = dtype_bits(c.dtype) / 8;
    auto get = [&](uint64_t place, uint64_t index) { std::memcpy(dst + index * eb, src + place, eb); };
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      feature_scan(f, get);
    } else if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      sdp_scan(m, get);
    } else if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      winograd_scan(m, get);
    } else if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      deconv_scan(*d_ptr, get, [](uint64_t) {});
    } else if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      batch_scan(*b_ptr, get);
    } else if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      // Each field read bit by bit, zero-extended to the element.
      for (uint64_t h = 0; h < m.H; ++h) {
        for (uint64_t w = 0; w < m.W; ++w) {
          for (uint64_t ch = 0; ch < m.C; ++ch) {
            const uint64_t at = pixel_offset_bits(m, h, w, ch);
            uint64_t value = 0;
            for (uint64_t b = 0; b < value_width(*m.format, ch); ++b) value |= uint64_t{(src[(at + b) / 8] >> ((at + b) % 8)) & 1u} << b;
            std::memcpy(dst + ((h * m.W + w) * m.C + ch) * eb, &value, eb);  // little-endian host
          }
        }
      }
    } else {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
      if (m.image) image_scan(m, get);
      else weight_scan(m, get);
    }
    return Status();
  }

  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    LC_ASSIGN_OR_RETURN(uint64_t size, size_bytes(c));
    if (size > kMaxMappedBytes) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      return feature_rules(f, c.dtype);
    }
    if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      return sdp_rules(m, c.dtype);
    }
    if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      return winograd_rules(m);
    }
    if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      return deconv_rules(*d_ptr);
    }
    if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      return batch_rules(*b_ptr, c.dtype);
    }
    if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      return pixel_rules(m);
    }
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
    const char* section = m.image ? "Basic Weight for image input" : "Basic Weight for Direct Convolution";
    ByteRulesBuilder b = weight_rules_base(m.size, section);
    const uint8_t element = b.add(element_rule(kDoc, section), ByteKind::kElement);
    auto paint = [&](uint64_t place, uint64_t) { b.paint(place, m.element_bytes, element); };
    if (m.image) image_scan(m, paint);
    else weight_scan(m, paint);
    return std::move(b).finish();
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_RETURN_IF_ERROR(check_case(c));
    std::vector<Fact> out;
    if (kind_of(c) == Kind::kFeature) {
      LC_ASSIGN_OR_RETURN(auto f_ptr, cached_feature_model(c));
    const Feature& f = *f_ptr;
      out.push_back({"size_bytes", num(f.size)});
      out.push_back({"atom_bytes", num(kFeatureAtomBytes)});
      out.push_back({"atom_elements", num(f.atom_elements)});
      out.push_back({"surfaces", num(f.surfaces)});
      out.push_back({"padded_channels", num(f.surfaces * f.atom_elements)});
      out.push_back({"line_stride", num(f.line_stride)});
      out.push_back({"surface_stride", num(f.surface_stride)});
      out.push_back({"start_address", num(f.addr)});
      const bool packed = f.line_stride == f.W * kFeatureAtomBytes && f.surface_stride == f.H * f.line_stride;
      out.push_back({"packed", packed ? "yes" : "no"});
      // "If a 1x1xC feature data cube maps as surface-packed, NVDLA can treat it
      //  like (C/32) x1x 32 cube to save bandwidth."
      if (f.H == 1 && f.W == 1 && f.surface_stride == kFeatureAtomBytes) {
        out.push_back({"treated_as", num(f.surfaces) + "x1x32"});
      }
      return out;
    }
    if (kind_of(c) == Kind::kWeightWinograd) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_winograd_model(c));
    const Winograd& m = *m_ptr;
      out.push_back({"size_bytes", num(m.size)});
      out.push_back({"data_bytes", num(m.data_bytes)});
      out.push_back({"padded_channels", num(m.padded_C)});
      out.push_back({"group_kernels", num(m.group_kernels)});
      out.push_back({"groups", num(m.groups)});
      out.push_back({"cube_bytes", num(64 * m.element_bytes)});
      out.push_back({"cubes_per_kernel", num(m.padded_C / kWinogradCubeChannels)});
      out.push_back({"start_address", num(m.addr)});
      return out;
    }
    if (kind_of(c) == Kind::kBatch) {
      LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_model(c));
      const Batch& b = *b_ptr;
      out.push_back({"size_bytes", num(b.size)});
      out.push_back({"batches", num(b.N)});
      out.push_back({"cube_bytes", num(b.f.size)});
      out.push_back({"batch_stride", num(b.batch_stride)});
      out.push_back({"surfaces", num(b.f.surfaces)});
      out.push_back({"line_stride", num(b.f.line_stride)});
      out.push_back({"surface_stride", num(b.f.surface_stride)});
      out.push_back({"start_address", num(b.f.addr)});
      return out;
    }
    if (kind_of(c) == Kind::kWeightDeconv) {
      LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_model(c));
      const Deconv& d = *d_ptr;
      out.push_back({"size_bytes", num(d.size)});
      out.push_back({"sets", num(d.sets)});
      out.push_back({"set_kernel", num(d.set_h) + "x" + num(d.set_w)});
      // Each set is this weight for DC (the surface sparse compression takes, set by set).
      out.push_back({"set_layout", "nvdla.weight.dc --shape " + num(d.K) + "," + num(d.C) + "," + num(d.set_h) + "," +
                                       num(d.set_w)});
      out.push_back({"set_bytes", num(d.set_size)});
      out.push_back({"set_stride", num(d.set_stride)});
      out.push_back({"group_kernels", num(d.set.group_kernels)});
      out.push_back({"start_address", num(d.addr)});
      return out;
    }
    if (kind_of(c) == Kind::kPixel) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_pixel_model(c));
    const Pixel& m = *m_ptr;
      out.push_back({"size_bytes", num(m.size)});
      out.push_back({"planes", num(m.format->planes)});
      out.push_back({"channels", num(m.format->channels)});
      out.push_back({"precision", dtype_name(m.format->precision)});
      out.push_back({"x_offset_range", "0~" + num(m.format->x_max)});
      out.push_back({"pixel_bytes", num(m.y_pixel_bytes)});
      // Where each component lives in its word, e.g. "A[31:30] B[29:20] G[19:10] R[9:0]".
      std::string fields;
      for (uint64_t ch = 0; ch < m.C; ++ch) {
        const uint64_t low = bits_below(*m.format, ch);
        fields += std::string(ch ? " " : "") + m.format->letters[ch] + "[" + num(low + value_width(*m.format, ch) - 1) +
                  ":" + num(low) + "]";
      }
      out.push_back({"fields", fields});
      // The rest of a 16-bit container above a 10- or 12-bit value is 0.
      if (m.format->value_bits) out.push_back({"container_bits", num(m.format->field_bits[0])});
      out.push_back({"line_stride", num(m.line_stride)});
      if (m.format->planes == 2) {
        out.push_back({"uv_pixel_bytes", num(m.uv_pixel_bytes)});
        out.push_back({"uv_line_stride", num(m.uv_line_stride)});
        out.push_back({"uv_offset", num(m.uv_offset)});
      }
      out.push_back({"start_address", num(m.addr)});
      return out;
    }
    if (kind_of(c) == Kind::kSdp) {
      LC_ASSIGN_OR_RETURN(auto m_ptr, cached_sdp_model(c));
    const Sdp& m = *m_ptr;
      out.push_back({"size_bytes", num(m.size)});
      out.push_back({"element_per_atom", num(m.element_per_atom)});
      out.push_back({"components_per_element", num(m.P)});
      out.push_back({"bytes_per_component", num(m.bytes_per_component)});
      out.push_back({"bytes_per_atom", num(m.bytes_per_atom)});
      out.push_back({"atoms_in_c", num(m.atoms_in_c)});
      if (m.per_element) {
        out.push_back({"line_stride", num(m.line_stride)});
        out.push_back({"surface_stride", num(m.surface_stride)});
      }
      out.push_back({"start_address", num(m.addr)});
      return out;
    }
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_weight_model(c));
    const Weights& m = *m_ptr;
    out.push_back({"size_bytes", num(m.size)});
    out.push_back({"data_bytes", num(m.data_bytes)});
    out.push_back({"end_padding_bytes", num(m.size - m.data_bytes)});
    out.push_back({"group_kernels", num(m.group_kernels)});
    out.push_back({"groups", num(m.groups)});
    out.push_back({"last_group_kernels", num(kernels_in_group(m, m.groups - 1))});
    out.push_back({"cube_elements", num(kCubeElements)});
    out.push_back({"cube_bytes", num(kCubeElements * m.element_bytes)});
    const uint64_t mapped_c = m.image ? m.full_width : m.C;
    out.push_back({"cubes_per_kernel_line", num(ceil_div(mapped_c, kCubeElements))});
    out.push_back({"last_cube_elements", num(mapped_c - (ceil_div(mapped_c, kCubeElements) - 1) * kCubeElements)});
    if (m.image) {
      // The kernel as mapped: (lines) x 1 x (channels), K kernels.
      out.push_back({"pre_extended_kernel", num(m.H) + "x1x" + num(m.line_channels)});
      out.push_back({"extended_kernel", num(m.lines) + "x1x" + num(m.full_width)});
      out.push_back({"last_line_channels", num(image_line_width(m, m.lines - 1))});
    }
    out.push_back({"first_group_bytes", num(kernels_in_group(m, 0) * m.C * m.H * m.W * m.element_bytes)});
    out.push_back({"start_address", num(m.addr)});
    return out;
  }
};

}  // namespace

const Impl& nvdla_reference() {
  static const NvdlaReference impl;
  return impl;
}

}  // namespace layoutcheck
