#include "core/router.h"
#include "optimized/families.h"

namespace layoutcheck {

const Impl& optimized_impl() {
  static const FamilyRouter impl("optimized", {
                                                  {"tpu", &tpu_optimized()},
                                                  {"htp", &htp_optimized()},
                                                  {"tla", &tla_optimized()},
                                                  {"nvdla", &nvdla_optimized()},
                                                  {"mge", &mge_optimized()},
                                              });
  return impl;
}

}  // namespace layoutcheck
