// The ABI 1.1 members of a plugin (c_api.h): conversions, NVDLA sparse
// compression and Winograd phase 1, in this process (PluginImpl) and in the
// plugin's worker process (IsolatedImpl), with the guarantees of pack: guard
// pages around every buffer, two runs that must agree, a crash or hang of the
// worker reported as an error naming the call.
#include <cstddef>
#include <cstring>
#include <memory>

#include "core/plugin_wire.h"
#include "layoutcheck/c_api.h"
#include "layoutcheck/checked.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck {
namespace {

using namespace plugin_wire;

const lc_plugin* table(const void* t) { return static_cast<const lc_plugin*>(t); }

// A member the table's struct_size covers, or NULL: a 1.0 plugin's table ends at unpack.
#define LC_MEMBER(t, m) ((t)->struct_size >= offsetof(lc_plugin, m) + sizeof((t)->m) ? (t)->m : nullptr)

template <typename Fn, typename... Args>
int status_of(Fn fn, Args... args) {
  const lc_status r = fn(args...);
  int v;
  static_assert(sizeof v == sizeof r, "lc_status is an int");
  std::memcpy(&v, &r, sizeof v);
  return v;
}

// An lc_convert_case and its strings.
struct CConvert {
  explicit CConvert(const ConvertSpec& s)
      : rule(convert_rule_name(s.rule)),
        from(dtype_name(s.from)),
        to(dtype_name(s.to)),
        unit(nvdla_unit_name(s.unit)),
        truncate(truncate_mode_name(s.truncate)) {
    view.rule = rule.c_str();
    view.from = from.c_str();
    view.to = to.c_str();
    view.unit = unit.c_str();
    view.flush_nan = s.flush_nan ? 1 : 0;
    view.offset = s.offset;
    view.scale = s.scale;
    view.truncate = truncate.c_str();
  }
  std::string rule, from, to, unit, truncate;
  lc_convert_case view{};
};


struct CWinograd {
  CWinograd(DType t, const Shape& s, int64_t stride) : dtype(dtype_name(t)) {
    view.dtype = dtype.c_str();
    view.dtype_bits = dtype_bits(t);
    for (size_t i = 0; i < 4; ++i) view.shape[i] = i < s.size() ? s[i] : 0;
    view.stride = stride;
  }
  std::string dtype;
  lc_winograd_case view{};
};

Status winograd_shape(const Shape& s, const char* what) {
  if (s.size() != 4) {
    return Status::invalid(std::string(what) + ": kernels are (K, C, R, S), not (" + shape_to_string(s) + ")");
  }
  return Status();
}

// A buffer in guard pages holding a copy of `bytes`, or plain memory when the
// mapping fails.
struct GuardedCopy {
  GuardedCopy(const void* bytes, size_t n, const char* label) : pages(n, label), size(n) {
    if (pages.ok()) {
      ptr = pages.data();
    } else {
      plain.assign(n, 0);
      ptr = plain.data();
    }
    if (n && bytes) std::memcpy(ptr, bytes, n);
  }
  Status check(const std::string& who) const { return pages.ok() ? pages.check_slack(who) : Status(); }
  GuardedPages pages;
  std::vector<uint8_t> plain;
  uint8_t* ptr = nullptr;
  size_t size;
};

constexpr uint64_t kFirstExtensionOp = 64;
enum ExtOp : uint64_t {
  kConvertOp = kFirstExtensionOp,
  kSparseCompressOp,
  kSparseDecompressOp,
  kWinogradExtendOp,
  kWinogradTransformOp,
  kOffsetBitsTupleOp,  // ABI 1.2
};

void put_spec(std::string* out, const ConvertSpec& s) {
  put_u64(out, static_cast<uint64_t>(s.rule));
  put_u64(out, static_cast<uint64_t>(s.from));
  put_u64(out, static_cast<uint64_t>(s.to));
  put_u64(out, static_cast<uint64_t>(s.unit));
  put_u64(out, s.flush_nan ? 1 : 0);
  put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(s.offset)));
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &s.scale, sizeof scale_bits);
  put_u64(out, scale_bits);
  put_u64(out, static_cast<uint64_t>(s.truncate));
}

