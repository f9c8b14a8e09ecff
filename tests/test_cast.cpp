// cast between every pair of dtypes, against the semantics written down here:
//   float -> float   round to nearest even, once (NaN stays NaN, overflow goes to Inf)
//   int -> float     round to nearest even, once
//   float -> int     truncate toward zero, saturate at the type's range, NaN -> 0
//   int -> int       two's complement wrap-around (keep the low bits)
//   x -> Bool        nonzero (NaN is nonzero, -0 is zero)
//   Bool -> x        0 or 1
// Expected values are computed from exact long double source values (x86's 64-bit
// significand holds every int64 and double), independently of numr's conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

using LD = long double;
static_assert(std::numeric_limits<LD>::digits >= 64, "needs x86 extended long double");

// Rounds finite x to a small binary format, to nearest even; returns the bits.
uint16_t round_small(LD x, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t sign = std::signbit(x) ? uint16_t(1u << (mant + exp_bits)) : uint16_t(0);
  const uint16_t inf = uint16_t(((1u << exp_bits) - 1) << mant);
  if (std::isnan(x)) return uint16_t(inf | (1u << (mant - 1)));
  const LD a = std::fabs(x);
  if (std::isinf(a)) return uint16_t(sign | inf);
  if (a == 0) return sign;
  int e = std::ilogb(a);
  if (e < 1 - bias) e = 1 - bias;
  LD q = std::nearbyint(std::ldexp(a, mant - e));  // default mode: ties to even
  if (q == std::ldexp(LD(1), mant + 1)) {
    q /= 2;
    ++e;
  }
  if (e > bias) return uint16_t(sign | inf);
  if (q < std::ldexp(LD(1), mant)) return uint16_t(sign | uint16_t(q));  // subnormal
  return uint16_t(sign | uint16_t((e + bias) << mant) | uint16_t(q - std::ldexp(LD(1), mant)));
}

// The exact value a dtype stores for candidate c, or false when it cannot hold c as a
// test input (integers: not integral or out of range).
bool representable(LD c, DType t, LD& v) {
  const double d = double(c);
  switch (t) {
    case DType::F64: v = d; return true;
    case DType::F32: v = float(d); return true;
    case DType::F16: v = double(f16(d)); return true;
    case DType::BF16: v = double(bf16(d)); return true;
    // Integers hold no -0: adding +0 turns -0 into +0.
    case DType::I64:
      v = c + 0.0L;
      return std::isfinite(c) && c == std::trunc(c) && c >= -0x1p63L && c < 0x1p63L;
    case DType::I32:
      v = c + 0.0L;
      return std::isfinite(c) && c == std::trunc(c) && c >= -0x1p31L && c < 0x1p31L;
    case DType::U8:
      v = c + 0.0L;
      return std::isfinite(c) && c == std::trunc(c) && c >= 0 && c < 256;
    case DType::Bool: v = c != 0 ? 1 : 0; return c == 0 || c == 1;
    case DType::Complex64:
    case DType::Complex128: return false;  // the real cast table only
  }
  return false;
}

std::vector<LD> candidates() {
  const LD inf = std::numeric_limits<LD>::infinity(), nan = std::numeric_limits<LD>::quiet_NaN();
  return {0.0L,        -0.0L,     1.0L,        -1.0L,   0.5L,        -0.5L,        0.7L,
          -0.7L,       1.5L,      2.5L,        -2.5L,   3.75L,       100.0L,       127.0L,
          128.0L,      -128.0L,   -129.0L,     200.0L,  255.0L,      255.9L,       256.0L,
          257.0L,      -300.0L,   1000.0L,     2049.0L, 65504.0L,    65519.0L,     65520.0L,
          70000.0L,    -70000.0L, 0x1p31L - 1, 0x1p31L, -0x1p31L,    -0x1p31L - 1, 0x1p32L + 5,
          3e9L,        -3e9L,     1e10L,       -1e10L,  0x1p53L + 1, 0x1p62L,      -0x1p63L,
          0x1p63L - 1, 0x1p63L,   1e19L,       -1e19L,  1e20L,       1e30L,        3.4e38L,
          1e39L,       -1e300L,   1e-3L,       6e-8L,   3e-8L,       1e-8L,        1e-40L,
          -1e-45L,     1e-310L,   inf,         -inf,    nan,         -nan};
}

