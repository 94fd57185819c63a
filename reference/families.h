// The reference implementation of each family (reference/<family>.cc).
#pragma once

#include "layoutcheck/impl.h"

namespace layoutcheck {

const Impl& tpu_reference();
const Impl& htp_reference();
const Impl& tla_reference();
const Impl& nvdla_reference();
const Impl& mge_reference();
const Impl& mge_strided_reference();  // mge.strided

}  // namespace layoutcheck