ConvertSpec get_spec(Reader& r) {
  ConvertSpec s;
  s.rule = static_cast<ConvertRule>(r.u64() & 0xff);
  s.from = static_cast<DType>(r.u64() & 0xff);
  s.to = static_cast<DType>(r.u64() & 0xff);
  s.unit = static_cast<NvdlaUnit>(r.u64() & 0xff);
  s.flush_nan = r.u64() != 0;
  s.offset = static_cast<int32_t>(static_cast<int64_t>(r.u64()));
  const uint32_t scale_bits = static_cast<uint32_t>(r.u64());
  std::memcpy(&s.scale, &scale_bits, sizeof scale_bits);
  s.truncate = static_cast<TruncateMode>(r.u64() & 0xff);
  return s;
}

void put_shape(std::string* out, const Shape& s) {
  put_u64(out, s.size());
  for (int64_t d : s) put_u64(out, static_cast<uint64_t>(d));
}

Shape get_shape(Reader& r) {
  Shape s;
  const uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && i < 8 && !r.bad; ++i) s.push_back(static_cast<int64_t>(r.u64()));
  if (n > 8) r.bad = true;
  return s;
}

std::string request_of(uint64_t op) {
  std::string out;
  put_u64(&out, op);
  put_case(&out, Case{});
  return out;
}

Status unsupported(const std::string& plugin, const char* member) {
  return Status::unsupported(plugin + " has no " + member + " (an ABI 1.1 member; NULL or beyond its struct_size)");
}

}  // namespace

uint64_t extension_members_of(const lc_plugin* t) {
  uint64_t m = 0;
  if (LC_MEMBER(t, convert)) m |= PluginImpl::kConvertMember;
  if (LC_MEMBER(t, sparse_compress)) m |= PluginImpl::kSparseCompressMember;
  if (LC_MEMBER(t, sparse_decompress)) m |= PluginImpl::kSparseDecompressMember;
  if (LC_MEMBER(t, winograd_extend)) m |= PluginImpl::kWinogradExtendMember;
  if (LC_MEMBER(t, winograd_transform)) m |= PluginImpl::kWinogradTransformMember;
  if (LC_MEMBER(t, offset_bits_tuple)) m |= PluginImpl::kOffsetBitsTupleMember;
  return m;
}

bool PluginImpl::claims_entry(const std::string& name, const std::string& dtype) const {
  for (const auto& cap : capabilities_) {
    if (!glob_match(cap.layout_glob, name)) continue;
    if (cap.dtypes.empty()) return true;
    for (const auto& d : cap.dtypes) {
      if (d == dtype) return true;
    }
  }
  return false;
}

// ---- in this process ------------------------------------------------------------

Status PluginImpl::convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst,
                           size_t dst_bytes) const {
  if (!has_member(kConvertMember)) return unsupported(name_, "convert");
  LC_RETURN_IF_ERROR(validate_convert(spec, src_bytes, dst_bytes));
  CConvert cc(spec);
  const auto fn = LC_MEMBER(table(table_), convert);
  return run_guarded("convert " + to_string(spec), "source buffer", "destination buffer", src, src_bytes, dst,
                     dst_bytes, [&](const void* in, size_t is, void* out, size_t os) {
                       return status_of(fn, &cc.view, in, is, out, os);
                     });
}

