// layoutcheck/plugin.h — the host side of the plugin ABI (c_api.h).
//
//   auto plugin = load_plugin("./libmine.so");
//   if (!plugin.ok()) { std::cerr << plugin.status().message(); return 2; }
//   CheckReport r = check_isolated(c, reference_impl(), **plugin, {}, 10.0);
//
// A loaded plugin is an Impl like any other. check_isolated() runs one check
// in a child process, so a plugin that crashes, hangs or corrupts memory is
// reported as the failure of that case and the run goes on.
//
// load_plugin_isolated() never loads the plugin into the calling process: a
// child process loads it and sends back its validated table, and every call
// of the IsolatedImpl it returns runs in that child (a worker, restarted after
// a failure) with a time limit, resource limits and guard pages around the
// buffers. A crash, hang, out-of-bounds write, memory exhaustion, stray
// process or non-deterministic output of the plugin becomes an error Status
// naming it, never a crash or hang of the host.
//
//   auto plugin = load_plugin_isolated("./libmine.so");   // bad plugin: an error
//   Result<uint64_t> size = (*plugin)->size_bytes(c);     // runs in the worker
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/isolate.h"
#include "layoutcheck/nvdla.h"
#include "layoutcheck/precision.h"

struct lc_plugin;

namespace layoutcheck {

// Limits on what a plugin's table may declare.
constexpr uint32_t kMaxPluginCapabilities = 4096;
constexpr size_t kMaxPluginString = 4096;  // name, layout_glob, dtypes (with the NUL)

struct PluginCapability {
  std::string layout_glob;
  std::vector<std::string> dtypes;  // empty = any
  int64_t max_extent = 0;           // 0 = any
  bool claims(const Case& c) const;
};

class PluginImpl : public Impl {
 public:
  ~PluginImpl() override;
  std::string name() const override;
  Status supports(const Case& c) const override;
  Result<uint64_t> size_bytes(const Case& c) const override;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override;
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override;
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override;
  const std::vector<PluginCapability>& capabilities() const { return capabilities_; }
  bool claims(const Case& c) const;
  const std::string& path() const { return path_; }
  const std::string& plugin_name() const { return name_; }  // the table's name
  bool has_offset_bits() const { return has_offset_bits_; }

  // ---- ABI 1.1 members (c_api.h): absent when the table's struct_size does
  // not cover them or the pointer is NULL; a call of an absent member is
  // kUnsupported. Buffers are guard-paged, every output is produced twice and
  // must agree, as for pack.
  enum ExtensionMember : uint64_t {
    kConvertMember = 1,
    kSparseCompressMember = 2,
    kSparseDecompressMember = 4,
    kWinogradExtendMember = 8,
    kWinogradTransformMember = 16,
    kOffsetBitsTupleMember = 32,  // ABI 1.2
  };
  uint64_t extension_members() const { return extension_members_; }
  bool has_member(ExtensionMember m) const { return (extension_members_ & m) != 0; }
  // True when a capability named `name` ("convert.nvdla", "nvdla.sparse") lists
  // `dtype` ("fp32>fp16", "int8") or any dtype.
  bool claims_entry(const std::string& name, const std::string& dtype) const;
  // One conversion (validate_convert's rules for the sizes).
  virtual Status convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) const;
  // Sparse compression of the packed weight buffer of `weights`: surfaces of
  // wgs_size and wmb_size bytes and at most data_capacity data bytes.
  virtual Result<nvdla::CompressedWeights> sparse_compress(const Case& weights, const void* packed, size_t packed_size,
                                                          size_t wgs_size, size_t wmb_size, size_t data_capacity) const;
  virtual Status sparse_decompress(const Case& weights, const nvdla::CompressedWeights& in, void* packed,
                                   size_t packed_size) const;
  // Winograd phase 1 (nvdla.h): dst_bytes is the size the reference gives.
  virtual Status winograd_extend(DType t, const Shape& kcrs, int64_t stride, const void* src, size_t src_bytes,
                                 void* dst, size_t dst_bytes) const;
  virtual Status winograd_transform(DType t, const Shape& kc33, const void* src, size_t src_bytes, void* dst,
                                    size_t dst_bytes) const;
  // ABI 1.2: offset_bits_tuple, the coordinate as IntTuple text.
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override;