// Values of dtype t for the tests (exact, in the order of candidates()).
std::vector<LD> values_of(DType t) {
  std::vector<LD> out;
  for (LD c : candidates()) {
    LD v;
    if (representable(c, t, v)) out.push_back(v);
  }
  return out;
}

Tensor make_tensor(const std::vector<LD>& vals, DType t, const Shape& shape) {
  return visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    std::vector<unsigned char> bytes(vals.size() * dtype_size(t));
    for (size_t i = 0; i < vals.size(); ++i) {
      T x;
      if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
        x = T(double(vals[i]));
      else
        x = static_cast<T>(vals[i]);
      std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
    return Tensor::from_host(bytes.data(), vals.size(), t, shape, Device::cpu());
  });
}

// Raw element bits of a tensor, widened to 64 bits (row-major).
std::vector<uint64_t> raw_bits(const Tensor& t) {
  const Tensor c = t.contiguous();
  const size_t es = dtype_size(t.dtype());
  std::vector<unsigned char> bytes(size_t(c.numel()) * es);
  if (!bytes.empty())
    c.storage()->backend().copy_to_host(bytes.data(), c.storage()->handle(),
                                        size_t(c.offset()) * es, bytes.size());
  std::vector<uint64_t> out(size_t(c.numel()), 0);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], bytes.data() + i * es, es);
  return out;
}

struct Expect {
  uint64_t bits;
  bool nan;  // any NaN is accepted
};

template <class T>
uint64_t bits_of(T x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));
  return b;
}

Expect expected(LD v, DType src, DType dst) {
  const bool nan = std::isnan(v);
  const bool from_float = is_floating(src);
  auto to_int = [&](LD lo, LD hi, int64_t lo_v, int64_t hi_v, uint64_t mask) -> uint64_t {
    if (from_float) {  // saturate, NaN -> 0
      if (nan) return 0;
      const LD t = std::trunc(v);
      const int64_t r = t <= lo ? lo_v : t >= hi ? hi_v : int64_t(t);
      return uint64_t(r) & mask;
    }
    return uint64_t(int64_t(v)) & mask;  // wrap: keep the low bits
  };
  switch (dst) {
    case DType::F64: return {bits_of(double(v)), nan};
    case DType::F32: return {bits_of(float(v)), nan};
    case DType::F16: return {round_small(v, 10, 5), nan};
    case DType::BF16: return {round_small(v, 7, 8), nan};
    case DType::I64: return {to_int(-0x1p63L, 0x1p63L - 1, INT64_MIN, INT64_MAX, ~0ull), false};
    case DType::I32:
      return {to_int(-0x1p31L, 0x1p31L - 1, INT32_MIN, INT32_MAX, 0xFFFFFFFFull), false};
    case DType::U8: return {to_int(0, 255, 0, 255, 0xFFull), false};
    case DType::Bool: return {uint64_t(nan || v != 0 ? 1 : 0), false};
    case DType::Complex64:
    case DType::Complex128: break;
  }
  return {0, false};
}

bool is_nan_bits(uint64_t b, DType t) {
  switch (t) {
    case DType::F64: return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    case DType::F32: return (b & 0x7FFFFFFFull) > 0x7F800000ull;
    case DType::F16: return (b & 0x7FFFull) > 0x7C00ull;
    case DType::BF16: return (b & 0x7FFFull) > 0x7F80ull;
    default: return false;
  }
}

// Checks cast(x, dst) of a tensor whose row-major values are vals; "" when right.
std::string check_cast(const Tensor& x, const std::vector<LD>& vals, DType dst) {
  const Tensor y = cast(x, dst);
  if (y.dtype() != dst || y.shape() != x.shape()) return "wrong dtype or shape";
  const std::vector<uint64_t> got = raw_bits(y);
  for (size_t i = 0; i < vals.size(); ++i) {
    const Expect e = expected(vals[i], x.dtype(), dst);
    bool ok;
    if (e.nan) {
      ok = is_nan_bits(got[i], dst);  // any NaN payload will do
    } else {
      ok = got[i] == e.bits;
    }
    if (!ok) {
      std::ostringstream os;
      os << x.dtype() << " -> " << dst << " of " << double(vals[i]) << " (element " << i
         << "): got bits 0x" << std::hex << got[i] << ", want 0x" << e.bits;
      return os.str();
    }
  }
  return "";
}

