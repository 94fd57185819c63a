// The CLI's files (tools/cli_io.cc): bounded reads, checked and atomic writes.
//
//   auto in = read_bounded("-", want);            // at most want + 1 bytes are read
//   if (in.ok() && in->more) ...                  // the input is longer than want
//   Status s = write_output("out.bin", bytes.data(), bytes.size());
//
// Errors are values naming the path and the reason (strerror). POSIX read/write
// with EINTR handling, so that every read, write, fsync and close is checked.
//
// Where write_output puts the bytes:
//   "-" or ""            standard output, written directly;
//   a new path or a      a unique temporary file beside it (".NAME.XXXXXX", mode
//   regular file         0666 & ~umask for a new file, the old mode otherwise),
//                        fsync'd, then renamed over PATH; on any failure the
//                        temporary file is removed and PATH is left as it was;
//   a device or a FIFO   opened and written directly (nothing is replaced);
//   a symbolic link      followed: its target gets the treatment above (the link
//                        stays a link); a link whose target cannot be resolved
//                        is an error;
//   a directory          an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutcheck/status.h"

namespace layoutcheck::cli {

// "standard input" / "standard output" for "-" or "", else the path quoted.
std::string input_name(const std::string& path);
std::string output_name(const std::string& path);

struct BoundedInput {
  std::vector<uint8_t> bytes;  // at most the limit
  bool more = false;           // the input holds more than the limit (not all of it was read)
};

// Reads PATH ("-" or "": standard input) up to `limit` bytes and one byte
// beyond, so that a longer input is detected without reading it all.
Result<BoundedInput> read_bounded(const std::string& path, uint64_t limit);

// A text file of at most `limit` bytes (a regression file, a list of items):
// a longer one, or an endless one such as /dev/zero, is an error naming the
// limit and `what` the file should be, after reading limit + 1 bytes at most.
// PATH is a file here ("-" is a file named so, not standard input).
Result<std::string> read_text_file(const std::string& path, uint64_t limit, const std::string& what);

Status write_output(const std::string& path, const uint8_t* data, size_t size);

// Flushes standard output (what printf and std::cout buffered) and reports a
// failed write, e.g. a full disk, with the reason.
Status flush_stdout();

}  // namespace layoutcheck::cli
