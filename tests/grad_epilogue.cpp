// The GEMM epilogue Var ops: gradients of first and second order for every activation,
// layout and saving policy; equality with the unfused composition; a shared b summed over
// batches and a per-batch b kept per batch; what the forward saves and that the backward
// uses it; and F32 / BF16 against float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Activation kActs[] = {Activation::None, Activation::Relu,    Activation::Gelu,
                                Activation::Silu, Activation::Sigmoid, Activation::Tanh};

struct Layout2 {
  std::string name;
  Shape a, b;
};
// Small odd shapes: 2-D, batched a with a shared 2-D b, batched a with a per-batch b.
const std::vector<Layout2>& small_layouts() {
  static const std::vector<Layout2> l = {{"[3,4] @ [4,5]", {3, 4}, {4, 5}},
                                         {"[2,3,4] @ shared [4,5]", {2, 3, 4}, {4, 5}},
                                         {"[2,3,4] @ per-batch [2,4,5]", {2, 3, 4}, {2, 4, 5}}};
  return l;
}

Shape out_shape(const Shape& a, const Shape& b) {
  Shape s = a.size() >= b.size() ? a : b;
  s[s.size() - 2] = a[a.size() - 2];
  s.back() = b.back();
  return s;
}

struct Inputs {
  Tensor a, b, bias;
};

// F64 inputs whose values are exact in BF16 (so every dtype sees the same numbers), with
// b scaled so that a @ b + bias is of order 1 whatever K is. With relu_margin > 0 the
// pre-activation keeps at least that distance from relu's kink at 0, so neither finite
// differences nor rounding cross it.
Tensor values(const Shape& shape, uint64_t seed, double lim = 1.0) {
  return make_input(shape, DType::BF16, Device::cpu(), InputSpec{.lo = -lim, .hi = lim}, seed)
      .cast(DType::F64);
}
Inputs make_inputs(const Shape& sa, const Shape& sb, uint64_t seed, double relu_margin = 0.0) {
  const double bscale = std::sqrt(2.0 / double(sa.back()));
  for (uint64_t s = seed;; s += 1000) {
    Inputs in{values(sa, s), values(sb, s + 1, bscale), values({sb.back()}, s + 2, 0.5)};
    if (relu_margin <= 0.0) return in;
    const std::vector<double> pre = (matmul(in.a, in.b) + in.bias).to_vector<double>();
    bool clear = true;
    for (double v : pre) clear &= std::fabs(v) >= relu_margin;
    if (clear) return in;
  }
}

Var act_var(const Var& x, Activation act) {
  switch (act) {
    case Activation::Relu: return relu(x);
    case Activation::Gelu: return gelu(x);
    case Activation::Silu: return silu(x);
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Tanh: return tanh(x);
    default: return x;
  }
}
Var unfused(const Var& a, const Var& b, const Var& bias, Activation act) {
  return act_var(matmul(a, b) + bias, act);
}

std::string describe(Activation act, const std::string& layout, bool recompute) {
  return std::string(activation_name(act)) + " " + layout +
         (recompute ? " (recompute pre-activation)" : " (saved)");
}

TEST(GradEpilogue, ActivationFirstAndSecondOrder) {
  uint64_t seed = 1;
  for (Activation act : kActs) {
    for (const Layout2& l : small_layouts()) {
      const Inputs in = make_inputs(l.a, l.b, seed += 10, 0.02);
      for (bool recompute : {false, true}) {
        const VarFn f = [act, recompute](const std::vector<Var>& v) {
          return matmul_bias_activation(v[0], v[1], v[2], act,
                                        {.recompute_preactivation = recompute});
        };
        check_gradients(OpId::matmul_bias_activation, describe(act, l.name, recompute), f,
                        {in.a, in.b, in.bias});
      }
    }
  }
}

