#include "layoutcheck/plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
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

namespace layoutcheck {
namespace {

const lc_plugin* table(const void* t) { return static_cast<const lc_plugin*>(t); }

// An lc_case and the storage its pointers refer to.
struct CCase {
  explicit CCase(const Case& c) : text(to_string(c.layout)), dtype(dtype_name(c.dtype)) {
    for (const auto& [k, v] : c.layout.params) keys.push_back(k), values.push_back(v);
    for (const auto& k : keys) key_ptrs.push_back(k.c_str());
    for (const auto& v : values) value_ptrs.push_back(v.c_str());
    view.layout = text.c_str();
    view.layout_name = c.layout.name.c_str();
    view.param_count = static_cast<uint32_t>(keys.size());
    view.param_keys = key_ptrs.data();
    view.param_values = value_ptrs.data();
    view.dtype = dtype.c_str();
    view.dtype_bits = dtype_bits(c.dtype);
    view.rank = static_cast<uint32_t>(c.shape.size());
    view.shape = c.shape.data();
  }
  std::string text, dtype;
  std::vector<std::string> keys, values;
  std::vector<const char*> key_ptrs, value_ptrs;
  lc_case view{};
};

Status from_c(lc_status s, const std::string& what) {
  switch (s) {
    case LC_OK: return Status();
    case LC_INVALID: return Status::invalid(what + ": the plugin reports the case invalid");
    case LC_UNSUPPORTED: return Status::unsupported(what + ": not supported by the plugin");
    default: return Status::internal(what + ": the plugin reports an error (status " + std::to_string(s) + ")");
  }
}

}  // namespace

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
  char reason[512] = {0};
  lc_status s = table(table_)->supports(&cc.view, reason, sizeof reason);
  reason[sizeof reason - 1] = 0;
  if (s == LC_OK) return Status();
  std::string why = reason[0] ? reason : "(no reason given)";
  if (s == LC_INVALID) return Status::invalid(name_ + ": " + why);
  if (s == LC_UNSUPPORTED) return Status::unsupported(name_ + ": " + why);
  return Status::internal(name_ + ": " + why);
}

Result<uint64_t> PluginImpl::size_bytes(const Case& c) const {
  CCase cc(c);
  uint64_t bytes = 0;
  LC_RETURN_IF_ERROR(from_c(table(table_)->size_bytes(&cc.view, &bytes), "size_bytes"));
  return bytes;
}

Result<uint64_t> PluginImpl::offset_bits(const Case& c, const Coord& at) const {
  if (table(table_)->offset_bits == nullptr) return Status::unsupported(name_ + " has no offset_bits");
  if (at.size() != c.shape.size()) return Status::invalid("coordinate rank differs from the shape's");
  CCase cc(c);
  uint64_t bits = 0;
  LC_RETURN_IF_ERROR(from_c(table(table_)->offset_bits(&cc.view, at.data(), &bits), "offset_bits"));
  return bits;
}

Status PluginImpl::pack(const Case& c, const void* logical, size_t logical_size, void* physical,
                        size_t physical_size) const {
  CCase cc(c);
  return from_c(table(table_)->pack(&cc.view, logical, logical_size, physical, physical_size), "pack");
}

Status PluginImpl::unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                          size_t logical_size) const {
  CCase cc(c);
  return from_c(table(table_)->unpack(&cc.view, physical, physical_size, logical, logical_size), "unpack");
}

Result<std::unique_ptr<PluginImpl>> load_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return Status::invalid("cannot load plugin " + path + ": " + (err ? err : "unknown error"));
  }
  auto fail = [&](const std::string& why) -> Status {
    dlclose(handle);
    return Status::invalid("plugin " + path + ": " + why);
  };
  void* sym = dlsym(handle, LC_PLUGIN_ENTRY);
  if (!sym) return fail(std::string("does not export ") + LC_PLUGIN_ENTRY + "()");
  lc_plugin_entry_fn entry;
  static_assert(sizeof entry == sizeof sym, "function and object pointers differ in size");
  std::memcpy(&entry, &sym, sizeof entry);
  const lc_plugin* t = entry();
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
  std::unique_ptr<PluginImpl> impl(new PluginImpl());
  impl->handle_ = handle;
  impl->table_ = t;
  // The absolute path: repro lines and regression files name it, and they are
  // run from other directories.
  char* real = realpath(path.c_str(), nullptr);
  impl->path_ = real ? real : path;
  std::free(real);
  impl->name_ = t->name ? t->name : path;
  for (uint32_t i = 0; i < t->capability_count && t->capabilities; ++i) {
    const lc_capability& c = t->capabilities[i];
    PluginCapability cap;
    cap.layout_glob = c.layout_glob ? c.layout_glob : "*";
    std::istringstream words(c.dtypes ? c.dtypes : "*");
    for (std::string w; words >> w;) {
      if (w != "*") cap.dtypes.push_back(w);
    }
    cap.max_extent = c.max_extent;
    impl->capabilities_.push_back(cap);
  }
  return impl;
}

CheckReport check_isolated(const Case& c, const Impl& expected, const Impl& actual, const CheckOptions& options,
                           double timeout_seconds) {
  int fds[2];
  CheckReport report;
  report.repro = repro_command(c, actual.name(), options);
  const bool limited = timeout_seconds != kNoTimeLimit;
  if (!(timeout_seconds > 0) || (limited && timeout_seconds > kMaxTimeoutSeconds)) {
    report.verdict = Verdict::kFail;
    report.message = "FAIL " + to_string(c) + ": timeout " + std::to_string(timeout_seconds) +
                     " s is out of range (more than 0, at most " + std::to_string(kMaxTimeoutSeconds) +
                     " s, or no limit)\n";
    return report;
  }
  if (pipe(fds) != 0) return check(c, expected, actual, options);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return check(c, expected, actual, options);
  }
  if (pid == 0) {
    close(fds[0]);
    CheckReport r = check(c, expected, actual, options);
    std::string out = std::to_string(static_cast<int>(r.verdict)) + "\n" + r.message;
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string data;
  const auto deadline =
      limited ? std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_seconds))
              : std::chrono::steady_clock::time_point::max();
  bool timed_out = false;
  while (true) {
    int64_t wait_ms = 1000;
    if (limited) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = std::min<int64_t>(left.count(), wait_ms);
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(wait_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string header = to_string(c) + ": " + actual.name() + " vs " + expected.name();
  if (timed_out || WIFSIGNALED(status) || data.empty()) {
    report.verdict = Verdict::kFail;
    std::string what = timed_out ? "did not finish within " + std::to_string(timeout_seconds) + " s (a hang?)"
                       : WIFSIGNALED(status) ? std::string("crashed with signal ") + std::to_string(WTERMSIG(status)) +
                                                   " (" + strsignal(WTERMSIG(status)) + ")"
                                             : "exited without a report (status " + std::to_string(WEXITSTATUS(status)) + ")";
    report.message = "FAIL " + header + "\n  " + actual.name() + " " + what + "\n  repro: " + report.repro + "\n";
    return report;
  }
  size_t nl = data.find('\n');
  report.verdict = static_cast<Verdict>(std::atoi(data.substr(0, nl).c_str()));
  report.message = nl == std::string::npos ? "" : data.substr(nl + 1);
  return report;
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
