// tla_layout.h — TLA layouts with static (compile-time) integers.
//
// The compile-time form of catlass-tla-layouts.txt: an IntTuple is an integer
// (int64_t, dynamic) or Int<N> (static), or a std::tuple of IntTuples; a
// Layout is a (Shape, Stride) pair. Arithmetic on static integers stays
// static, so a fractal layout's inner strides are constants in the copy loops:
//
//   using namespace layoutcheck::tla_opt;
//   auto zn = make_layout(make_shape(make_shape(_4{}, _2{}), make_shape(_4{}, _3{})),
//                         make_stride(make_stride(_4{}, _16{}), make_stride(_1{}, _32{})));
//   crd2offset(std::make_tuple(1, 5), zn.shape(), zn.stride()) == 37
//   static_assert(decltype(cosize(zn))::value == 96);
//   to_string(make_layout(make_shape(_2{}, 4), make_stride(_12{}, _1{}))) == "(_2,4):(_12,_1)"
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace layoutcheck {
namespace tla_opt {

template <int64_t N>
using Int = std::integral_constant<int64_t, N>;
using _0 = Int<0>;
using _1 = Int<1>;
using _2 = Int<2>;
using _3 = Int<3>;
using _4 = Int<4>;
using _8 = Int<8>;
using _12 = Int<12>;
using _16 = Int<16>;
using _32 = Int<32>;
using _64 = Int<64>;

template <class T>
struct is_static : std::false_type {};
template <int64_t N>
struct is_static<std::integral_constant<int64_t, N>> : std::true_type {};
template <class T>
inline constexpr bool is_static_v = is_static<std::decay_t<T>>::value;

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<std::tuple<Ts...>> : std::true_type {};
template <class T>
inline constexpr bool is_tuple_v = is_tuple<std::decay_t<T>>::value;

template <class... Ts>
constexpr auto make_shape(Ts... ts) { return std::tuple<Ts...>(ts...); }
template <class... Ts>
constexpr auto make_stride(Ts... ts) { return std::tuple<Ts...>(ts...); }
template <class... Ts>
constexpr auto make_coord(Ts... ts) { return std::tuple<Ts...>(ts...); }

template <class Shape, class Stride>
class Layout {
 public:
  constexpr Layout(Shape shape, Stride stride) : shape_(shape), stride_(stride) {}
  constexpr const Shape& shape() const { return shape_; }
  constexpr const Stride& stride() const { return stride_; }

 private:
  Shape shape_;
  Stride stride_;
};

template <class Shape, class Stride>
constexpr auto make_layout(Shape shape, Stride stride) { return Layout<Shape, Stride>(shape, stride); }

// ---- static-preserving arithmetic ------------------------------------------
template <class A, class B>
constexpr auto mul(A a, B b) {
  if constexpr (is_static_v<A> && is_static_v<B>) return Int<A::value * B::value>{};
  else return static_cast<int64_t>(a) * static_cast<int64_t>(b);
}
template <class A, class B>
constexpr auto add(A a, B b) {
  if constexpr (is_static_v<A> && is_static_v<B>) return Int<A::value + B::value>{};
  else return static_cast<int64_t>(a) + static_cast<int64_t>(b);
}
template <class A>
constexpr auto fold_mul(A a) { return a; }
template <class A, class B, class... R>
constexpr auto fold_mul(A a, B b, R... r) { return fold_mul(mul(a, b), r...); }
template <class A>
constexpr auto fold_add(A a) { return a; }
template <class A, class B, class... R>
constexpr auto fold_add(A a, B b, R... r) { return fold_add(add(a, b), r...); }

// ---- rank, depth, get, size ------------------------------------------------
template <class T>
constexpr int64_t rank(const T&) {
  if constexpr (is_tuple_v<T>) return static_cast<int64_t>(std::tuple_size_v<std::decay_t<T>>);
  else return 1;
}

template <class T>
constexpr int64_t depth(const T& t) {
  if constexpr (is_tuple_v<T>) {
    return std::apply([](const auto&... e) {
      int64_t d = 0;
      ((d = depth(e) > d ? depth(e) : d), ...);
      return d + 1;
    }, t);
  } else {
    (void)t;
    return 0;
  }
}

template <class T>
constexpr decltype(auto) get(const T& t) { return t; }
template <size_t I, size_t... Is, class T>
constexpr decltype(auto) get(const T& t) {
  if constexpr (is_tuple_v<T>) return get<Is...>(std::get<I>(t));
  else {
    static_assert(I == 0, "get<I> of an integer: only I = 0");
    return get<Is...>(t);
  }
}

template <class T>
constexpr auto size(const T& t) {
  if constexpr (is_tuple_v<T>) {
    return std::apply([](const auto&... e) { return fold_mul(size(e)...); }, t);
  } else {
    return t;
  }
}
template <class Shape, class Stride>
constexpr auto size(const Layout<Shape, Stride>& l) { return size(l.shape()); }

// ---- crd2offset --------------------------------------------------------------
// A tuple coordinate sums its parts; an integer against a nested mode splits
// colexicographically (first sub-mode fastest); an integer against an
// integer mode is coordinate * stride.
template <class Coord, class Shape, class Stride>
constexpr auto crd2offset(const Coord& c, const Shape& s, const Stride& d);

namespace detail {
template <class Coord, class Shape, class Stride, size_t... I>
constexpr auto tuple_offset(const Coord& c, const Shape& s, const Stride& d, std::index_sequence<I...>) {
  return fold_add(crd2offset(std::get<I>(c), std::get<I>(s), std::get<I>(d))...);
}
template <size_t I, class Shape, class Stride>
constexpr int64_t split_offset(int64_t c, const Shape& s, const Stride& d) {
  if constexpr (I == std::tuple_size_v<Shape>) {
    (void)c, (void)s, (void)d;
    return 0;
  } else {
    const int64_t n = static_cast<int64_t>(size(std::get<I>(s)));
    return static_cast<int64_t>(crd2offset(c % n, std::get<I>(s), std::get<I>(d))) +
           split_offset<I + 1>(c / n, s, d);
  }
}
}  // namespace detail

template <class Coord, class Shape, class Stride>
constexpr auto crd2offset(const Coord& c, const Shape& s, const Stride& d) {
  if constexpr (is_tuple_v<Coord>) {
    return detail::tuple_offset(c, s, d, std::make_index_sequence<std::tuple_size_v<Coord>>{});
  } else if constexpr (is_tuple_v<Shape>) {
    return detail::split_offset<0>(static_cast<int64_t>(c), s, d);
  } else {
    (void)s;
    return mul(c, d);
  }
}

template <class Shape, class Stride, class Coord>
constexpr auto crd2offset(const Coord& c, const Layout<Shape, Stride>& l) {
  return crd2offset(c, l.shape(), l.stride());
}

// cosize: 1 + the sum over the integers of (extent - 1) * stride.
namespace detail {
template <class Shape, class Stride>
constexpr auto span(const Shape& s, const Stride& d) {
  if constexpr (is_tuple_v<Shape>) {
    return std::apply([&](const auto&... se) {
      return std::apply([&](const auto&... de) { return fold_add(Int<0>{}, span(se, de)...); }, d);
    }, s);
  } else {
    return mul(add(s, Int<-1>{}), d);
  }
}
}  // namespace detail

template <class Shape, class Stride>
constexpr auto cosize(const Layout<Shape, Stride>& l) {
  return add(detail::span(l.shape(), l.stride()), Int<1>{});
}

// ---- MakeLayoutTile ------------------------------------------------------------
// New shape from the tile, strides kept: an integer mode takes the tile
// extent; a nested mode keeps all its extents but the outermost (last), which
// becomes ceil(tile / product of the others).
namespace detail {
template <class Mode>
constexpr auto tile_mode(const Mode& m, int64_t t, int64_t inner);

template <class Mode, size_t... I>
constexpr auto tile_tuple(const Mode& m, int64_t t, int64_t inner, std::index_sequence<I...>) {
  constexpr size_t last = sizeof...(I);
  const int64_t below = inner * fold_mul(int64_t{1}, static_cast<int64_t>(size(std::get<I>(m)))...);
  return std::make_tuple(std::get<I>(m)..., tile_mode(std::get<last>(m), t, below));
}

template <class Mode>
constexpr auto tile_mode(const Mode& m, int64_t t, int64_t inner) {
  if constexpr (is_tuple_v<Mode>) {
    return tile_tuple(m, t, inner, std::make_index_sequence<std::tuple_size_v<Mode> - 1>{});
  } else {
    (void)m;
    return (t + inner - 1) / inner;
  }
}

template <class Shape, class Tile, size_t... I>
constexpr auto tile_shape(const Shape& s, const Tile& tile, std::index_sequence<I...>) {
  return std::make_tuple(tile_mode(std::get<I>(s), static_cast<int64_t>(std::get<I>(tile)), 1)...);
}
}  // namespace detail

template <class Shape, class Stride, class Tile>
constexpr auto make_layout_tile(const Layout<Shape, Stride>& l, const Tile& tile) {
  static_assert(std::tuple_size_v<Tile> == std::tuple_size_v<Shape>, "one tile extent per mode");
  return make_layout(detail::tile_shape(l.shape(), tile, std::make_index_sequence<std::tuple_size_v<Shape>>{}),
                     l.stride());
}

// ---- text ------------------------------------------------------------------------
template <class T>
std::string to_string(const T& t) {
  if constexpr (is_tuple_v<T>) {
    std::string out = "(";
    std::apply([&](const auto&... e) {
      size_t i = 0;
      ((out += (i++ ? "," : "") + to_string(e)), ...);
    }, t);
    return out + ")";
  } else if constexpr (is_static_v<T>) {
    return "_" + std::to_string(T::value);
  } else {
    return std::to_string(static_cast<int64_t>(t));
  }
}
template <class Shape, class Stride>
std::string to_string(const Layout<Shape, Stride>& l) {
  return to_string(l.shape()) + ":" + to_string(l.stride());
}

}  // namespace tla_opt
}  // namespace layoutcheck
