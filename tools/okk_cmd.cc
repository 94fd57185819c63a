#include "tools/okk_cmd.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "layoutcheck/dtype.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/isolate.h"
#include "layoutcheck/layout.h"
// For the types of the functions' signatures (dim4, okk_compat_config) only: the
// expected values come from the reference, never from this header's functions.
#include "layoutcheck/okkernel_compat.h"
#include "tools/cli_json.h"
#include "tools/function_lib.h"

namespace layoutcheck::cli {
namespace {

// The functions, in the order they are checked and reported.
enum Fn : uint64_t { kChannels, kContinuous, kAligned32, kAligned16, kAligned8, kCompact, kFnCount };

struct FnInfo {
  const char* symbol;
  const char* layout;  // the reference layout whose describe facts give the expected values
  const char* dtype;   // an element type of the function's element size
};

constexpr FnInfo kFns[kFnCount] = {
    {"okk_channle_num_per_npu", "tpu.compact", "fp32"},
    {"okk_continuous_stride", "tpu.continuous", "fp32"},
    {"okk_128_byte_aligned_stride_for_32bit", "tpu.aligned", "fp32"},
    {"okk_128_byte_aligned_stride_for_16bit", "tpu.aligned", "fp16"},
    {"okk_128_byte_aligned_stride_for_8bit", "tpu.aligned", "int8"},
    {"okk_compact_stride", "tpu.compact", "fp32"},
};

// Local memory per NPU in the reference cases: large enough for every tensor of
// the grid, a multiple of 128 so that NPU q's first byte is an aligned address.
constexpr int64_t kLocalBytes = int64_t{1} << 26;
constexpr int kMaxNpus = 1 << 16;        // the npus parameter's range (core/specs_tpu.cc)
constexpr int kMaxEuBytes = 1 << 16;     // the eu parameter's range
constexpr int kAllStarts = 256;          // NPU counts up to this are checked at every start NPU
constexpr uint64_t kPoison = 0x5EADBEEF;  // a stride member the function did not write keeps it

struct Input {
  int start = 0;
  int n = 1, c = 1, h = 1, w = 1;
};

struct Output {
  int32_t v[4] = {0, 0, 0, 0};  // n, c, h, w strides; the channel count in v[0]
  bool shape_changed = false, cfg_changed = false;
};

// ---- the child: loads the library, calls the functions --------------------------

using ChannelsFn = int (*)(int, int, const okk_compat_config*);
using ContinuousFn = void (*)(dim4*, const dim4*);
using StrideFn = void (*)(dim4*, int, const dim4*, const okk_compat_config*);

std::string serve(void* sym, const std::string& request) {
  Reader r{request};
  const uint64_t fn = r.u64();
  okk_compat_config cfg_value{static_cast<int>(r.u64()), static_cast<int>(r.u64())};
  const uint64_t count = r.u64();
  std::string reply;
  // The function's arguments and output between guard pages: a write past the
  // output dim4 is reported as such instead of corrupting the caller.
  GuardedPages stride_buf(sizeof(dim4), "stride output (a dim4)");
  GuardedPages shape_buf(sizeof(dim4), "shape argument (a dim4)");
  GuardedPages cfg_buf(sizeof(okk_compat_config), "config argument");
  if (r.bad || fn >= kFnCount || sym == nullptr) {
    put_str(&reply, "a malformed request (function " + std::to_string(fn) + ")");
    return reply;
  }
  if (!stride_buf.ok() || !shape_buf.ok() || !cfg_buf.ok()) {
    put_str(&reply, "cannot map the argument buffers");
    return reply;
  }
  auto* stride = reinterpret_cast<dim4*>(stride_buf.data());
  auto* shape = reinterpret_cast<dim4*>(shape_buf.data());
  auto* cfg = reinterpret_cast<okk_compat_config*>(cfg_buf.data());
  std::string outputs;
  for (uint64_t i = 0; i < count && !r.bad; ++i) {
    Input in;
    in.start = static_cast<int>(r.u64());
    in.n = static_cast<int>(r.u64()), in.c = static_cast<int>(r.u64());
    in.h = static_cast<int>(r.u64()), in.w = static_cast<int>(r.u64());
    const dim4 shape_value{in.n, in.c, in.h, in.w};
    *shape = shape_value;
    *cfg = cfg_value;
    const int poison = static_cast<int>(kPoison);
    *stride = dim4{poison, poison, poison, poison};
    int32_t v[4];
    if (fn == kChannels) {
      v[0] = as_function<ChannelsFn>(sym)(in.start, in.c, cfg);
      v[1] = v[2] = v[3] = 0;
    } else {
      if (fn == kContinuous) as_function<ContinuousFn>(sym)(stride, shape);
      else as_function<StrideFn>(sym)(stride, in.start, shape, cfg);
      v[0] = stride->n, v[1] = stride->c, v[2] = stride->h, v[3] = stride->w;
    }
    if (Status s = stride_buf.check_slack(kFns[fn].symbol); !s.ok()) {
      put_str(&reply, s.message());
      return reply;
    }
    for (int32_t x : v) put_u64(&outputs, static_cast<uint32_t>(x));
    const bool shape_changed = std::memcmp(shape, &shape_value, sizeof shape_value) != 0;
    const bool cfg_changed = std::memcmp(cfg, &cfg_value, sizeof cfg_value) != 0;
    put_u64(&outputs, (shape_changed ? 1u : 0u) | (cfg_changed ? 2u : 0u));
  }
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    put_str(&reply, std::string(kFns[fn].symbol) + " " + stray);
    return reply;
  }
  put_str(&reply, "");
  reply += outputs;
  return reply;
}

// ---- the parent: the grid, the expected values, the report --------------------

void add_unique(std::vector<int>* v, int64_t x, int64_t lo) {
  if (x < lo || x > INT_MAX) return;
  for (int y : *v) {
    if (y == x) return;
  }
  v->push_back(static_cast<int>(x));
}

// Channel counts around the multiples of X.
std::vector<int> channel_counts(int X) {
  std::vector<int> out = {1, 2};
  for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{3}}) {
    for (int64_t d : {-1, 0, 1}) add_unique(&out, k * X + d, 1);
  }
  return out;
}

