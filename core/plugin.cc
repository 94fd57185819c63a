#include "layoutcheck/plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "layoutcheck/c_api.h"
#include "core/plugin_wire.h"

namespace layoutcheck {
namespace {

const lc_plugin* table(const void* t) { return static_cast<const lc_plugin*>(t); }


// A plugin's status as an int: a C plugin may return any int, and holding a
// value outside LC_OK..LC_ERROR in an lc_status is undefined behaviour in C++.
template <typename Fn, typename... Args>
int status_of(Fn fn, Args... args) {
  const lc_status r = fn(args...);
  int v;
  static_assert(sizeof v == sizeof r, "lc_status is an int");
  std::memcpy(&v, &r, sizeof v);
  return v;
}

}  // namespace

Status plugin_status(int s, const std::string& what) {
  switch (s) {
    case LC_OK: return Status();
    case LC_INVALID: return Status::invalid(what + ": the plugin reports the case invalid");
    case LC_UNSUPPORTED: return Status::unsupported(what + ": not supported by the plugin");
    case LC_ERROR: return Status::internal(what + ": the plugin reports an error (status 3)");
    default:
      return Status::internal(what + ": the plugin returned " + std::to_string(s) +
                              ", which is not an lc_status");
  }
}

namespace {

Status from_c(int s, const std::string& what) { return plugin_status(s, what); }

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

// A plugin string: NULL, or NUL-terminated within kMaxPluginString bytes.
bool bounded(const char* s) { return s == nullptr || strnlen(s, kMaxPluginString) < kMaxPluginString; }

}  // namespace

// Runs a plugin's pack or unpack twice, each into its own guard-paged copy of
// `out`, with `in` in guard pages too; the two results must agree.
Status run_guarded(const std::string& who, const char* in_label, const char* out_label, const void* in,
                   size_t in_size, void* out, size_t out_size,
                   const std::function<int(const void*, size_t, void*, size_t)>& fn) {
  GuardedPages gin(in_size, in_label), first(out_size, out_label), second(out_size, out_label);
  if (!gin.ok() || !first.ok() || !second.ok()) {
    return from_c(fn(in, in_size, out, out_size), who);  // no room for guard pages: plain buffers
  }
  if (in_size) std::memcpy(gin.data(), in, in_size);
  if (out_size) std::memcpy(first.data(), out, out_size);
  if (out_size) std::memcpy(second.data(), out, out_size);
  const int s1 = fn(gin.data(), in_size, first.data(), out_size);
  LC_RETURN_IF_ERROR(first.check_slack(who));
  LC_RETURN_IF_ERROR(gin.check_slack(who));
  if (in_size && std::memcmp(gin.data(), in, in_size) != 0) {
    return Status::internal(who + ": wrote into its input, the " + std::string(in_label));
  }
  Status st = from_c(s1, who);
  if (!st.ok()) return st;
  const int s2 = fn(gin.data(), in_size, second.data(), out_size);
  LC_RETURN_IF_ERROR(second.check_slack(who));
  if (s2 != s1) {
    return Status::internal(who + " is not deterministic: a second run on the same input returned status " +
                            std::to_string(s2) + " instead of 0");
  }
  const bool same = out_size == 0 || std::memcmp(first.data(), second.data(), out_size) == 0;
  for (size_t b = 0; !same && b < out_size; ++b) {
    if (first.data()[b] != second.data()[b]) {
      return Status::internal(who + " is not deterministic: two runs on the same input differ at byte " +
                              std::to_string(b) + " of the " + out_label + " (" + hex_byte(first.data()[b]) +
                              ", then " + hex_byte(second.data()[b]) + ")");
    }
  }
  if (out_size) std::memcpy(out, first.data(), out_size);
  return Status();
}

bool PluginCapability::claims(const Case& c) const {
  if (!glob_match(layout_glob, c.layout.name)) return false;
  if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), dtype_name(c.dtype)) == dtypes.end()) return false;
  for (int64_t d : c.shape) {
    if (max_extent > 0 && d > max_extent) return false;
  }
  return true;
}

PluginImpl::~PluginImpl() {
  if (handle_) dlclose(handle_);
}

std::string PluginImpl::name() const { return path_; }

bool PluginImpl::claims(const Case& c) const {
  for (const auto& cap : capabilities_) {
    if (cap.claims(c)) return true;
  }
  return false;
}

