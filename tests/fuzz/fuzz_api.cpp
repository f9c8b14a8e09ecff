// Random calls to numr's public ops on random shapes, dtypes and views, valid and invalid.
// Valid calls must match the host reference of fuzz/host_ref.h; invalid ones must throw a
// numr::Error whose message starts with '['. Anything else prints the seed, the iteration
// and the call, and exits non-zero.
//   numr_fuzz --seed S (--iterations N | --seconds T)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/backend.h"
#include "fuzz/host_ref.h"

// Sanitizer runtimes call this back before they end the process with a report.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace numr::fuzz {
namespace {

using test::accumulation_tolerance;
using test::gemm_tolerance;
using test::tolerance_for;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// What a fuzzed call did wrong; caught by the driver.
struct Mismatch {
  std::string what;
};

int64_t g_valid_calls = 0, g_invalid_calls = 0;

enum class Values { Wide, Unit, Small };  // [-4, 4] with specials, [-1, 1], small integers

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}
  std::ostringstream desc;  // the call, for the reproducer

  void one_call();

 private:
  std::mt19937_64 rng_;

  int64_t pick(int64_t lo, int64_t hi) {  // uniform in [lo, hi]
    return lo + int64_t(rng_() % uint64_t(hi - lo + 1));
  }
  bool chance(int percent) { return pick(0, 99) < percent; }
  DType any_dtype() { return kAllDTypes[pick(0, 7)]; }
  DType float_dtype() { return kAllDTypes[pick(0, 3)]; }

  Shape random_shape(int max_dims = 4);
  double random_value(DType t, Values kind);
  Host random_host(const Shape& s, DType t, Values kind);
  // A tensor with h's logical values, built as a random view of another tensor. Only the
  // outermost view may be a broadcast, which rewrites h to values that repeat.
  Tensor as_view(Host& h, int depth, bool outer);
  std::pair<Tensor, Host> input(const Shape& s, DType t, Values kind) {
    Host h = random_host(s, t, kind);
    desc << " in" << describe(s) << dtype_name(t);
    Tensor x = as_view(h, 2, true);
    return {x, h};
  }
  // A shape that broadcasts with s (or, with `bad`, one that does not if possible).
  Shape broadcast_partner(const Shape& s);

  // Runs the call: valid calls must return and match check(); invalid ones must throw a
  // numr::Error with a bracketed prefix.
  void expect(bool valid, const std::function<void()>& call);
  // Called right after numr returns, before the reference runs on the arguments.
  void returned() const {
    if (!valid_) throw Mismatch{"invalid call returned normally"};
  }
  bool valid_ = true;

  void fuzz_unary();
  void fuzz_binary();
  void fuzz_scalar();
  void fuzz_where_clamp();
  void fuzz_reduce();
  void fuzz_along_dim();
  void fuzz_matmul();
  void fuzz_view();
  void fuzz_cast();
  void fuzz_cat_stack();
};

void check(const Tensor& got, const Host& ref, const Tolerance& tol) {
  const std::string msg = compare(got, ref, tol);
  if (!msg.empty()) throw Mismatch{msg};
}

Shape Fuzzer::random_shape(int max_dims) {
  static const int64_t extents[] = {0, 1, 1, 2, 3, 4, 5, 7};
  // Now and then extents past the kernels' vector widths, with tails.
  static const int64_t wide[] = {8, 16, 17, 33, 65};
  Shape s(size_t(pick(0, max_dims)));
  for (auto& e : s) e = chance(8) ? wide[pick(0, 4)] : extents[pick(chance(10) ? 0 : 1, 7)];
  // The reference loops are quadratic in places: keep tensors small.
  while (numel_of(s) > 1200)
    for (auto& e : s) e = std::max<int64_t>(1, e / 2);
  return s;
}

double Fuzzer::random_value(DType t, Values kind) {
  switch (t) {
    case DType::Bool: return double(pick(0, 1));
    case DType::U8: return kind == Values::Small ? double(pick(0, 5)) : double(pick(0, 255));
    case DType::I32:
      if (kind == Values::Wide && chance(5)) return chance(50) ? 2147483647.0 : -2147483648.0;
      return double(pick(kind == Values::Small ? -3 : -50, kind == Values::Small ? 3 : 50));
    case DType::I64: return double(pick(kind == Values::Small ? -3 : -50, kind == Values::Small ? 3 : 50));
    default: break;
  }
  if (kind == Values::Wide && chance(8)) {
    const double specials[] = {kNaN, kInf, -kInf, 0.0, -0.0, 1e10, -3e38};
    return round_to(specials[pick(0, 6)], t);
  }
  const double r = double(rng_() >> 11) * 0x1p-53;  // [0, 1)
  const double x = kind == Values::Wide ? -4.0 + 8.0 * r : -1.0 + 2.0 * r;
  return round_to(x, t);
}

Host Fuzzer::random_host(const Shape& s, DType t, Values kind) {
  Host h{s, t, std::vector<double>(size_t(numel_of(s)))};
  for (auto& x : h.v) x = random_value(t, kind);
  return h;
}