TEST(GradEpilogue, ResidualFirstAndSecondOrder) {
  const VarFn f = [](const std::vector<Var>& v) {
    return matmul_bias_residual(v[0], v[1], v[2], v[3]);
  };
  uint64_t seed = 500;
  for (const Layout2& l : small_layouts()) {
    const Inputs in = make_inputs(l.a, l.b, seed += 10);
    const Tensor r = values(out_shape(l.a, l.b), seed + 5);
    check_gradients(OpId::matmul_bias_residual, l.name, f, {in.a, in.b, in.bias, r});
  }
}

// Σ sum(grads[x] * v_x) over the leaves: a scalar whose gradient is the second derivative.
Var grad_dot(const VarGradients& g, const std::vector<Var>& xs, const std::vector<Tensor>& vs) {
  Var acc;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Var t = sum(g[xs[i]] * Var(vs[i]));
    acc = acc.defined() ? acc + t : t;
  }
  return acc;
}

TEST(AutogradEpilogue, GradientsEqualTheComposition) {
  uint64_t seed = 1000;
  for (Activation act : kActs) {
    for (const Layout2& l : small_layouts()) {
      const Inputs in = make_inputs(l.a, l.b, seed += 10, 0.02);
      const Shape so = out_shape(l.a, l.b);
      const Tensor w = values(so, seed + 3);
      const std::vector<Tensor> vs = {values(l.a, seed + 4), values(l.b, seed + 5),
                                      values({l.b.back()}, seed + 6)};
      for (bool recompute : {false, true}) {
        const std::string what = describe(act, l.name, recompute);
        const Var a(in.a, true), b(in.b, true), bias(in.bias, true);
        const std::vector<Var> xs = {a, b, bias};
        auto fused = [&] {
          return matmul_bias_activation(a, b, bias, act, {.recompute_preactivation = recompute});
        };
        // First order, with weights (a dense gradient) and with a plain sum (a broadcast one).
        for (bool weighted : {true, false}) {
          const Var yf = fused(), yu = unfused(a, b, bias, act);
          const Gradients gf = backward(weighted ? sum(yf * Var(w)) : sum(yf));
          const Gradients gu = backward(weighted ? sum(yu * Var(w)) : sum(yu));
          EXPECT_EQ(
              compare(yf.tensor(), to_ref(yu.tensor()), accumulation_tolerance(DType::F64, 8)), "")
              << what;
          for (const Var& x : xs)
            EXPECT_EQ(compare(gf[x], to_ref(gu[x]), accumulation_tolerance(DType::F64, 16)), "")
                << what << (weighted ? " weighted" : " sum") << " input " << shape_str(x.shape());
        }
        // Second order: the create_graph gradients, differentiated again.
        const Var lf = grad_dot(backward(sum(fused() * Var(w)), {.create_graph = true}), xs, vs);
        const Var lu = grad_dot(
            backward(sum(unfused(a, b, bias, act) * Var(w)), {.create_graph = true}), xs, vs);
        // The create_graph gradients themselves agree too.
        EXPECT_EQ(compare(lf.tensor(), to_ref(lu.tensor()), accumulation_tolerance(DType::F64, 64)),
                  "")
            << what;
        const Gradients hf = backward(lf), hu = backward(lu);
        for (const Var& x : xs) {
          ASSERT_EQ(hf.contains(x), hu.contains(x)) << what;
          if (hf.contains(x)) {
            EXPECT_EQ(compare(hf[x], to_ref(hu[x]), accumulation_tolerance(DType::F64, 64)), "")
                << what << " second order, input " << shape_str(x.shape());
          }
        }
      }
    }
  }
}

// Batch i of a [B, M, K] tensor as [M, K].
Tensor slice(const Tensor& t, int64_t i) {
  Shape s(t.shape().begin() + 1, t.shape().end());
  return t.narrow(0, i, 1).reshape(s);
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.cast(DType::F64).contiguous().to_vector<double>())
    m = std::max(m, std::fabs(v));
  return m;
}