Status PluginImpl::supports(const Case& c) const {
  CCase cc(c);
  constexpr size_t kReason = 512;
  GuardedPages reason(kReason, "reason buffer");
  char local[kReason];
  char* why_buf = reason.ok() ? reinterpret_cast<char*>(reason.data()) : local;
  std::memset(why_buf, 0, kReason);
  const int s = status_of(table(table_)->supports, &cc.view, why_buf, kReason);
  LC_RETURN_IF_ERROR(reason.check_slack(name_ + " supports"));
  why_buf[kReason - 1] = 0;
  if (s == LC_OK) return Status();
  std::string why = why_buf[0] ? why_buf : "(no reason given)";
  if (s == LC_INVALID) return Status::invalid(name_ + ": " + why);
  if (s == LC_UNSUPPORTED) return Status::unsupported(name_ + ": " + why);
  if (s != LC_ERROR) return from_c(s, name_ + " supports");
  return Status::internal(name_ + ": " + why);
}

Result<uint64_t> PluginImpl::size_bytes(const Case& c) const {
  CCase cc(c);
  uint64_t bytes = 0;
  LC_RETURN_IF_ERROR(from_c(status_of(table(table_)->size_bytes, &cc.view, &bytes), "size_bytes"));
  return bytes;
}

Result<uint64_t> PluginImpl::offset_bits(const Case& c, const Coord& at) const {
  if (table(table_)->offset_bits == nullptr) return Status::unsupported(name_ + " has no offset_bits");
  if (at.size() != c.shape.size()) return Status::invalid("coordinate rank differs from the shape's");
  CCase cc(c);
  uint64_t bits = 0;
  LC_RETURN_IF_ERROR(from_c(status_of(table(table_)->offset_bits, &cc.view, at.data(), &bits), "offset_bits"));
  return bits;
}

Status PluginImpl::pack(const Case& c, const void* logical, size_t logical_size, void* physical,
                        size_t physical_size) const {
  CCase cc(c);
  const lc_plugin* t = table(table_);
  return run_guarded("pack", "logical buffer", "physical buffer", logical, logical_size, physical, physical_size,
                     [&](const void* in, size_t is, void* out, size_t os) { return status_of(t->pack, &cc.view, in, is, out, os); });
}

Status PluginImpl::unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                          size_t logical_size) const {
  CCase cc(c);
  const lc_plugin* t = table(table_);
  return run_guarded("unpack", "physical buffer", "logical buffer", physical, physical_size, logical, logical_size,
                     [&](const void* in, size_t is, void* out, size_t os) { return status_of(t->unpack, &cc.view, in, is, out, os); });
}

Result<std::unique_ptr<PluginImpl>> plugin_from_table(const lc_plugin* t, const std::string& path) {
  auto fail = [&](const std::string& why) -> Status { return Status::invalid("plugin " + path + ": " + why); };
  if (!t) return fail(std::string(LC_PLUGIN_ENTRY) + "() returned NULL");
  if (t->abi_major != LC_ABI_MAJOR) {
    return fail("built for plugin ABI " + std::to_string(t->abi_major) + "." + std::to_string(t->abi_minor) +
                ", this layoutcheck speaks ABI " + std::to_string(LC_ABI_MAJOR) + ".x; rebuild it against this c_api.h");
  }
  if (t->struct_size < offsetof(lc_plugin, unpack) + sizeof t->unpack) {
    return fail("its lc_plugin table is " + std::to_string(t->struct_size) + " bytes, smaller than ABI " +
                std::to_string(LC_ABI_MAJOR) + " requires");
  }
  if (!t->supports || !t->size_bytes || !t->pack || !t->unpack) {
    return fail("supports, size_bytes, pack and unpack are required (a function pointer is NULL)");
  }
  if (!bounded(t->name)) return fail("its name is not a string of fewer than " + std::to_string(kMaxPluginString) + " bytes");
  if (t->capability_count > kMaxPluginCapabilities) {
    return fail("capability_count is " + std::to_string(t->capability_count) + ", more than the " +
                std::to_string(kMaxPluginCapabilities) +
                " a plugin may declare (it must be the number of entries of its capabilities array)");
  }
  if (t->capability_count > 0 && !t->capabilities) {
    return fail("capability_count is " + std::to_string(t->capability_count) + " but capabilities is NULL");
  }
  std::unique_ptr<PluginImpl> impl(new PluginImpl());
  impl->table_ = t;
  // The absolute path: repro lines and regression files name it, and they are
  // run from other directories.
  char* real = realpath(path.c_str(), nullptr);
  impl->path_ = real ? real : path;
  std::free(real);
  impl->name_ = t->name && t->name[0] ? t->name : path;
  impl->has_offset_bits_ = t->offset_bits != nullptr;
  impl->extension_members_ = extension_members_of(t);
  for (uint32_t i = 0; i < t->capability_count; ++i) {
    const lc_capability& c = t->capabilities[i];
    const std::string entry = "capabilities[" + std::to_string(i) + "]";
    if (!c.layout_glob) return fail(entry + " has a NULL layout_glob (claim every layout with \"*\")");
    if (!bounded(c.layout_glob) || !bounded(c.dtypes)) {
      return fail(entry + " has a string of " + std::to_string(kMaxPluginString) + " bytes or more");
    }
    if (c.max_extent < 0) return fail(entry + " has a negative max_extent " + std::to_string(c.max_extent));
    PluginCapability cap;
    cap.layout_glob = c.layout_glob;
    std::istringstream words(c.dtypes ? c.dtypes : "*");
    for (std::string w; words >> w;) {
      if (w != "*") cap.dtypes.push_back(w);
    }
    cap.max_extent = c.max_extent;
    impl->capabilities_.push_back(cap);
  }
  return impl;
}

