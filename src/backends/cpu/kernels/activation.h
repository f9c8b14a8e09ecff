// Dispatch on a GEMM epilogue's activation, for the per-ISA kernel files (epilogue.cpp,
// own_gemm.cpp); included after isa.h and vec.h.
#pragma once

#include "math/elementwise.h"

namespace numr::cpu::NUMR_ISA {

// Calls f with a functor computing act(x) on vectors of type V.
template <class V, class F>
void with_activation(Activation act, F&& f) {
  using namespace ::numr::math;
  switch (act) {
    case Activation::None: return f([](V x) { return x; });
    case Activation::Relu: return f([](V x) { return relu(x); });
    case Activation::Gelu: return f([](V x) { return gelu(x); });
    case Activation::Silu: return f([](V x) { return silu(x); });
    case Activation::Sigmoid: return f([](V x) { return sigmoid(x); });
    case Activation::Tanh: return f([](V x) { return tanh(x); });
  }
}

}  // namespace numr::cpu::NUMR_ISA
