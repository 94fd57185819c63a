#include "layoutcheck/convert_check.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "layoutcheck/checked.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck {
namespace {

std::string hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

uint64_t load_le(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void store_le(std::vector<uint8_t>* out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A NaN of a float dtype (fp32, fp16, bf16).
bool is_nan_bits(DType t, uint64_t bits) {
  switch (t) {
    case DType::kFp32: return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
    case DType::kFp16: return (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0;
    case DType::kBf16: return (bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0;
    default: return false;
  }
}

std::string shell_bytes(uint64_t v, size_t bytes) {
  std::string s;
  for (size_t i = 0; i < bytes; ++i) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>((v >> (8 * i)) & 0xff));
    s += buf;
  }
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

uint64_t align128(uint64_t v) { return (v + 127) / 128 * 128; }

// One conversion variant over all inputs; failure message or "".
std::string check_variant(const ConvertSpec& s, const Converter& expected, const Converter& actual,
                          const std::vector<uint8_t>& inputs, const std::string& impl, uint64_t* compared) {
  const size_t fb = dtype_bits(s.from) / 8, tb = dtype_bits(s.to) / 8;
  const size_t count = inputs.size() / fb;
  std::vector<uint8_t> want(count * tb), got(count * tb);
  const std::string name = convert_variant_name(s);
  Status e = expected.convert(s, inputs.data(), inputs.size(), want.data(), want.size(), nullptr);
  if (!e.ok()) return "FAIL " + name + ": the reference rejects the variant: " + e.message() + "\n";
  Status a = actual.convert(s, inputs.data(), inputs.size(), got.data(), got.size(), nullptr);
  if (!a.ok()) {
    return "FAIL " + name + ": " + actual.name() + " fails on " + std::to_string(count) + " values: " + a.message() +
           "\n  repro: " + convert_repro(s, load_le(inputs.data(), fb), impl) + "\n";
  }
  uint64_t differ = 0;
  size_t first = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t w = load_le(want.data() + i * tb, tb), g = load_le(got.data() + i * tb, tb);
    if (convert_output_accepted(s, w, g) || convert_output_free(s, load_le(inputs.data() + i * fb, fb))) continue;
    if (differ++ == 0) first = i;
  }
  *compared += count;
  if (differ == 0) return "";
  const uint64_t in = load_le(inputs.data() + first * fb, fb);
  const uint64_t w = load_le(want.data() + first * tb, tb), g = load_le(got.data() + first * tb, tb);
  std::string why = "FAIL " + name + ": input " + hex(in, static_cast<int>(2 * fb)) + ": expected " +
                    hex(w, static_cast<int>(2 * tb)) + ", got " + hex(g, static_cast<int>(2 * tb));
  if (s.rule == ConvertRule::kNvdla && is_nan_bits(s.to, w)) why += " (any NaN of that sign is accepted here)";
  why += " (" + std::to_string(differ) + " of " + std::to_string(count) + " values differ)\n";
  why += "  repro: " + convert_repro(s, in, impl) + "\n";
  return why;
}

// ---- sparse ----------------------------------------------------------------------

std::string first_difference(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, const char* what,
                             bool bits) {
  const size_t n = std::min(want.size(), got.size());
  for (size_t i = 0; i < n; ++i) {
    if (want[i] == got[i]) continue;
    if (bits) {
      for (int b = 0; b < 8; ++b) {
        if (((want[i] ^ got[i]) >> b) & 1) {
          return std::string(what) + " bit " + std::to_string(i * 8 + b) + " (byte " + std::to_string(i) +
                 "): expected " + std::to_string((want[i] >> b) & 1) + ", got " + std::to_string((got[i] >> b) & 1);
        }
      }
    }
    return std::string(what) + " byte " + std::to_string(i) + ": expected " + hex(want[i], 2) + ", got " +
           hex(got[i], 2);
  }
  if (want.size() != got.size()) {
    return std::string(what) + " is " + std::to_string(got.size()) + " bytes, expected " + std::to_string(want.size());
  }
  return "";
}

std::string sparse_repro(const std::string& impl, uint64_t seed) {
  return "layoutcheck check --impl " + shell_quote(impl) + " --layout nvdla.sparse --cases 1 --seed " +
         std::to_string(seed);
}

std::string winograd_repro(const std::string& impl, uint64_t seed) {
  return "layoutcheck check --impl " + shell_quote(impl) + " --layout nvdla.winograd.phase1 --cases 1 --seed " +
         std::to_string(seed);
}

// One sparse case from `seed`, or a reason it could not be made.
std::string check_sparse_case(uint64_t seed, DType t, const Extensions& expected, const Extensions& actual,
                              const Impl& layouts) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  const bool winograd = rng() % 4 == 0;
  Shape shape = {pick(1, 40), pick(1, 40), winograd ? 4 : pick(1, 3), winograd ? 4 : pick(1, 3)};  // converted 4x4 kernels
  auto parsed = parse_case(winograd ? "nvdla.weight.winograd" : "nvdla.weight.dc", dtype_name(t), shape_to_string(shape));
  if (!parsed.ok() || !layouts.supports(*parsed).ok()) parsed = parse_case("nvdla.weight.dc", dtype_name(t), shape_to_string(shape));
  if (!parsed.ok()) return "FAIL nvdla.sparse: " + parsed.status().message() + "\n";
  const Case c = *parsed;
  const std::string where = "nvdla.sparse " + to_string(c);
  if (Status s = layouts.supports(c); !s.ok()) return "FAIL " + where + ": the reference rejects the case: " + s.message() + "\n";
  auto logical_size = logical_bytes(c);
  auto packed_size = layouts.size_bytes(c);
  if (!logical_size.ok() || !packed_size.ok()) return "FAIL " + where + ": no sizes\n";
  std::vector<uint8_t> logical(*logical_size), packed(*packed_size);
  const size_t eb = dtype_bits(t) / 8;
  const uint64_t zero_percent = rng() % 101;
  for (size_t i = 0; i + eb <= logical.size(); i += eb) {
    const bool zero = rng() % 100 < zero_percent;
    for (size_t b = 0; b < eb; ++b) logical[i + b] = zero ? 0 : static_cast<uint8_t>(rng());
  }
  if (Status s = layouts.pack(c, logical.data(), logical.size(), packed.data(), packed.size()); !s.ok()) {
    return "FAIL " + where + ": the reference cannot pack the case: " + s.message() + "\n";
  }
  auto want = expected.compress(c, packed.data(), packed.size(), 0, 0, 0);
  if (!want.ok()) return "FAIL " + where + ": the reference cannot compress the case: " + want.status().message() + "\n";
  const std::string repro = "\n  repro: " + sparse_repro(actual.name, seed) + "\n";
  if (actual.compress) {
    auto got = actual.compress(c, packed.data(), packed.size(), want->wgs.size(), want->wmb.size(),
                               align128(packed.size()));
    if (!got.ok()) return "FAIL " + where + ": sparse_compress: " + got.status().message() + repro;
    for (auto [w, g, what, bits] : {std::make_tuple(&want->wgs, &got->wgs, "WGS surface", false),
                                    std::make_tuple(&want->wmb, &got->wmb, "WMB surface", true),
                                    std::make_tuple(&want->data, &got->data, "compressed weight surface", false)}) {
      std::string d = first_difference(*w, *g, what, bits);
      if (!d.empty()) return "FAIL " + where + ": sparse_compress: " + d + repro;
    }
  }
  if (actual.decompress) {
    std::vector<uint8_t> back(packed.size(), 0x5a);
    Status s = actual.decompress(c, *want, back.data(), back.size());
    if (!s.ok()) return "FAIL " + where + ": sparse_decompress: " + s.message() + repro;
    std::string d = first_difference(packed, back, "packed weight buffer", false);
    if (!d.empty()) return "FAIL " + where + ": sparse_decompress: " + d + repro;
  }
  return "";
}

// ---- Winograd ---------------------------------------------------------------------

uint64_t random_weight(std::mt19937_64& rng, DType t) {
  if (t != DType::kFp16) return rng();
  const uint64_t r = rng() % 100;
  const uint64_t sign = (rng() & 1) << 15;
  if (r < 2) return sign | 0x7c00;                                  // INF
  if (r < 4) return sign | 0x7c00 | (1 + rng() % 0x3ff);            // NaN
  if (r < 8) return sign | (rng() % 0x400);                         // zero or subnormal
  if (r < 12) return sign | (0x7800 + rng() % 0x400);               // near the largest value
  return sign | ((static_cast<uint64_t>(10 + rng() % 10) << 10) | (rng() % 0x400));  // moderate
}

std::string check_winograd_case(uint64_t seed, DType t, const Extensions& expected, const Extensions& actual) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  const size_t eb = dtype_bits(t) / 8;
  const std::string repro = "\n  repro: " + winograd_repro(actual.name, seed) + "\n";
  // Channel extension.
  if (actual.extend) {
    const int64_t stride = pick(1, 3);
    Shape s = {pick(1, 3), pick(1, 5), stride == 1 ? 3 : pick(1, 3 * stride), stride == 1 ? 3 : pick(1, 3 * stride)};
    std::vector<uint8_t> in(static_cast<size_t>(s[0] * s[1] * s[2] * s[3]) * eb);
    for (auto& b : in) b = static_cast<uint8_t>(rng());
    const std::string where = "nvdla.winograd.phase1 extend " + std::string(dtype_name(t)) + " (" + shape_to_string(s) +
                              ") stride " + std::to_string(stride);
    std::vector<uint8_t> w;
    {
      // The reference computes the size.
      const uint64_t out = static_cast<uint64_t>(s[0] * s[1]) * static_cast<uint64_t>(stride * stride) * 9 * eb;
      w.assign(out, 0);
      Status st = expected.extend(t, s, stride, in.data(), in.size(), w.data(), w.size());
      if (!st.ok()) return "FAIL " + where + ": the reference rejects the case: " + st.message() + "\n";
    }
    std::vector<uint8_t> g(w.size(), 0x5a);
    Status st = actual.extend(t, s, stride, in.data(), in.size(), g.data(), g.size());
    if (!st.ok()) return "FAIL " + where + ": winograd_extend: " + st.message() + repro;
    std::string d = first_difference(w, g, "extended kernel buffer", false);
    if (!d.empty()) return "FAIL " + where + ": winograd_extend: " + d + repro;
  }
  if (actual.transform) {
    Shape s = {pick(1, 4), pick(1, 6), 3, 3};
    std::vector<uint8_t> in;
    for (int64_t i = 0; i < s[0] * s[1] * 9; ++i) store_le(&in, random_weight(rng, t), eb);
    const std::string where = "nvdla.winograd.phase1 transform " + std::string(dtype_name(t)) + " (" +
                              shape_to_string(s) + ")";
    std::vector<uint8_t> w(static_cast<size_t>(s[0] * s[1] * 16) * eb), g(w.size(), 0x5a);
    Status st = expected.transform(t, s, in.data(), in.size(), w.data(), w.size());
    if (!st.ok()) return "FAIL " + where + ": the reference rejects the case: " + st.message() + "\n";
    st = actual.transform(t, s, in.data(), in.size(), g.data(), g.size());
    if (!st.ok()) return "FAIL " + where + ": winograd_transform: " + st.message() + repro;
    for (size_t i = 0; i < w.size() / eb; ++i) {
      const uint64_t wv = load_le(w.data() + i * eb, eb), gv = load_le(g.data() + i * eb, eb);
      if (wv == gv || (t == DType::kFp16 && is_nan_bits(t, wv) && is_nan_bits(t, gv))) continue;
      return "FAIL " + where + ": winograd_transform: element " + std::to_string(i) + " (kernel " +
             std::to_string(i / 16) + ", U[" + std::to_string(i % 16 / 4) + "][" + std::to_string(i % 4) +
             "]): expected " + hex(wv, static_cast<int>(2 * eb)) + ", got " + hex(gv, static_cast<int>(2 * eb)) + repro;
    }
  }
  return "";
}

}  // namespace

