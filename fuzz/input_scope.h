// The scope of one fuzz input in the harnesses of the bundled implementations
// (not installed: it reaches into core/, which plugins do not see).
#pragma once

#include "core/case_cache.h"

namespace layoutcheck::fuzz {

// Declared first in LLVMFuzzerTestOneInput: when the input is done, the case
// caches of the implementations (core/case_cache.h) are emptied, so every
// input frees what it allocated and libFuzzer's leak check does not re-run
// inputs that only left their case cached.
struct InputScope {
  InputScope() = default;
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;
  ~InputScope() { release_case_caches(); }
};

}  // namespace layoutcheck::fuzz
