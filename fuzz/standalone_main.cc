// Replays fuzzer inputs without libFuzzer, so every build (gcc too) runs the
// corpus and the saved regressions: `fuzz_x FILE_OR_DIR... [--checked FILE_OR_DIR...]`.
// Inputs whose case is above the fuzzing bounds are not checked (counted and
// reported); after --checked such an input is an error, so a saved regression
// cannot silently stop being checked.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static int replay(const fs::path& file, bool must_check) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return 1;
  }
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const uint64_t before = layoutcheck::fuzz::not_checked;
  LLVMFuzzerTestOneInput(data.data(), data.size());
  if (must_check && layoutcheck::fuzz::not_checked != before) {
    std::fprintf(stderr, "%s: the case is above the fuzzing bounds and was not checked\n", file.c_str());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  size_t count = 0;
  int errors = 0;
  bool must_check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--checked") {
      must_check = true;
      continue;
    }
    fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) errors += replay(f, must_check), ++count;
    } else if (fs::exists(p, ec)) {
      errors += replay(p, must_check), ++count;
    } else {
      std::fprintf(stderr, "%s: no such file or directory (skipped)\n", argv[i]);
    }
  }
  std::printf("replayed %zu inputs (%llu above the fuzzing bounds, not checked)\n", count,
              static_cast<unsigned long long>(layoutcheck::fuzz::not_checked));
  return errors ? 1 : 0;
}
