#include "core/router.h"
#include "reference/families.h"

namespace layoutcheck {

const Impl& reference_impl() {
  static const FamilyRouter impl("reference", {
                                                  {"tpu", &tpu_reference()},
                                                  {"htp", &htp_reference()},
                                                  {"tla", &tla_reference()},
                                                  {"nvdla", &nvdla_reference()},
                                                  {"mge", &mge_reference()},
                                              });
  return impl;
}

}  // namespace layoutcheck