const std::vector<std::string>& extension_entry_names() {
  static const std::vector<std::string> names = {"convert.ieee", "convert.nvdla", "convert.nvdla-int", "nvdla.sparse",
                                                 "nvdla.winograd.phase1", "convert.nvdla-float"};
  return names;
}

bool glob_matches_extension(const std::string& glob) {
  for (const auto& n : extension_entry_names()) {
    if (glob_match(glob, n)) return true;
  }
  return false;
}

std::vector<std::pair<DType, DType>> convert_pairs(ConvertRule rule) {
  std::vector<std::pair<DType, DType>> out;
  for (size_t f = 0; f <= static_cast<size_t>(DType::kFp32); ++f) {
    for (size_t t = 0; t <= static_cast<size_t>(DType::kFp32); ++t) {
      ConvertSpec s;
      s.rule = rule;
      s.from = static_cast<DType>(f);
      s.to = static_cast<DType>(t);
      bool valid = validate_convert(s, 0, 0).ok();
      s.unit = NvdlaUnit::kSdp;  // nvdla-float: some pairs are the SDP's only
      valid = valid || (rule == ConvertRule::kNvdlaFloat && validate_convert(s, 0, 0).ok());
      if (valid) out.emplace_back(s.from, s.to);
    }
  }
  return out;
}