Tensor Fuzzer::as_view(Host& h, int depth, bool outer) {
  const size_t nd = h.shape.size();
  int how = depth == 0 ? 0 : int(pick(0, 5));
  if (how == 4 && !outer) how = 0;
  if (how == 0 || (nd == 0 && how != 4)) return to_tensor(h);
  Shape base_shape = h.shape;
  HostView view;
  switch (how) {
    case 1: {  // transpose of the transposed values
      const int64_t a = pick(0, int64_t(nd) - 1), b = pick(0, int64_t(nd) - 1);
      std::swap(base_shape[size_t(a)], base_shape[size_t(b)]);
      view = identity_view(h.shape);
      std::swap(view.strides[size_t(a)], view.strides[size_t(b)]);
      view.shape = base_shape;
      desc << "{transpose " << a << "," << b << "}";
      Host base = gather(h, view);
      return as_view(base, depth - 1, false).transpose(a, b);
    }
    case 2: {  // narrow of a larger tensor
      const int64_t d = pick(0, int64_t(nd) - 1), before = pick(0, 2), after = pick(0, 2);
      base_shape[size_t(d)] += before + after;
      Host big{base_shape, h.dtype, {}};
      Host filler = random_host(base_shape, h.dtype, Values::Wide);
      big.v = filler.v;
      for_each_index(h.shape, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> j = idx;
        j[size_t(d)] += before;
        big.v[size_t(flat_index(base_shape, j))] = h.v[size_t(flat_index(h.shape, idx))];
      });
      desc << "{narrow " << d << "," << before << "}";
      return as_view(big, depth - 1, false).narrow(d, before, h.shape[size_t(d)]);
    }
    case 3: {  // flip of the flipped values
      std::vector<int64_t> dims;
      for (size_t d = 0; d < nd; ++d)
        if (chance(50)) dims.push_back(int64_t(d) - (chance(50) ? int64_t(nd) : 0));
      view = identity_view(h.shape);
      for (int64_t dim : dims) {
        const size_t d = size_t(dim < 0 ? dim + int64_t(nd) : dim);
        if (h.shape[d] > 0) view.offset += (h.shape[d] - 1) * view.strides[d];
        view.strides[d] = -view.strides[d];
      }
      desc << "{flip}";
      Host base = gather(h, view);
      return as_view(base, depth - 1, false).flip(dims);
    }
    case 4: {  // broadcast: every value of a broadcast dim must be the same
      Shape small = h.shape;
      for (size_t d = 0; d < nd; ++d)
        if (chance(40)) small[d] = 1;
      HostView pick_first = identity_view(h.shape);
      pick_first.shape = small;
      // An empty h (a 1 broadcast to 0) has no values to take: any will do.
      Host s = h.v.empty() ? random_host(small, h.dtype, Values::Wide) : gather(h, pick_first);
      // The result is s broadcast: rewrite h's values so the test's reference agrees.
      for_each_index(h.shape, [&](const std::vector<int64_t>& idx) {
        h.v[size_t(flat_index(h.shape, idx))] = at_broadcast(s, idx);
      });
      desc << "{broadcast from " << describe(small) << "}";
      return as_view(s, depth - 1, false).broadcast_to(h.shape);
    }
    default: {  // permute
      std::vector<int64_t> perm(nd);
      for (size_t i = 0; i < nd; ++i) perm[i] = int64_t(i);
      std::shuffle(perm.begin(), perm.end(), rng_);
      // base[perm[i]] = shape[i]; base's values, gathered, put h's back in place.
      Shape b(nd);
      for (size_t i = 0; i < nd; ++i) b[size_t(perm[i])] = h.shape[i];
      view = identity_view(h.shape);
      HostView inv{b, Strides(nd), 0};
      for (size_t i = 0; i < nd; ++i) inv.strides[size_t(perm[i])] = view.strides[i];
      desc << "{permute}";
      Host base = gather(h, inv);
      return as_view(base, depth - 1, false).permute(perm);
    }
  }
}

Shape Fuzzer::broadcast_partner(const Shape& s) {
  Shape out(s.begin() + pick(0, int64_t(s.size())), s.end());
  for (auto& e : out)
    if (chance(25)) e = 1;
  if (chance(15)) out.insert(out.begin(), pick(1, 3));
  return out;
}

void Fuzzer::expect(bool valid, const std::function<void()>& call) {
  desc << (valid ? " [valid]" : " [invalid]");
  valid_ = valid;
  ++(valid ? g_valid_calls : g_invalid_calls);
  try {
    call();
  } catch (const Mismatch&) {
    throw;
  } catch (const Error& e) {
    if (valid) throw Mismatch{std::string("valid call threw: ") + e.what()};
    if (e.what()[0] != '[') throw Mismatch{std::string("error without an [op] prefix: ") + e.what()};
    return;
  }
  if (!valid) throw Mismatch{"invalid call returned normally"};
}

// ---- elementwise ----

struct UnaryOp {
  const char* name;
  Tensor (*fn)(const Tensor&);
  double (*ref)(double);
  bool floats_only;
};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double relu_ref(double x) { return std::isnan(x) ? x : x > 0 ? x : 0.0; }
double sign_ref(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

const UnaryOp kUnary[] = {
    {"neg", [](const Tensor& x) { return neg(x); }, [](double x) { return -x; }, false},
    {"abs", [](const Tensor& x) { return abs(x); }, [](double x) { return std::fabs(x); }, false},
    {"sign", [](const Tensor& x) { return sign(x); }, sign_ref, false},
    {"square", [](const Tensor& x) { return square(x); }, [](double x) { return x * x; }, false},
    {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }, true},
    {"exp", [](const Tensor& x) { return exp(x); }, [](double x) { return std::exp(x); }, true},
    {"log", [](const Tensor& x) { return log(x); }, [](double x) { return std::log(x); }, true},
    {"sin", [](const Tensor& x) { return sin(x); }, [](double x) { return std::sin(x); }, true},
    {"cos", [](const Tensor& x) { return cos(x); }, [](double x) { return std::cos(x); }, true},
    {"tanh", [](const Tensor& x) { return tanh(x); }, [](double x) { return std::tanh(x); }, true},
    {"floor", [](const Tensor& x) { return floor(x); }, [](double x) { return std::floor(x); }, true},
    {"ceil", [](const Tensor& x) { return ceil(x); }, [](double x) { return std::ceil(x); }, true},
    {"round", [](const Tensor& x) { return round(x); }, [](double x) { return std::nearbyint(x); }, true},
    {"trunc", [](const Tensor& x) { return trunc(x); }, [](double x) { return std::trunc(x); }, true},
    {"recip", [](const Tensor& x) { return recip(x); }, [](double x) { return 1.0 / x; }, true},
    {"relu", [](const Tensor& x) { return relu(x); }, relu_ref, true},
    {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, sigmoid_ref, true},
};

