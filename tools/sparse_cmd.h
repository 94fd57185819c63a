// `layoutcheck sparse --lib PATH.so`: a user's own check of where the three
// surfaces of NVDLA sparse-compressed weight (WGS, WMB, compressed weight) live,
// against the reference's nvdla::placement_breaks (tools/sparse_cmd.cc).
//
// The library exports, with C linkage, the function of
// include/layoutcheck/nvdla_surface.h:
//
//   int nvdla_sparse_surfaces_valid(const struct nvdla_sparse_surfaces* s, const char** rule);
//
// It is called, in a child process, the struct alone at the end of a guarded
// page, on boundary placements (every surface's start address and size in the
// residue classes the alignment table tells apart, near 2^64, sizes of 0, and
// surfaces that touch, overlap or contain each other) and on --cases random
// placements drawn from --seed. The verdict must be the reference's, and an
// invalid placement must name a rule it breaks. Each disagreement is printed
// with its placement, the expected and the actual answer, and a repro command
// (--placement). Exit status: 0 the library agrees, 1 it differs, 2 bad input
// or a library that cannot be loaded, crashes, hangs or reads past its struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutcheck/nvdla.h"
#include "tools/cli_args.h"

namespace layoutcheck::cli {

int sparse_main(const Args& a);

// The placements `sparse` asks about: the boundary placements, then `random`
// placements drawn from `seed`.
std::vector<nvdla::SurfacePlacement> sparse_check_inputs(uint64_t seed, uint64_t random);

// "wgs=SIZE@ADDR wmb=SIZE@ADDR data=SIZE@ADDR" (addresses in hex), the form
// --placement and the value oracles' `surfaces` lines read.
std::string placement_text(const nvdla::SurfacePlacement& p);

// Whether the function `name` is one `sparse` checks (nvdla_sparse_surfaces_valid).
bool sparse_function(const std::string& name);

// Whether `sparse` asks about a placement that breaks `rule` and no other one,
// so that a library must name it ("ok": a valid placement).
bool sparse_lib_covers(const std::string& rule);

}  // namespace layoutcheck::cli
