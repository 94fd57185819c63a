// The Sophgo TPU local-memory document in executable form.
// Document: ../shared/spec/sophgo-tpu-okkernel-local-memory.txt
//
// Every quantity below is computed the way the document states it; pack and
// unpack walk the logical tensor element by element and place each element at
// the address the document gives it.
#include <algorithm>
#include <cstring>

#include "core/case_cache.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

// The element as stored: plain, or a lane of int8x4 / int16x2 / fp32x2.
struct StorageMode {
  std::string name;      // 1n, 4n, 2n, 2ic
  uint64_t lanes = 1;    // logical elements per stored element
  uint64_t stored_bytes; // size of the stored (possibly packed) element
  uint64_t lane_bytes;   // size of one logical element
};

struct TpuTensor {
  std::string layout;   // aligned, compact, strided, matrix, continuous
  bool local = true;
  uint64_t X = 0, S = 0, A = 0, eu = 0;
  uint64_t Q = 0, R = 0;                 // A = Q * S + R
  uint64_t N = 0, C = 0, H = 0, W = 0;   // the shape the strides are against
  uint64_t M_cols = 0;                   // matrix layout: the matrix's column count M
  StorageMode mode;
  uint64_t n_stride = 0, c_stride = 0, h_stride = 0, w_stride = 0;  // in stored elements
  uint64_t channels_per_npu = 0;
  uint64_t system_bytes = 0;             // system memory: the buffer up to the last element
};

// "Address of Tensor in Local Memory": A = Q * S + R, Q = floor(A / S), R = A mod S.
void decompose_address(TpuTensor* t) {
  t->Q = t->A / t->S;
  t->R = t->A % t->S;
}

// "Scatter Features to Different NPUs": the number of channels per NPU is ceil((Q + C) / X).
uint64_t channels_per_npu(uint64_t Q, uint64_t C, uint64_t X) { return ceil_div(Q + C, X); }

// "128-Byte Aligned Layout": the C stride is ceil(H*W/32)*32 for 32-bit data,
// ceil(H*W/64)*64 for 16-bit, ceil(H*W/128)*128 for 8-bit: H*W rounded up to
// the number of elements in one EU (EU bytes / element bytes).
uint64_t aligned_c_stride(uint64_t H, uint64_t W, uint64_t eu_bytes, uint64_t element_bytes) {
  uint64_t per_eu = eu_bytes / element_bytes;
  return ceil_div(H * W, per_eu) * per_eu;
}

Result<StorageMode> storage_mode(const std::string& mode, DType dtype) {
  // "Storage Modes": 4N for int8/uint8 (int8x4), 2N for int16/uint16 (int16x2),
  // 2IC for fp32 convolution weights (fp32x2).
  const uint64_t bytes = dtype_bits(dtype) / 8;
  if (mode == "1n") return StorageMode{mode, 1, bytes, bytes};
  if (mode == "4n") {
    if (dtype != DType::kInt8 && dtype != DType::kUInt8) {
      return Status::invalid(std::string("4N-mode is for int8 or uint8 data, not ") + dtype_name(dtype) +
                             " (Storage Modes, 4N-mode)").with_rule("tpu/mode-4n-dtype");
    }
    return StorageMode{mode, 4, dtype_bits(dtype == DType::kInt8 ? DType::kInt8x4 : DType::kUInt8x4) / 8, 1};
  }
  if (mode == "2n") {
    if (dtype != DType::kInt16 && dtype != DType::kUInt16) {
      return Status::invalid(std::string("2N-mode is for int16 or uint16 data, not ") + dtype_name(dtype) +
                             " (Storage Modes, 2N-mode)").with_rule("tpu/mode-2n-dtype");
    }
    return StorageMode{mode, 2, dtype_bits(dtype == DType::kInt16 ? DType::kInt16x2 : DType::kUInt16x2) / 8, 2};
  }
  if (dtype != DType::kFp32) {
    return Status::invalid(std::string("2IC-mode is for fp32 convolution weights, not ") + dtype_name(dtype) +
                           " (Storage Modes, 2IC-mode)").with_rule("tpu/mode-2ic-dtype");
  }
  return StorageMode{mode, 2, dtype_bits(DType::kFp32x2) / 8, 4};
}

bool is_tpu_dtype(DType t) { return dtype_bits(t) >= 8; }