// Integer results of neg/abs/square wrap like two's complement.
double int_unary(const char* name, double x, DType t) {
  const uint64_t u = uint64_t(int64_t(x));
  if (!std::strcmp(name, "neg")) return wrap_to(t, 0 - u);
  if (!std::strcmp(name, "abs")) return wrap_to(t, int64_t(x) < 0 ? 0 - u : u);
  if (!std::strcmp(name, "square")) return wrap_to(t, u * u);
  return sign_ref(x);
}

void Fuzzer::fuzz_unary() {
  const bool pred = chance(15);
  const DType t = any_dtype();
  const Shape s = random_shape();
  if (pred) {
    const int which = int(pick(0, 2));
    const char* names[] = {"isnan", "isinf", "logical_not"};
    desc << names[which];
    auto [x, h] = input(s, t, Values::Wide);
    const bool valid = which == 2 || is_floating(t);
    expect(valid, [&] {
      const Tensor got = which == 0 ? isnan(x) : which == 1 ? isinf(x) : logical_not(x);
      returned();
      Host ref{s, DType::Bool, {}};
      for (double v : h.v)
        ref.v.push_back(which == 0 ? std::isnan(v) : which == 1 ? std::isinf(v) : v == 0.0);
      check(got, ref, tolerance_for(DType::Bool));
    });
    return;
  }
  const UnaryOp& op = kUnary[pick(0, std::size(kUnary) - 1)];
  desc << op.name;
  auto [x, h] = input(s, t, Values::Wide);
  const bool valid = is_floating(t) || (!op.floats_only && is_signed(t));
  expect(valid, [&] {
    const Tensor got = op.fn(x);
    returned();
    Host ref{s, t, {}};
    for (double v : h.v) ref.v.push_back(is_floating(t) ? op.ref(v) : int_unary(op.name, v, t));
    check(got, ref, tolerance_for(t));
  });
}

enum class Kind { Arith, Float, Compare, Logical };
struct BinaryOp {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  Kind kind;
};

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : a > b ? a : b; }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : a < b ? a : b; }

