#include "optimized/isa.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace layoutcheck {

namespace {

constexpr const char* kNames[] = {"portable", "ssse3", "avx2", "avx512", "avx512vbmi"};
constexpr uint8_t kLevels = sizeof(kNames) / sizeof(kNames[0]);
constexpr Isa kBest = Isa::kAvx512Vbmi;

Isa detect() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2")) return Isa::kAvx512Vbmi;
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
  if (__builtin_cpu_supports("ssse3")) return Isa::kSsse3;
#endif
  return Isa::kPortable;
}

// AMD family 0x19 (Zen 3 and Zen 4) with AVX-512 is Zen 4.
bool detect_split_512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  if (std::strcmp(vendor, "AuthenticAMD") != 0 || !__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned base = a >> 8 & 0xF, family = base == 0xF ? base + (a >> 20 & 0xFF) : base;
  return family == 0x19 && detect() >= Isa::kAvx512;
#else
  return false;
#endif
}

std::atomic<int8_t>& split_override() {  // -1: the CPU's answer
  static std::atomic<int8_t> s{-1};
  return s;
}

// The cap from LAYOUTCHECK_ISA; an unknown value is reported once and ignored.
uint8_t env_cap() {
  const char* v = std::getenv("LAYOUTCHECK_ISA");
  if (v == nullptr || *v == '\0') return static_cast<uint8_t>(kBest);
  Isa isa;
  if (parse_isa(v, &isa)) return static_cast<uint8_t>(isa);
  std::fprintf(stderr,
               "layoutcheck: LAYOUTCHECK_ISA=%s is not one of portable, ssse3, avx2, avx512, avx512vbmi; "
               "using the CPU's best level\n",
               v);
  return static_cast<uint8_t>(kBest);
}

std::atomic<uint8_t>& cap() {
  static std::atomic<uint8_t> c{env_cap()};
  return c;
}

}  // namespace

const char* isa_name(Isa isa) { return kNames[static_cast<uint8_t>(isa)]; }

bool parse_isa(const std::string& text, Isa* out) {
  for (uint8_t i = 0; i < kLevels; ++i) {
    if (text == kNames[i]) {
      *out = static_cast<Isa>(i);
      return true;
    }
  }
  return false;
}

Isa cpu_isa() {
  static const Isa best = detect();
  return best;
}

Isa optimized_isa() {
  const uint8_t c = cap().load(std::memory_order_relaxed);
  const uint8_t best = static_cast<uint8_t>(cpu_isa());
  return static_cast<Isa>(c < best ? c : best);
}

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (uint8_t i = 0; i <= static_cast<uint8_t>(cpu_isa()); ++i) out.push_back(static_cast<Isa>(i));
  return out;
}

bool splits_512bit_ops() {
  static const bool cpu = detect_split_512();
  const int8_t s = split_override().load(std::memory_order_relaxed);
  return s < 0 ? cpu : s != 0;
}

Split512Scope::Split512Scope(bool split) : saved_(split_override().exchange(split ? 1 : 0)) {}
Split512Scope::~Split512Scope() { split_override().store(saved_); }

IsaCapScope::IsaCapScope(Isa c) : saved_(cap().exchange(static_cast<uint8_t>(c))) {}
IsaCapScope::~IsaCapScope() { cap().store(saved_); }

}  // namespace layoutcheck