void* open_library_file(const std::string& path) {
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  return dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
}

Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path) {
  void* handle = open_library_file(path);
  if (!handle) {
    const char* err = dlerror();
    return Status::invalid("cannot load plugin " + path + ": " + (err ? err : "unknown error"));
  }
  void* sym = dlsym(handle, LC_PLUGIN_ENTRY);
  if (!sym) {
    dlclose(handle);
    return Status::invalid("plugin " + path + ": does not export " + LC_PLUGIN_ENTRY + "()");
  }
  lc_plugin_entry_fn entry;
  static_assert(sizeof entry == sizeof sym, "function and object pointers differ in size");
  std::memcpy(&entry, &sym, sizeof entry);
  auto impl = plugin_from_table(entry(), path);
  if (!impl.ok()) {
    dlclose(handle);
    return impl.status();
  }
  (*impl)->handle_ = handle;
  return impl;
}

// ---- the plugin in a worker process -------------------------------------------
namespace {

enum Op : uint64_t { kSupports = 1, kSizeBytes, kOffsetBits, kPack, kUnpack };

}  // namespace

// The worker's wire format, shared with the ABI 1.1 members (core/plugin_ext.cc).
namespace plugin_wire {

void put_case(std::string* out, const Case& c) {
  put_str(out, c.layout.name);
  put_u64(out, c.layout.params.size());
  for (const auto& [k, v] : c.layout.params) put_str(out, k), put_str(out, v);
  put_u64(out, static_cast<uint64_t>(c.dtype));
  put_u64(out, c.shape.size());
  for (int64_t d : c.shape) put_u64(out, static_cast<uint64_t>(d));
}

bool get_case(Reader& r, Case* c) {
  c->layout.name = r.str(kMaxMessage);
  const uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && !r.bad; ++i) {
    std::string k = r.str(kMaxMessage);
    c->layout.params[k] = r.str(kMaxMessage);
  }
  c->dtype = static_cast<DType>(r.u64());
  const uint64_t rank = r.u64();
  for (uint64_t i = 0; i < rank && !r.bad; ++i) c->shape.push_back(static_cast<int64_t>(r.u64()));
  return !r.bad;
}

// A buffer's content: one repeated byte (cheap) or every byte.
void put_fill(std::string* out, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  const bool uniform = size == 0 || std::all_of(p, p + size, [&](uint8_t b) { return b == p[0]; });
  put_u64(out, uniform ? 0 : 1);
  if (uniform) put_u64(out, size ? p[0] : 0);
  else put_str(out, std::string(reinterpret_cast<const char*>(p), size));
}

std::string get_fill(Reader& r, uint64_t size) {
  if (r.u64() == 0) return std::string(static_cast<size_t>(size), static_cast<char>(r.u64()));
  std::string s = r.str(size);
  if (s.size() != size) r.bad = true;
  return s;
}

void put_status(std::string* out, const Status& s) {
  put_u64(out, static_cast<uint64_t>(s.code()));
  put_str(out, s.message());
}

Status get_status(Reader& r) {
  const uint64_t code = r.u64();
  std::string message = r.str(kMaxMessage);
  switch (static_cast<StatusCode>(code)) {
    case StatusCode::kOk: return Status();
    case StatusCode::kInvalid: return Status::invalid(message);
    case StatusCode::kUnsupported: return Status::unsupported(message);
    default: return Status::internal(message);
  }
}

Answer answer_of(const Result<std::string>& reply) {
  Answer a;
  if (!reply.ok()) {
    a.status = reply.status();
    return a;
  }
  Reader r{*reply};
  a.status = get_status(r);
  (void)r.u64();  // fatal: handled by call()
  a.value = r.u64();
  a.bytes = r.str();
  if (r.bad) a.status = Status::internal("malformed answer from the plugin's worker process");
  return a;
}

}  // namespace plugin_wire