Result<nvdla::CompressedWeights> PluginImpl::sparse_compress(const Case& weights, const void* packed,
                                                             size_t packed_size, size_t wgs_size, size_t wmb_size,
                                                             size_t data_capacity) const {
  if (!has_member(kSparseCompressMember)) return unsupported(name_, "sparse_compress");
  const auto fn = LC_MEMBER(table(table_), sparse_compress);
  CCase cc(weights);
  const std::string who = "sparse_compress " + to_string(weights);
  GuardedCopy in(packed, packed_size, "packed weight buffer");
  nvdla::CompressedWeights first;
  uint64_t first_size = 0;
  for (int run = 0; run < 2; ++run) {
    GuardedCopy wgs(nullptr, wgs_size, "WGS surface"), wmb(nullptr, wmb_size, "WMB surface"),
        data(nullptr, data_capacity, "compressed weight surface");
    lc_sparse_surfaces out{wgs.ptr, wgs_size, wmb.ptr, wmb_size, data.ptr, data_capacity};
    uint64_t data_size = UINT64_MAX;
    const int s = status_of(fn, &cc.view, static_cast<const void*>(in.ptr), packed_size,
                            static_cast<const lc_sparse_surfaces*>(&out), &data_size);
    for (const GuardedCopy* g : {&in, &wgs, &wmb, &data}) LC_RETURN_IF_ERROR(g->check(who));
    if (packed_size && std::memcmp(in.ptr, packed, packed_size) != 0) {
      return Status::internal(who + ": wrote into its input, the packed weight buffer");
    }
    LC_RETURN_IF_ERROR(plugin_status(s, who));
    if (data_size > data_capacity) {
      return Status::internal(who + ": reports a data surface of " + std::to_string(data_size) +
                              " bytes, more than the " + std::to_string(data_capacity) + " it was given");
    }
    nvdla::CompressedWeights z;
    z.wgs.assign(wgs.ptr, wgs.ptr + wgs_size);
    z.wmb.assign(wmb.ptr, wmb.ptr + wmb_size);
    z.data.assign(data.ptr, data.ptr + data_size);
    if (run == 0) {
      first = std::move(z);
      first_size = data_size;
    } else if (!(z == first) || data_size != first_size) {
      return Status::internal(who + " is not deterministic: two runs on the same input differ");
    }
  }
  return first;
}

Status PluginImpl::sparse_decompress(const Case& weights, const nvdla::CompressedWeights& in, void* packed,
                                     size_t packed_size) const {
  if (!has_member(kSparseDecompressMember)) return unsupported(name_, "sparse_decompress");
  const auto fn = LC_MEMBER(table(table_), sparse_decompress);
  CCase cc(weights);
  const std::string who = "sparse_decompress " + to_string(weights);
  GuardedCopy wgs(in.wgs.data(), in.wgs.size(), "WGS surface"), wmb(in.wmb.data(), in.wmb.size(), "WMB surface"),
      data(in.data.data(), in.data.size(), "compressed weight surface");
  lc_sparse_surfaces surfaces{wgs.ptr, wgs.size, wmb.ptr, wmb.size, data.ptr, data.size};
  Status st = run_guarded(who, "(no) input", "packed weight buffer", nullptr, 0, packed, packed_size,
                          [&](const void*, size_t, void* out, size_t os) {
                            return status_of(fn, &cc.view, static_cast<const lc_sparse_surfaces*>(&surfaces), out, os);
                          });
  for (const GuardedCopy* g : {&wgs, &wmb, &data}) LC_RETURN_IF_ERROR(g->check(who));
  if ((wgs.size && std::memcmp(wgs.ptr, in.wgs.data(), wgs.size) != 0) ||
      (wmb.size && std::memcmp(wmb.ptr, in.wmb.data(), wmb.size) != 0) ||
      (data.size && std::memcmp(data.ptr, in.data.data(), data.size) != 0)) {
    return Status::internal(who + ": wrote into its input surfaces");
  }
  return st;
}

Status PluginImpl::winograd_extend(DType t, const Shape& kcrs, int64_t stride, const void* src, size_t src_bytes,
                                   void* dst, size_t dst_bytes) const {
  if (!has_member(kWinogradExtendMember)) return unsupported(name_, "winograd_extend");
  LC_RETURN_IF_ERROR(winograd_shape(kcrs, "Winograd channel extension"));
  const auto fn = LC_MEMBER(table(table_), winograd_extend);
  CWinograd cw(t, kcrs, stride);
  return run_guarded("winograd_extend", "kernel buffer", "extended kernel buffer", src, src_bytes, dst, dst_bytes,
                     [&](const void* in, size_t is, void* out, size_t os) {
                       return status_of(fn, &cw.view, in, is, out, os);
                     });
}

