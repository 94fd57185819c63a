// layoutcheck/plugin.h — the host side of the plugin ABI (c_api.h).
//
//   auto plugin = load_plugin("./libmine.so");
//   if (!plugin.ok()) { std::cerr << plugin.status().message(); return 2; }
//   CheckReport r = check_isolated(c, reference_impl(), **plugin, {}, 10.0);
//
// A loaded plugin is an Impl like any other. check_isolated() runs one check
// in a child process, so a plugin that crashes, hangs or corrupts memory is
// reported as the failure of that case and the run goes on.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"

namespace layoutcheck {

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

 private:
  friend Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);
  PluginImpl() = default;
  void* handle_ = nullptr;
  const void* table_ = nullptr;  // const lc_plugin*
  std::string path_, name_;
  std::vector<PluginCapability> capabilities_;
};

// Loads a plugin; refuses a different ABI major version or a malformed table.
// The plugin's name() is the absolute path of the file (symbolic links
// resolved), so a repro line that names it works from any directory.
Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path);

// Time limits of check_isolated(): a positive number of seconds up to
// kMaxTimeoutSeconds (its milliseconds fit a 32-bit int), or kNoTimeLimit.
constexpr double kMaxTimeoutSeconds = 2147483;
constexpr double kNoTimeLimit = std::numeric_limits<double>::infinity();

// check() in a child process with a time limit: a crash or hang of `actual`
// becomes a kFail report naming the signal or the timeout. A timeout outside
// the range above fails the case with a message naming the value.
CheckReport check_isolated(const Case& c, const Impl& expected, const Impl& actual,
                           const CheckOptions& options, double timeout_seconds);

// The smallest shape (dimension by dimension) for which `fails` still holds.
Case shrink_case(const Case& failing, const std::function<bool(const Case&)>& fails);

// Writes a replayable regression file atomically (temporary file + rename);
// returns its path.
Result<std::string> save_regression(const std::string& dir, const Case& c, const std::string& impl,
                                    const std::string& message);

}  // namespace layoutcheck
