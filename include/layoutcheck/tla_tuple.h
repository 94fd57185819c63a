/* layoutcheck/tla_tuple.h — a user's IntTuple functions, checkable on their own.
 *
 * catlass-tla-layouts.txt, "IntTuple": rank(IntTuple) is the number of
 * elements, get<I>(IntTuple) the I-th element, depth(IntTuple) the nesting
 * (0 for an integer). A library exports any of these with C linkage and
 * `layoutcheck tuple --lib PATH.so` compares them with the reference:
 *
 *   uint32_t tla_rank(const lc_tuple_node* t, size_t count);
 *   uint32_t tla_depth(const lc_tuple_node* t, size_t count);
 *   const lc_tuple_node* tla_get(const lc_tuple_node* t, size_t count, uint32_t i);
 *
 * An IntTuple crosses the boundary as its nodes in preorder: a tuple of n
 * elements is one node with items = n followed by its elements, each a whole
 * subtree; an integer is one node with items = 0. `count` is the number of
 * nodes of the tuple t points at (t[0] .. t[count - 1]); reading past them is
 * an out-of-bounds access. tla_get returns a pointer to the I-th element's
 * first node inside t, or NULL when I is not below the rank. get<0> of an
 * integer is the integer itself (t); rank of an integer is 1.
 *
 *   (2,(_3,4))  ->  {items 2} {value 2} {items 2} {value 3, static} {value 4}
 *   tla_rank = 2, tla_depth = 2, tla_get(t, 5, 1) = t + 2 (the node of (_3,4))
 *
 * examples/plugins/tla_tuple_example.c is a complete library.
 */
#ifndef LAYOUTCHECK_TLA_TUPLE_H_
#define LAYOUTCHECK_TLA_TUPLE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lc_tuple_node {
  uint32_t items;      /* 0: an integer; n >= 1: a tuple, its n elements follow */
  uint32_t is_static;  /* integers: 1 for Int<N>{} (printed _N), 0 for a runtime integer */
  int64_t value;       /* integers: the value; tuples: 0 */
} lc_tuple_node;

typedef uint32_t (*lc_tuple_rank_fn)(const lc_tuple_node* t, size_t count);
typedef uint32_t (*lc_tuple_depth_fn)(const lc_tuple_node* t, size_t count);
typedef const lc_tuple_node* (*lc_tuple_get_fn)(const lc_tuple_node* t, size_t count, uint32_t i);

#define LC_TUPLE_RANK_SYMBOL "tla_rank"
#define LC_TUPLE_DEPTH_SYMBOL "tla_depth"
#define LC_TUPLE_GET_SYMBOL "tla_get"

#ifdef __cplusplus
}
#endif

#endif /* LAYOUTCHECK_TLA_TUPLE_H_ */