Status PluginImpl::winograd_transform(DType t, const Shape& kc33, const void* src, size_t src_bytes, void* dst,
                                      size_t dst_bytes) const {
  if (!has_member(kWinogradTransformMember)) return unsupported(name_, "winograd_transform");
  LC_RETURN_IF_ERROR(winograd_shape(kc33, "Winograd conversion"));
  const auto fn = LC_MEMBER(table(table_), winograd_transform);
  CWinograd cw(t, kc33, 1);
  return run_guarded("winograd_transform", "kernel buffer", "transformed kernel buffer", src, src_bytes, dst,
                     dst_bytes, [&](const void* in, size_t is, void* out, size_t os) {
                       return status_of(fn, &cw.view, in, is, out, os);
                     });
}

// ---- in the worker ------------------------------------------------------------------

bool serve_extension(const PluginImpl& impl, uint64_t op, Reader& r, Status* st, uint64_t* value,
                     std::string* bytes) {
  if (op == kOffsetBitsTupleOp) {
    Case c;
    const bool ok = get_case(r, &c);
    auto at = parse_int_tuple(r.str(kMaxMessage));
    if (!ok || r.bad || !at.ok()) {
      *st = Status::internal("malformed request");
      return true;
    }
    Sandbox::child_allow(0);
    auto v = impl.offset_bits_nested(c, *at);
    *st = v.ok() ? Status() : v.status();
    *value = v.ok() ? *v : 0;
    return true;
  }
  if (op < kConvertOp || op > kWinogradTransformOp) return false;
  // The request's case (the weights of a sparse call) was read by the caller
  // into a Case it does not hand over; the sparse ops repeat it.
  if (op == kConvertOp) {
    const ConvertSpec spec = get_spec(r);
    const uint64_t in_size = r.u64();
    std::string in = get_fill(r, in_size);
    const uint64_t out_size = r.u64();
    if (r.bad || out_size > (uint64_t{1} << 32)) {
      *st = Status::internal("malformed request");
      return true;
    }
    bytes->assign(static_cast<size_t>(out_size), '\0');
    Sandbox::child_allow(in.size() + bytes->size());
    *st = impl.convert(spec, in.data(), in.size(), bytes->data(), bytes->size());
  } else if (op == kSparseCompressOp || op == kSparseDecompressOp) {
    Case c;
    if (!get_case(r, &c)) {
      *st = Status::internal("malformed request");
      return true;
    }
    if (op == kSparseCompressOp) {
      const uint64_t in_size = r.u64();
      std::string in = get_fill(r, in_size);
      const uint64_t wgs = r.u64(), wmb = r.u64(), cap = r.u64();
      if (r.bad || wgs > (uint64_t{1} << 32) || wmb > (uint64_t{1} << 32) || cap > (uint64_t{1} << 32)) {
        *st = Status::internal("malformed request");
        return true;
      }
      Sandbox::child_allow(in.size() + wgs + wmb + cap);
      auto z = impl.sparse_compress(c, in.data(), in.size(), wgs, wmb, cap);
      if (!z.ok()) {
        *st = z.status();
        return true;
      }
      *value = z->data.size();
      bytes->assign(z->wgs.begin(), z->wgs.end());
      bytes->append(z->wmb.begin(), z->wmb.end());
      bytes->append(z->data.begin(), z->data.end());
    } else {
      nvdla::CompressedWeights z;
      for (auto* v : {&z.wgs, &z.wmb, &z.data}) {
        std::string s = r.str(uint64_t{1} << 32);
        v->assign(s.begin(), s.end());
      }
      const uint64_t out_size = r.u64();
      if (r.bad || out_size > (uint64_t{1} << 32)) {
        *st = Status::internal("malformed request");
        return true;
      }
      bytes->assign(static_cast<size_t>(out_size), '\0');
      Sandbox::child_allow(z.wgs.size() + z.wmb.size() + z.data.size() + bytes->size());
      *st = impl.sparse_decompress(c, z, bytes->data(), bytes->size());
    }
  } else {
    const DType t = static_cast<DType>(r.u64() & 0xff);
    const Shape shape = get_shape(r);
    const int64_t stride = static_cast<int64_t>(r.u64());
    const uint64_t in_size = r.u64();
    std::string in = get_fill(r, in_size);
    const uint64_t out_size = r.u64();
    if (r.bad || out_size > (uint64_t{1} << 32)) {
      *st = Status::internal("malformed request");
      return true;
    }
    bytes->assign(static_cast<size_t>(out_size), '\0');
    Sandbox::child_allow(in.size() + bytes->size());
    *st = op == kWinogradExtendOp
              ? impl.winograd_extend(t, shape, stride, in.data(), in.size(), bytes->data(), bytes->size())
              : impl.winograd_transform(t, shape, in.data(), in.size(), bytes->data(), bytes->size());
  }
  return true;
}