const BinaryOp kBinary[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, Kind::Arith},
    {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, Kind::Arith},
    {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, Kind::Arith},
    {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, Kind::Arith},
    {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, Kind::Arith},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, Kind::Float},
    {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, Kind::Float},
    {"atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, Kind::Float},
    {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }, Kind::Compare},
    {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }, Kind::Compare},
    {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }, Kind::Compare},
    {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }, Kind::Compare},
    {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }, Kind::Compare},
    {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }, Kind::Compare},
    {"logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }, Kind::Logical},
    {"logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }, Kind::Logical},
    {"logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }, Kind::Logical},
};

double binary_ref(const BinaryOp& op, double a, double b, DType t) {
  const std::string n = op.name;
  if (op.kind == Kind::Compare) {
    if (n == "eq") return a == b;
    if (n == "ne") return a != b;
    if (n == "lt") return a < b;
    if (n == "le") return a <= b;
    if (n == "gt") return a > b;
    return a >= b;
  }
  if (op.kind == Kind::Logical) {
    const bool x = a != 0.0 || std::isnan(a), y = b != 0.0 || std::isnan(b);
    return n == "logical_and" ? x && y : n == "logical_or" ? x || y : x != y;
  }
  if (n == "maximum") return nan_max(a, b);
  if (n == "minimum") return nan_min(a, b);
  if (!is_floating(t)) {
    const uint64_t x = uint64_t(int64_t(a)), y = uint64_t(int64_t(b));
    return wrap_to(t, n == "add" ? x + y : n == "sub" ? x - y : x * y);
  }
  if (n == "add") return a + b;
  if (n == "sub") return a - b;
  if (n == "mul") return a * b;
  if (n == "div") return a / b;
  if (n == "pow") return std::pow(a, b);
  return std::atan2(a, b);
}

void Fuzzer::fuzz_binary() {
  const BinaryOp& op = kBinary[pick(0, std::size(kBinary) - 1)];
  const DType t = any_dtype();
  DType tb = chance(8) ? any_dtype() : t;
  Shape sa = random_shape();
  Shape sb = chance(8) ? random_shape() : broadcast_partner(sa);
  if (chance(50)) std::swap(sa, sb);
  desc << op.name;
  auto [a, ha] = input(sa, t, Values::Wide);
  auto [b, hb] = input(sb, tb, Values::Wide);
  Shape out;
  const bool shapes_ok = broadcast(sa, sb, out);
  const bool dtype_ok = op.kind == Kind::Compare || op.kind == Kind::Logical ? true
                        : op.kind == Kind::Float                            ? is_floating(t)
                                                                            : t != DType::Bool;
  expect(shapes_ok && dtype_ok && t == tb, [&] {
    const Tensor got = op.fn(a, b);
    returned();
    const bool to_bool = op.kind == Kind::Compare || op.kind == Kind::Logical;
    Host ref{out, to_bool ? DType::Bool : t, {}};
    for_each_index(out, [&](const std::vector<int64_t>& idx) {
      ref.v.push_back(binary_ref(op, at_broadcast(ha, idx), at_broadcast(hb, idx), t));
    });
    check(got, ref, tolerance_for(ref.dtype));
  });
}

void Fuzzer::fuzz_scalar() {
  const int which = int(pick(0, 5));
  const char* names[] = {"add_scalar", "sub_scalar", "mul_scalar", "rsub_scalar", "div_scalar",
                         "pow_scalar"};
  const DType t = any_dtype();
  const Shape s = random_shape();
  const double scalars[] = {-2, -1, -0.5, 0, 0.25, 1, 1.5, 3, 300, kNaN, kInf};
  const double c = scalars[pick(0, std::size(scalars) - 1)];
  desc << names[which] << " s=" << c;
  auto [x, h] = input(s, t, Values::Wide);
  bool valid = which >= 4 ? is_floating(t) : t != DType::Bool;
  if (valid && !is_floating(t)) {
    const double end = t == DType::U8 ? 256 : t == DType::I32 ? 0x1p31 : 0x1p63;
    const double lo = t == DType::U8 ? 0 : -end;
    valid = c == std::trunc(c) && c >= lo && c < end;
  }
  expect(valid, [&] {
    const Tensor got = which == 0   ? add_scalar(x, c)
                       : which == 1 ? sub_scalar(x, c)
                       : which == 2 ? mul_scalar(x, c)
                       : which == 3 ? rsub_scalar(x, c)
                       : which == 4 ? div_scalar(x, c)
                                    : pow_scalar(x, c);
    returned();
    Host ref{s, t, {}};
    for (double v : h.v) {
      if (!is_floating(t)) {
        const uint64_t a = uint64_t(int64_t(v)), b = uint64_t(int64_t(c));
        ref.v.push_back(wrap_to(t, which == 0 ? a + b : which == 1 ? a - b : which == 2 ? a * b : b - a));
      } else {
        ref.v.push_back(which == 0   ? v + c
                        : which == 1 ? v - c
                        : which == 2 ? v * c
                        : which == 3 ? c - v
                        : which == 4 ? v / c
                                     : std::pow(v, c));
      }
    }
    check(got, ref, tolerance_for(t));
  });
}

void Fuzzer::fuzz_where_clamp() {
  const DType t = any_dtype();
  if (chance(50)) {
    const Shape s = random_shape();
    const Shape sc = chance(10) ? random_shape() : broadcast_partner(s);
    const Shape sy = broadcast_partner(s);
    const DType tc = chance(10) ? any_dtype() : DType::Bool;
    const DType ty = chance(8) ? any_dtype() : t;
    desc << "where_cond";
    auto [c, hc] = input(sc, tc, Values::Wide);
    auto [x, hx] = input(s, t, Values::Wide);
    auto [y, hy] = input(sy, ty, Values::Wide);
    Shape o1, out;
    const bool ok = broadcast(sc, s, o1) && broadcast(o1, sy, out);
    expect(ok && tc == DType::Bool && ty == t, [&] {
      const Tensor got = where_cond(c, x, y);
      returned();
      Host ref{out, t, {}};
      for_each_index(out, [&](const std::vector<int64_t>& idx) {
        ref.v.push_back(at_broadcast(hc, idx) != 0 ? at_broadcast(hx, idx) : at_broadcast(hy, idx));
      });
      check(got, ref, tolerance_for(t));
    });
    return;
  }
  const double bounds[] = {-2, -0.5, 0, 1, 2.5, 3, 100, kNaN, kInf, -kInf};
  std::optional<double> lo, hi;
  if (chance(70)) lo = bounds[pick(0, std::size(bounds) - 1)];
  if (chance(70)) hi = bounds[pick(0, std::size(bounds) - 1)];
  const Shape s = random_shape();
  desc << "clamp lo=" << (lo ? *lo : -999) << " hi=" << (hi ? *hi : 999);
  auto [x, h] = input(s, t, Values::Wide);
  auto fits = [&](std::optional<double> b) {
    if (!b || is_floating(t)) return true;
    const double end = t == DType::U8 ? 256 : t == DType::I32 ? 0x1p31 : 0x1p63;
    return *b == std::trunc(*b) && *b >= (t == DType::U8 ? 0 : -end) && *b < end;
  };
  const bool valid = t != DType::Bool && !(lo && std::isnan(*lo)) && !(hi && std::isnan(*hi)) &&
                     !(lo && hi && *lo > *hi) && fits(lo) && fits(hi);
  expect(valid, [&] {
    const Tensor got = clamp(x, lo, hi);
    returned();
    Host ref{s, t, {}};
    for (double v : h.v) {
      double r = v;
      if (lo) r = nan_max(r, *lo);
      if (hi) r = nan_min(r, *hi);
      ref.v.push_back(r);
    }
    check(got, ref, tolerance_for(t));
  });
}

// ---- reductions ----

void Fuzzer::fuzz_reduce() {
  const char* names[] = {"sum", "mean", "max", "min", "prod", "any", "all",
                         "argmax", "argmin", "var", "std", "logsumexp"};
  const int which = int(pick(0, 11));
  const std::string name = names[which];
  const DType t = any_dtype();
  const Shape s = random_shape();
  const int64_t nd = int64_t(s.size());
  const bool arg = name == "argmax" || name == "argmin";
  const bool smooth = name == "var" || name == "std" || name == "logsumexp";
  // Reductions get values in [-1, 1] (the accumulation tolerance's assumption), with
  // specials where they have one documented answer.
  auto [x, h] = input(s, t, smooth || name == "sum" || name == "mean" ? Values::Unit
                            : name == "prod" ? Values::Small : Values::Wide);
  std::vector<int64_t> dims;
  std::optional<int64_t> arg_dim;
  const int ndims = int(pick(0, 3));
  for (int i = 0; i < ndims; ++i) dims.push_back(pick(-nd - 1, nd));
  if (arg && chance(70)) arg_dim = pick(-nd - 1, nd);
  const bool keepdim = chance(50);
  const int64_t correction = pick(0, 2);
  desc << name << " dims=" << describe(arg ? (arg_dim ? Shape{*arg_dim} : Shape{}) : dims)
       << " keepdim=" << keepdim;
  // Which dims are reduced, and whether the dims are valid (0-d tensors take 0 and -1).
  const int64_t rank = std::max<int64_t>(nd, 1);
  std::vector<bool> reduced(size_t(nd), false);
  bool valid = true;
  std::vector<int64_t> list = arg ? (arg_dim ? std::vector<int64_t>{*arg_dim} : std::vector<int64_t>{})
                                  : dims;
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t d : list) {
    if (d < -rank || d >= rank) {
      valid = false;
      continue;
    }
    const int64_t w = d < 0 ? d + rank : d;
    if (seen[size_t(w)]) valid = false;
    seen[size_t(w)] = true;
    if (nd > 0) reduced[size_t(w)] = true;
  }
  if (list.empty())
    for (auto&& r : reduced) r = true;
  const DType accepts_numeric = t;
  const bool float_only = name == "mean" || smooth;
  if (name == "any" || name == "all") {
  } else if (float_only ? !is_floating(accepts_numeric) : accepts_numeric == DType::Bool) {
    valid = false;
  }
  Shape out, keep;
  int64_t k = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[size_t(d)]) {
      k *= s[size_t(d)];
      keep.push_back(1);
    } else {
      out.push_back(s[size_t(d)]);
      keep.push_back(s[size_t(d)]);
    }
  }
  if (k == 0 && (name == "max" || name == "min" || arg)) valid = false;
  // argmax/argmin without a dim reduce the flattened tensor.
  expect(valid, [&] {
    Tensor got;
    if (name == "sum") got = sum(x, dims, keepdim);
    if (name == "mean") got = mean(x, dims, keepdim);
    if (name == "max") got = max(x, dims, keepdim);
    if (name == "min") got = min(x, dims, keepdim);
    if (name == "prod") got = prod(x, dims, keepdim);
    if (name == "any") got = any(x, dims, keepdim);
    if (name == "all") got = all(x, dims, keepdim);
    if (name == "argmax") got = argmax(x, arg_dim, keepdim);
    if (name == "argmin") got = argmin(x, arg_dim, keepdim);
    if (name == "var") got = var(x, dims, correction, keepdim);
    if (name == "std") got = std(x, dims, correction, keepdim);
    if (name == "logsumexp") got = logsumexp(x, dims, keepdim);
    returned();
    const DType out_t = name == "any" || name == "all" ? DType::Bool : arg ? DType::I64 : t;
    Host ref{keepdim ? keep : out, out_t, {}};
    for_each_index(out, [&](const std::vector<int64_t>& oidx) {
      // The reduced elements, in row-major order.
      std::vector<double> xs;
      for_each_index(s, [&](const std::vector<int64_t>& idx) {
        size_t o = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          if (!reduced[d] && idx[d] != oidx[o++]) return;
        xs.push_back(h.v[size_t(flat_index(s, idx))]);
      });
      const double n = double(xs.size());
      double r = 0;
      if (name == "sum" || name == "prod") {
        const bool p = name == "prod";
        if (is_floating(t)) {
          r = p ? 1.0 : 0.0;
          for (double v : xs) r = p ? r * v : r + v;
        } else {
          uint64_t acc = p ? 1 : 0;
          for (double v : xs) acc = p ? acc * uint64_t(int64_t(v)) : acc + uint64_t(int64_t(v));
          r = wrap_to(t, acc);
        }
      } else if (name == "mean") {
        for (double v : xs) r += v;
        r /= n;
      } else if (name == "max" || name == "min") {
        r = xs[0];
        for (double v : xs) r = name == "max" ? nan_max(r, v) : nan_min(r, v);
      } else if (name == "any" || name == "all") {
        bool a = name == "all";
        for (double v : xs) a = name == "all" ? a && v != 0.0 : a || v != 0.0;
        r = a;
      } else if (arg) {
        // First NaN, else the first extreme.
        size_t best = 0;
        for (size_t i = 0; i < xs.size(); ++i) {
          if (std::isnan(xs[best])) break;
          if (std::isnan(xs[i]) || (name == "argmax" ? xs[i] > xs[best] : xs[i] < xs[best])) best = i;
        }
        r = double(best);
      } else if (name == "var" || name == "std") {
        double m = 0, ss = 0;
        for (double v : xs) m += v;
        m /= n;
        for (double v : xs) ss += (v - m) * (v - m);
        r = n - double(correction) <= 0 ? kNaN : ss / (n - double(correction));
        if (name == "std") r = std::sqrt(r);
      } else {  // logsumexp
        double m = -kInf, se = 0;
        for (double v : xs) m = std::max(m, v);
        for (double v : xs) se += std::exp(v - m);
        r = xs.empty() ? -kInf : m + std::log(se);
      }
      ref.v.push_back(r);
    });
    check(got, ref, accumulation_tolerance(out_t, k));
  });
}