// Every source dtype (the recorded one) to every destination, contiguous and as views.
TEST(ParityCast, EveryPair) {
  test::for_each_case(OpId::cast, test::dtypes_of(OpId::cast), [](DType src, Device) {
    const std::vector<LD> vals = values_of(src);
    const int64_t n = int64_t(vals.size());
    const Tensor flat = make_tensor(vals, src, {n});
    // A strided column and a reversed copy that reads back as vals.
    std::vector<LD> wide(size_t(2 * n), 0), rev(vals.rbegin(), vals.rend());
    for (int64_t i = 0; i < n; ++i) wide[size_t(2 * i + 1)] = vals[size_t(i)];
    const Tensor column = make_tensor(wide, src, {n, 2}).narrow(1, 1, 1);
    const Tensor flipped = make_tensor(rev, src, {n}).flip({0});
    for (DType dst : kAllDTypes)
      for (const Tensor* x : {&flat, &column, &flipped}) {
        const std::string msg = check_cast(*x, vals, dst);
        if (!msg.empty()) return msg;
      }
    // Casting to the same dtype is the tensor itself.
    if (cast(column, src).storage() != column.storage())
      return std::string("same-dtype cast copied");
    return std::string();
  });
}

// A large batch through the multi-threaded, vectorised paths, with a transposed source.
TEST(Cast, LargeTransposedMatchesScalar) {
  const int64_t r = 517, c = 263;
  std::vector<float> v(size_t(r * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((int64_t(i) * 7919 % 20011) - 10005) * 0.37f;
  const Tensor x = Tensor::from_vector<float>(v, {r, c}).transpose(0, 1);  // [c, r]
  for (DType dst :
       {DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8, DType::Bool}) {
    const std::vector<uint64_t> got = raw_bits(cast(x, dst));
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < r; ++j) {
        const Expect e = expected(LD(v[size_t(j * c + i)]), DType::F32, dst);
        ASSERT_EQ(got[size_t(i * r + j)], e.bits) << "F32 -> " << dst << " at " << i << "," << j;
      }
  }
}

// Large transposed views with a batch dim before them, with an offset, and with the batch
// dim between the two transposed ones, cast between dtypes through the transposing walk
// (each source row converted, then transposed in blocks, with partial strips and blocks
// at the edges): each result equals the cast of the view made contiguous first, and that
// copy equals the source read element by element through the view's strides.
TEST(Cast, LargeTransposedViewsEqualContiguousOnes) {
  const Shape shape{3, 131, 257};  // 101001 elements: above the walk's threshold
  const int64_t n = shape_numel(shape);
  for (DType src : {DType::F32, DType::BF16, DType::F64, DType::I32, DType::U8}) {
    std::vector<LD> vals(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = i * 7919 % 20011;
      vals[size_t(i)] = src == DType::U8   ? LD(k % 256)
                        : is_floating(src) ? LD(k - 10005) * 0.375L
                                           : LD(k - 10005);
    }
    const Tensor x = make_tensor(vals, src, shape);
    const std::vector<uint64_t> xb = raw_bits(x);
    const Tensor views[] = {x.permute({0, 2, 1}), x.narrow(2, 5, 250).permute({0, 2, 1}),
                            x.permute({2, 0, 1})};
    for (const Tensor& v : views) {
      const Tensor c = contiguous(v);
      const std::vector<uint64_t> cb = raw_bits(c);
      const Shape& vs = v.shape();
      for (int64_t i = 0; i < v.numel(); ++i) {
        int64_t rest = i, at = v.offset();
        for (int k = int(vs.size()) - 1; k >= 0; --k) {
          at += rest % vs[size_t(k)] * v.strides()[size_t(k)];
          rest /= vs[size_t(k)];
        }
        ASSERT_EQ(cb[size_t(i)], xb[size_t(at)])
            << src << " " << shape_str(vs) << ", element " << i;
      }
      for (DType dst : kAllDTypes) {
        if (dst == src) continue;
        const std::vector<uint64_t> got = raw_bits(cast(v, dst)), want = raw_bits(cast(c, dst));
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(got[i], want[i])
              << src << " -> " << dst << " " << shape_str(vs) << ", element " << i;
      }
    }
  }
}

// Integers above 2^53 must round once to BF16, not through double first:
// 2^62 + 2^54 + 1 is just above the midpoint between two BF16 values.
TEST(Cast, I64ToBF16RoundsOnce) {
  const int64_t x = (int64_t(1) << 62) + (int64_t(1) << 54) + 1;
  const Tensor t = Tensor::from_vector<int64_t>({x, -x}, {2});
  const std::vector<uint64_t> got = raw_bits(cast(t, DType::BF16));
  EXPECT_EQ(got[0], round_small(LD(x), 7, 8));
  EXPECT_EQ(got[0], 0x5E81u);
  EXPECT_EQ(got[1], 0xDE81u);
}

// F32 -> BF16 over a sweep of bit patterns (every 4099th, so that vectors of 16 mix
// magnitudes) and over runs of one class only: normals, subnormals, and 16-value blocks of
// normals with one subnormal. With AVX512-BF16 the vector path narrows with the
// instruction, which flushes subnormals, and hands vectors holding one to the bit pattern
// code: each kind of vector is checked against the rounding written down above, and a
// NaN's sign and quietened payload against the input's.
TEST(Cast, F32ToBF16BitPatterns) {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) bits.push_back(uint32_t(u));
  for (uint32_t u = 0x3F800000u; u < 0x3F800000u + 4096; ++u) bits.push_back(u);  // normals
  for (uint32_t u = 1; u < 4097; ++u) bits.push_back(u * 2039u % 0x00800000u | (u & 1u) << 31);
  for (uint32_t b = 0; b < 256; ++b)
    for (uint32_t l = 0; l < 16; ++l)
      bits.push_back(l == b % 16 ? (b * 16411u + 1u) % 0x00800000u : 0x40490FDBu + b * 977u + l);
  std::vector<float> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * sizeof(float));
  const std::vector<uint64_t> got =
      raw_bits(cast(Tensor::from_vector<float>(v, {int64_t(v.size())}), DType::BF16));
  for (size_t i = 0; i < v.size(); ++i) {
    const uint32_t u = bits[i];
    const uint64_t want =
        std::isnan(v[i]) ? uint64_t((u >> 16) | 0x40u) : uint64_t(round_small(LD(v[i]), 7, 8));
    ASSERT_EQ(got[i], want) << "F32 bits 0x" << std::hex << u << " (element " << std::dec << i
                            << ")";
  }
}

