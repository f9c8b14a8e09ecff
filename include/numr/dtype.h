// Element types. No implicit promotion: ops with mixed dtypes throw DTypeMismatch.
#pragma once

#include <cstddef>
#include <complex>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include "numr/half.h"

namespace numr {

// Complex64/Complex128 hold (re, im) pairs of F32/F64. Backend kernels see only real
// dtypes: complex ops run on the pair view (view_as_real), see include/numr/complex.h.
enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, U8, Bool, Complex64, Complex128 };

// The real dtypes, which every backend kernel takes.
inline constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                                       DType::I64, DType::I32, DType::U8,  DType::Bool};
inline constexpr DType kComplexDTypes[] = {DType::Complex64, DType::Complex128};
inline constexpr DType kLastDType = DType::Complex128;

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::Complex128: return 16;
    case DType::F64:
    case DType::I64:
    case DType::Complex64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::U8:
    case DType::Bool: return 1;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F64: return "F64";
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::U8: return "U8";
    case DType::Bool: return "Bool";
    case DType::Complex64: return "Complex64";
    case DType::Complex128: return "Complex128";
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
constexpr bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
// The dtype of a complex dtype's parts (F32 for Complex64), and back.
constexpr DType complex_part_dtype(DType t) {
  return t == DType::Complex128 ? DType::F64 : t == DType::Complex64 ? DType::F32 : t;
}
constexpr DType complex_dtype_for(DType part) {
  return part == DType::F64 ? DType::Complex128 : DType::Complex64;
}
constexpr bool is_integral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::U8;
}
constexpr bool is_signed(DType t) {
  return is_floating(t) || is_complex(t) || t == DType::I64 || t == DType::I32;
}

// The type arithmetic runs in: F16/BF16 compute in F32, Bool in U8, others in themselves.
constexpr DType compute_dtype(DType t) {
  if (t == DType::F16 || t == DType::BF16) return DType::F32;
  if (t == DType::Bool) return DType::U8;
  return t;
}

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

// C++ type <-> DType.
template <class T>
struct dtype_of;
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<f16> { static constexpr DType value = DType::F16; };
template <> struct dtype_of<bf16> { static constexpr DType value = DType::BF16; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::Complex64; };
template <> struct dtype_of<std::complex<double>> { static constexpr DType value = DType::Complex128; };
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

// Calls f(T{}) with the C++ type of a real dtype t (bool for Bool); complex dtypes have
// no kernels of their own and are not visited.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F64: return f(double{});
    case DType::F32: return f(float{});
    case DType::F16: return f(f16{});
    case DType::BF16: return f(bf16{});
    case DType::I64: return f(int64_t{});
    case DType::I32: return f(int32_t{});
    case DType::U8: return f(uint8_t{});
    case DType::Bool: return f(bool{});
    case DType::Complex64:
    case DType::Complex128: break;
  }
  throw std::logic_error("visit_dtype: complex dtypes have no element type to visit");
}

}  // namespace numr
