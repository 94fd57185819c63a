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

namespace layoutcheck {

ParamSpec int_param(std::string key, int64_t min, int64_t max, std::string def, std::string doc) {
  ParamSpec p;
  p.key = std::move(key);
  p.kind = ParamKind::kInt;
  p.min = min;
  p.max = max;
  p.default_value = [def](const ParamMap&) { return def; };
  p.doc = std::move(doc);
  return p;
}

int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Case make_case(const std::string& name, const ParamMap& params, DType dtype, Shape shape) {
  Case c;
  auto layout = make_layout(name, params);
  c.layout = layout.ok() ? *layout : *make_layout(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

}  // namespace layoutcheck
