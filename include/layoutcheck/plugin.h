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

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/isolate.h"

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

 protected:
  friend Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);
  friend Result<std::unique_ptr<PluginImpl>> plugin_from_table(const lc_plugin* table, const std::string& path);
  PluginImpl() = default;
  void* handle_ = nullptr;
  const void* table_ = nullptr;  // const lc_plugin*
  std::string path_, name_;
  std::vector<PluginCapability> capabilities_;
  bool has_offset_bits_ = false;
};

// Loads a plugin into this process; refuses a different ABI major version or
// a malformed table. Prefer load_plugin_isolated() for a plugin you did not write.
Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);

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
// becomes a kFail report naming the signal or the timeout. The child is a
// Sandbox (resource limits, guard pages named, its process group killed); an
// IsolatedImpl is loaded into that child and called directly.
CheckReport check_isolated(const Case& c, const Impl& expected, const Impl& actual,
                           const CheckOptions& options, double timeout_seconds);

// The smallest shape (dimension by dimension) for which `fails` still holds.
Case shrink_case(const Case& failing, const std::function<bool(const Case&)>& fails);

// Writes a replayable regression file atomically (temporary file + rename);
// returns its path.
Result<std::string> save_regression(const std::string& dir, const Case& c, const std::string& impl,
                                    const std::string& message);

}  // namespace layoutcheck