namespace {

using namespace plugin_wire;

void put_table(std::string* out, const PluginImpl& p) {
  put_str(out, p.plugin_name());
  put_u64(out, p.has_offset_bits());
  put_u64(out, p.capabilities().size());
  for (const auto& cap : p.capabilities()) {
    put_str(out, cap.layout_glob);
    put_u64(out, cap.dtypes.size());
    for (const auto& d : cap.dtypes) put_str(out, d);
    put_u64(out, static_cast<uint64_t>(cap.max_extent));
  }
  put_u64(out, p.extension_members());
}

// One request, answered by the plugin loaded in this (worker) process.
std::string serve(const PluginImpl& impl, const std::string& request) {
  Reader r{request};
  const uint64_t op = r.u64();
  Case c;
  std::string reply;
  Status st;
  uint64_t value = 0;
  std::string bytes;
  if (!get_case(r, &c)) {
    st = Status::internal("malformed request");
  } else if (op == kSupports) {
    Sandbox::child_allow(0);
    st = impl.supports(c);
  } else if (op == kSizeBytes) {
    Sandbox::child_allow(0);
    auto v = impl.size_bytes(c);
    st = v.ok() ? Status() : v.status();
    value = v.ok() ? *v : 0;
  } else if (op == kOffsetBits) {
    Coord at;
    const uint64_t rank = r.u64();
    for (uint64_t i = 0; i < rank && !r.bad; ++i) at.push_back(static_cast<int64_t>(r.u64()));
    Sandbox::child_allow(0);
    auto v = impl.offset_bits(c, at);
    st = v.ok() ? Status() : v.status();
    value = v.ok() ? *v : 0;
  } else if (op == kPack || op == kUnpack) {
    const uint64_t in_size = r.u64();
    std::string in = get_fill(r, in_size);
    const uint64_t out_size = r.u64();
    bytes = get_fill(r, out_size);
    if (r.bad) {
      st = Status::internal("malformed request");
    } else {
      Sandbox::child_allow(in.size() + bytes.size());
      errno = 0;
      st = op == kPack ? impl.pack(c, in.data(), in.size(), bytes.data(), bytes.size())
                       : impl.unpack(c, in.data(), in.size(), bytes.data(), bytes.size());
    }
  } else if (!serve_extension(impl, op, r, &st, &value, &bytes)) {
    st = Status::internal("unknown request");
  }
  bool fatal = false;
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    st = Status::internal(impl.path() + " " + stray + "; it was killed with the plugin's process group");
    fatal = true;
  }
  put_status(&reply, st);
  put_u64(&reply, fatal);
  put_u64(&reply, value);
  put_str(&reply, st.ok() ? bytes : std::string());
  return reply;
}

void worker_main(const std::string& path, int fd) {
  auto loaded = load_plugin(path);
  std::string hello;
  if (loaded.ok()) {
    if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
      loaded = Status::invalid("bad plugin " + path + ": while loading it " + stray);
    }
  }
  if (!loaded.ok()) {
    put_status(&hello, loaded.status());
    Sandbox::child_send(fd, hello);
    return;
  }
  put_status(&hello, Status());
  put_table(&hello, **loaded);
  if (!Sandbox::child_send(fd, hello)) return;
  for (std::string request; Sandbox::child_receive(fd, &request);) {
    if (!Sandbox::child_send(fd, serve(**loaded, request))) return;
  }
}

}  // namespace

IsolatedImpl::~IsolatedImpl() = default;

Status IsolatedImpl::spawn() const {
  worker_ = std::make_unique<Sandbox>(limits_);
  const std::string path = path_;
  LC_RETURN_IF_ERROR(worker_->start([path](int fd) { worker_main(path, fd); }));
  auto hello = worker_->receive(kMaxMessage * 16, "loading (its constructors or " LC_PLUGIN_ENTRY "())");
  if (!hello.ok()) return Status::invalid("bad plugin " + path_ + ": " + hello.status().message());
  Reader r{*hello};
  Status st = get_status(r);
  if (!st.ok()) {
    worker_->stop();
    return Status::invalid(st.message());
  }
  auto* self = const_cast<IsolatedImpl*>(this);
  self->name_ = r.str(kMaxPluginString);
  self->has_offset_bits_ = r.u64() != 0;
  const uint64_t n = r.u64();
  std::vector<PluginCapability> caps;
  for (uint64_t i = 0; i < n && i <= kMaxPluginCapabilities && !r.bad; ++i) {
    PluginCapability cap;
    cap.layout_glob = r.str(kMaxPluginString);
    const uint64_t d = r.u64();
    for (uint64_t j = 0; j < d && j < kMaxPluginString && !r.bad; ++j) cap.dtypes.push_back(r.str(kMaxPluginString));
    cap.max_extent = static_cast<int64_t>(r.u64());
    caps.push_back(cap);
  }
  self->extension_members_ = r.u64();
  if (r.bad || n > kMaxPluginCapabilities) {
    worker_->stop();
    return Status::invalid("bad plugin " + path_ + ": its worker sent a malformed table");
  }
  self->capabilities_ = std::move(caps);
  return Status();
}

