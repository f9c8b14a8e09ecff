// The namespace of src/math, numr::math, holds an inline namespace named after the
// instruction set it is compiled for. These headers are compiled into each per-ISA
// kernel set (after isa.h has switched that set's target on) as well as into the rest
// of the library, and their templates and inline functions become weak symbols, of which
// the linker keeps one copy per name. Under one name for every set, the copy kept could be
// the AVX-512 one, which a CPU without AVX-512 cannot run: the normal sampler's
// libm::cos<double>, called from the AVX2 kernels, was. With a name per set, each set
// calls its own copy. Callers write numr::math::... as before.
#pragma once

#ifdef NUMR_ISA
#define NUMR_MATH_ISA NUMR_ISA
#else
#define NUMR_MATH_ISA generic
#endif

// NUMR_MATH_EXACT_BEGIN / _END enclose formulas that must give the same bits wherever they
// are compiled: the libm of device_libm.h and the normal sampler built on it (the same seed
// gives the same numbers on every backend and instruction set). Within them a * b + c is
// never contracted into a fused multiply-add; where one is meant, the formula calls fma.
// (Contraction is otherwise on: the SIMD kernels' polynomials rely on it.)
#if defined(__clang__)
#define NUMR_MATH_EXACT_BEGIN _Pragma("clang fp contract(off)")
#define NUMR_MATH_EXACT_END _Pragma("clang fp contract(on)")
#elif defined(__GNUC__)
#define NUMR_MATH_EXACT_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC optimize(\"fp-contract=off\")")
#define NUMR_MATH_EXACT_END _Pragma("GCC pop_options")
#else
#define NUMR_MATH_EXACT_BEGIN
#define NUMR_MATH_EXACT_END
#endif
