#include "tools/cli_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace layoutcheck::cli {
namespace {

bool is_std_stream(const std::string& path) { return path.empty() || path == "-"; }

std::string reason(int err) { return std::strerror(err); }

Status io_error(const std::string& what, int err) { return Status::invalid(what + ": " + reason(err)); }

// Writes all of data; a short write continues, EINTR retries.
Status write_all(int fd, const uint8_t* data, size_t size, const std::string& name) {
  size_t done = 0;
  while (done < size) {
    const size_t chunk = std::min<size_t>(size - done, size_t{1} << 30);
    const ssize_t n = ::write(fd, data + done, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write " + name + " (" + std::to_string(done) + " of " + std::to_string(size) +
                          " bytes written)",
                      errno);
    }
    if (n == 0) return io_error("cannot write " + name, EIO);
    done += static_cast<size_t>(n);
  }
  return Status();
}

int open_retry(const char* path, int flags, mode_t mode = 0) {
  int fd;
  do fd = ::open(path, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

Status close_checked(int fd, const std::string& name) {
  // Linux releases the descriptor even when close fails (also on EINTR): no retry.
  if (::close(fd) != 0 && errno != EINTR) return io_error("cannot write " + name + " (close)", errno);
  return Status();
}

// A device, a FIFO or a socket: written in place, never replaced.
Status write_direct(const std::string& path, const std::string& name, const uint8_t* data, size_t size) {
  const int fd = open_retry(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return io_error("cannot open " + name + " for writing", errno);
  Status s = write_all(fd, data, size, name);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  return close_checked(fd, name);
}

// A new or regular file: a unique temporary file in the same directory,
// fsync'd and renamed over the target. Every failure removes the temporary file.
Status write_atomic(const std::string& target, const std::string& name, const uint8_t* data, size_t size,
                    const struct stat* existing) {
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string tmp = (slash == std::string::npos ? std::string() : target.substr(0, slash + 1)) + "." + base + ".XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    return io_error("cannot write " + name + " (creating a temporary file in " + quote_input(dir) + ")", errno);
  }
  auto fail = [&](Status s, bool open) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  mode_t mode;
  if (existing != nullptr) {
    mode = existing->st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) return fail(io_error("cannot write " + name + " (setting its mode)", errno), true);
  if (Status s = write_all(fd, data, size, name); !s.ok()) return fail(s, true);
  if (::fsync(fd) != 0) return fail(io_error("cannot write " + name + " (fsync)", errno), true);
  if (Status s = close_checked(fd, name); !s.ok()) return fail(s, false);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    return fail(io_error("cannot write " + name + " (renaming " + quote_input(tmp) + " over it)", errno), false);
  }
  // The rename is durable once the directory is synced; a file system that
  // cannot sync a directory has already made it so.
  const int dfd = open_retry(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status();
}

}  // namespace

std::string input_name(const std::string& path) {
  return is_std_stream(path) ? "standard input" : quote_input(path);
}

std::string output_name(const std::string& path) {
  return is_std_stream(path) ? "standard output" : quote_input(path);
}

Result<std::string> read_text_file(const std::string& path, uint64_t limit, const std::string& what) {
  LC_ASSIGN_OR_RETURN(BoundedInput in, read_bounded(is_std_stream(path) ? "./" + path : path, limit));
  if (in.more) {
    return Status::invalid(quote_input(path) + " holds more than " + std::to_string(limit) + " bytes, more than " + what +
                           " has");
  }
  return std::string(in.bytes.begin(), in.bytes.end());
}

Result<BoundedInput> read_bounded(const std::string& path, uint64_t limit) {
  const std::string name = input_name(path);
  const bool own = !is_std_stream(path);
  const int fd = own ? open_retry(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
  if (fd < 0) return io_error("cannot read " + name, errno);
  auto done = [&](Result<BoundedInput> r) {
    if (own) ::close(fd);
    return r;
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return done(io_error("cannot read " + name, errno));
  if (S_ISDIR(st.st_mode)) return done(io_error("cannot read " + name, EISDIR));
  BoundedInput in;
  // A regular file we opened is read from its start: its size decides.
  if (own && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > limit) {
    in.more = true;
    return done(std::move(in));
  }
  const uint64_t cap = limit == UINT64_MAX ? limit : limit + 1;  // one byte past the limit tells "more"
  uint64_t n = 0;
  size_t capacity = static_cast<size_t>(std::min<uint64_t>(cap, uint64_t{1} << 16));
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    capacity = static_cast<size_t>(std::min<uint64_t>(cap, static_cast<uint64_t>(st.st_size) + 1));
  }
  in.bytes.resize(capacity);
  while (n < cap) {
    if (n == in.bytes.size()) in.bytes.resize(static_cast<size_t>(std::min<uint64_t>(cap, n * 2)));
    const size_t want = static_cast<size_t>(std::min<uint64_t>(in.bytes.size() - n, size_t{1} << 30));
    const ssize_t got = ::read(fd, in.bytes.data() + n, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      return done(io_error("cannot read " + name + " (after " + std::to_string(n) + " bytes)", errno));
    }
    if (got == 0) break;
    n += static_cast<uint64_t>(got);
  }
  if (n > limit) {
    in.more = true;
    n = limit;
  }
  in.bytes.resize(static_cast<size_t>(n));
  return done(std::move(in));
}

Status write_output(const std::string& path, const uint8_t* data, size_t size) {
  const std::string name = output_name(path);
  if (is_std_stream(path)) {
    LC_RETURN_IF_ERROR(flush_stdout());
    return write_all(STDOUT_FILENO, data, size, name);
  }
  std::string target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) {
      return io_error("cannot write " + name + " (a symbolic link whose target cannot be resolved)", errno);
    }
    target = resolved;
    std::free(resolved);
  }
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) return io_error("cannot write " + name, errno);
    return write_atomic(target, name, data, size, nullptr);
  }
  if (S_ISDIR(st.st_mode)) return io_error("cannot write " + name, EISDIR);
  if (!S_ISREG(st.st_mode)) return write_direct(target, name, data, size);
  return write_atomic(target, name, data, size, &st);
}

Status flush_stdout() {
  // std::cout shares stdout's buffer (synchronized with stdio), so this one
  // fflush writes both and keeps the reason of a failure in errno.
  errno = 0;
  int err = 0;
  if (std::fflush(stdout) != 0) err = errno;
  std::cout.flush();
  if (err == 0 && (std::ferror(stdout) || !std::cout)) err = errno != 0 ? errno : EIO;
  if (err == 0) return Status();
  std::clearerr(stdout);
  std::cout.clear();
  return io_error("cannot write standard output", err);
}

}  // namespace layoutcheck::cli