void Fuzzer::fuzz_along_dim() {
  const char* names[] = {"cumsum", "cumprod", "softmax", "log_softmax"};
  const int which = int(pick(0, 3));
  const DType t = any_dtype();
  const Shape s = random_shape();
  const int64_t nd = int64_t(s.size()), rank = std::max<int64_t>(nd, 1);
  const int64_t dim = pick(-rank - 1, rank);
  desc << names[which] << " dim=" << dim;
  auto [x, h] = input(s, t, which == 1 ? Values::Small : Values::Unit);
  bool valid = dim >= -rank && dim < rank;
  valid = valid && (which < 2 ? t != DType::Bool : is_floating(t));
  expect(valid, [&] {
    const Tensor got = which == 0   ? cumsum(x, dim)
                       : which == 1 ? cumprod(x, dim)
                       : which == 2 ? softmax(x, dim)
                                    : log_softmax(x, dim);
    returned();
    const size_t d = size_t(dim < 0 ? dim + rank : dim);
    const int64_t len = nd == 0 ? 1 : s[d];
    Host ref{s, t, h.v};
    for_each_index(s, [&](const std::vector<int64_t>& idx) {
      if (nd > 0 && idx[d] != 0) return;  // one pass per line along d
      std::vector<int64_t> j = idx;
      auto at = [&](int64_t i) -> double& {
        if (nd > 0) j[d] = i;
        return ref.v[size_t(flat_index(s, j))];
      };
      if (which < 2) {
        uint64_t iacc = which == 1 ? 1 : 0;
        double acc = which == 1 ? 1.0 : 0.0;
        for (int64_t i = 0; i < len; ++i) {
          double& v = at(i);
          if (is_floating(t)) {
            acc = which == 1 ? acc * v : acc + v;
            v = acc;
          } else {
            iacc = which == 1 ? iacc * uint64_t(int64_t(v)) : iacc + uint64_t(int64_t(v));
            v = wrap_to(t, iacc);
          }
        }
        return;
      }
      double m = -kInf, se = 0;
      for (int64_t i = 0; i < len; ++i) m = std::max(m, at(i));
      for (int64_t i = 0; i < len; ++i) se += std::exp(at(i) - m);
      for (int64_t i = 0; i < len; ++i) {
        double& v = at(i);
        v = which == 2 ? std::exp(v - m) / se : v - m - std::log(se);
      }
    });
    check(got, ref, accumulation_tolerance(t, len));
  });
}