// (H, W) pairs whose H*W lies around the multiples of the elements in one EU,
// for the element sizes given.
std::vector<std::pair<int, int>> hw_pairs(int eu_bytes, std::initializer_list<int> element_bytes) {
  std::vector<int> areas = {1, 2, 20};  // 20: the document's H = 4, W = 5
  for (int e : element_bytes) {
    const int64_t per_eu = eu_bytes / e;
    for (int64_t k : {int64_t{1}, int64_t{2}}) {
      for (int64_t d : {-1, 0, 1}) add_unique(&areas, k * per_eu + d, 1);
    }
  }
  std::vector<std::pair<int, int>> out;
  std::set<std::pair<int, int>> seen;
  for (int a : areas) {
    int d = 2;
    while (d < a && a % d != 0) ++d;
    for (auto p : {std::pair<int, int>{1, a}, std::pair<int, int>{a, 1}, std::pair<int, int>{d, a / d}}) {
      if (p.first * p.second == a && seen.insert(p).second) out.push_back(p);
    }
  }
  return out;
}

std::vector<Input> grid(Fn fn, int X, int eu_bytes) {
  std::vector<Input> out;
  // Every start NPU up to kAllStarts NPUs; beyond, the first and last few and
  // an even spread between them, so the grid stays a few seconds' work.
  std::vector<int> starts;
  if (X <= kAllStarts) {
    for (int q = 0; q < X; ++q) starts.push_back(q);
  } else {
    for (int q = 0; q < 4; ++q) starts.push_back(q);
    for (int q = 4; q < X - 4; q += X / kAllStarts) starts.push_back(q);
    for (int q = X - 4; q < X; ++q) starts.push_back(q);
  }
  if (fn == kChannels) {
    for (int q : starts) {
      for (int c : channel_counts(X)) out.push_back({q, 1, c, 1, 1});
    }
    return out;
  }
  const auto hws = fn == kAligned32   ? hw_pairs(eu_bytes, {4})
                   : fn == kAligned16 ? hw_pairs(eu_bytes, {2})
                   : fn == kAligned8  ? hw_pairs(eu_bytes, {1})
                                      : hw_pairs(eu_bytes, {4, 2, 1});
  if (fn == kContinuous) starts = {0};
  for (int q : starts) {
    for (int c : channel_counts(X)) {
      for (auto [h, w] : hws) {
        for (int n : {1, 2}) out.push_back({q, n, c, h, w});
      }
    }
  }
  return out;
}