// ---- through the worker ---------------------------------------------------------------

Status IsolatedImpl::convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst,
                             size_t dst_bytes) const {
  if (!has_member(kConvertMember)) return unsupported(name_, "convert");
  LC_RETURN_IF_ERROR(validate_convert(spec, src_bytes, dst_bytes));
  std::string req = request_of(kConvertOp);
  put_spec(&req, spec);
  put_u64(&req, src_bytes);
  put_fill(&req, src, src_bytes);
  put_u64(&req, dst_bytes);
  Answer a = answer_of(call(req, dst_bytes, "convert"));
  if (!a.status.ok()) return a.status;
  if (a.bytes.size() != dst_bytes) return Status::internal("convert: the worker answered a buffer of the wrong size");
  if (dst_bytes) std::memcpy(dst, a.bytes.data(), dst_bytes);
  return Status();
}

Result<nvdla::CompressedWeights> IsolatedImpl::sparse_compress(const Case& weights, const void* packed,
                                                               size_t packed_size, size_t wgs_size, size_t wmb_size,
                                                               size_t data_capacity) const {
  if (!has_member(kSparseCompressMember)) return unsupported(name_, "sparse_compress");
  std::string req = request_of(kSparseCompressOp);
  put_case(&req, weights);
  put_u64(&req, packed_size);
  put_fill(&req, packed, packed_size);
  put_u64(&req, wgs_size);
  put_u64(&req, wmb_size);
  put_u64(&req, data_capacity);
  Checked most = Checked(wgs_size) + wmb_size + data_capacity;
  if (!most.ok()) return Status::invalid("sparse_compress: surfaces too large");
  Answer a = answer_of(call(req, most.value(), "sparse_compress"));
  if (!a.status.ok()) return a.status;
  if (a.value > data_capacity || a.bytes.size() != wgs_size + wmb_size + a.value) {
    return Status::internal("sparse_compress: the worker answered surfaces of the wrong size");
  }
  nvdla::CompressedWeights z;
  const auto* p = reinterpret_cast<const uint8_t*>(a.bytes.data());
  z.wgs.assign(p, p + wgs_size);
  z.wmb.assign(p + wgs_size, p + wgs_size + wmb_size);
  z.data.assign(p + wgs_size + wmb_size, p + a.bytes.size());
  return z;
}

