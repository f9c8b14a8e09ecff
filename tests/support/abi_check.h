// Compile-time comparison of numr's own declarations of a C API with the vendor's header:
// the same arity, and each parameter and the result of the same size. (numr's enums are
// distinct types from the vendor's, so the types themselves cannot be compared.)
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>

namespace numr::test {

template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
  static constexpr size_t arity = sizeof...(A);
};

template <class Ours, class Theirs, size_t... I>
constexpr bool same_arg_sizes(std::index_sequence<I...>) {
  return ((sizeof(std::tuple_element_t<I, typename Signature<Ours>::Args>) ==
           sizeof(std::tuple_element_t<I, typename Signature<Theirs>::Args>)) &&
          ...);
}

template <class Ours, class Theirs>
constexpr bool same_abi() {
  using O = Signature<Ours>;
  using T = Signature<Theirs>;
  if constexpr (O::arity != T::arity) {
    return false;
  } else {
    return sizeof(typename O::Result) == sizeof(typename T::Result) &&
           same_arg_sizes<Ours, Theirs>(std::make_index_sequence<O::arity>{});
  }
}

}  // namespace numr::test