std::string shape_text(const Input& in) {
  return std::to_string(in.n) + "," + std::to_string(in.c) + "," + std::to_string(in.h) + "," + std::to_string(in.w);
}

// What the reference says the function returns for `in`: the channels per NPU,
// or the n, c, h, w strides, from the describe facts of the same tensor.
Result<Output> expected(Fn fn, const Input& in, int X, int eu_bytes) {
  std::string layout = kFns[fn].layout;
  if (fn != kContinuous) {
    layout += "(npus=" + std::to_string(X) + ",lmem=" + std::to_string(kLocalBytes) + ",eu=" +
              std::to_string(eu_bytes) + ",addr=" + std::to_string(int64_t{in.start} * kLocalBytes) + ")";
  }
  LC_ASSIGN_OR_RETURN(Case c, parse_case(layout, kFns[fn].dtype, shape_text(in)));
  LC_ASSIGN_OR_RETURN(std::vector<Fact> facts, reference_impl().describe(c));
  std::map<std::string, std::string> f(facts.begin(), facts.end());
  Output out;
  const char* keys[4] = {"n_stride", "c_stride", "h_stride", "w_stride"};
  if (fn == kChannels) keys[0] = "channels_per_npu";
  for (int i = 0; i < (fn == kChannels ? 1 : 4); ++i) {
    auto it = f.find(keys[i]);
    if (it == f.end()) return Status::internal("the reference does not describe " + std::string(keys[i]) + " of " + to_string(c));
    const long long v = std::atoll(it->second.c_str());
    // The functions return int: a tensor whose strides do not fit one is left out.
    if (v > INT_MAX) return Status::unsupported(std::string(keys[i]) + " " + it->second + " of " + to_string(c) + " does not fit an int");
    out.v[i] = static_cast<int32_t>(v);
  }
  if (fn == kChannels) return out;
  // The facts agree with the reference's offsets wherever the document gives a
  // stride a meaning: N stride from n to n + 1, C stride from c to c + 1 in
  // system memory and to c + X in local memory, H and W strides from h to h + 1
  // and w to w + 1, each in elements.
  const int64_t c_step = fn == kContinuous ? 1 : X;
  const int64_t extents[4] = {in.n, in.c, in.h, in.w};
  const uint64_t element_bits = dtype_bits(c.dtype);
  LC_ASSIGN_OR_RETURN(uint64_t origin, reference_impl().offset_bits(c, {0, 0, 0, 0}));
  for (int d = 0; d < 4; ++d) {
    const int64_t step = d == 1 ? c_step : 1;
    if (extents[d] <= step) continue;
    Coord at = {0, 0, 0, 0};
    at[d] = step;
    LC_ASSIGN_OR_RETURN(uint64_t next, reference_impl().offset_bits(c, at));
    if (next - origin != static_cast<uint64_t>(out.v[d]) * element_bits) {
      return Status::internal("the reference's " + std::string(keys[d]) + " " + std::to_string(out.v[d]) +
                              " disagrees with its offsets (" + std::to_string((next - origin) / element_bits) +
                              " elements) for " + to_string(c));
    }
  }
  return out;
}

std::string values_text(Fn fn, const Output& o) {
  if (fn == kChannels) return std::to_string(o.v[0]);
  auto one = [](int32_t x) { return x == static_cast<int32_t>(kPoison) ? std::string("(not written)") : std::to_string(x); };
  return "{n " + one(o.v[0]) + ", c " + one(o.v[1]) + ", h " + one(o.v[2]) + ", w " + one(o.v[3]) + "}";
}

std::string input_text(Fn fn, const Input& in, int X, int eu_bytes) {
  const std::string cfg = "npu_num " + std::to_string(X) + ", eu_bytes " + std::to_string(eu_bytes);
  if (fn == kChannels) return "start_idx " + std::to_string(in.start) + ", num_channels " + std::to_string(in.c) + ", " + cfg;
  const std::string shape = "shape (" + shape_text(in) + ")";
  if (fn == kContinuous) return shape;
  return "start_idx " + std::to_string(in.start) + ", " + shape + ", " + cfg;
}

}  // namespace

const char* okk_reference_layout(const std::string& symbol) {
  for (const FnInfo& f : kFns) {
    if (symbol == f.symbol) return f.layout;
  }
  return nullptr;
}

