#include "layoutcheck/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define LAYOUTCHECK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAYOUTCHECK_ASAN 1
#endif
#endif

namespace layoutcheck {
namespace {

constexpr uint8_t kSlackPoison = 0xCB;
constexpr size_t kNoteBytes = 4096;

// ---- guard pages, visible to the fault handler ------------------------------
struct GuardSlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 live
  uintptr_t lo = 0, hi = 0, begin = 0, end = 0;
  const char* label = nullptr;
};
GuardSlot g_slots[64];

// ---- state of a sandboxed child ---------------------------------------------
char* g_note = nullptr;           // shared with the parent
uint64_t g_memory_base = 0;       // RLIMIT_AS before per-call allowances; 0 = not limited
double g_timeout = 0;
char g_altstack[64 << 10];

// Async-signal-safe text building.
struct Note {
  char buf[kNoteBytes];
  size_t n = 0;
  void add(const char* s) {
    while (*s && n + 1 < sizeof buf) buf[n++] = *s++;
  }
  void add(uint64_t v) {
    char digits[24];
    int k = 0;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (k && n + 1 < sizeof buf) buf[n++] = digits[--k];
  }
  void publish() {
    if (!g_note) return;
    buf[n] = 0;
    std::memcpy(g_note, buf, n + 1);
  }
};

void on_fatal_signal(int sig, siginfo_t* si, void* ctx) {
  const int err = errno;
  Note note;
  if (sig == SIGSEGV || sig == SIGBUS) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
    for (GuardSlot& s : g_slots) {
      if (s.state.load(std::memory_order_acquire) != 2 || a < s.lo || a >= s.hi) continue;
      const char* verb = "accessed";
#if defined(__x86_64__)
      // Bit 1 of the page-fault error code: the access was a write.
      verb = (static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_ERR] & 2) ? "wrote" : "read";
#else
      (void)ctx;
#endif
      note.add("out-of-bounds access: ");
      note.add(verb);
      if (a < s.begin) {
        note.add(" ");
        note.add(static_cast<uint64_t>(s.begin - a));
        note.add(" bytes before the ");
        note.add(s.label);
      } else {
        note.add(" past the end of the ");
        note.add(s.label);
        note.add(" (byte ");
        note.add(static_cast<uint64_t>(a - s.begin));
        note.add(" of ");
        note.add(static_cast<uint64_t>(s.end - s.begin));
        note.add(")");
      }
      note.add(", caught by a guard page");
      break;
    }
  }
  if (note.n == 0 && err == ENOMEM && g_memory_base != 0) {
    note.add("ran out of memory: an allocation failed at the limit of ");
    struct rlimit rl;
    getrlimit(RLIMIT_AS, &rl);
    note.add(static_cast<uint64_t>(rl.rlim_cur >> 20));
    note.add(" MiB of address space");
  }
  if (note.n) note.publish();
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when the handler returns
}

uint64_t mapped_bytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[64] = {0};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  return std::strtoull(buf, nullptr, 10) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void set_soft_limit(int resource, uint64_t value) {
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0) return;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? value : std::min<uint64_t>(value, rl.rlim_max);
  setrlimit(resource, &rl);
}

void close_other_fds(int keep_below) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, static_cast<unsigned>(keep_below), ~0u, 0u) == 0) return;
#endif
  for (int fd = keep_below; fd < 4096; ++fd) close(fd);
}

void setup_child(const SandboxLimits& limits, char* note, int sock, int out) {
  setpgid(0, 0);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out, 1);
  dup2(out, 2);
  dup2(sock, 3);
  close_other_fds(4);
  g_note = note;
  g_timeout = limits.timeout_seconds;
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  if (sandbox_limits_memory()) g_memory_base = mapped_bytes() + limits.memory_bytes;
  Sandbox::child_allow(0);
  stack_t ss{};
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof g_altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_DFL);
}

const char* signal_abbrev(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal";
  }
}

