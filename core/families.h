// The list of families whose layouts are registered (core/registry.cc).
#pragma once

#include <vector>

#include "layoutcheck/layout.h"

namespace layoutcheck {

using SpecAdder = void (*)(std::vector<LayoutSpec>*);
const std::vector<SpecAdder>& family_spec_adders();

// One per family, defined in core/specs_<family>.cc.
void add_tpu_specs(std::vector<LayoutSpec>* specs);
void add_htp_specs(std::vector<LayoutSpec>* specs);
void add_tla_specs(std::vector<LayoutSpec>* specs);
void add_nvdla_specs(std::vector<LayoutSpec>* specs);
void add_mge_specs(std::vector<LayoutSpec>* specs);

}  // namespace layoutcheck

namespace layoutcheck {

// ---- helpers for the registration files (core/registry.cc) ------------------

// An integer parameter with a constant default.
ParamSpec int_param(std::string key, int64_t min, int64_t max, std::string def, std::string doc);
// A uniform integer in [lo, hi].
int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi);
// A case of a registered layout; parameters that do not validate fall back to
// the layout's defaults (generators may draw values out of range).
Case make_case(const std::string& name, const ParamMap& params, DType dtype, Shape shape);

}  // namespace layoutcheck
