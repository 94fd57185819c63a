#include "core/router.h"
#include "layoutcheck/byte_rules.h"
#include "reference/families.h"

namespace layoutcheck {

const Impl& reference_impl() {
  static const FamilyRouter impl("reference", {
                                                  {"tpu", &tpu_reference()},
                                                  {"htp", &htp_reference()},
                                                  {"tla", &tla_reference()},
                                                  {"nvdla", &nvdla_reference()},
                                                  {"mge", &mge_reference()},
                                                  {"mge.strided", &mge_strided_reference()},
                                              });
  return impl;
}

Result<ByteRules> byte_rules(const Case& c) { return reference_impl().byte_rules(c); }

}  // namespace layoutcheck