std::string convert_pair_name(DType from, DType to) { return std::string(dtype_name(from)) + ">" + dtype_name(to); }

std::vector<ConvertSpec> convert_variants(ConvertRule rule, DType from, DType to) {
  std::vector<ConvertSpec> out;
  ConvertSpec s;
  s.rule = rule;
  s.from = from;
  s.to = to;
  if (rule == ConvertRule::kIeee) {
    out.push_back(s);
  } else if (rule == ConvertRule::kNvdla) {
    for (NvdlaUnit u : {NvdlaUnit::kConv, NvdlaUnit::kConvWinograd, NvdlaUnit::kSdp, NvdlaUnit::kCdp, NvdlaUnit::kPdp,
                        NvdlaUnit::kPdpMinMax}) {
      for (bool flush : {false, true}) {
        s.unit = u;
        s.flush_nan = flush;
        out.push_back(s);
      }
    }
  } else if (rule == ConvertRule::kNvdlaFloat) {
    // Identity (denormals kept), halves, a large offset that the internal format
    // rounds, INF through the offset, a negative and a tiny scale, overflow.
    const std::pair<int32_t, float> options[] = {{0, 1.0f},     {0, 0.5f},       {-1001, 0.25f},
                                                 {65535, 1.0f}, {3, -1.5f},      {kNvdlaOffsetMin, 1.0f / 3.0f},
                                                 {7, 1e-30f},   {-2, 65536.0f}};
    for (NvdlaUnit u : {NvdlaUnit::kConv, NvdlaUnit::kSdp}) {
      for (bool flush : {false, true}) {
        for (TruncateMode m : {TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero}) {
          if (to == DType::kFp16 && m != kDefaultTruncate) continue;  // the mode rounds to an integer only
          for (auto [offset, scale] : options) {
            s.unit = u;
            s.flush_nan = flush;
            s.truncate = m;
            s.offset = offset;
            s.scale = scale;
            if (validate_convert(s, 0, 0).ok()) out.push_back(s);
          }
        }
      }
    }
  } else {
    // Exact products, halves (ties), saturation, a negative scale, a fraction
    // no power of two divides, and the offset range's ends.
    const std::pair<int32_t, float> options[] = {{0, 1.0f},     {0, 0.5f},     {3, 0.25f},       {-7, 3.5f},
                                                 {100, -1.5f},  {0, 300.0f},   {1, 1.0f / 3.0f}, {kNvdlaOffsetMin, 0.001f},
                                                 {kNvdlaOffsetMax, 1.0f / 1024.0f}};
    for (TruncateMode m : {TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero}) {
      for (auto [offset, scale] : options) {
        s.truncate = m;
        s.offset = offset;
        s.scale = scale;
        out.push_back(s);
      }
    }
  }
  return out;
}

