#include "core/families.h"

namespace layoutcheck {

const std::vector<SpecAdder>& family_spec_adders() {
  static const std::vector<SpecAdder> adders = {
      add_tpu_specs,
      add_htp_specs,
      add_tla_specs,
      add_nvdla_specs,
      add_mge_specs,
  };
  return adders;
}

}  // namespace layoutcheck