// Strides that nest: from the smallest stride up, each steps over everything
// the smaller ones span, so every element has its own place. Dimensions of
// extent 1 take no part (their stride "makes no sense").
struct StridedDim {
  const char* name;
  uint64_t extent, stride;
};
Status strides_nest(std::vector<StridedDim> dims, const char* section, const char* rule) {
  std::vector<StridedDim> used;
  for (const StridedDim& d : dims) {
    if (d.extent > 1) used.push_back(d);
  }
  std::sort(used.begin(), used.end(), [](const StridedDim& a, const StridedDim& b) { return a.stride < b.stride; });
  Checked span = 1;
  for (const StridedDim& d : used) {
    if (!span.ok() || d.stride < span.value()) {
      return Status::invalid(std::string("strides overlap: the ") + d.name + " stride " + num(d.stride) +
                             " is smaller than the " + (span.ok() ? num(span.value()) : "overflowing") +
                             " elements the smaller strides span (" + section + ")")
          .with_rule(rule);
    }
    span = Checked(d.stride) * d.extent;
  }
  return Status();
}

Result<TpuTensor> model(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  if (!is_tpu_dtype(c.dtype)) {
    return Status::invalid(std::string("the TPU document has 8-, 16- and 32-bit data types, not ") +
                           dtype_name(c.dtype)).with_rule("tpu/dtype");
  }
  TpuTensor t;
  t.layout = c.layout.name.substr(4);
  const std::string mode = c.layout.params.count("mode") ? c.layout.get("mode") : "1n";
  LC_ASSIGN_OR_RETURN(t.mode, storage_mode(mode, c.dtype));

  if (t.layout == "continuous") {
    // "Continuous Layout" (system memory): W stride 1, H stride W, C stride H*W, N stride C*H*W.
    t.local = false;
    t.N = c.shape[0], t.C = c.shape[1], t.H = c.shape[2], t.W = c.shape[3];
    t.w_stride = 1;
    t.h_stride = t.W;
    t.c_stride = t.H * t.W;
    t.n_stride = t.C * t.H * t.W;
    t.system_bytes = t.N * t.n_stride * t.mode.stored_bytes;
    return t;
  }

  if (t.layout == "system") {
    // "Strides in System Memory": N stride from (n, c, h, w) to (n + 1, c, h, w),
    // C stride to (n, c + 1, h, w), H stride to (n, c, h + 1, w), W stride to
    // (n, c, h, w + 1), in elements. "When W = 1, H = 1, C = 1 or N = 1, the
    // relative stride makes no sense": a dimension of extent 1 takes any stride.
    t.local = false;
    t.N = c.shape[0], t.C = c.shape[1], t.H = c.shape[2], t.W = c.shape[3];
    t.n_stride = c.layout.get_int("n");
    t.c_stride = c.layout.get_int("c");
    t.h_stride = c.layout.get_int("h");
    t.w_stride = c.layout.get_int("w");
    // Each element has its own place (oracles/ERRATA.md, TPU system strides).
    LC_RETURN_IF_ERROR(strides_nest({{"N", t.N, t.n_stride}, {"C", t.C, t.c_stride}, {"H", t.H, t.h_stride},
                                     {"W", t.W, t.w_stride}},
                                    "Strides in System Memory", "tpu.system/strides-disjoint"));
    // The buffer ends with the last element: (n, c, h, w) = (N-1, C-1, H-1, W-1).
    Checked end = (Checked(t.N - 1) * t.n_stride + Checked(t.C - 1) * t.c_stride + Checked(t.H - 1) * t.h_stride +
                   Checked(t.W - 1) * t.w_stride + 1) * t.mode.stored_bytes;
    if (!end.ok() || end.value() > (uint64_t{1} << 62)) {
      return Status::invalid("the strided tensor's last byte lies past 2^62 (Strides in System Memory)")
          .with_rule("tpu.system/size-overflow");
    }
    t.system_bytes = end.value();
    return t;
  }

  t.X = c.layout.get_int("npus");
  t.S = c.layout.get_int("lmem");
  t.A = c.layout.get_int("addr");
  t.eu = c.layout.get_int("eu");
  Checked image = Checked(t.X) * t.S;
  if (!image.ok()) {
    return Status::invalid("local memory size X*S = " + num(t.X) + "*" + num(t.S) + " overflows").with_rule("tpu/local-memory-size");
  }
  // "A valid address of tensor in local memory is in [0, X * S - 1]."
  if (t.A >= image.value()) {
    return Status::invalid("address " + num(t.A) + " is outside local memory [0, X*S-1] = [0, " +
                           num(image.value() - 1) + "] (Address of Tensor in Local Memory)").with_rule("tpu/address-in-local-memory");
  }
  decompose_address(&t);

  if (t.layout == "matrix") {
    // "Matrix Layout": an N-by-M matrix is the 4D tensor (N, ceil(M/W), 1, W) in the
    // 128-byte aligned layout, W in [1, M].
    // A storage mode packs `lanes` rows: the view's N is ceil(rows / lanes).
    t.N = ceil_div(c.shape[0], t.mode.lanes);
    t.M_cols = c.shape[1];
    t.W = c.layout.get_int("w");
    if (t.W < 1 || t.W > t.M_cols) {
      return Status::invalid("matrix layout: W = " + num(t.W) + " is not in [1, M] = [1, " + num(t.M_cols) +
                             "] (Matrix Layout)").with_rule("tpu.matrix/w-in-1-m");
    }
    t.C = ceil_div(t.M_cols, t.W);
    t.H = 1;
    t.layout = "aligned";
  } else {
    // Storage modes view the shape as (ceil(N / lanes), C, H, W) of the packed type.
    t.N = ceil_div(c.shape[0], t.mode.lanes);
    t.C = c.shape[1], t.H = c.shape[2], t.W = c.shape[3];
  }
  t.channels_per_npu = channels_per_npu(t.Q, t.C, t.X);

  if (t.layout == "aligned") {
    // "The address of the tensor is divisable by 128."
    if (t.A % 128 != 0) {
      return Status::invalid("address " + num(t.A) + " is not divisible by 128 (128-Byte Aligned Layout)").with_rule("tpu.aligned/address-align-128");
    }
    if (t.eu % t.mode.stored_bytes != 0) {
      return Status::invalid("EU of " + num(t.eu) + " bytes does not hold a whole number of " +
                             num(t.mode.stored_bytes) + "-byte elements (128-Byte Aligned Layout)").with_rule("tpu.aligned/eu-whole-elements");
    }
    t.w_stride = 1;
    t.h_stride = t.W;
    t.c_stride = aligned_c_stride(t.H, t.W, t.eu, t.mode.stored_bytes);
    t.n_stride = t.c_stride * t.channels_per_npu;
  } else if (t.layout == "compact") {
    // "The address of the tensor is divisable by 4."
    if (t.A % 4 != 0) {
      return Status::invalid("address " + num(t.A) + " is not divisible by 4 (Compact Layout)").with_rule("tpu.compact/address-align-4");
    }
    t.w_stride = 1;
    t.h_stride = t.W;
    t.c_stride = t.H * t.W;
    t.n_stride = t.c_stride * t.channels_per_npu;
  } else {
    // "Strides in Local Memory": the strides are given.
    t.n_stride = c.layout.get_int("n");
    t.c_stride = c.layout.get_int("c");
    t.h_stride = c.layout.get_int("h");
    t.w_stride = c.layout.get_int("w");
    if (t.A % t.mode.stored_bytes != 0) {
      return Status::invalid("address " + num(t.A) + " is not aligned to the " + num(t.mode.stored_bytes) +
                             "-byte stored element (see oracles/ERRATA.md, tpu strided address)").with_rule("tpu.strided/address-align-element");
    }
    // Each element must have its own place.
    LC_RETURN_IF_ERROR(strides_nest({{"N", t.N, t.n_stride}, {"C (slots per NPU)", t.channels_per_npu, t.c_stride},
                                     {"H", t.H, t.h_stride}, {"W", t.W, t.w_stride}},
                                    "Strides in Local Memory", "tpu.strided/strides-disjoint"));
  }

  // The whole tensor must lie in the local memory of its NPUs: the last
  // element of every NPU ends at or before S.
  Checked last = Checked(t.N - 1) * t.n_stride + Checked(t.channels_per_npu - 1) * t.c_stride +
                 Checked(t.H - 1) * t.h_stride + Checked(t.W - 1) * t.w_stride;
  Checked end = Checked(t.R) + (last + 1) * t.mode.stored_bytes;
  if (!end.ok() || end.value() > t.S) {
    return Status::invalid("the tensor does not fit in one NPU's local memory: it ends at byte " +
                           (end.ok() ? num(end.value()) : std::string("(overflow)")) + " of NPU " + num(t.Q) +
                           ", local memory per NPU is S = " + num(t.S) + " bytes").with_rule("tpu/fits-local-memory");
  }
  return t;
}