std::vector<uint32_t> fp32_boundary_inputs() {
  std::vector<uint32_t> v;
  for (uint32_t sign : {0u, 0x80000000u}) {
    auto add = [&](uint32_t bits) { v.push_back(sign | bits); };
    add(0);                                                    // zero
    for (uint32_t d : {1u, 2u, 3u, 0x1000u, 0x400000u, 0x7fffffu, 0x7ffffeu}) add(d);  // denormals
    add(0x00800000u);                                          // smallest normal
    add(0x7f7fffffu), add(0x7f7ffffeu), add(0x7f000000u);      // the largest finite values
    // fp16 boundaries: 65504, just below and at the overflow tie 65520, 65536;
    // the smallest fp16 subnormal 2^-24, 2^-25 (a tie to zero) and around it, 2^-14.
    for (uint32_t b : {0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u, 0x47800000u, 0x33800000u, 0x33000000u,
                       0x33000001u, 0x32ffffffu, 0x38800000u, 0x387fc000u, 0x387fe000u})
      add(b);
    add(0x7f800000u);                                          // INF
    // NaNs: quiet, signalling, payloads only in the bits fp16 and bf16 drop.
    for (uint32_t n : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0x7fa00000u, 0x7f802000u, 0x7f801000u, 0x7f800100u,
                       0x7fc00001u, 0x7f810000u})
      add(n);
    // The rounding ties of each exponent for fp16 (13 dropped bits) and bf16
    // (16 dropped bits), with an even and an odd kept mantissa, and their neighbours.
    for (uint32_t e = 0; e < 255; ++e) {
      for (uint32_t m : {0x1000u, 0x3000u, 0x0fffu, 0x1001u, 0x7ff000u, 0x8000u, 0x18000u, 0x7fffu, 0x8001u}) {
        add((e << 23) | m);
      }
    }
  }
  return v;
}