Result<std::string> IsolatedImpl::call(const std::string& request, uint64_t max_reply, const std::string& what) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!worker_ || !worker_->running()) {
    Status s = spawn();
    if (!s.ok()) return Status::internal(s.message());
  }
  (void)worker_->send(request);  // a dead worker is reported by receive()
  auto reply = worker_->receive(max_reply + kMaxMessage, what);
  if (!reply.ok()) return Status::internal(path_ + " " + reply.status().message());
  Reader r{*reply};
  (void)get_status(r);
  if (r.u64() != 0) worker_->stop();  // it left a process behind: kill the whole group now
  return reply;
}

namespace {

std::string request_of(uint64_t op, const Case& c) {
  std::string out;
  put_u64(&out, op);
  put_case(&out, c);
  return out;
}

}  // namespace

Status IsolatedImpl::supports(const Case& c) const {
  return answer_of(call(request_of(kSupports, c), 0, "supports")).status;
}

Result<uint64_t> IsolatedImpl::size_bytes(const Case& c) const {
  Answer a = answer_of(call(request_of(kSizeBytes, c), 0, "size_bytes"));
  if (!a.status.ok()) return a.status;
  return a.value;
}

Result<uint64_t> IsolatedImpl::offset_bits(const Case& c, const Coord& at) const {
  if (!has_offset_bits_) return Status::unsupported(name_ + " has no offset_bits");
  if (at.size() != c.shape.size()) return Status::invalid("coordinate rank differs from the shape's");
  std::string req = request_of(kOffsetBits, c);
  put_u64(&req, at.size());
  for (int64_t v : at) put_u64(&req, static_cast<uint64_t>(v));
  Answer a = answer_of(call(req, 0, "offset_bits"));
  if (!a.status.ok()) return a.status;
  return a.value;
}

Status IsolatedImpl::pack(const Case& c, const void* logical, size_t logical_size, void* physical,
                          size_t physical_size) const {
  std::string req = request_of(kPack, c);
  put_u64(&req, logical_size);
  put_fill(&req, logical, logical_size);
  put_u64(&req, physical_size);
  put_fill(&req, physical, physical_size);
  Answer a = answer_of(call(req, physical_size, "pack"));
  if (!a.status.ok()) return a.status;
  if (a.bytes.size() != physical_size) return Status::internal("pack: the worker answered a buffer of the wrong size");
  if (physical_size) std::memcpy(physical, a.bytes.data(), physical_size);
  return Status();
}

Status IsolatedImpl::unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                            size_t logical_size) const {
  std::string req = request_of(kUnpack, c);
  put_u64(&req, physical_size);
  put_fill(&req, physical, physical_size);
  put_u64(&req, logical_size);
  put_fill(&req, logical, logical_size);
  Answer a = answer_of(call(req, logical_size, "unpack"));
  if (!a.status.ok()) return a.status;
  if (a.bytes.size() != logical_size) return Status::internal("unpack: the worker answered a buffer of the wrong size");
  if (logical_size) std::memcpy(logical, a.bytes.data(), logical_size);
  return Status();
}

Result<const PluginImpl*> IsolatedImpl::load_here() const {
  if (!here_) {
    auto loaded = load_plugin(path_);
    if (!loaded.ok()) return loaded.status();
    here_ = std::move(loaded).value();
  }
  return static_cast<const PluginImpl*>(here_.get());
}

Result<std::unique_ptr<IsolatedImpl>> load_plugin_isolated(const std::string& path, const SandboxLimits& limits) {
  std::unique_ptr<IsolatedImpl> impl(new IsolatedImpl());
  // The absolute path, as load_plugin names it: repro lines work from any directory.
  char* real = realpath(path.c_str(), nullptr);
  impl->path_ = real ? real : path;
  std::free(real);
  impl->limits_ = limits;
  LC_RETURN_IF_ERROR(impl->spawn());
  return impl;
}