bool write_all(int fd, const char* p, size_t n) {
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

bool sandbox_limits_memory() {
#ifdef LAYOUTCHECK_ASAN
  return false;  // the shadow memory alone reserves terabytes of address space
#else
  return true;
#endif
}

// ---- GuardedPages -------------------------------------------------------------
namespace {

// Mappings of GuardedPages that went out of scope, kept for the next buffer of
// the same size on the thread: a plugin's every call checks its buffers in new
// ones, and mmap, mprotect, the first touch of each page and munmap (with its
// TLB flush) cost more than the call itself on a small case (measured with
// fuzz_plugin_host on a Zen 5, ASan + UBSan: a third of the CPU time). A
// mapping taken again reads as a new one: zeros, the slack poisoned anew.
class MappingPool {
 public:
  static constexpr size_t kMappings = 8;
  static constexpr size_t kMaxBody = size_t{1} << 20;  // larger buffers are unmapped at once
  ~MappingPool() {
    for (size_t i = 0; i < count_; ++i) munmap(free_[i].base, free_[i].mapped);
  }
  // The latest mapping of that size given back (the one most likely still in
  // the caches and the TLB).
  uint8_t* take(size_t mapped) {
    for (size_t i = count_; i-- > 0;) {
      if (free_[i].mapped != mapped) continue;
      uint8_t* base = free_[i].base;
      std::copy(free_ + i + 1, free_ + count_, free_ + i);
      --count_;
      return base;
    }
    return nullptr;
  }
  // False when the mapping is too large: the caller unmaps it. A full pool
  // unmaps its oldest mapping to keep this one.
  bool give(uint8_t* base, size_t mapped) {
    if (mapped > kMaxBody + 2 * GuardedPages::kGuardBytes) return false;
    if (count_ == kMappings) {
      munmap(free_[0].base, free_[0].mapped);
      std::copy(free_ + 1, free_ + count_, free_);
      --count_;
    }
    free_[count_++] = {base, mapped};
    return true;
  }

 private:
  struct Mapping {
    uint8_t* base;
    size_t mapped;
  };
  Mapping free_[kMappings] = {};
  size_t count_ = 0;
};

thread_local MappingPool t_mappings;

}  // namespace

GuardedPages::GuardedPages(size_t size, const char* label) : size_(size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t body = (std::max<size_t>(size, 1) + page - 1) / page * page;
  if (body < size || body > SIZE_MAX - 2 * kGuardBytes) return;
  mapped_ = body + 2 * kGuardBytes;
  if (uint8_t* reused = t_mappings.take(mapped_)) {
    base_ = reused;
    std::memset(base_ + kGuardBytes + body - size, 0, size);
  } else {
    void* p = mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<uint8_t*>(p);
    if (mprotect(base_ + kGuardBytes, body, PROT_READ | PROT_WRITE) != 0) {
      munmap(base_, mapped_);
      base_ = nullptr;
      return;
    }
  }
  data_ = base_ + kGuardBytes + body - size;
  std::memset(base_ + kGuardBytes, kSlackPoison, body - size);
  for (int i = 0; i < static_cast<int>(sizeof g_slots / sizeof g_slots[0]); ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    g_slots[i].lo = reinterpret_cast<uintptr_t>(base_);
    g_slots[i].hi = reinterpret_cast<uintptr_t>(base_ + mapped_);
    g_slots[i].begin = reinterpret_cast<uintptr_t>(data_);
    g_slots[i].end = reinterpret_cast<uintptr_t>(data_ + size);
    g_slots[i].label = label;
    g_slots[i].state.store(2, std::memory_order_release);
    slot_ = i;
    break;
  }
  label_ = label;
}

GuardedPages::~GuardedPages() {
  if (slot_ >= 0) g_slots[slot_].state.store(0, std::memory_order_release);
  if (base_ && !t_mappings.give(base_, mapped_)) munmap(base_, mapped_);
}

Status GuardedPages::check_slack(const std::string& who) const {
  if (!data_) return Status();
  // Eight bytes at a time up to the first changed word, then byte by byte.
  uint64_t poison_word;
  std::memset(&poison_word, kSlackPoison, sizeof poison_word);
  const uint8_t* p = base_ + kGuardBytes;
  for (uint64_t word; data_ - p >= 8; p += 8) {
    std::memcpy(&word, p, sizeof word);
    if (word != poison_word) break;
  }
  for (; p < data_; ++p) {
    if (*p != kSlackPoison) {
      return Status::internal(who + ": out-of-bounds access: wrote " + std::to_string(data_ - p) +
                              " bytes before the " + label_);
    }
  }
  return Status();
}

// ---- Sandbox ------------------------------------------------------------------
Sandbox::Sandbox(SandboxLimits limits) : limits_(limits) {}

Sandbox::~Sandbox() {
  stop();
  if (note_) munmap(note_, kNoteBytes);
}

Status Sandbox::start(const std::function<void(int fd)>& child_main) {
  stop();
  output_.clear();
  dropped_ = 0;
  if (!note_) {
    void* p = mmap(nullptr, kNoteBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Status::internal(std::string("cannot map a page: ") + std::strerror(errno));
    note_ = static_cast<char*>(p);
  }
  note_[0] = 0;
  int sv[2], op[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::internal(std::string("cannot create a socket pair: ") + std::strerror(errno));
  }
  if (pipe2(op, O_CLOEXEC) != 0) {
    close(sv[0]);
    close(sv[1]);
    return Status::internal(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {sv[0], sv[1], op[0], op[1]}) close(fd);
    return Status::internal(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setup_child(limits_, note_, sv[1], op[1]);
    child_main(3);
    _exit(0);
  }
  setpgid(pid, pid);  // also here, so a kill of the group cannot race the child's own setpgid
  close(sv[1]);
  close(op[1]);
  fcntl(op[0], F_SETFL, fcntl(op[0], F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  sock_ = sv[0];
  out_ = op[0];
  return Status();
}

Status Sandbox::send(const std::string& message) {
  if (pid_ <= 0) return Status::internal("the child is not running");
  std::string frame;
  put_u64(&frame, message.size());
  if (!write_all(sock_, frame.data(), frame.size()) || !write_all(sock_, message.data(), message.size())) {
    return Status::internal("the child stopped reading");
  }
  return Status();
}

void Sandbox::drain_output(int timeout_ms) {
  if (out_ < 0) return;
  pollfd p{out_, POLLIN, 0};
  if (timeout_ms > 0 && poll(&p, 1, timeout_ms) <= 0) return;
  char buf[65536];
  while (true) {
    ssize_t n = read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      close(out_);
      out_ = -1;
      return;
    }
    if (n < 0) return;
    size_t keep = std::min(static_cast<size_t>(n), limits_.max_output - std::min(limits_.max_output, output_.size()));
    output_.append(buf, keep);
    dropped_ += static_cast<uint64_t>(n) - keep;
  }
}

Result<std::string> Sandbox::receive(uint64_t max_bytes, const std::string& during) {
  using clock = std::chrono::steady_clock;
  if (pid_ <= 0) return Status::internal("the child is not running");
  // A timeout that is not finite (kNoTimeLimit) waits as long as the child runs.
  const bool limited = std::isfinite(limits_.timeout_seconds);
  const auto deadline =
      limited ? clock::now() + std::chrono::duration_cast<clock::duration>(
                                   std::chrono::duration<double>(limits_.timeout_seconds))
              : clock::time_point::max();
  std::string data;
  uint64_t want = 8;
  bool have_header = false, eof = false, timed_out = false;
  std::string why;
  while (true) {
    const auto left = limited ? std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count()
                              : int64_t{1000};
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[2] = {{sock_, POLLIN, 0}, {out_, POLLIN, 0}};
    int ready = poll(p, out_ >= 0 ? 2 : 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      eof = true;
      break;
    }
    if (out_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) drain_output(0);
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const size_t ask = static_cast<size_t>(std::min<uint64_t>(sizeof buf, want - data.size()));
    ssize_t n = read(sock_, buf, ask);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
      break;
    }
    data.append(buf, static_cast<size_t>(n));
    if (data.size() < want) continue;
    if (have_header) return data;
    Reader r{data};
    const uint64_t size = r.u64();
    if (size > max_bytes) {
      why = "sent an answer of " + std::to_string(size) + " bytes during " + during + ", more than the " +
            std::to_string(max_bytes) + " expected";
      break;
    }
    have_header = true;
    data.clear();
    if (size == 0) return data;
    data.reserve(static_cast<size_t>(size));
    want = size;
  }
  // No answer: find out what happened, then stop the whole process group.
  int status = 0;
  bool reaped = false;
  if (eof) {
    while (clock::now() < deadline) {
      pid_t w = waitpid(pid_, &status, WNOHANG);
      if (w == pid_) {
        reaped = true;
        break;
      }
      drain_output(20);
      if (out_ < 0) usleep(10000);
    }
    if (!reaped) timed_out = true;
  }
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  if (!reaped) waitpid(pid_, &status, 0);
  drain_output(0);
  pid_ = -1;
  stop();
  const std::string note = note_ ? std::string(note_) : "";
  if (why.empty()) {
    if (timed_out) {
      why = "did not finish within " + seconds_text(limits_.timeout_seconds) + " s during " + during +
            " (a hang?); its process group was killed";
    } else if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      std::string what = "crashed with signal " + std::to_string(sig) + " (" + signal_abbrev(sig) + ": " +
                         strsignal(sig) + ")";
      if (sig == SIGXCPU) what = "exceeded its CPU time limit (signal " + std::to_string(sig) + ", SIGXCPU)";
      if (sig == SIGKILL) what = "was killed (signal 9, SIGKILL; by the out-of-memory killer?)";
      why = (note.empty() ? what : note + "; " + what) + " during " + during;
    } else {
      why = "exited with status " + std::to_string(WEXITSTATUS(status)) + " without answering during " + during;
    }
  }
  if (!output_.empty()) {
    std::string shown = output_.substr(0, 400);
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    why += "; its output: " + shown + (output_.size() > 400 || dropped_ ? "..." : "");
  }
  return Status::internal(why);
}

void Sandbox::stop() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  if (sock_ >= 0) close(sock_);
  if (out_ >= 0) close(out_);
  sock_ = out_ = -1;
}

bool Sandbox::child_send(int fd, const std::string& message) {
  std::string frame;
  put_u64(&frame, message.size());
  return write_all(fd, frame.data(), frame.size()) && write_all(fd, message.data(), message.size());
}

bool Sandbox::child_receive(int fd, std::string* message) {
  char header[8];
  if (!read_all(fd, header, sizeof header)) return false;
  std::string h(header, sizeof header);
  Reader r{h};
  const uint64_t size = r.u64();
  message->assign(static_cast<size_t>(size), '\0');
  return read_all(fd, message->data(), message->size());
}

void Sandbox::child_allow(uint64_t buffer_bytes) {
  if (g_memory_base) {
    const uint64_t extra = buffer_bytes > (UINT64_MAX - g_memory_base) / 8 ? UINT64_MAX - g_memory_base
                                                                           : buffer_bytes * 8;
    set_soft_limit(RLIMIT_AS, g_memory_base + extra);
  }
  if (g_timeout > 0 && std::isfinite(g_timeout)) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double used = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1;
    set_soft_limit(RLIMIT_CPU, static_cast<uint64_t>(used + std::ceil(g_timeout) + 1));
  }
}

std::string Sandbox::child_stray_processes() {
  int status = 0;
  pid_t w = waitpid(-1, &status, WNOHANG);
  if (w == 0) return "started a process and left it running (a plugin must not create processes)";
  if (w > 0) return "started a process (pid " + std::to_string(w) + ") (a plugin must not create processes)";
  return "";
}

// ---- framing ------------------------------------------------------------------
void put_u64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_str(std::string* out, const std::string& s) {
  put_u64(out, s.size());
  out->append(s);
}

uint64_t Reader::u64() {
  if (bad || in.size() - at < 8) {
    bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  at += 8;
  return v;
}

std::string Reader::str(uint64_t max) {
  const uint64_t n = u64();
  if (bad || n > max || n > in.size() - at) {
    bad = true;
    return "";
  }
  std::string s = in.substr(at, static_cast<size_t>(n));
  at += static_cast<size_t>(n);
  return s;
}

}  // namespace layoutcheck