std::vector<uint8_t> convert_inputs(DType from, uint64_t random, uint64_t seed) {
  std::vector<uint8_t> out;
  const size_t bytes = dtype_bits(from) / 8;
  if (bytes <= 2) {
    for (uint64_t v = 0; v < (uint64_t{1} << (8 * bytes)); ++v) store_le(&out, v, bytes);
    return out;
  }
  for (uint32_t v : fp32_boundary_inputs()) store_le(&out, v, 4);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < random; ++i) store_le(&out, rng() & 0xffffffffu, 4);
  return out;
}

bool convert_output_accepted(const ConvertSpec& spec, uint64_t expected, uint64_t actual) {
  if (expected == actual) return true;
  // "NaN ... the mantissa propagation behavior is undefined" (FP16 Supporting): any
  // NaN of the same sign (the document leaves the mantissa open, not the sign).
  const uint64_t sign = uint64_t{1} << (dtype_bits(spec.to) - 1);
  return (spec.rule == ConvertRule::kNvdla || spec.rule == ConvertRule::kNvdlaFloat) && is_nan_bits(spec.to, expected) &&
         is_nan_bits(spec.to, actual) &&
         (expected & sign) == (actual & sign);
}

bool convert_output_free(const ConvertSpec& spec, uint64_t input) {
  // nvdla-float: a NaN "propagates", which an int16 output cannot hold; the document
  // gives it no value (ERRATA NVDLA precision 15).
  return spec.rule == ConvertRule::kNvdlaFloat && !spec.flush_nan && dtype_info(spec.to).kind != DTypeKind::kFloat &&
         is_nan_bits(spec.from, input);
}

std::string convert_variant_name(const ConvertSpec& s) {
  std::string n = std::string("convert.") + convert_rule_name(s.rule) + " " + convert_pair_name(s.from, s.to);
  if (s.rule == ConvertRule::kNvdla || s.rule == ConvertRule::kNvdlaFloat) {
    n += std::string(" unit=") + nvdla_unit_name(s.unit) + " flush-nan=" + (s.flush_nan ? "1" : "0");
  }
  if (s.rule == ConvertRule::kNvdlaInt || s.rule == ConvertRule::kNvdlaFloat) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.9g", static_cast<double>(s.scale));
    n += " offset=" + std::to_string(s.offset) + " scale=" + scale + " truncate=" + truncate_mode_name(s.truncate);
  }
  return n;
}