TEST(AutogradEpilogue, SharedWeightGradientIsTheSumOverBatches) {
  constexpr int64_t kBatch = 3;
  uint64_t seed = 2000;
  for (Activation act : kActs) {
    const Inputs in = make_inputs({kBatch, 3, 4}, {4, 5}, seed += 10, 0.02);
    const Tensor w = values({kBatch, 3, 5}, seed + 3);
    const Var a(in.a, true), b(in.b, true), bias(in.bias, true);
    const Gradients g = backward(sum(matmul_bias_activation(a, b, bias, act) * Var(w)));
    // The same network batch by batch: b and bias are shared leaves, so the engine adds the
    // contributions of the batches.
    const Var b1(in.b, true), bias1(in.bias, true);
    Var loss;
    for (int64_t i = 0; i < kBatch; ++i) {
      const Var t =
          sum(matmul_bias_activation(Var(slice(in.a, i)), b1, bias1, act) * Var(slice(w, i)));
      loss = loss.defined() ? loss + t : t;
    }
    const Gradients per = backward(loss);
    const std::string what(activation_name(act));
    EXPECT_EQ(compare(g[b], to_ref(per[b1]), accumulation_tolerance(DType::F64, 9)), "") << what;
    EXPECT_EQ(compare(g[bias], to_ref(per[bias1]), accumulation_tolerance(DType::F64, 9)), "")
        << what;
  }
}

TEST(AutogradEpilogue, PerBatchWeightGradientIsPerBatch) {
  constexpr int64_t kBatch = 3;
  uint64_t seed = 3000;
  for (Activation act : kActs) {
    const Inputs in = make_inputs({kBatch, 3, 4}, {kBatch, 4, 5}, seed += 10, 0.02);
    const Tensor w = values({kBatch, 3, 5}, seed + 3);
    const std::string what(activation_name(act));
    for (bool create_graph : {false, true}) {
      const Var a(in.a, true), b(in.b, true), bias(in.bias, true);
      const Var loss = sum(matmul_bias_activation(a, b, bias, act) * Var(w));
      const Tensor db =
          create_graph ? backward(loss, {.create_graph = true})[b].tensor() : backward(loss)[b];
      ASSERT_EQ(db.shape(), in.b.shape()) << what;
      for (int64_t i = 0; i < kBatch; ++i) {
        const Var bi(slice(in.b, i), true);
        const Gradients gi = backward(sum(
            matmul_bias_activation(Var(slice(in.a, i)), bi, Var(in.bias), act) * Var(slice(w, i))));
        const Tensor got = slice(db, i);
        // numr sums every batch into slice 0 and leaves the others zero.
        EXPECT_GT(max_abs(got), 0.0) << what << " slice " << i;
        EXPECT_EQ(compare(got, to_ref(gi[bi]), accumulation_tolerance(DType::F64, 3)), "")
            << what << " slice " << i << (create_graph ? " (create_graph)" : "");
      }
    }
  }
}

TEST(AutogradEpilogue, ForwardSavesWhatTheDerivativeNeeds) {
  EXPECT_TRUE(needs_preactivation(Activation::Gelu));
  EXPECT_TRUE(needs_preactivation(Activation::Silu));
  for (Activation act : {Activation::None, Activation::Relu, Activation::Sigmoid, Activation::Tanh})
    EXPECT_FALSE(needs_preactivation(act)) << activation_name(act);
  uint64_t seed = 4000;
  for (Activation act : kActs) {
    for (const Layout2& l : small_layouts()) {
      const Inputs in = make_inputs(l.a, l.b, seed += 10);
      const EpilogueForward fwd = matmul_bias_activation_fwd(in.a, in.b, in.bias, act);
      const Tensor pre = matmul(in.a, in.b) + in.bias;
      const Tensor out = matmul_bias_activation(in.a, in.b, in.bias, act);
      const Tolerance tol = accumulation_tolerance(DType::F64, 4);
      const std::string what = describe(act, l.name, false);
      EXPECT_EQ(compare(fwd.out, to_ref(out), tol), "") << what;
      EXPECT_EQ(compare(fwd.saved, to_ref(needs_preactivation(act) ? pre : out), tol), "") << what;
    }
  }
}

