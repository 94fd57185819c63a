#include "layoutcheck/impl.h"
#include "layoutcheck/tla_api.h"

namespace layoutcheck {

const Impl* builtin_impl(const std::string& name) {
  if (name == "reference") return &reference_impl();
  if (name == "optimized") return &optimized_impl();
  return nullptr;
}

const TupleApi* tuple_api_named(const std::string& name) {
  if (name == "reference") return &reference_tuple_api();
  if (name == "optimized") return &optimized_tuple_api();
  return nullptr;
}

}  // namespace layoutcheck