Status IsolatedImpl::sparse_decompress(const Case& weights, const nvdla::CompressedWeights& in, void* packed,
                                       size_t packed_size) const {
  if (!has_member(kSparseDecompressMember)) return unsupported(name_, "sparse_decompress");
  std::string req = request_of(kSparseDecompressOp);
  put_case(&req, weights);
  for (const auto* v : {&in.wgs, &in.wmb, &in.data}) put_str(&req, std::string(v->begin(), v->end()));
  put_u64(&req, packed_size);
  Answer a = answer_of(call(req, packed_size, "sparse_decompress"));
  if (!a.status.ok()) return a.status;
  if (a.bytes.size() != packed_size) {
    return Status::internal("sparse_decompress: the worker answered a buffer of the wrong size");
  }
  if (packed_size) std::memcpy(packed, a.bytes.data(), packed_size);
  return Status();
}

namespace {

template <typename Call>
Status winograd_call(Call&& call, uint64_t op, DType t, const Shape& shape, int64_t stride, const void* src,
                     size_t src_bytes, void* dst, size_t dst_bytes, const char* what) {
  std::string req = request_of(op);
  put_u64(&req, static_cast<uint64_t>(t));
  put_shape(&req, shape);
  put_u64(&req, static_cast<uint64_t>(stride));
  put_u64(&req, src_bytes);
  put_fill(&req, src, src_bytes);
  put_u64(&req, dst_bytes);
  Answer a = answer_of(call(req, dst_bytes, what));
  if (!a.status.ok()) return a.status;
  if (a.bytes.size() != dst_bytes) return Status::internal(std::string(what) + ": the worker answered a buffer of the wrong size");
  if (dst_bytes) std::memcpy(dst, a.bytes.data(), dst_bytes);
  return Status();
}

}  // namespace

Status IsolatedImpl::winograd_extend(DType t, const Shape& kcrs, int64_t stride, const void* src, size_t src_bytes,
                                     void* dst, size_t dst_bytes) const {
  if (!has_member(kWinogradExtendMember)) return unsupported(name_, "winograd_extend");
  LC_RETURN_IF_ERROR(winograd_shape(kcrs, "Winograd channel extension"));
  return winograd_call([this](const std::string& q, uint64_t m, const std::string& w) { return call(q, m, w); },
                       kWinogradExtendOp, t, kcrs, stride, src, src_bytes, dst, dst_bytes, "winograd_extend");
}

Status IsolatedImpl::winograd_transform(DType t, const Shape& kc33, const void* src, size_t src_bytes, void* dst,
                                        size_t dst_bytes) const {
  if (!has_member(kWinogradTransformMember)) return unsupported(name_, "winograd_transform");
  LC_RETURN_IF_ERROR(winograd_shape(kc33, "Winograd conversion"));
  return winograd_call([this](const std::string& q, uint64_t m, const std::string& w) { return call(q, m, w); },
                       kWinogradTransformOp, t, kc33, 1, src, src_bytes, dst, dst_bytes, "winograd_transform");
}

// ---- ABI 1.2: nested coordinates -----------------------------------------------------

Result<uint64_t> PluginImpl::offset_bits_nested(const Case& c, const IntTuple& at) const {
  if (!has_member(kOffsetBitsTupleMember)) {
    return Status::unsupported(name_ + " has no offset_bits_tuple (an ABI 1.2 member; NULL or beyond its struct_size)");
  }
  const auto fn = LC_MEMBER(table(table_), offset_bits_tuple);
  CCase cc(c);
  const std::string text = to_string(at);
  uint64_t bits = 0;
  LC_RETURN_IF_ERROR(plugin_status(status_of(fn, &cc.view, text.c_str(), &bits), name_ + " offset_bits_tuple"));
  return bits;
}

Result<uint64_t> IsolatedImpl::offset_bits_nested(const Case& c, const IntTuple& at) const {
  if (!has_member(kOffsetBitsTupleMember)) {
    return Status::unsupported(name_ + " has no offset_bits_tuple (an ABI 1.2 member; NULL or beyond its struct_size)");
  }
  std::string req = request_of(kOffsetBitsTupleOp);
  put_case(&req, c);
  put_str(&req, to_string(at));
  Answer a = answer_of(call(req, 0, "offset_bits_tuple"));
  if (!a.status.ok()) return a.status;
  return a.value;
}

}  // namespace layoutcheck