// The backward reads a @ b + bias from what the forward saved rather than recomputing it.
// To see which, a's value is replaced after the forward: the GEMMs of the backward read the
// new value either way, but grad_pre (so d_bias) comes from the old pre-activation when it
// was saved (or when the output determines the derivative), from the new one when the
// policy recomputes it.
TEST(AutogradEpilogue, BackwardUsesWhatTheForwardSaved) {
  uint64_t seed = 5000;
  for (Activation act :
       {Activation::Gelu, Activation::Silu, Activation::Sigmoid, Activation::Tanh}) {
    const Inputs in = make_inputs({2, 3, 4}, {4, 5}, seed += 10);
    const Tensor a_new = make_inputs({2, 3, 4}, {4, 5}, seed + 5).a;
    const Tensor w = values({2, 3, 5}, seed + 3);
    auto d_bias_at = [&](const Tensor& a_value) {
      const Var bias(in.bias, true);
      return backward(
          sum(matmul_bias_activation(Var(a_value), Var(in.b), bias, act) * Var(w)))[bias];
    };
    const Tensor old_d_bias = d_bias_at(in.a), new_d_bias = d_bias_at(a_new);
    ASSERT_NE(compare(old_d_bias, to_ref(new_d_bias), tolerance_for(DType::F64)), "");
    for (bool recompute : {false, true}) {
      for (bool create_graph : {false, true}) {
        Var a(in.a, true);
        const Var b(in.b, true), bias(in.bias, true);
        const Var loss =
            sum(matmul_bias_activation(a, b, bias, act, {.recompute_preactivation = recompute}) *
                Var(w));
        a.assign(a_new);
        const Tensor got = create_graph ? backward(loss, {.create_graph = true})[bias].tensor()
                                        : backward(loss)[bias];
        const bool recomputes = recompute && needs_preactivation(act);
        EXPECT_EQ(compare(got, to_ref(recomputes ? new_d_bias : old_d_bias),
                          accumulation_tolerance(DType::F64, 6)),
                  "")
            << describe(act, "[2,3,4] @ [4,5]", recompute)
            << (create_graph ? " (create_graph)" : "");
      }
    }
  }
}

TEST(AutogradEpilogue, ConstantOperandsGetNoGradient) {
  const Inputs in = make_inputs({2, 3, 4}, {4, 5}, 6000);
  const Var a(in.a), b(in.b, true), bias(in.bias);
  const Var y = matmul_bias_activation(a, b, bias, Activation::Gelu);
  ASSERT_TRUE(y.requires_grad());
  const Gradients g = backward(sum(y));
  EXPECT_TRUE(g.contains(b));
  EXPECT_FALSE(g.contains(a));
  EXPECT_FALSE(g.contains(bias));
  // Without an input that requires grad, or with recording off, the result is a constant.
  EXPECT_FALSE(matmul_bias_activation(a, Var(in.b), bias, Activation::Silu).requires_grad());
  NoGradGuard no_grad;
  EXPECT_FALSE(matmul_bias_activation(a, b, bias, Activation::Silu).requires_grad());
  EXPECT_FALSE(matmul_bias_residual(a, b, bias, Var(zeros({2, 3, 5}, DType::F64))).requires_grad());
}

// A tolerance for a gradient that sums k terms: the terms may cancel, so the elementwise
// error is bounded by the dtype's unit times the size of the terms, not of the result.
// BF16 also rounds what the forward saved (the output or the pre-activation) before
// act' is taken from it, which costs another unit or two.
Tolerance grad_tolerance(DType t, int64_t k, const Tensor& ref) {
  Tolerance tol = accumulation_tolerance(t, k);
  if (t == DType::BF16) {
    tol.rtol *= 2;
    tol.rel_norm *= 2;
  }
  tol.atol += tol.rtol * max_abs(ref);
  return tol;
}