 protected:
  friend Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);
  friend Result<std::unique_ptr<PluginImpl>> plugin_from_table(const lc_plugin* table, const std::string& path);
  PluginImpl() = default;
  void* handle_ = nullptr;
  const void* table_ = nullptr;  // const lc_plugin*
  std::string path_, name_;
  std::vector<PluginCapability> capabilities_;
  bool has_offset_bits_ = false;
  uint64_t extension_members_ = 0;
};

// Loads a plugin into this process; refuses a different ABI major version or
// a malformed table. Prefer load_plugin_isolated() for a plugin you did not write.
// The plugin's name() is the absolute path of the file (symbolic links
// resolved), so a repro line that names it works from any directory.
Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);

// dlopen(RTLD_NOW | RTLD_LOCAL) of the file `path` names: a name without a
// slash is a file of the working directory, not one for dlopen to look up in
// the library path. nullptr when it cannot be loaded (dlerror() says why).
void* open_library_file(const std::string& path);

// Time limits of check_isolated(): a positive number of seconds up to
// kMaxTimeoutSeconds (its milliseconds fit a 32-bit int), or kNoTimeLimit.
constexpr double kMaxTimeoutSeconds = 2147483;
constexpr double kNoTimeLimit = std::numeric_limits<double>::infinity();


// Validates a plugin's table (ABI version, size, required functions, names and
// capabilities: at most kMaxPluginCapabilities entries, no NULL layout_glob)
// and wraps it. The table must outlive the result. Used by load_plugin and by
// the plugin-host fuzzer, which builds tables in memory.
Result<std::unique_ptr<PluginImpl>> plugin_from_table(const lc_plugin* table, const std::string& path);

// A plugin that runs in a child process (see the top of this file). It is a
// PluginImpl, so the capabilities are at hand without a call into the child.
class IsolatedImpl : public PluginImpl {
 public:
  ~IsolatedImpl() override;
  Status supports(const Case& c) const override;
  Result<uint64_t> size_bytes(const Case& c) const override;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override;
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override;
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override;
  Status convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst,
                 size_t dst_bytes) const override;
  Result<nvdla::CompressedWeights> sparse_compress(const Case& weights, const void* packed, size_t packed_size,
                                                  size_t wgs_size, size_t wmb_size,
                                                  size_t data_capacity) const override;
  Status sparse_decompress(const Case& weights, const nvdla::CompressedWeights& in, void* packed,
                           size_t packed_size) const override;
  Status winograd_extend(DType t, const Shape& kcrs, int64_t stride, const void* src, size_t src_bytes, void* dst,
                         size_t dst_bytes) const override;
  Status winograd_transform(DType t, const Shape& kc33, const void* src, size_t src_bytes, void* dst,
                            size_t dst_bytes) const override;
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override;
  // For code that already runs in a sandboxed child (check_isolated): the
  // plugin loaded into this process.
  Result<const PluginImpl*> load_here() const;
  const SandboxLimits& limits() const { return limits_; }

 private:
  friend Result<std::unique_ptr<IsolatedImpl>> load_plugin_isolated(const std::string& path,
                                                                    const SandboxLimits& limits);
  IsolatedImpl() = default;
  Status spawn() const;  // starts the worker and reads its table
  Result<std::string> call(const std::string& request, uint64_t max_reply, const std::string& what) const;
  SandboxLimits limits_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Sandbox> worker_;
  mutable std::unique_ptr<PluginImpl> here_;
};

// Loads a plugin in a child process and keeps it there. A plugin whose
// constructors or entry point crash or hang, or whose table is malformed, is
// an error (kInvalid) naming what it did; the host never runs its code.
// Each call is bounded by limits.timeout_seconds.
Result<std::unique_ptr<IsolatedImpl>> load_plugin_isolated(const std::string& path,
                                                           const SandboxLimits& limits = {});

