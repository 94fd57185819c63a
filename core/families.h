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