int okk_main(const Args& a) {
  for (const auto& [k, v] : a.options) {
    if (k != "lib" && k != "chip" && k != "npus" && k != "eu-bytes" && k != "json") {
      throw UsageError{"unknown option --" + k.substr(0, 40) + " for 'okk'"};
    }
  }
  if (!a.has("lib")) throw UsageError{"okk needs --lib PATH.so, a library exporting okk_* functions"};
  const std::string path = a.get("lib");
  // Chip presets of core/specs_tpu.cc: 64 NPUs; EU 128 bytes (bm1684) or 64 (bm1684x).
  const std::string chip = a.get("chip", "bm1684");
  int X = 64, eu_bytes = 128;
  if (chip == "bm1684x") eu_bytes = 64;
  else if (chip != "bm1684") throw UsageError{"--chip '" + chip.substr(0, 40) + "' is not bm1684 or bm1684x"};
  X = static_cast<int>(cli::ranged_whole_number(a, "npus", X, 1, kMaxNpus));
  eu_bytes = static_cast<int>(cli::ranged_whole_number(a, "eu-bytes", eu_bytes, 4, kMaxEuBytes));
  if (eu_bytes % 4 != 0) {
    throw UsageError{"--eu-bytes " + std::to_string(eu_bytes) +
                     " does not hold a whole number of 32-bit elements (128-Byte Aligned Layout)"};
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw UsageError{"cannot read " + path + ": " + std::strerror(errno)};

  LibraryChild lib("okk", path);
  std::vector<const char*> symbols;
  for (const FnInfo& f : kFns) symbols.push_back(f.symbol);
  const std::optional<uint64_t> provided = lib.start_serving(symbols, serve);
  if (!provided) return 2;

  std::vector<FnResult> results(kFnCount);
  auto check = [&](uint64_t f, FnResult& res) {
    const Fn fn = static_cast<Fn>(f);
    std::vector<Input> inputs;
    std::vector<Output> want;
    for (const Input& in : grid(fn, X, eu_bytes)) {
      auto e = expected(fn, in, X, eu_bytes);
      if (!e.ok() && e.status().code() == StatusCode::kUnsupported) continue;
      if (!e.ok()) {
        std::cerr << "layoutcheck okk: the reference declines " << input_text(fn, in, X, eu_bytes) << ": "
                  << e.status().message() << "\n";
        return 2;
      }
      inputs.push_back(in);
      want.push_back(*e);
    }
    std::string request;
    put_u64(&request, f);
    put_u64(&request, static_cast<uint64_t>(X));
    put_u64(&request, static_cast<uint64_t>(eu_bytes));
    put_u64(&request, inputs.size());
    for (const Input& in : inputs) {
      for (int v : {in.start, in.n, in.c, in.h, in.w}) put_u64(&request, static_cast<uint64_t>(v));
    }
    std::optional<Reader> r = lib.call(request, kFns[f].symbol, inputs.size(), inputs.size() * 40 + (1 << 14));
    if (!r) return 2;
    res.inputs = inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) {
      Output got;
      for (int32_t& v : got.v) v = static_cast<int32_t>(static_cast<uint32_t>(r->u64()));
      const uint64_t flags = r->u64();
      if (r->bad) return lib.bad_library(std::string("sent a malformed answer during ") + kFns[f].symbol);
      got.shape_changed = flags & 1;
      got.cfg_changed = flags & 2;
      const bool differs = std::memcmp(got.v, want[i].v, sizeof got.v) != 0 || got.shape_changed || got.cfg_changed;
      if (!differs) continue;
      if (res.failed++ == 0) {
        res.input = input_text(fn, inputs[i], X, eu_bytes);
        res.expected = values_text(fn, want[i]);
        res.actual = values_text(fn, got);
        if (got.shape_changed) res.note = "it modified its const shape argument";
        else if (got.cfg_changed) res.note = "it modified its const config argument";
      }
    }
    return 0;
  };
  if (int status = check_functions(*provided, &results, check)) return status;

  Json j = report_header("okk");
  j["lib"] = path;
  j["npus"] = X;
  j["eu_bytes"] = eu_bytes;
  return report_functions(a, j,
                          "okk functions of " + path + " against the reference (npu_num " + std::to_string(X) +
                              ", eu_bytes " + std::to_string(eu_bytes) + ")",
                          "okk", symbols, results, 40);
}

}  // namespace layoutcheck::cli