namespace {

// A sandboxed child that checks case after case (case_worker_main): the
// case and the options in; the verdict, the message and whether the child
// stops (a process left behind, the plugin not loaded) out.
void put_check_options(std::string* out, const CheckOptions& o) {
  put_u64(out, o.seed);
  put_u64(out, o.max_physical_bytes);
  put_u64(out, o.max_offset_checks);
  put_u64(out, o.max_nested_checks);
  put_u64(out, o.guard_bytes);
  put_u64(out, o.strict_padding);
}

bool get_check_options(Reader& r, CheckOptions* o) {
  o->seed = r.u64();
  o->max_physical_bytes = r.u64();
  o->max_offset_checks = r.u64();
  o->max_nested_checks = r.u64();
  o->guard_bytes = static_cast<size_t>(r.u64());
  o->strict_padding = r.u64() != 0;
  return !r.bad;
}

// The report of a case whose check gave no verdict: `what` the child did.
CheckReport no_verdict(const Case& c, const Impl& expected, const Impl& actual, const std::string& what,
                       const CheckOptions& options) {
  CheckReport report;
  report.repro = repro_command(c, actual.name(), options);
  report.verdict = Verdict::kFail;
  report.message = "FAIL " + to_string(c) + ": " + actual.name() + " vs " + expected.name() + "\n  " + actual.name() +
                   " " + what + "\n  repro: " + report.repro + "\n";
  return report;
}

void case_worker_main(const Impl& expected, const Impl& actual, int fd) {
  const Impl* a = nullptr;
  for (std::string request; Sandbox::child_receive(fd, &request);) {
    Reader r{request};
    Case c;
    CheckOptions o;
    if (!get_case(r, &c) || !get_check_options(r, &o)) return;
    CheckReport report;
    Status loaded;
    if (a == nullptr) {
      a = &actual;
      if (const auto* iso = dynamic_cast<const IsolatedImpl*>(&actual)) {
        auto here = iso->load_here();
        if (here.ok()) a = *here;
        else loaded = here.status();
      }
    }
    if (!loaded.ok()) {
      report.verdict = Verdict::kFail;
      report.message = "FAIL " + to_string(c) + ": " + actual.name() + " vs " + expected.name() + "\n  " +
                       loaded.message() + "\n";
    } else {
      auto phys = expected.size_bytes(c);
      auto logical = logical_bytes(c);
      const uint64_t cap = o.max_physical_bytes;
      Sandbox::child_allow((phys.ok() ? std::min(*phys, cap) : 0) + (logical.ok() ? std::min(*logical, cap) : 0));
      report = check(c, expected, *a, o);
    }
    const std::string stray = Sandbox::child_stray_processes();
    if (!stray.empty()) report = no_verdict(c, expected, actual, stray, o);
    std::string out;
    put_u64(&out, static_cast<uint64_t>(report.verdict));
    put_str(&out, report.message);
    put_u64(&out, !stray.empty() || !loaded.ok());
    if (!Sandbox::child_send(fd, out) || !stray.empty() || !loaded.ok()) return;
  }
}

// Cases one child checks before a fresh one takes over: what a plugin keeps
// between calls (a leak, a cache) is bounded.
constexpr uint64_t kCasesPerChild = 1024;

// Case c to the child in `box` (case_worker_main) and its report back;
// *goes_on: the child answered and checks further cases.
CheckReport ask_worker(Sandbox& box, const Case& c, const Impl& expected, const Impl& actual,
                       const CheckOptions& options, bool* goes_on) {
  std::string request;
  put_case(&request, c);
  put_check_options(&request, options);
  *goes_on = false;
  (void)box.send(request);  // a dead child is found by receive()
  auto reply = box.receive(kMaxMessage * 16, "check");
  if (!reply.ok()) return no_verdict(c, expected, actual, reply.status().message(), options);
  Reader r{*reply};
  const uint64_t verdict = r.u64();
  std::string message = r.str();
  const bool last = r.u64() != 0;  // a process left behind, or the plugin not loaded
  if (r.bad || verdict > static_cast<uint64_t>(Verdict::kFail)) {
    return no_verdict(c, expected, actual, "sent a malformed report", options);
  }
  *goes_on = !last;
  CheckReport report;
  report.repro = repro_command(c, actual.name(), options);
  report.verdict = static_cast<Verdict>(verdict);
  report.message = std::move(message);
  return report;
}

SandboxLimits case_limits(const Impl& actual, double timeout_seconds) {
  SandboxLimits limits;
  limits.timeout_seconds = timeout_seconds;
  if (const auto* iso = dynamic_cast<const IsolatedImpl*>(&actual)) limits.memory_bytes = iso->limits().memory_bytes;
  return limits;
}

bool timeout_in_range(double timeout_seconds) {
  return timeout_seconds > 0 && (timeout_seconds == kNoTimeLimit || timeout_seconds <= kMaxTimeoutSeconds);
}

}  // namespace

CheckReport check_isolated(const Case& c, const Impl& expected, const Impl& actual, const CheckOptions& options,
                           double timeout_seconds) {
  if (!timeout_in_range(timeout_seconds)) {
    CheckReport report;
    report.repro = repro_command(c, actual.name(), options);
    report.verdict = Verdict::kFail;
    report.message = "FAIL " + to_string(c) + ": timeout " + std::to_string(timeout_seconds) +
                     " s is out of range (more than 0, at most " + std::to_string(kMaxTimeoutSeconds) +
                     " s, or no limit)\n";
    return report;
  }
  Sandbox box(case_limits(actual, timeout_seconds));
  const Impl* e = &expected;
  const Impl* a = &actual;
  if (!box.start([e, a](int fd) { case_worker_main(*e, *a, fd); }).ok()) return check(c, expected, actual, options);
  bool goes_on = false;
  CheckReport report = ask_worker(box, c, expected, actual, options, &goes_on);
  box.stop();  // the process group too: a process the plugin started does not outlive the case
  return report;
}