void Fuzzer::fuzz_matmul() {
  const DType t = chance(85) ? float_dtype() : any_dtype();
  const int64_t m = pick(0, 6), k = pick(0, 6), n = pick(0, 6);
  Shape batch = random_shape(2);
  Shape ba = batch, bb = broadcast_partner(batch);
  if (chance(50)) std::swap(ba, bb);
  Shape sa = ba, sb = bb;
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {chance(8) ? k + 1 : k, n});
  if (chance(5)) sa = Shape{k};
  desc << "matmul";
  auto [a, ha] = input(sa, t, Values::Unit);
  auto [b, hb] = input(sb, t, Values::Unit);
  // A 1-D a is [1, k] as in NumPy, and the result drops that dim; the reference reads it
  // through trailing alignment, so only the shapes change.
  const bool a_vec = sa.size() == 1;
  const Shape sa2 = a_vec ? Shape{1, k} : sa;
  const int64_t m2 = a_vec ? 1 : m;
  Shape out;
  const bool valid = is_floating(t) && sb[sb.size() - 2] == k &&
                     broadcast(Shape(sa2.begin(), sa2.end() - 2), Shape(sb.begin(), sb.end() - 2), out);
  expect(valid, [&] {
    const Tensor got = matmul(a, b);
    returned();
    out.insert(out.end(), {m2, n});
    Host ref{out, t, {}};
    for_each_index(out, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> ia(idx.begin(), idx.end() - 2), ib = ia;
      ia.insert(ia.end(), {idx[idx.size() - 2], 0});
      ib.insert(ib.end(), {0, idx.back()});
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        ia.back() = p;
        ib[ib.size() - 2] = p;
        acc += at_broadcast(ha, ia) * at_broadcast(hb, ib);
      }
      ref.v.push_back(acc);
    });
    if (a_vec) ref.shape.erase(ref.shape.end() - 2);
    check(got, ref, gemm_tolerance(t, k));
  });
}

// ---- views, casts, cat/stack ----