std::string convert_repro(const ConvertSpec& s, uint64_t input_bits, const std::string& impl) {
  std::string line = "printf '" + shell_bytes(input_bits, dtype_bits(s.from) / 8) + "' | layoutcheck convert --impl " +
                     shell_quote(impl) + " --rule " + convert_rule_name(s.rule) + " --from " + dtype_name(s.from) +
                     " --to " + dtype_name(s.to);
  if (s.rule == ConvertRule::kNvdla || s.rule == ConvertRule::kNvdlaFloat) {
    line += std::string(" --unit ") + nvdla_unit_name(s.unit) + (s.flush_nan ? " --flush-nan" : "");
  }
  if (s.rule == ConvertRule::kNvdlaInt || s.rule == ConvertRule::kNvdlaFloat) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.9g", static_cast<double>(s.scale));
    line += " --offset " + std::to_string(s.offset) + " --scale " + scale + " --truncate " + truncate_mode_name(s.truncate);
  }
  return line + " | od -An -tx1";
}

std::string PluginConverter::name() const { return plugin_.name(); }

Status PluginConverter::convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst,
                                size_t dst_bytes, NanCounts* nan) const {
  LC_RETURN_IF_ERROR(plugin_.convert(spec, src, src_bytes, dst, dst_bytes));
  if (nan) {
    const size_t fb = dtype_bits(spec.from) / 8, tb = dtype_bits(spec.to) / 8;
    NanCounts n;
    for (size_t i = 0; i < src_bytes / fb; ++i) {
      n.input += is_nan_bits(spec.from, load_le(static_cast<const uint8_t*>(src) + i * fb, fb)) ? 1 : 0;
      n.output += is_nan_bits(spec.to, load_le(static_cast<const uint8_t*>(dst) + i * tb, tb)) ? 1 : 0;
    }
    *nan = n;
  }
  return Status();
}

Extensions plugin_extensions(const PluginImpl& p) {
  Extensions e;
  e.name = p.name();
  if (p.has_member(PluginImpl::kConvertMember)) {
    static thread_local std::vector<std::unique_ptr<PluginConverter>> keep;
    keep.push_back(std::make_unique<PluginConverter>(p));
    e.converter = keep.back().get();
    e.claims_convert = [&p](ConvertRule r, DType f, DType t) {
      return p.claims_entry(std::string("convert.") + convert_rule_name(r), convert_pair_name(f, t));
    };
  }
  if (p.has_member(PluginImpl::kSparseCompressMember)) {
    e.compress = [&p](const Case& c, const void* in, size_t n, size_t wgs, size_t wmb, size_t cap) {
      return p.sparse_compress(c, in, n, wgs, wmb, cap);
    };
  }
  if (p.has_member(PluginImpl::kSparseDecompressMember)) {
    e.decompress = [&p](const Case& c, const nvdla::CompressedWeights& z, void* out, size_t n) {
      return p.sparse_decompress(c, z, out, n);
    };
  }
  if (e.compress || e.decompress) {
    e.claims_sparse = [&p](DType t) { return p.claims_entry("nvdla.sparse", dtype_name(t)); };
  }
  if (p.has_member(PluginImpl::kWinogradExtendMember)) {
    e.extend = [&p](DType t, const Shape& s, int64_t stride, const void* in, size_t n, void* out, size_t m) {
      return p.winograd_extend(t, s, stride, in, n, out, m);
    };
  }
  if (p.has_member(PluginImpl::kWinogradTransformMember)) {
    e.transform = [&p](DType t, const Shape& s, const void* in, size_t n, void* out, size_t m) {
      return p.winograd_transform(t, s, in, n, out, m);
    };
  }
  if (e.extend || e.transform) {
    e.claims_winograd = [&p](DType t) { return p.claims_entry("nvdla.winograd.phase1", dtype_name(t)); };
  }
  return e;
}

