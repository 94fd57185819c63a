// The optimized implementation of each family (optimized/<family>.cc).
#pragma once

#include "layoutcheck/impl.h"

namespace layoutcheck {

const Impl& tpu_optimized();
const Impl& htp_optimized();
const Impl& tla_optimized();
const Impl& nvdla_optimized();
const Impl& mge_optimized();
const Impl& mge_strided_optimized();  // mge.strided

}  // namespace layoutcheck
