#include "core/router.h"
#include "reference/families.h"

namespace layoutcheck {

const Impl& reference_impl() {
  static const FamilyRouter impl("reference", {
                                                  {"tpu", &tpu_reference()},
                                                  {"tla", &tla_reference()},
                                                  {"mge", &mge_reference()},
                                              });
  return impl;
}

}  // namespace layoutcheck
