// `layoutcheck tuple --lib PATH.so`: a user's own IntTuple functions checked
// against the reference (tools/tuple_cmd.cc).
//
// The library exports, with C linkage, any of the functions of
// catlass-tla-layouts.txt § IntTuple with the signatures of
// include/layoutcheck/tla_tuple.h:
//
//   uint32_t tla_rank(const lc_tuple_node* t, size_t count);
//   uint32_t tla_depth(const lc_tuple_node* t, size_t count);
//   const lc_tuple_node* tla_get(const lc_tuple_node* t, size_t count, uint32_t i);
//
// Each one it exports is called, in a child process, on the document's
// IntTuples, every element of them at any depth, and a fixed draw of random
// tuples (up to the notation's 8 levels and 64 integers), the nodes ending at a
// guard page; tla_get for every I below the rank and for I = rank (NULL). The
// answers are compared with the reference's rank, depth and get<I>. Exit
// status: 0 all provided functions agree, 1 one differs, 2 bad input or a
// library that cannot be loaded, crashes or hangs.
#pragma once

#include <string>
#include <vector>

#include "layoutcheck/int_tuple.h"
#include "tools/cli_args.h"

namespace layoutcheck::cli {

int tuple_main(const Args& a);

// The C symbol `tuple` checks for a function of the document's IntTuple and
// Layout queries ("tla_get" for get, shape and stride, which are get of the
// shape and the stride), or nullptr for a name it does not check.
const char* tuple_symbol(const std::string& function);

// The tuples `tuple` calls the functions on: the document's IntTuples, their
// elements at any depth, and a fixed draw of random ones.
std::vector<IntTuple> tuple_check_inputs();

}  // namespace layoutcheck::cli
