// The real type behind an element type: T itself, or the part type of std::complex<T>.
#pragma once

#include <complex>
#include <type_traits>

namespace numr {

template <class T>
struct RealOf {
  using type = T;
};
template <class T>
struct RealOf<std::complex<T>> {
  using type = T;
};
template <class T>
using real_of = typename RealOf<T>::type;
template <class T>
inline constexpr bool is_complex_type = !std::is_same_v<T, real_of<T>>;

}  // namespace numr
