// Replays fuzzer inputs without libFuzzer, so every build (gcc too) runs the
// corpus and the saved regressions: `fuzz_x FILE_OR_DIR...`.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static int replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return 1;
  }
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return 0;
}

int main(int argc, char** argv) {
  size_t count = 0;
  int errors = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) errors += replay(f), ++count;
    } else if (fs::exists(p, ec)) {
      errors += replay(p), ++count;
    } else {
      std::fprintf(stderr, "%s: no such file or directory (skipped)\n", argv[i]);
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return errors ? 1 : 0;
}
