#include "layoutcheck/impl.h"

namespace layoutcheck {

const Impl* builtin_impl(const std::string& name) {
  if (name == "reference") return &reference_impl();
  if (name == "optimized") return &optimized_impl();
  return nullptr;
}

}  // namespace layoutcheck