void Fuzzer::fuzz_view() {
  const DType t = any_dtype();
  const Shape s = random_shape();
  const int64_t nd = int64_t(s.size());
  auto [x, h] = input(s, t, Values::Wide);
  const int which = int(pick(0, 5));
  const Tolerance exact{0, 0, 0};
  // View ops take no dim of a 0-d tensor (reductions and scans take 0 and -1).
  auto dim_ok = [&](int64_t d) { return nd > 0 && d >= -nd && d < nd; };
  auto wrap = [&](int64_t d) { return size_t(d < 0 ? d + nd : d); };
  if (which == 0) {  // narrow
    const int64_t d = pick(-nd - 1, nd), start = pick(-3, 5), len = pick(-1, 5);
    desc << " narrow " << d << "," << start << "," << len;
    const bool ok_dim = dim_ok(d);
    const int64_t ext = ok_dim ? s[wrap(d)] : 0, st = start < 0 ? start + ext : start;
    expect(ok_dim && st >= 0 && len >= 0 && st + len <= ext, [&] {
      const Tensor got = x.narrow(d, start, len);
      returned();
      HostView v = identity_view(s);
      v.offset += st * v.strides[wrap(d)];
      v.shape[wrap(d)] = len;
      check(got, gather(h, v), exact);
    });
  } else if (which == 1) {  // transpose
    const int64_t a = pick(-nd - 1, nd), b = pick(-nd - 1, nd);
    desc << " transpose " << a << "," << b;
    expect(dim_ok(a) && dim_ok(b), [&] {
      const Tensor got = x.transpose(a, b);
      returned();
      HostView v = identity_view(s);
      std::swap(v.shape[wrap(a)], v.shape[wrap(b)]);
      std::swap(v.strides[wrap(a)], v.strides[wrap(b)]);
      check(got, gather(h, v), exact);
    });
  } else if (which == 2) {  // permute
    std::vector<int64_t> perm(size_t(nd + (chance(10) ? 1 : 0)));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
    std::shuffle(perm.begin(), perm.end(), rng_);
    if (chance(10) && !perm.empty()) perm[0] = perm.back();
    for (auto& p : perm)
      if (chance(30)) p -= nd;
    desc << " permute " << describe(perm);
    bool ok = int64_t(perm.size()) == nd;
    std::vector<bool> seen(size_t(nd), false);
    for (int64_t p : perm) {
      if (p < -nd || p >= nd || seen[size_t(p < 0 ? p + nd : p)]) {
        ok = false;
        break;
      }
      seen[size_t(p < 0 ? p + nd : p)] = true;
    }
    expect(ok, [&] {
      const Tensor got = x.permute(perm);
      returned();
      const HostView id = identity_view(s);
      HostView v{Shape(size_t(nd)), Strides(size_t(nd)), 0};
      for (size_t i = 0; i < size_t(nd); ++i) {
        const size_t p = size_t(perm[i] < 0 ? perm[i] + nd : perm[i]);
        v.shape[i] = s[p];
        v.strides[i] = id.strides[p];
      }
      check(got, gather(h, v), exact);
    });
  } else if (which == 3) {  // broadcast_to
    Shape target = s;
    for (auto& e : target)
      if (e == 1 && chance(50)) e = pick(0, 4);
    if (chance(40)) target.insert(target.begin(), pick(0, 3));
    if (chance(10)) target = random_shape();
    desc << " broadcast_to " << describe(target);
    Shape out;
    const bool ok = target.size() >= s.size() && broadcast(s, target, out) && out == target;
    expect(ok, [&] {
      const Tensor got = x.broadcast_to(target);
      returned();
      Host ref{target, t, {}};
      for_each_index(target, [&](const std::vector<int64_t>& idx) { ref.v.push_back(at_broadcast(h, idx)); });
      check(got, ref, exact);
    });
  } else if (which == 4) {  // flip
    std::vector<int64_t> dims;
    const int n = int(pick(0, 3));
    for (int i = 0; i < n; ++i) dims.push_back(pick(-nd - 1, nd));
    desc << " flip " << describe(dims);
    bool ok = true;
    std::vector<bool> seen(size_t(nd), false);
    for (int64_t d : dims) {
      if (!dim_ok(d) || seen[wrap(d)]) ok = false;
      else seen[wrap(d)] = true;
    }
    expect(ok, [&] {
      const Tensor got = x.flip(dims);
      returned();
      HostView v = identity_view(s);
      for (int64_t d : dims) {
        const size_t w = wrap(d);
        if (s[w] > 0) v.offset += (s[w] - 1) * v.strides[w];
        v.strides[w] = -v.strides[w];
      }
      check(got, gather(h, v), exact);
    });
  } else {  // reshape: the same values in row-major order
    const int64_t n = numel_of(s);
    Shape target;
    int64_t rest = n;
    const int parts = int(pick(0, 3));
    for (int i = 0; i < parts && rest > 0; ++i) {
      int64_t f = pick(1, 4);
      while (rest % f) --f;
      target.push_back(f);
      rest /= f;
    }
    if (n == 0 || rest != 1 || chance(30)) target.push_back(rest);
    if (!target.empty() && chance(30)) target[size_t(pick(0, int64_t(target.size()) - 1))] = -1;
    if (chance(10)) target.push_back(2);
    desc << " reshape " << describe(target);
    int64_t known = 1, infer = 0;
    bool neg = false;
    for (int64_t e : target) {
      if (e == -1) ++infer;
      else if (e < 0) neg = true;
      else known *= e;
    }
    const bool ok = !neg && infer <= 1 &&
                    (infer == 0 ? known == n : known != 0 && n % known == 0);
    expect(ok, [&] {
      const Tensor got = x.reshape(target);
      returned();
      Shape resolved = target;
      for (auto& e : resolved)
        if (e == -1) e = n / known;
      check(got, Host{resolved, t, h.v}, exact);
    });
  }
}

void Fuzzer::fuzz_cast() {
  const DType from = any_dtype(), to = any_dtype();
  const Shape s = random_shape();
  desc << "cast to " << dtype_name(to);
  auto [x, h] = input(s, from, Values::Wide);
  expect(true, [&] {
    const Tensor got = x.cast(to);
    returned();
    Host ref{s, to, {}};
    for (double v : h.v) {
      if (is_floating(from) || to == DType::Bool || is_floating(to))
        ref.v.push_back(cast_value(v, to));
      else
        ref.v.push_back(wrap_to(to, uint64_t(int64_t(v))));  // integers wrap
    }
    check(got, ref, Tolerance{0, 0, 0});
  });
}

