// Shapes given as any range of integers. numr's Shape is std::vector<int64_t>; code that
// holds its sizes in std::vector<long long>, std::vector<int>, std::array<size_t, N> or a
// std::span passes them straight to the factories and views that take a shape: those
// entry points have a template overload for any ShapeLike range that converts it with
// to_shape. Brace lists ({2, 3}) keep going to the Shape overloads.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <ranges>
#include <string_view>
#include <type_traits>

#include "numr/error.h"
#include "numr/shape.h"

namespace numr {

// The integer types an extent may have: not bool, not a character type (a std::string is
// not a shape).
template <class V>
concept ExtentType = std::integral<V> && !std::same_as<V, bool> && !std::same_as<V, char> &&
                     !std::same_as<V, wchar_t> && !std::same_as<V, char8_t> &&
                     !std::same_as<V, char16_t> && !std::same_as<V, char32_t>;

// A range of integers other than Shape itself.
template <class R>
concept ShapeLike =
    std::ranges::input_range<R> && ExtentType<std::remove_cvref_t<std::ranges::range_value_t<R>>> &&
    !std::same_as<std::remove_cvref_t<R>, Shape>;

// The Shape holding the same extents; throws InvalidArgument naming `op` for an unsigned
// extent beyond int64_t.
template <ShapeLike R>
Shape to_shape(std::string_view op, const R& extents) {
  using V = std::remove_cvref_t<std::ranges::range_value_t<R>>;
  Shape shape;
  for (const auto& e : extents) {
    const V v = e;
    if constexpr (std::is_unsigned_v<V> && sizeof(V) >= sizeof(int64_t)) {
      if (v > V(std::numeric_limits<int64_t>::max()))
        fail<InvalidArgument>(op, "extent ", v, " does not fit int64_t");
    }
    shape.push_back(int64_t(v));
  }
  return shape;
}

}  // namespace numr