std::vector<ExtensionTally> run_extension_checks(const std::string& glob, const Extensions& expected,
                                                 const Extensions& actual, const Impl& layouts,
                                                 const ExtensionCheckOptions& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  std::vector<ExtensionTally> out;
  bool stop = false;
  auto fail = [&](ExtensionTally& t, const std::string& message) {
    ++t.failed;
    if (t.failures.size() < o.max_failures) t.failures.push_back(message);
    if (o.fail_fast) stop = true;
  };
  // The entries to run, to share the time among them.
  std::vector<std::string> entries;
  for (const auto& n : extension_entry_names()) {
    if (glob_match(glob, n)) entries.push_back(n);
  }
  const double share = o.seconds / static_cast<double>(std::max<size_t>(entries.size(), 1));
  for (size_t ei = 0; ei < entries.size() && !stop; ++ei) {
    const std::string& entry = entries[ei];
    ExtensionTally t;
    t.entry = entry;
    const double deadline = share * static_cast<double>(ei + 1);
    if (entry.rfind("convert.", 0) == 0) {
      auto rule = parse_convert_rule(entry.substr(8));
      if (!rule.ok() || !actual.converter || !expected.converter) {
        out.push_back(t);
        continue;
      }
      std::vector<ConvertSpec> variants;
      for (auto [f, to] : convert_pairs(*rule)) {
        if (!actual.claims_convert || !actual.claims_convert(*rule, f, to)) continue;
        for (const auto& s : convert_variants(*rule, f, to)) variants.push_back(s);
      }
      t.claimed = !variants.empty();
      for (size_t vi = 0; vi < variants.size() && !stop; ++vi) {
        const ConvertSpec& s = variants[vi];
        const uint64_t variant_seed = o.seed * 0x9e3779b97f4a7c15ull + vi;
        // fp32: the boundary classes, then random values (--cases of them, or
        // batches while this variant's share of the time lasts).
        uint64_t random = o.cases ? o.cases : 4096;
        std::string why = check_variant(s, *expected.converter, *actual.converter, convert_inputs(s.from, random, variant_seed),
                                        actual.name, &t.values);
        if (why.empty() && s.from == DType::kFp32 && !o.cases) {
          const double until = deadline - share * (1.0 - static_cast<double>(vi + 1) / static_cast<double>(variants.size()));
          for (uint64_t batch = 1; why.empty() && elapsed() < until; ++batch) {
            std::vector<uint8_t> in;
            std::mt19937_64 rng(variant_seed + (batch << 32));
            for (int i = 0; i < 65536; ++i) store_le(&in, rng() & 0xffffffffu, 4);
            why = check_variant(s, *expected.converter, *actual.converter, in, actual.name, &t.values);
          }
        }
        if (why.empty()) ++t.passed;
        else fail(t, why);
      }
    } else if (entry == "nvdla.sparse" || entry == "nvdla.winograd.phase1") {
      const bool sparse = entry == "nvdla.sparse";
      const auto& claims = sparse ? actual.claims_sparse : actual.claims_winograd;
      if (!claims) {
        out.push_back(t);
        continue;
      }
      const std::vector<DType> types = sparse ? std::vector<DType>{DType::kInt8, DType::kInt16, DType::kFp16}
                                              : std::vector<DType>{DType::kInt8, DType::kInt16, DType::kFp16};
      std::vector<DType> claimed;
      for (DType d : types) {
        if (claims(d)) claimed.push_back(d);
      }
      t.claimed = !claimed.empty();
      for (uint64_t i = 0; t.claimed && !stop; ++i) {
        if (o.cases ? i >= o.cases * claimed.size() : (i >= 20 * claimed.size() && elapsed() >= deadline)) break;
        // The dtype follows from the case's seed, so `--cases 1 --seed S` repeats it.
        const uint64_t case_seed = o.seed + i;
        const DType d = claimed[case_seed % claimed.size()];
        std::string why = sparse ? check_sparse_case(case_seed, d, expected, actual, layouts)
                                 : check_winograd_case(case_seed, d, expected, actual);
        if (why.empty()) ++t.passed;
        else fail(t, why);
      }
    }
    if (t.claimed) {
      say("layoutcheck check: " + entry + ": " + std::to_string(t.passed) + " passed, " + std::to_string(t.failed) +
          " failed" + (t.values ? " (" + std::to_string(t.values) + " values)" : ""));
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace layoutcheck