TEST(AutogradEpilogue, LowPrecisionAgainstFloat64) {
  struct Sizes {
    std::string name;
    Shape a, b;
  };
  const std::vector<Sizes> sizes = {{"[3,4] @ [4,5]", {3, 4}, {4, 5}},
                                    {"[37,70] @ [70,45]", {37, 70}, {70, 45}},
                                    {"[3,17,33] @ shared [33,29]", {3, 17, 33}, {33, 29}},
                                    {"[3,17,33] @ per-batch [3,33,29]", {3, 17, 33}, {3, 33, 29}}};
  uint64_t seed = 7000;
  for (DType t : {DType::F32, DType::BF16}) {
    for (Activation act : kActs) {
      for (const Sizes& s : sizes) {
        const Inputs in = make_inputs(s.a, s.b, seed += 10);
        const Shape so = out_shape(s.a, s.b);
        const Tensor w = values(so, seed + 3);
        const Tensor r = values(so, seed + 4);
        const int64_t m = s.a[s.a.size() - 2], k = s.a.back(), n = s.b.back();
        const int64_t rows = so.size() == 3 ? so[0] * m : m;
        const int64_t k_db = s.b.size() == 3 ? m : rows;  // terms summed into one d_b element

        const Var a64(in.a, true), b64(in.b, true), c64(in.bias, true);
        const Var y64 = matmul_bias_activation(a64, b64, c64, act);
        const Gradients g64 = backward(sum(y64 * Var(w)));

        for (bool recompute : {false, true}) {
          const std::string what =
              std::string(dtype_name(t)) + " " + describe(act, s.name, recompute);
          const Var a(in.a.cast(t), true), b(in.b.cast(t), true), c(in.bias.cast(t), true);
          const Var y =
              matmul_bias_activation(a, b, c, act, {.recompute_preactivation = recompute});
          const Gradients g = backward(sum(y * Var(w.cast(t))));
          EXPECT_EQ(compare(y.tensor(), to_ref(y64.tensor()), accumulation_tolerance(t, k)), "")
              << what;
          EXPECT_EQ(compare(g[a], to_ref(g64[a64]), grad_tolerance(t, n, g64[a64])), "")
              << what << " d_a";
          EXPECT_EQ(compare(g[b], to_ref(g64[b64]), grad_tolerance(t, k_db, g64[b64])), "")
              << what << " d_b";
          EXPECT_EQ(compare(g[c], to_ref(g64[c64]), grad_tolerance(t, rows, g64[c64])), "")
              << what << " d_bias";
        }

        if (act != Activation::None) continue;
        // The residual form, once per dtype and size.
        const Var r64(r, true);
        const Var z64 = matmul_bias_residual(a64, b64, c64, r64);
        const Gradients h64 = backward(sum(z64 * Var(w)));
        const Var a(in.a.cast(t), true), b(in.b.cast(t), true), c(in.bias.cast(t), true),
            rr(r.cast(t), true);
        const Var z = matmul_bias_residual(a, b, c, rr);
        const Gradients h = backward(sum(z * Var(w.cast(t))));
        const std::string what = std::string(dtype_name(t)) + " residual " + s.name;
        EXPECT_EQ(compare(z.tensor(), to_ref(z64.tensor()), accumulation_tolerance(t, k + 1)), "")
            << what;
        EXPECT_EQ(compare(h[a], to_ref(h64[a64]), grad_tolerance(t, n, h64[a64])), "")
            << what << " d_a";
        EXPECT_EQ(compare(h[b], to_ref(h64[b64]), grad_tolerance(t, k_db, h64[b64])), "")
            << what << " d_b";
        EXPECT_EQ(compare(h[c], to_ref(h64[c64]), grad_tolerance(t, rows, h64[c64])), "")
            << what << " d_bias";
        EXPECT_EQ(compare(h[rr], to_ref(h64[r64]), tolerance_for(t)), "") << what << " d_residual";
      }
    }
  }
}

}  // namespace
}  // namespace numr::test
