/* rank, get<I> and depth of an IntTuple (catlass-tla-layouts.txt § IntTuple)
 * as a user's library, for `layoutcheck tuple --lib libtla_tuple_example.so`:
 * each function exported with C linkage and the signature of
 * layoutcheck/tla_tuple.h, over the tuple's nodes in preorder.
 *
 * Built with a define, the same file is a realistic mistake that the check
 * must catch, or a library it must report clearly:
 *   TUPLE_MUTANT_DEPTH_OF_INTEGER_1  depth counts an integer as one level (the document: 0)
 *   TUPLE_MUTANT_GET_SKIPS_ONE_NODE  get<I> steps over each earlier element as one node (right for integers only)
 *   TUPLE_MUTANT_RANK_COUNTS_LEAVES  rank counts the integers of the tuple, not its elements
 *   TUPLE_PARTIAL                    exports only tla_rank
 *   TUPLE_MUTANT_GET_PAST_END        get<I> for I >= rank returns the end of the nodes instead of NULL
 *   TUPLE_READ_PAST                  tla_depth reads one node past the tuple
 *   TUPLE_HANG                       tla_rank never returns
 */
#include <stddef.h>
#include <stdint.h>

#include "layoutcheck/tla_tuple.h"

#define TUPLE_EXPORT __attribute__((visibility("default")))

TUPLE_EXPORT uint32_t tla_rank(const lc_tuple_node* t, size_t count) {
#ifdef TUPLE_HANG
  for (volatile int spin = 1; spin;) {
  }
#endif
#ifdef TUPLE_MUTANT_RANK_COUNTS_LEAVES
  uint32_t leaves = 0;
  size_t k;
  for (k = 0; k < count; ++k) leaves += t[k].items == 0;
  return leaves;
#else
  (void)count;
  return t->items == 0 ? 1 : t->items;
#endif
}

#ifndef TUPLE_PARTIAL
/* The nodes of the subtree starting at t: one, plus those of its elements. */
static size_t subtree_nodes(const lc_tuple_node* t) {
  size_t n = 1;
  uint32_t i;
  for (i = 0; i < t->items; ++i) n += subtree_nodes(t + n);
  return n;
}

static uint32_t depth_of(const lc_tuple_node* t) {
  uint32_t deepest = 0, i;
  size_t at = 1;
  if (t->items == 0) {
#ifdef TUPLE_MUTANT_DEPTH_OF_INTEGER_1
    return 1;
#else
    return 0;
#endif
  }
  for (i = 0; i < t->items; ++i) {
    uint32_t d = depth_of(t + at);
    if (d > deepest) deepest = d;
    at += subtree_nodes(t + at);
  }
  return deepest + 1;
}

TUPLE_EXPORT uint32_t tla_depth(const lc_tuple_node* t, size_t count) {
#ifdef TUPLE_READ_PAST
  volatile int64_t past = t[count].value;
  (void)past;
#else
  (void)count;
#endif
  return depth_of(t);
}

TUPLE_EXPORT const lc_tuple_node* tla_get(const lc_tuple_node* t, size_t count, uint32_t i) {
  size_t at = 1;
  uint32_t k;
  (void)count;
  if (t->items == 0) return i == 0 ? t : NULL; /* an integer is its own element 0 */
#ifdef TUPLE_MUTANT_GET_PAST_END
  if (i >= t->items) return t + count;
#else
  if (i >= t->items) return NULL;
#endif
  for (k = 0; k < i; ++k) {
#ifdef TUPLE_MUTANT_GET_SKIPS_ONE_NODE
    at += 1;
#else
    at += subtree_nodes(t + at);
#endif
  }
  return t + at;
}
#endif