struct ReusedChildren::Child {
  const Impl* expected = nullptr;
  const Impl* actual = nullptr;
  SandboxLimits limits;
  uint64_t served = 0;
  std::unique_ptr<Sandbox> box;
};

ReusedChildren::ReusedChildren() = default;
ReusedChildren::~ReusedChildren() = default;

CheckReport check_isolated_reused(const Case& c, const Impl& expected, const Impl& actual,
                                  const CheckOptions& options, double timeout_seconds, ReusedChildren& children) {
  if (!timeout_in_range(timeout_seconds)) return check_isolated(c, expected, actual, options, timeout_seconds);
  const SandboxLimits limits = case_limits(actual, timeout_seconds);
  ReusedChildren::Child* w;
  {
    std::lock_guard<std::mutex> lock(children.mutex_);
    auto& slot = children.children_[std::this_thread::get_id()];
    if (!slot) slot = std::make_unique<ReusedChildren::Child>();
    w = slot.get();  // this thread's alone
  }
  if (w->box && (w->expected != &expected || w->actual != &actual ||
                 w->limits.timeout_seconds != limits.timeout_seconds ||
                 w->limits.memory_bytes != limits.memory_bytes || w->served >= kCasesPerChild || !w->box->running())) {
    w->box.reset();
  }
  if (!w->box) {
    auto box = std::make_unique<Sandbox>(limits);
    const Impl* e = &expected;
    const Impl* a = &actual;
    if (!box->start([e, a](int fd) { case_worker_main(*e, *a, fd); }).ok()) return check(c, expected, actual, options);
    *w = ReusedChildren::Child{&expected, &actual, limits, 0, std::move(box)};
  }
  bool goes_on = false;
  CheckReport report = ask_worker(*w->box, c, expected, actual, options, &goes_on);
  if (goes_on && (report.verdict == Verdict::kPass || report.verdict == Verdict::kBothInvalid)) {
    ++w->served;
    return report;
  }
  // Any other verdict of the child's first case is what check_isolated()
  // answers; of a later case, that of a fresh child, so that every verdict
  // is that of the case alone (as its repro line gives it), whatever the
  // cases before it left in the plugin's process.
  const bool first = w->served == 0;
  w->box.reset();
  return first ? report : check_isolated(c, expected, actual, options, timeout_seconds);
}

Case shrink_case(const Case& failing, const std::function<bool(const Case&)>& fails) {
  Case best = failing;
  for (int round = 0; round < 64; ++round) {
    bool progress = false;
    for (size_t d = 0; d < best.shape.size(); ++d) {
      for (int64_t v : {int64_t{1}, best.shape[d] / 2, best.shape[d] - 1}) {
        if (v < 1 || v >= best.shape[d]) continue;
        Case trial = best;
        trial.shape[d] = v;
        if (fails(trial)) {
          best = trial;
          progress = true;
          break;
        }
      }
    }
    if (!progress) break;
  }
  return best;
}

namespace {

constexpr const char* kCaseKey = "case";
constexpr const char* kSeedKey = "seed";

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A line as it may appear in a message: printable, at most 60 characters.
std::string quoted_line(const std::string& s) {
  std::string out;
  for (char ch : s.substr(0, 60)) out += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
  return "'" + out + (s.size() > 60 ? "...'" : "'");
}

std::string case_line(const Case& c) {
  return std::string(kCaseKey) + ": " + to_string(c.layout) + " | " + dtype_name(c.dtype) + " | " +
         shape_to_string(c.shape);
}

bool is_stale_temporary(const std::string& name) {
  // ".<16 hex digits>.txt.tmp", the only temporary save_regression() makes.
  const std::string suffix = ".txt.tmp";
  if (name.size() != 1 + 16 + suffix.size() || name[0] != '.') return false;
  if (name.compare(17, suffix.size(), suffix) != 0) return false;
  return std::all_of(name.begin() + 1, name.begin() + 17, [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); });
}

Status errno_status(const std::string& what) { return Status::invalid(what + ": " + std::strerror(errno)); }

}  // namespace

uint64_t fnv1a64(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool is_regression_text(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::string t = trimmed(line);
    if (t.empty() || t[0] == '#') continue;
    for (const char* key : {kCaseKey, kSeedKey}) {
      const std::string k = std::string(key) + ":";
      if (t.compare(0, k.size(), k) == 0) return true;
    }
    return false;
  }
  return false;
}