// The byte address of logical element `at`.
uint64_t address_of(const TpuTensor& t, const Coord& at) {
  uint64_t n = at[0], c, h, w, lane = 0;
  if (t.M_cols != 0) {
    // Matrix element (row, col) is element (row, col / W, 0, col mod W) of the 4D
    // view; in a storage mode, lane row mod lanes of packed row row / lanes.
    n = at[0] / t.mode.lanes;
    lane = at[0] % t.mode.lanes;
    c = at[1] / t.W;
    h = 0;
    w = at[1] % t.W;
  } else {
    // Storage modes: elements (lanes*m + l, c, h, w), l in [0, lanes), are continuous:
    // element n is lane n mod lanes of the packed element at m = n / lanes.
    n = at[0] / t.mode.lanes;
    lane = at[0] % t.mode.lanes;
    c = at[1], h = at[2], w = at[3];
  }
  if (!t.local) {
    return (n * t.n_stride + c * t.c_stride + h * t.h_stride + w * t.w_stride) * t.mode.stored_bytes;
  }
  // "Scatter Features to Different NPUs": channel c of a tensor starting at NPU Q
  // lives in NPU (Q + c) mod X; the C stride steps from c to c + X, so the channel
  // occupies slot floor((Q + c) / X) of that NPU.
  uint64_t npu = (t.Q + c) % t.X;
  uint64_t slot = (t.Q + c) / t.X;
  uint64_t element = n * t.n_stride + slot * t.c_stride + h * t.h_stride + w * t.w_stride;
  // The local-memory address: NPU number * S + offset R + the element's bytes.
  return npu * t.S + t.R + element * t.mode.stored_bytes + lane * t.mode.lane_bytes;
}