// check() in a child process with a time limit: a crash or hang of `actual`
// becomes a kFail report naming the signal or the timeout. A timeout outside
// the range above fails the case with a message naming the value. The child is a
// Sandbox (resource limits, guard pages named, its process group killed); an
// IsolatedImpl is loaded into that child and called directly.
CheckReport check_isolated(const Case& c, const Impl& expected, const Impl& actual,
                           const CheckOptions& options, double timeout_seconds);

// The sandboxed children check_isolated_reused() keeps between calls: one
// per calling thread. The implementations it is called with must outlive
// it; destroying it ends the children.
class ReusedChildren {
 public:
  ReusedChildren();
  ~ReusedChildren();
  ReusedChildren(const ReusedChildren&) = delete;
  ReusedChildren& operator=(const ReusedChildren&) = delete;
  struct Child;  // core/plugin.cc

 private:
  friend CheckReport check_isolated_reused(const Case& c, const Impl& expected, const Impl& actual,
                                           const CheckOptions& options, double timeout_seconds,
                                           ReusedChildren& children);
  std::mutex mutex_;
  std::map<std::thread::id, std::unique_ptr<Child>> children_;
};

// check_isolated() for one case after another: a child of `children` (the
// calling thread's) checks case after case, which saves a process start per
// case (ten times the small cases a second). A pass, or a rejection by both
// implementations, stands. Any other verdict, a crash, a hang or a process
// left behind ends that child; for the child's first case the report is what
// check_isolated() gives, for a later one it is check_isolated()'s in a fresh
// child, so that every verdict is that of the case alone, as its repro line
// gives it. Other implementations or limits than the child's, or 1024 cases
// checked, and a fresh child takes over.
CheckReport check_isolated_reused(const Case& c, const Impl& expected, const Impl& actual,
                                  const CheckOptions& options, double timeout_seconds, ReusedChildren& children);

// The smallest shape (dimension by dimension) for which `fails` still holds.
Case shrink_case(const Case& failing, const std::function<bool(const Case&)>& fails);

// ---- regression files ------------------------------------------------------
// A regression file is text, one `key: value` per line; blank lines and lines
// starting with '#' are comments:
//
//   case: tpu.aligned(npus=4,lmem=1024) | fp32 | 2,3,2,3     (required, one)
//   seed: 7                                                  (optional, default 1)
//   # found in: /abs/path/libmine.so
//   # FAIL 'tpu.aligned(npus=4,lmem=1024)' --dtype fp32 ...  (the failure, as found)
//
// `case:` comes first, so the line is also an input of the fuzz_differential
// fuzzer (its standalone main replays corpus/regressions/ in every build).
// File names carry no meaning; save_regression() names a file after the
// FNV-1a 64 hash of its case line, which is the same for every compiler.
struct Regression {
  Case c;
  uint64_t seed = 1;  // CheckOptions::seed the case was found with
};

// Parses a regression file's text; an error names `where`:LINE and the rule.
Result<Regression> parse_regression(const std::string& text, const std::string& where);

// True when the text's first line that is neither blank nor a comment is a
// regression key (`case:`, `seed:`): a regression file, well formed or not.
// Fuzzer byte inputs and READMEs in a regression folder are not.
bool is_regression_text(const std::string& text);

// The text save_regression() writes.
std::string regression_text(const Case& c, const std::string& impl, const std::string& message,
                            const CheckOptions& options = {});

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
uint64_t fnv1a64(const std::string& bytes);

// Writes a replayable regression file into `dir` (created if missing) and
// returns its absolute path. Durable: the text goes to a hidden `.NAME.tmp`,
// which is fsync'ed and renamed to NAME, then the directory is fsync'ed, so
// after a crash or power loss the file is either absent or complete.
Result<std::string> save_regression(const std::string& dir, const Case& c, const std::string& impl,
                                    const std::string& message, const CheckOptions& options = {});

// Removes the `.NAME.tmp` files a killed save_regression() left in `dir`;
// returns how many. A missing directory has none.
Result<uint64_t> remove_stale_regression_temporaries(const std::string& dir);

}  // namespace layoutcheck