// Casts to F16 and BF16 with results of 8 MiB or more are written with non-temporal stores
// from each thread's first 32-byte boundary on, and a large transposed source is cast in
// the transposing walk, in registers: both equal the same values cast in parts small
// enough for normal stores.
// Scattered bit patterns cover NaNs, infinities and subnormals.
TEST(Cast, LargeNarrowingsEqualSmallOnes) {
  const int64_t rows = 16384, cols = 263;  // 4.3M elements: 8.2 MiB of 2-byte results
  std::vector<float> v(size_t(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) {
    const uint32_t u = uint32_t(i) * 2654435761u;
    std::memcpy(&v[i], &u, sizeof u);
  }
  const Tensor x = Tensor::from_vector<float>(v, {rows, cols});
  const Tensor xt = x.transpose(0, 1);  // [cols, rows]
  for (DType to : {DType::BF16, DType::F16}) {
    const std::vector<uint64_t> whole = raw_bits(cast(x, to)), whole_t = raw_bits(cast(xt, to));
    for (int64_t r0 = 0; r0 < rows; r0 += 1024) {
      const std::vector<uint64_t> part = raw_bits(cast(x.narrow(0, r0, 1024), to));
      for (size_t k = 0; k < part.size(); ++k)
        ASSERT_EQ(whole[size_t(r0 * cols) + k], part[k])
            << to << ", row " << r0 + int64_t(k) / cols;
    }
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t m = std::min<int64_t>(16, cols - c0);
      const std::vector<uint64_t> part = raw_bits(cast(contiguous(xt.narrow(0, c0, m)), to));
      for (size_t k = 0; k < part.size(); ++k)
        ASSERT_EQ(whole_t[size_t(c0 * rows) + k], part[k])
            << to << ", transposed, row " << c0 + int64_t(k) / rows;
    }
  }
}

TEST(Cast, UndefinedTensorThrows) { EXPECT_THROW(cast(Tensor(), DType::F32), InvalidArgument); }

}  // namespace
}  // namespace numr