Result<Regression> parse_regression(const std::string& text, const std::string& where) {
  Regression r;
  size_t case_line_no = 0, seed_line_no = 0, line_no = 0;
  std::istringstream lines(text);
  for (std::string raw; std::getline(lines, raw);) {
    ++line_no;
    const std::string at = where + ":" + std::to_string(line_no) + ": ";
    std::string t = trimmed(raw);
    if (t.empty() || t[0] == '#') continue;
    size_t colon = t.find(':');
    if (colon == std::string::npos) {
      return Status::invalid(at + "expected 'key: value' (keys: case, seed), got " + quoted_line(t));
    }
    const std::string key = trimmed(t.substr(0, colon));
    const std::string value = trimmed(t.substr(colon + 1));
    if (key == kCaseKey) {
      if (case_line_no) {
        return Status::invalid(at + "a second 'case:' line (the first is line " + std::to_string(case_line_no) + ")");
      }
      case_line_no = line_no;
      size_t a = value.find('|'), b = a == std::string::npos ? a : value.find('|', a + 1);
      if (b == std::string::npos || value.find('|', b + 1) != std::string::npos) {
        return Status::invalid(at + "'case:' takes LAYOUT | DTYPE | SHAPE, got " + quoted_line(value));
      }
      auto c = parse_case(trimmed(value.substr(0, a)), trimmed(value.substr(a + 1, b - a - 1)),
                          trimmed(value.substr(b + 1)));
      if (!c.ok()) {
        std::string why = c.status().message();
        for (char& ch : why) ch = std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
        return Status::invalid(at + why);
      }
      r.c = *c;
    } else if (key == kSeedKey) {
      if (seed_line_no) {
        return Status::invalid(at + "a second 'seed:' line (the first is line " + std::to_string(seed_line_no) + ")");
      }
      seed_line_no = line_no;
      errno = 0;
      char* end = nullptr;
      unsigned long long v = value.empty() || !std::isdigit(static_cast<unsigned char>(value[0]))
                                 ? 0
                                 : std::strtoull(value.c_str(), &end, 10);
      if (end == nullptr || *end != '\0' || errno == ERANGE) {
        return Status::invalid(at + "'seed:' takes a number from 0 to " + std::to_string(UINT64_MAX) + ", got " +
                               quoted_line(value));
      }
      r.seed = v;
    } else {
      return Status::invalid(at + "unknown key " + quoted_line(key) + " (keys: case, seed)");
    }
  }
  if (!case_line_no) {
    return Status::invalid(where + ":" + std::to_string(std::max<size_t>(line_no, 1)) +
                           ": no 'case: LAYOUT | DTYPE | SHAPE' line");
  }
  return r;
}

std::string regression_text(const Case& c, const std::string& impl, const std::string& message,
                            const CheckOptions& options) {
  std::string out = case_line(c) + "\n" + kSeedKey + ": " + std::to_string(options.seed) + "\n# found in: " + impl + "\n";
  std::istringstream lines(message);
  for (std::string l; std::getline(lines, l);) out += "# " + l + "\n";
  return out;
}

Result<uint64_t> remove_stale_regression_temporaries(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t removed = 0;
  if (!fs::is_directory(dir, ec)) return removed;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_stale_temporary(it->path().filename().string())) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) ++removed;
    if (rm) return Status::invalid("cannot remove " + it->path().string() + ": " + rm.message());
  }
  if (ec) return Status::invalid("cannot list " + dir + ": " + ec.message());
  return removed;
}

Result<std::string> save_regression(const std::string& dir, const Case& c, const std::string& impl,
                                    const std::string& message, const CheckOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::invalid("cannot create " + dir + ": " + ec.message());
  const fs::path where = fs::absolute(dir, ec);
  if (ec) return Status::invalid("cannot resolve " + dir + ": " + ec.message());
  // FNV-1a rather than std::hash: the same name from every compiler and library.
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.txt", static_cast<unsigned long long>(fnv1a64(case_line(c))));
  const std::string path = (where / name).string();
  const std::string tmp = (where / (std::string(".") + name + ".tmp")).string();
  const std::string text = regression_text(c, impl, message, options);

  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create " + tmp);
  auto fail = [&](const std::string& what) {
    Status s = errno_status(what);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  for (size_t off = 0; off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write " + tmp);
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot sync " + tmp);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail("cannot write " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename " + tmp + " to " + path);
  // The rename is durable once the directory is.
  int dfd = ::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno_status("cannot open " + where.string() + " to sync it");
  const int synced = ::fsync(dfd);
  const int sync_errno = errno;
  ::close(dfd);
  errno = sync_errno;
  if (synced != 0) return errno_status("cannot sync " + where.string());
  return path;
}

}  // namespace layoutcheck
