// layoutcheck/isolate.h — running code the host does not trust in a child process.
//
//   Sandbox box({/*timeout_seconds=*/10});
//   LC_RETURN_IF_ERROR(box.start([](int fd) { ... Sandbox::child_send(fd, "hello"); }));
//   Result<std::string> reply = box.receive(1 << 20, "load");   // or why there is none
//
// The child runs in its own process group with limits: address space (RLIMIT_AS,
// `memory_bytes` beyond what the host had mapped when the child started; not
// enforced under AddressSanitizer, whose shadow memory reserves terabytes of
// address space), CPU time (RLIMIT_CPU, the timeout plus a second), its stdin
// from /dev/null and its stdout and stderr captured into a capped buffer. A
// child that crashes, runs out of memory, hangs, or sends more than the caller
// expects is reported as such, and its whole process group is killed when the
// Sandbox stops (so a process it started does not outlive it).
//
// GuardedPages is a buffer between inaccessible guard pages. In a sandboxed
// child an access to a guard page is reported as an out-of-bounds access of
// that buffer ("wrote 4096 bytes before the physical buffer") instead of a
// plain crash.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "layoutcheck/status.h"

namespace layoutcheck {

// A buffer whose last byte is followed by guard pages and whose first byte is
// preceded by poisoned slack (up to the page boundary) and guard pages. Usable
// in any process; the guard pages turn an out-of-bounds access into a SIGSEGV,
// which a sandboxed child names (see Sandbox).
class GuardedPages {
 public:
  static constexpr size_t kGuardBytes = size_t{64} << 10;  // on each side
  // `label` ("physical buffer") must outlive the object.
  GuardedPages(size_t size, const char* label);
  ~GuardedPages();
  GuardedPages(const GuardedPages&) = delete;
  GuardedPages& operator=(const GuardedPages&) = delete;
  bool ok() const { return data_ != nullptr; }  // false when the mapping failed
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // The poisoned slack before data() is intact; otherwise an error naming how
  // far before the buffer `who` wrote.
  Status check_slack(const std::string& who) const;

 private:
  uint8_t* base_ = nullptr;  // start of the whole mapping
  size_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;  // registration for the fault handler
  const char* label_ = "";
};

struct SandboxLimits {
  double timeout_seconds = 10;                   // per receive()
  uint64_t memory_bytes = uint64_t{2} << 30;     // address space beyond the host's (and the buffers)
  size_t max_output = size_t{64} << 10;          // captured stdout+stderr kept (the rest is counted)
};

// True when RLIMIT_AS is applied (false under AddressSanitizer).
bool sandbox_limits_memory();

class Sandbox {
 public:
  explicit Sandbox(SandboxLimits limits = {});
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Forks the child; it runs child_main(fd) and exits. fd is its end of a
  // stream socket (child_send / child_receive).
  Status start(const std::function<void(int fd)>& child_main);
  bool running() const { return pid_ > 0; }
  // One message to the child.
  Status send(const std::string& message);
  // One message from the child, at most max_bytes, within the timeout. On
  // failure the child is stopped and the Status says what it did ("crashed
  // with signal 11 (SIGSEGV: Segmentation fault) during pack", "did not finish
  // within 10 s", "ran out of memory", "wrote 4096 bytes before ...").
  Result<std::string> receive(uint64_t max_bytes, const std::string& during);
  // Kills the child's process group and reaps the child.
  void stop();
  // The child's captured stdout and stderr (capped), and how many bytes were dropped.
  const std::string& output() const { return output_; }
  uint64_t output_dropped() const { return dropped_; }
  const SandboxLimits& limits() const { return limits_; }

  // In the child.
  static bool child_send(int fd, const std::string& message);
  static bool child_receive(int fd, std::string* message);
  // Raises the child's limits for one more unit of work with buffers of
  // `buffer_bytes` (address space) and the timeout (CPU time).
  static void child_allow(uint64_t buffer_bytes);
  // A process the child's code started and left behind: a message, or "".
  static std::string child_stray_processes();

 private:
  void drain_output(int timeout_ms);
  SandboxLimits limits_;
  pid_t pid_ = -1;
  int sock_ = -1, out_ = -1;
  char* note_ = nullptr;  // shared page the child's fault handler writes to
  std::string output_;
  uint64_t dropped_ = 0;
};

// Message framing helpers, shared by both ends (little-endian).
void put_u64(std::string* out, uint64_t v);
void put_str(std::string* out, const std::string& s);
struct Reader {
  const std::string& in;
  size_t at = 0;
  bool bad = false;
  uint64_t u64();
  std::string str(uint64_t max = UINT64_MAX);
};

}  // namespace layoutcheck