// What the document requires of each byte of the local-memory image (or of the
// system-memory buffer). Every byte holding no element is an empty block: "there
// are X - 2 empty blocks storing nothing about this tensor", "12 empty blocks are
// appended to each feature", and the space before the offset R and past the
// tensor belongs to no tensor at all; the document gives them no value and warns
// that other tensors may be placed there ("Try not to reuse the empty blocks"),
// so they are free. The dummy elements of the storage modes ("dummy element(s)
// should be appended to make up the 4N-mode") are 0: they are lanes of a packed
// element the TPU computes with (in 2IC-mode a dummy input channel is summed with
// the real one), where only 0 leaves the result alone (oracles/ERRATA.md, TPU 8).
constexpr const char* kDoc = "sophgo-tpu-okkernel-local-memory.txt";

Result<ByteRules> tpu_rules(const Case& c, const TpuTensor& t, uint64_t size) {
  ByteRulesBuilder b(size,
                     {"tpu.empty-block", kDoc,
                      t.local ? "Scatter Features to Different NPUs"
                      : t.layout == "system" ? "Strides in System Memory" : "Continuous Layout",
                      "an empty block (no element of this tensor)",
                      "there are X - 2 empty blocks storing nothing about this tensor"},
                     ByteKind::kFree);
  const LayoutSpec* spec = find_spec(c.layout.name);
  const uint8_t element = b.add(element_rule(kDoc, spec ? spec->section : ""), ByteKind::kElement);
  const std::string& m = t.mode.name;
  const uint8_t dummy = b.add(
      {"tpu.dummy-element", kDoc, m == "4n" ? "4N-mode" : m == "2n" ? "2N-mode" : "2IC-mode",
       "a dummy element of the " + m + " storage mode",
       m == "4n"   ? "If N is not divisable by 4, 4 - (N mod 4) dummy element(s) should be appended to make up the 4N-mode."
       : m == "2n" ? "If N is odd, a dummy element should be appended to make up the 2N-mode."
                   : "If I is odd, a dummy element should be appended to make up the 2IC-mode."},
      ByteKind::kFixed, 0);
  const uint64_t count = *element_count(c.shape);
  for (uint64_t i = 0; i < count; ++i) b.paint(address_of(t, coord_of_index(c.shape, i)), t.mode.lane_bytes, element);
  if (t.mode.lanes > 1 && t.M_cols != 0) {
    // The dummy rows of a packed matrix, at every column.
    for (uint64_t n = static_cast<uint64_t>(c.shape[0]); n < t.N * t.mode.lanes; ++n) {
      for (int64_t col = 0; col < c.shape[1]; ++col) {
        b.paint(address_of(t, {static_cast<int64_t>(n), col}), t.mode.lane_bytes, dummy);
      }
    }
  } else if (t.mode.lanes > 1) {
    // The lanes n = N .. M * lanes - 1 of the last packed element, at every (c, h, w).
    for (uint64_t n = static_cast<uint64_t>(c.shape[0]); n < t.N * t.mode.lanes; ++n) {
      for (int64_t ch = 0; ch < c.shape[1]; ++ch) {
        for (int64_t h = 0; h < c.shape[2]; ++h) {
          for (int64_t w = 0; w < c.shape[3]; ++w) {
            b.paint(address_of(t, {static_cast<int64_t>(n), ch, h, w}), t.mode.lane_bytes, dummy);
          }
        }
      }
    }
  }
  return std::move(b).finish();
}