void Fuzzer::fuzz_cat_stack() {
  const bool is_cat = chance(60);
  const Shape s = random_shape();
  const int count = int(pick(0, 3));
  const int64_t dim = pick(-int64_t(s.size()) - 2, int64_t(s.size()) + 1);
  desc << (is_cat ? "cat" : "stack") << " dim=" << dim << " n=" << count;
  std::vector<Tensor> xs;
  std::vector<Host> hs;
  for (int i = 0; i < count; ++i) {
    Shape si = s;
    if (is_cat && !si.empty()) si[size_t(pick(0, int64_t(si.size()) - 1))] = pick(0, 3);
    if (chance(5)) si = random_shape();
    auto [x, h] = input(si, i > 0 && chance(5) ? any_dtype() : hs.empty() ? any_dtype() : hs[0].dtype,
                        Values::Wide);
    xs.push_back(x);
    hs.push_back(h);
  }
  // Valid: one dtype, the first tensor's rank, the same extents but along dim (cat).
  bool valid = count > 0;
  const Shape first = valid ? hs[0].shape : Shape{};
  const DType t = valid ? hs[0].dtype : DType::F32;
  const int64_t out_rank = is_cat ? int64_t(first.size()) : int64_t(first.size()) + 1;
  valid = valid && out_rank > 0 && dim >= -out_rank && dim < out_rank;
  const size_t d = size_t(dim < 0 ? dim + out_rank : dim);
  for (const Host& h : hs) {
    if (h.dtype != t || h.shape.size() != first.size()) valid = false;
    for (size_t j = 0; valid && j < first.size(); ++j)
      if (h.shape[j] != first[j] && !(is_cat && j == d)) valid = false;
  }
  expect(valid, [&] {
    const Tensor got = is_cat ? cat(xs, dim) : stack(xs, dim);
    returned();
    Shape out = first;
    if (is_cat) {
      out[d] = 0;
      for (const Host& h : hs) out[d] += h.shape[d];
    } else {
      out.insert(out.begin() + int64_t(d), int64_t(count));
    }
    Host ref{out, t, std::vector<double>(size_t(numel_of(out)))};
    int64_t at = 0;
    for (size_t i = 0; i < hs.size(); ++i) {
      for_each_index(hs[i].shape, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> o = idx;
        if (is_cat) o[d] += at;
        else o.insert(o.begin() + int64_t(d), int64_t(i));
        ref.v[size_t(flat_index(out, o))] = hs[i].v[size_t(flat_index(hs[i].shape, idx))];
      });
      if (is_cat) at += hs[i].shape[d];
    }
    check(got, ref, Tolerance{0, 0, 0});
  });
}

void Fuzzer::one_call() {
  switch (pick(0, 9)) {
    case 0: return fuzz_unary();
    case 1: return fuzz_binary();
    case 2: return fuzz_scalar();
    case 3: return fuzz_where_clamp();
    case 4: return fuzz_reduce();
    case 5: return fuzz_along_dim();
    case 6: return fuzz_matmul();
    case 7: return fuzz_view();
    case 8: return fuzz_cast();
    default: return fuzz_cat_stack();
  }
}

// What a crash handler prints: the seed and iteration of the call in flight.
char g_in_flight[160] = "numr_fuzz: crashed before the first call\n";

void report_in_flight() {
  const ssize_t ignored = write(2, g_in_flight, std::strlen(g_in_flight));
  (void)ignored;
}

void on_fatal_signal(int sig) {
  report_in_flight();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int usage() {
  std::fprintf(stderr, "usage: numr_fuzz [--seed S] (--iterations N | --seconds T)\n");
  return 2;
}

}  // namespace
}  // namespace numr::fuzz

int main(int argc, char** argv) {
  using namespace numr::fuzz;
  uint64_t seed = 1;
  int64_t iterations = -1;
  double seconds = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--iterations") iterations = std::strtoll(argv[i + 1], nullptr, 10);
    else if (flag == "--seconds") seconds = std::strtod(argv[i + 1], nullptr);
    else return usage();
  }
  if (argc % 2 == 0 || (iterations < 0 && seconds < 0)) return usage();
  numr::set_poison_allocations(true);
  if (__sanitizer_set_death_callback) {
    __sanitizer_set_death_callback(report_in_flight);
  } else {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t i = 0;
  for (;; ++i) {
    if (iterations >= 0 && i >= iterations) break;
    if (seconds >= 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds)
      break;
    // Each iteration has its own generator, so one can be replayed alone.
    Fuzzer f(seed * 0x9E3779B97F4A7C15ull + uint64_t(i));
    std::snprintf(g_in_flight, sizeof g_in_flight,
                  "numr_fuzz: CRASHED at seed %llu iteration %lld; replay: numr_fuzz --seed %llu "
                  "--iterations %lld\n",
                  (unsigned long long)seed, (long long)i, (unsigned long long)seed, (long long)i + 1);
    std::string failure;
    try {
      f.one_call();
    } catch (const Mismatch& m) {
      failure = m.what;
    } catch (const std::exception& e) {
      failure = std::string("std:: exception escaped: ") + e.what();
    } catch (...) {
      failure = "unknown exception escaped";
    }
    if (!failure.empty()) {
      std::fprintf(stderr, "numr_fuzz: FAILED seed %llu iteration %lld\n  call: %s\n  %s\n",
                   (unsigned long long)seed, (long long)i, f.desc.str().c_str(), failure.c_str());
      std::fprintf(stderr, "  replay: numr_fuzz --seed %llu --iterations %lld (fails at the last)\n",
                   (unsigned long long)seed, (long long)i + 1);
      return 1;
    }
  }
  std::printf("numr_fuzz: seed %llu, %lld calls (%lld valid, %lld invalid), no failures\n",
              (unsigned long long)seed, (long long)i, (long long)g_valid_calls,
              (long long)g_invalid_calls);
  return 0;
}
