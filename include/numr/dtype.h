// Element types. No implicit promotion: ops with mixed dtypes throw DTypeMismatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "numr/half.h"

namespace numr {

enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, U8, Bool };

inline constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                                       DType::I64, DType::I32, DType::U8,  DType::Bool};

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64: return 8;
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
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
constexpr bool is_integral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::U8;
}
constexpr bool is_signed(DType t) { return is_floating(t) || t == DType::I64 || t == DType::I32; }

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
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

// Calls f(T{}) with the C++ type of t (bool for Bool).
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
  }
  return f(float{});
}

}  // namespace numr