// The checker asks one case many questions: each derives the model once (core/case_cache.h).
Result<std::shared_ptr<const TpuTensor>> cached_model(const Case& c) {
  thread_local CaseCache<TpuTensor> cache;
  return cache.get(c, model);
}

class TpuReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    // A local tensor's physical buffer is the whole local memory image, X * S bytes.
    if (t.local) return t.X * t.S;
    return t.system_bytes;
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    LC_RETURN_IF_ERROR(check_coord(c, at));
    return address_of(t, at) * 8;
  }

  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    // Bytes that hold no element (padding, dummy elements, other NPUs' space) are 0.
    std::memset(physical, 0, physical_size);
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t addr = address_of(t, coord_of_index(c.shape, i));
      std::memcpy(static_cast<uint8_t*>(physical) + addr,
                  static_cast<const uint8_t*>(logical) + i * t.mode.lane_bytes, t.mode.lane_bytes);
    }
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t addr = address_of(t, coord_of_index(c.shape, i));
      std::memcpy(static_cast<uint8_t*>(logical) + i * t.mode.lane_bytes,
                  static_cast<const uint8_t*>(physical) + addr, t.mode.lane_bytes);
    }
    return Status();
  }

  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    LC_ASSIGN_OR_RETURN(uint64_t size, size_bytes(c));
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    return tpu_rules(c, t, size);
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const TpuTensor& t = *t_ptr;
    LC_ASSIGN_OR_RETURN(uint64_t size, size_bytes(c));
    std::vector<Fact> f;
    f.push_back({"size_bytes", num(size)});
    f.push_back({"stored_dtype", t.mode.lanes == 1 ? dtype_name(c.dtype)
                                 : t.mode.name == "4n" ? dtype_name(c.dtype == DType::kInt8 ? DType::kInt8x4 : DType::kUInt8x4)
                                 : t.mode.name == "2n" ? dtype_name(c.dtype == DType::kInt16 ? DType::kInt16x2 : DType::kUInt16x2)
                                                       : dtype_name(DType::kFp32x2)});
    f.push_back({"stored_shape", num(t.N) + "," + num(t.C) + "," + num(t.H) + "," + num(t.W)});
    if (t.mode.lanes > 1) {
      f.push_back({"dummy_elements", num(t.N * t.mode.lanes - static_cast<uint64_t>(c.shape[0]))});
    }
    f.push_back({"n_stride", num(t.n_stride)});
    f.push_back({"c_stride", num(t.c_stride)});
    f.push_back({"h_stride", num(t.h_stride)});
    f.push_back({"w_stride", num(t.w_stride)});
    if (t.local) {
      f.push_back({"start_npu", num(t.Q)});
      f.push_back({"npu_offset", num(t.R)});
      f.push_back({"channels_per_npu", num(t.channels_per_npu)});
      // "C stride makes no sense when the number of channels per NPU is 1".
      f.push_back({"c_stride_used", t.channels_per_npu > 1 ? "yes" : "no"});
      Checked used = (Checked(t.N - 1) * t.n_stride + Checked(t.channels_per_npu - 1) * t.c_stride +
                      Checked(t.H - 1) * t.h_stride + Checked(t.W - 1) * t.w_stride + 1) *
                     t.mode.stored_bytes;
      f.push_back({"bytes_per_npu", num(used.value())});
      f.push_back({"npus_used", num(t.C < t.X ? t.C : t.X)});
    }
    if (t.M_cols != 0) {
      f.push_back({"matrix_view", num(t.N) + "," + num(t.C) + ",1," + num(t.W)});
      // "If M is not divisable by W, the last channel only contains M - W * floor(M / W) elements."
      uint64_t rest = t.M_cols - t.W * (t.M_cols / t.W);
      f.push_back({"last_channel_cols", num(rest == 0 ? t.W : rest)});
    }
    return f;
  }
};

}  // namespace

const Impl& tpu_reference() {
  static const TpuReference impl;
  return impl;
}

}  // namespace layoutcheck
