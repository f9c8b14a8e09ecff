// Parity of every elementwise op of the table (unary, activations, predicates, binary,
// ternary, scalar, compare, logical, where_cond, clamp) against the float64 reference, on
// odd shapes, views, broadcasting and special values, for every dtype the op accepts.
#include <cmath>

#include "support/harness.h"

namespace numr::test {
namespace {

// Input range per op: inside the domain, away from overflow thresholds (where a correct
// f32 result and the rounded reference may legitimately disagree about overflowing).
InputSpec domain_of(OpId op) {
  InputSpec s;
  s.specials = true;
  switch (op) {
    case OpId::sqrt: case OpId::rsqrt: case OpId::log: case OpId::log2: case OpId::log10:
      s.lo = 0.01; s.hi = 5; break;
    case OpId::log1p: s.lo = -0.9; s.hi = 5; break;
    case OpId::acosh: s.lo = 1.0; s.hi = 5; break;
    case OpId::asin: case OpId::acos: case OpId::atanh:
    case OpId::erfinv: s.lo = -0.99; s.hi = 0.99; break;
    case OpId::tan: s.lo = -1.4; s.hi = 1.4; break;
    case OpId::exp: case OpId::exp2: case OpId::expm1: case OpId::sinh: case OpId::cosh:
      s.lo = -8; s.hi = 8; break;
    case OpId::erf: case OpId::erfc: s.lo = -4; s.hi = 6; break;
    case OpId::logit: s.lo = 0.01; s.hi = 0.99; break;
    case OpId::lgamma: case OpId::gamma: s.lo = -2.5; s.hi = 6; break;
    case OpId::digamma: case OpId::polygamma: s.lo = 0.05; s.hi = 6; break;
    case OpId::beta: s.lo = 0.1; s.hi = 5; break;
    case OpId::zeta: s.lo = 1.2; s.hi = 5; break;
    case OpId::xlogy: s.lo = -2; s.hi = 4; break;
    // Across the switch to the asymptotic series at 20.
    case OpId::bessel_j0: case OpId::bessel_j1: case OpId::bessel_i0: case OpId::bessel_i0e:
    case OpId::bessel_i1: case OpId::bessel_i1e: s.lo = -30; s.hi = 30; break;
    case OpId::bessel_y0: case OpId::bessel_y1: case OpId::bessel_k0: case OpId::bessel_k1:
      s.lo = 0.05; s.hi = 30; break;
    case OpId::ellipk: case OpId::ellipe: s.lo = -4; s.hi = 0.99; break;
    case OpId::gammainc: case OpId::gammaincc: s.lo = 0.1; s.hi = 8; break;
    case OpId::betainc: s.lo = 0.05; s.hi = 0.95; break;
    case OpId::pow: case OpId::pow_scalar: s.lo = 0.1; s.hi = 3; break;
    case OpId::floor: case OpId::ceil: case OpId::round: case OpId::trunc:
      s.lo = -6; s.hi = 6; break;
    default: break;
  }
  return s;
}

// Integer arithmetic wraps: the reference's exact result taken modulo 2^bits.
void wrap_reference(RefTensor& r, DType t) {
  if (!is_integral(t)) return;
  for (double& x : r.v) {
    if (t == DType::U8) x = double(uint8_t(int64_t(x)));
    if (t == DType::I32) x = double(int32_t(uint32_t(int64_t(x))));
  }
}

InputSpec spec_for(OpId op, DType t, Layout layout) {
  InputSpec s = domain_of(op);
  s.layout = layout;
  if (is_integral(t)) {
    s.lo = t == DType::U8 ? 0 : -20;
    s.hi = t == DType::U8 ? 15 : 20;
    s.specials = false;
  }
  const OpFamily f = op_info(op).family;
  // Equal operands must occur for compare ops to mean anything: small integer values.
  if (f == OpFamily::Compare || f == OpFamily::Logical) {
    s.integers = true;
    s.lo = is_integral(t) || !is_signed(t) ? 0 : -2;
    s.hi = 2;
  }
  return s;
}

Tolerance tolerance_of(OpId op, DType t) {
  Tolerance tol = tolerance_for(t);
  // Predicates, compares and logical ops are exact.
  const OpFamily f = op_info(op).family;
  if (f == OpFamily::Compare || f == OpFamily::Logical || f == OpFamily::UnaryPred)
    return {0.0, 0.0, 0.0};
  return tol;
}

constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                               Layout::Flipped};

// Calls the front end of an elementwise op by id.
Tensor call_op(OpId op, const std::vector<Tensor>& in, double s0) {
  switch (op) {
#define NUMR_UNARY(name, d, g) \
  case OpId::name: return name(in[0]);
#define NUMR_UNARY_PRED(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_BINARY(name, d, g) \
  case OpId::name: return name(in[0], in[1]);
#define NUMR_COMPARE(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_LOGICAL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_TERNARY(name, d, g) \
  case OpId::name: return name(in[0], in[1], in[2]);
#define NUMR_SCALAR(name, d, g) \
  case OpId::name: return name(in[0], s0);
#define NUMR_ACT_MUL(name, d, g) \
  case OpId::name: return name(in[0], in[1]);
#define NUMR_ACT_BWD(name, d, g) NUMR_ACT_MUL(name, d, g)
#define NUMR_ACTIVATION(name, d, g) \
  case OpId::name: return name(in[0]);
#define NUMR_ACTIVATION_P(name, p, v, d, g) \
  case OpId::name: return name(in[0], s0);
#include "numr/op_table.def"
    default: throw std::logic_error("not a plain elementwise op");
  }
}

std::pair<Tensor, Tensor> call_act_mul_bwd(OpId op, const Tensor& g, const Tensor& a,
                                           const Tensor& b) {
  switch (op) {
#define NUMR_ACT_MUL_BWD(name, d, gr) \
  case OpId::name: return name(g, a, b);
#include "numr/op_table.def"
    default: throw std::logic_error("not a fused gate backward");
  }
}

double scalar_for(OpId op, DType t) {
  if (is_integral(t)) return 3;
  switch (op) {
    case OpId::leaky_relu: return 0.1;
    case OpId::elu: return 1.3;
    case OpId::pow_scalar: return 1.7;
    case OpId::polygamma: return 2;  // n, a non-negative integer
    default: return 1.5;
  }
}

// Every shape x layout for each input, all inputs of the same shape.
std::string check_same_shape(OpId op, int arity, DType t, Device dev) {
  uint64_t seed = 1;
  const double s0 = scalar_for(op, t);
  for (const Shape& shape : parity_shapes()) {
    for (Layout layout : kLayouts) {
      std::vector<Tensor> in;
      std::vector<RefTensor> refs;
      for (int k = 0; k < arity; ++k) {
        // Only the first input takes the unusual layout; the others alternate.
        const Layout l = k == 0 ? layout : kLayouts[(size_t(k) + size_t(layout)) % 4];
        in.push_back(make_input(shape, t, dev, spec_for(op, t, l), seed++));
        refs.push_back(to_ref(in.back()));
      }
      std::vector<const RefTensor*> rp;
      for (auto& r : refs) rp.push_back(&r);
      RefTensor want = reference::elementwise(op, rp, s0);
      wrap_reference(want, t);
      const Tensor got = call_op(op, in, s0);
      std::string msg = compare(got, want, tolerance_of(op, t));
      if (!msg.empty()) return "shape " + shape_str(shape) + ": " + msg;
    }
  }
  return "";
}

// Broadcasting pairs and triples.
std::string check_broadcast(OpId op, int arity, DType t, Device dev) {
  static const std::vector<std::vector<Shape>> cases = {
      {{33, 17}, {17}, {33, 1}}, {{5, 1, 11}, {7, 1}, {11}}, {{1}, {7}, {7}},
      {{}, {5, 7, 11}, {1, 1}},  {{0, 3}, {3}, {1, 3}},      {{2, 1030}, {2, 1}, {1030}}};
  uint64_t seed = 100;
  for (const auto& shapes : cases) {
    std::vector<Tensor> in;
    std::vector<RefTensor> refs;
    for (int k = 0; k < arity; ++k) {
      in.push_back(make_input(shapes[size_t(k)], t, dev, spec_for(op, t, Layout::Contiguous), seed++));
      refs.push_back(to_ref(in.back()));
    }
    std::vector<const RefTensor*> rp;
    for (auto& r : refs) rp.push_back(&r);
    RefTensor want = reference::elementwise(op, rp);
    wrap_reference(want, t);
    std::string msg = compare(call_op(op, in, 0.0), want, tolerance_of(op, t));
    if (!msg.empty()) return "broadcast case " + shape_str(shapes[0]) + ": " + msg;
  }
  return "";
}

int arity_of(OpId op) {
  switch (op_info(op).family) {
    case OpFamily::Binary: case OpFamily::Compare: case OpFamily::Logical:
    case OpFamily::ActMul: case OpFamily::ActBwd: return 2;
    case OpFamily::Ternary: return 3;
    default: return 1;
  }
}

// The ops of the families whose OpId lies in [first, last] (the whole table by default).
void run_family(std::initializer_list<OpFamily> families, OpId first = OpId(0),
                OpId last = OpId(UINT16_MAX)) {
  for (const OpInfo& info : all_ops()) {
    bool in_family = false;
    for (OpFamily f : families) in_family |= info.family == f;
    if (!in_family || info.id < first || info.id > last) continue;
    const int arity = arity_of(info.id);
    for_each_case(info.id, dtypes_of(info.id), [&](DType t, Device dev) {
      std::string msg = check_same_shape(info.id, arity, t, dev);
      if (msg.empty() && arity > 1) msg = check_broadcast(info.id, arity, t, dev);
      return msg;
    });
  }
}

// The unary ops in three tests (the special functions are a block of the op table), so
// that a sharded run spreads them over its processes.
TEST(ParityElementwise, Unary) { run_family({OpFamily::Unary}, OpId(0), OpId::trunc); }
// Together the three take every unary op: a new one between the blocks fails these.
static_assert(int(OpId::trunc) + 1 == int(OpId::expit));
static_assert(int(OpId::gamma) + 1 == int(OpId::bessel_j0));
static_assert(int(OpId::bessel_k1) + 1 == int(OpId::ellipk));
TEST(ParityElementwise, UnarySpecial) {
  run_family({OpFamily::Unary}, OpId::expit, OpId::gamma);
  run_family({OpFamily::Unary}, OpId::ellipk);
}
TEST(ParityElementwise, UnaryBessel) {
  run_family({OpFamily::Unary}, OpId::bessel_j0, OpId::bessel_k1);
}
TEST(ParityElementwise, Activation) { run_family({OpFamily::Activation}); }
TEST(ParityElementwise, Predicate) { run_family({OpFamily::UnaryPred}); }
TEST(ParityElementwise, Binary) { run_family({OpFamily::Binary}); }
TEST(ParityElementwise, Ternary) { run_family({OpFamily::Ternary}); }
TEST(ParityElementwise, Scalar) { run_family({OpFamily::Scalar}); }
TEST(ParityElementwise, CompareAndLogical) { run_family({OpFamily::Compare, OpFamily::Logical}); }

TEST(ParityElementwise, FusedGates) { run_family({OpFamily::ActMul, OpFamily::ActBwd}); }

// (d_a, d_b) of each fused gate against the reference, also with broadcast operands
// (whose gradient the front end reduces to the operand's shape).
TEST(ParityElementwise, FusedGateBackward) {
  for (const OpInfo& info : all_ops()) {
    if (info.family != OpFamily::ActMulBwd) continue;
    for_each_case(info.id, dtypes_of(info.id), [&](DType t, Device dev) -> std::string {
      uint64_t seed = 50;
      const std::vector<std::vector<Shape>> cases = {
          {{1}, {1}, {1}}, {{7}, {7}, {7}}, {{33, 17}, {33, 17}, {33, 17}},
          {{5, 7, 11}, {5, 7, 11}, {5, 7, 11}}, {{2, 1030}, {2, 1030}, {2, 1030}},
          {{65537}, {65537}, {65537}}, {{0, 3}, {0, 3}, {0, 3}},
          {{33, 17}, {33, 17}, {17}},  // b broadcast: d_b sums over rows
          {{5, 7}, {5, 1}, {5, 7}}};   // a broadcast
      for (const auto& s : cases) {
        for (Layout l : kLayouts) {
          InputSpec spec;
          spec.specials = true;
          spec.layout = l;
          const Tensor g = make_input(s[0], t, dev, spec, seed++);
          const Tensor a = make_input(s[1], t, dev, spec, seed++);
          const Tensor b = make_input(s[2], t, dev, InputSpec{}, seed++);
          const RefTensor rg = to_ref(g), ra = to_ref(a), rb = to_ref(b);
          RefTensor want_a = reference::elementwise(info.id, {&rg, &ra, &rb}, 0, 0, true, true, 0);
          RefTensor want_b = reference::elementwise(info.id, {&rg, &ra, &rb}, 0, 0, true, true, 1);
          auto reduce_to = [](const RefTensor& r, const Shape& shape) {
            if (r.shape == shape) return r;
            std::vector<int64_t> dims;
            const int64_t lead = int64_t(r.shape.size() - shape.size());
            for (int64_t d = 0; d < int64_t(r.shape.size()); ++d)
              if (d < lead || (shape[size_t(d - lead)] == 1 && r.shape[size_t(d)] != 1))
                dims.push_back(d);
            RefTensor out = reference::reduce(OpId::sum, r, dims, true);
            out.shape = shape;
            return out;
          };
          want_a = reduce_to(want_a, s[1]);
          want_b = reduce_to(want_b, s[2]);
          const auto [da, db] = call_act_mul_bwd(info.id, g, a, b);
          const int64_t k = std::max<int64_t>(1, shape_numel(s[0]) / std::max<int64_t>(1, shape_numel(s[2])));
          std::string msg = compare(da, want_a, accumulation_tolerance(t, k));
          if (msg.empty()) msg = compare(db, want_b, accumulation_tolerance(t, k));
          if (!msg.empty()) return shape_str(s[1]) + " x " + shape_str(s[2]) + ": " + msg;
        }
      }
      return "";
    });
  }
}

TEST(ParityElementwise, WhereCond) {
  for_each_case(OpId::where_cond, dtypes_of(OpId::where_cond), [](DType t, Device dev) -> std::string {
    const std::vector<std::vector<Shape>> cases = {
        {{33, 17}, {33, 17}, {33, 17}}, {{5, 7, 11}, {7, 1}, {11}}, {{1}, {}, {7}}, {{0, 3}, {3}, {1}}};
    uint64_t seed = 7;
    for (const auto& s : cases) {
      for (Layout l : kLayouts) {
        const Tensor c = make_input(s[0], DType::Bool, dev, InputSpec{.layout = l}, seed++);
        const Tensor x = make_input(s[1], t, dev, spec_for(OpId::add, t, l), seed++);
        const Tensor y = make_input(s[2], t, dev, spec_for(OpId::add, t, Layout::Contiguous), seed++);
        const RefTensor rc = to_ref(c), rx = to_ref(x), ry = to_ref(y);
        const RefTensor want = reference::elementwise(OpId::where_cond, {&rc, &rx, &ry});
        std::string msg = compare(where_cond(c, x, y), want, {0.0, 0.0, 0.0});
        if (!msg.empty()) return shape_str(s[0]) + ": " + msg;
      }
    }
    return "";
  });
}

TEST(ParityElementwise, Clamp) {
  for_each_case(OpId::clamp, dtypes_of(OpId::clamp), [](DType t, Device dev) -> std::string {
    struct Bounds { std::optional<double> lo, hi; };
    const Bounds bounds[] = {{-1.0, 2.0}, {-1.0, std::nullopt}, {std::nullopt, 2.0}, {3.0, 3.0}};
    uint64_t seed = 3;
    for (const Shape& shape : parity_shapes()) {
      for (const Bounds& b : bounds) {
        if (t == DType::U8 && b.lo && *b.lo < 0) continue;
        const Tensor x = make_input(shape, t, dev, spec_for(OpId::clamp, t, Layout::Strided), seed++);
        const RefTensor rx = to_ref(x);
        const RefTensor want = reference::elementwise(OpId::clamp, {&rx}, b.lo.value_or(0),
                                                      b.hi.value_or(0), b.lo.has_value(),
                                                      b.hi.has_value());
        std::string msg = compare(clamp(x, b.lo, b.hi), want, {0.0, 0.0, 0.0});
        if (!msg.empty()) return shape_str(shape) + ": " + msg;
      }
    }
    return "";
  });
}

// Outputs past the size where the kernels switch to non-temporal stores (8 MiB), with rows
// that start on and off vector alignment; large BF16 outputs (narrowed from f32 chunks) and
// the two-output gate backward at that size.
TEST(ParityElementwise, LargeOutputs) {
  for (DType t : {DType::F32, DType::F64, DType::BF16}) {
    std::vector<Shape> shapes = {Shape{3 << 20}, Shape{2100, 1001}};
    if (t == DType::BF16) shapes = {Shape{5 << 20}, Shape{4100, 1025}};
    for (const Shape& shape : shapes) {
      const Tensor a = make_input(shape, t, Device::cpu(), InputSpec{.layout = Layout::Transposed}, 1);
      const Tensor b = make_input({shape.back()}, t, Device::cpu(), InputSpec{}, 2);
      const RefTensor ra = to_ref(a), rb = to_ref(b);
      EXPECT_EQ(compare(mul(a, b), reference::elementwise(OpId::mul, {&ra, &rb}), tolerance_for(t)), "")
          << t << " " << shape_str(shape);
      EXPECT_EQ(compare(silu(a), reference::elementwise(OpId::silu, {&ra}), tolerance_for(t)), "")
          << t << " " << shape_str(shape);
    }
  }
  const Shape big{4100, 1025};
  const Tensor g = make_input(big, DType::BF16, Device::cpu(), InputSpec{}, 3);
  const Tensor a = make_input(big, DType::BF16, Device::cpu(), InputSpec{}, 4);
  const Tensor b = make_input(big, DType::BF16, Device::cpu(), InputSpec{}, 5);
  const RefTensor rg = to_ref(g), ra = to_ref(a), rb = to_ref(b);
  const auto [da, db] = silu_mul_bwd(g, a, b);
  for (int out = 0; out < 2; ++out)
    EXPECT_EQ(compare(out == 0 ? da : db,
                      reference::elementwise(OpId::silu_mul_bwd, {&rg, &ra, &rb}, 0, 0, true,
                                             true, out),
                      tolerance_for(DType::BF16)),
              "")
        << "silu_mul_bwd output " << out;
}

// Large transposed inputs are copied piece by piece into a row-major scratch of each
// thread (kernels/transposed_pieces.h), the inputs of one piece one after another in it:
// two transposed inputs of different element sizes (Bool and F32, F64 and F64) beside a
// broadcast one; rank 3 transposed over dims 0 and 2 (30 result rows per index of dim 0),
// rank 2 with partial pieces along both dims, and a piece of 257 x 45 (an odd number of
// Bool elements before the F32 ones in the scratch).
TEST(ParityElementwise, TransposedInputsInPieces) {
  const Device cpu = Device::cpu();
  for (const Shape& src : {Shape{40, 30, 70}, Shape{1100, 300}, Shape{301, 257}}) {
    const int64_t last = int64_t(src.size()) - 1;
    const auto transposed = [&](DType t, uint64_t seed) {
      return transpose(make_input(src, t, cpu, InputSpec{}, seed), 0, last);
    };
    const Tensor c = transposed(DType::Bool, 21), a = transposed(DType::F32, 22);
    const Tensor b = make_input({src.front()}, DType::F32, cpu, InputSpec{}, 23);
    const RefTensor rc = to_ref(c), ra = to_ref(a), rb = to_ref(b);
    EXPECT_EQ(compare(where_cond(c, a, b),
                      reference::elementwise(OpId::where_cond, {&rc, &ra, &rb}), {0.0, 0.0, 0.0}),
              "")
        << shape_str(src);
    const Tensor x = transposed(DType::F64, 24), y = transposed(DType::F64, 25);
    const RefTensor rx = to_ref(x), ry = to_ref(y);
    EXPECT_EQ(compare(atan2(x, y), reference::elementwise(OpId::atan2, {&rx, &ry}),
                      tolerance_for(DType::F64)),
              "")
        << shape_str(src);
  }
}

// numr's documented values for a few points, independent of the reference formulas.
TEST(ElementwiseValues, KnownPoints) {
  const Tensor x = Tensor::from_vector<double>({-1.0, 0.0, 0.5, 2.0}, {4});
  const auto s = silu(x).to_vector<double>();
  EXPECT_NEAR(s[0], -1.0 / (1.0 + std::exp(1.0)), 1e-15);
  EXPECT_EQ(s[1], 0.0);
  const auto r = round(Tensor::from_vector<double>({0.5, 1.5, 2.5, -0.5}, {4})).to_vector<double>();
  EXPECT_EQ(r, (std::vector<double>{0.0, 2.0, 2.0, -0.0}));  // half to even
  const auto m = maximum(Tensor::from_vector<float>({NAN, 1.f}, {2}),
                         Tensor::from_vector<float>({0.f, NAN}, {2}))
                     .to_vector<float>();
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  const auto rl = relu(Tensor::from_vector<float>({NAN, -2.f, 3.f}, {3})).to_vector<float>();
  EXPECT_TRUE(std::isnan(rl[0]));
  EXPECT_EQ(rl[1], 0.f);
  EXPECT_EQ(rl[2], 3.f);
  const auto w = add(Tensor::from_vector<int32_t>({2147483647}, {1}),
                     Tensor::from_vector<int32_t>({1}, {1}))
                     .to_vector<int32_t>();
  EXPECT_EQ(w[0], -2147483647 - 1);  // wraps
}

}  // namespace
}  // namespace numr::test
