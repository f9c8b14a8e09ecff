// Parity of the GEMM epilogues against the float64 reference and against the unfused
// composition of plain ops: every activation, every float dtype, 2-D a, batched a with a
// shared b and with a per-batch b, odd shapes (one large enough for several row blocks and
// tasks), transposed operands; the backward's d_a, d_b (per batch and summed over batches)
// and d_bias; non-finite derivatives counting as 0.
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/composition.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Activation kActs[] = {Activation::None, Activation::Relu,    Activation::Gelu,
                                Activation::Silu, Activation::Sigmoid, Activation::Tanh};

// How the batch is laid out.
enum class Batch { None, SharedB, PerBatchB };
constexpr Batch kBatches[] = {Batch::None, Batch::SharedB, Batch::PerBatchB};
constexpr int64_t kB = 3;

// (M, K, N); 600x96x160 spans several tasks, and batched it spans several BLAS row blocks
// for F64.
const std::vector<std::array<int64_t, 3>>& sizes() {
  static const std::vector<std::array<int64_t, 3>> s = {
      {1, 1, 1}, {7, 5, 3}, {33, 17, 9}, {130, 70, 90}, {600, 96, 160}};
  return s;
}

struct Inputs {
  Tensor a, b, bias;
  int64_t m = 0, k = 0, n = 0;
  Batch batch = Batch::None;
  std::string label;
};

Inputs make_inputs(std::array<int64_t, 3> mkn, Batch batch, DType t, Device dev, uint64_t seed,
                   Layout la = Layout::Contiguous, Layout lb = Layout::Contiguous) {
  const auto [m, k, n] = mkn;
  Inputs in;
  in.m = m;
  in.k = k;
  in.n = n;
  in.batch = batch;
  const Shape as = batch == Batch::None ? Shape{m, k} : Shape{kB, m, k};
  const Shape bs = batch == Batch::PerBatchB ? Shape{kB, k, n} : Shape{k, n};
  in.a = make_input(as, t, dev, unit_spec(la), seed);
  in.b = make_input(bs, t, dev, unit_spec(lb), seed + 1);
  in.bias = make_input({n}, t, dev, unit_spec(), seed + 2);
  in.label = shape_str(as) + " (layout " + std::to_string(int(la)) + ") @ " + shape_str(bs) +
             " (layout " + std::to_string(int(lb)) + ")";
  return in;
}

std::string with_label(const std::string& what, Activation act, const Inputs& in,
                       const std::string& msg) {
  if (msg.empty()) return "";
  return what + " " + std::string(activation_name(act)) + " " + in.label + ": " + msg;
}

Shape out_shape(const Inputs& in) {
  return in.batch == Batch::None ? Shape{in.m, in.n} : Shape{kB, in.m, in.n};
}

// The unfused composition in the compute type (f32 for F16/BF16, rounded once at the end,
// as the fused op rounds once).
Tensor act_of(const Tensor& x, Activation act) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return relu(x);
    case Activation::Gelu: return gelu(x);
    case Activation::Silu: return silu(x);
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Tanh: return tanh(x);
  }
  return x;
}

Tensor unfused_forward(const Inputs& in, Activation act, const Tensor* residual) {
  const DType t = in.a.dtype(), ct = t == DType::F64 ? DType::F64 : DType::F32;
  Tensor y = act_of(matmul(in.a.cast(ct), in.b.cast(ct)) + in.bias.cast(ct), act);
  if (residual) y = y + residual->cast(ct);
  return y.cast(t);
}

// ---- forward ----

// want and pre, when given, receive the float64 output and pre-activation it compared with.
std::string check_forward(const Inputs& in, Activation act, DType t, RefTensor* want_out = nullptr,
                          RefTensor* pre_out = nullptr) {
  const Tolerance tol = gemm_tolerance(t, in.k);
  RefTensor pre_ref;
  const RefTensor want = reference::matmul_bias_act(to_ref(in.a), to_ref(in.b), to_ref(in.bias),
                                                    act, nullptr, &pre_ref);
  if (want_out) *want_out = want;
  if (pre_out) *pre_out = pre_ref;
  const Tensor got = matmul_bias_activation(in.a, in.b, in.bias, act);
  std::string msg = compare(got, want, tol);
  if (!msg.empty()) return with_label("out", act, in, msg);
  msg = compare(got, to_ref(unfused_forward(in, act, nullptr)), tol);
  if (!msg.empty()) return with_label("fused vs unfused", act, in, msg);
  return "";
}

TEST(ParityEpilogue, ForwardEveryActivationAndBatch) {
  for_each_case(OpId::matmul_bias_activation, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 100;
    for (Batch batch : kBatches)
      for (const auto& s : sizes())
        for (Activation act : kActs) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 3);
          const std::string msg = check_forward(in, act, t);
          if (!msg.empty()) return msg;
        }
    return std::string();
  });
}

TEST(ParityEpilogue, ForwardTransposedOperands) {
  for_each_case(OpId::matmul_bias_activation, float_dtypes(), [](DType t, Device dev) {
    constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided};
    uint64_t seed = 200;
    for (Batch batch : kBatches)
      for (Layout la : kLayouts)
        for (Layout lb : kLayouts)
          for (const std::array<int64_t, 3> s :
               {std::array<int64_t, 3>{33, 17, 9}, std::array<int64_t, 3>{130, 70, 90}})
            for (Activation act : {Activation::Gelu, Activation::Relu}) {
              const Inputs in = make_inputs(s, batch, t, dev, seed += 3, la, lb);
              const std::string msg = check_forward(in, act, t);
              if (!msg.empty()) return msg;
            }
    return std::string();
  });
}

// Outputs larger than the stage of a block: the oneDNN path runs several blocks per task
// (F16, and whenever the pre-activation is kept) and the BLAS path (F64) several row blocks.
TEST(ParityEpilogue, ForwardManyBlocks) {
  for_each_case(OpId::matmul_bias_activation, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 300;
    for (Batch batch : {Batch::None, Batch::PerBatchB}) {
      const Inputs in = make_inputs({1100, 64, 1030}, batch, t, dev, seed += 3);
      for (Activation act : {Activation::Gelu, Activation::Tanh}) {
        RefTensor want, pre_ref;
        std::string msg = check_forward(in, act, t, &want, &pre_ref);
        if (!msg.empty()) return msg;
        const EpilogueForward f = matmul_bias_activation_fwd(in.a, in.b, in.bias, act);
        const Tolerance tol = gemm_tolerance(t, in.k);
        msg = compare(f.out, want, tol);
        if (msg.empty()) msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, tol);
        if (!msg.empty()) return with_label("fwd", act, in, msg);
      }
    }
    return std::string();
  });
}

TEST(ParityEpilogue, ForwardSavesWhatBackwardNeeds) {
  for_each_case(OpId::matmul_bias_activation, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 400;
    for (Batch batch : kBatches)
      for (const auto& s : sizes())
        for (Activation act : kActs) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 3, Layout::Transposed);
          RefTensor pre_ref;
          const RefTensor want = reference::matmul_bias_act(
              to_ref(in.a), to_ref(in.b), to_ref(in.bias), act, nullptr, &pre_ref);
          const EpilogueForward f = matmul_bias_activation_fwd(in.a, in.b, in.bias, act);
          const Tolerance tol = gemm_tolerance(t, in.k);
          std::string msg = compare(f.out, want, tol);
          if (!msg.empty()) return with_label("fwd out", act, in, msg);
          msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, tol);
          if (!msg.empty()) return with_label("fwd saved", act, in, msg);
          // The output is computed from the unrounded pre-activation, not from saved.
          msg = compare(f.out, to_ref(unfused_forward(in, act, nullptr)), tol);
          if (!msg.empty()) return with_label("fwd vs unfused", act, in, msg);
        }
    return std::string();
  });
}

TEST(ParityEpilogue, Residual) {
  for_each_case(OpId::matmul_bias_residual, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 500;
    for (Batch batch : kBatches)
      for (const auto& s : sizes())
        for (Layout l : {Layout::Contiguous, Layout::Transposed}) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 4, l, l);
          const Tensor r = make_input(out_shape(in), t, dev, unit_spec(l), seed + 3);
          const RefTensor rr = to_ref(r);
          const RefTensor want = reference::matmul_bias_act(to_ref(in.a), to_ref(in.b),
                                                            to_ref(in.bias), Activation::None, &rr);
          const Tensor got = matmul_bias_residual(in.a, in.b, in.bias, r);
          const Tolerance tol = gemm_tolerance(t, in.k);
          std::string msg = compare(got, want, tol);
          if (!msg.empty()) return with_label("residual", Activation::None, in, msg);
          msg = compare(got, to_ref(unfused_forward(in, Activation::None, &r)), tol);
          if (!msg.empty()) return with_label("residual vs unfused", Activation::None, in, msg);
        }
    return std::string();
  });
}

TEST(ParityEpilogue, EmptyAndZeroK) {
  for_each_case(OpId::matmul_bias_activation, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 600;
    for (const std::array<int64_t, 3> s :
         {std::array<int64_t, 3>{4, 0, 3}, std::array<int64_t, 3>{0, 5, 3},
          std::array<int64_t, 3>{4, 5, 0}})
      for (Batch batch : kBatches)
        for (Activation act : {Activation::Gelu, Activation::Sigmoid}) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 3);
          const std::string msg = check_forward(in, act, t);
          if (!msg.empty()) return msg;
        }
    return std::string();
  });
}

// ---- backward ----

// grad * act'(pre) by numr's activation-backward ops.
Tensor act_bwd_of(const Tensor& grad, const Tensor& pre, Activation act) {
  switch (act) {
    case Activation::None: return grad;
    case Activation::Relu: return relu_bwd(grad, pre);
    case Activation::Gelu: return gelu_bwd(grad, pre);
    case Activation::Silu: return silu_bwd(grad, pre);
    case Activation::Sigmoid: return sigmoid_bwd(grad, pre);
    case Activation::Tanh: return tanh_bwd(grad, pre);
  }
  return grad;
}

RefTensor transpose_last(const RefTensor& x) {
  const size_t nd = x.shape.size();
  const int64_t rows = x.shape[nd - 2], cols = x.shape[nd - 1];
  const int64_t items = rows * cols == 0 ? 0 : int64_t(x.v.size()) / (rows * cols);
  RefTensor y;
  y.shape = x.shape;
  std::swap(y.shape[nd - 2], y.shape[nd - 1]);
  y.v.resize(x.v.size());
  for (int64_t i = 0; i < items; ++i)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        y.v[size_t((i * cols + c) * rows + r)] = x.v[size_t((i * rows + r) * cols + c)];
  return y;
}

// The reference d_a and d_b from a grad_pre (already in the dtype's values).
void reference_gemm_grads(const Inputs& in, const RefTensor& gp, RefTensor& d_a, RefTensor& d_b) {
  const RefTensor a = to_ref(in.a), b = to_ref(in.b);
  d_a = reference::matmul(gp, transpose_last(b));
  if (in.batch == Batch::SharedB) {
    // Σ over batches of a[i]ᵀ @ gp[i]: one product over the stacked rows.
    RefTensor a2{{kB * in.m, in.k}, a.v}, g2{{kB * in.m, in.n}, gp.v};
    d_b = reference::matmul(transpose_last(a2), g2);
  } else {
    d_b = reference::matmul(transpose_last(a), gp);
  }
}

// The unfused composition's gradients with plain ops: d_a and d_b from grad_pre in the
// dtype (the shared-b sum in the compute type, rounded once), d_bias from grad_pre in the
// compute type, before its rounding to the dtype.
void unfused_gemm_grads(const Inputs& in, const Tensor& gp, const Tensor& gp_wide, Tensor& d_a,
                        Tensor& d_b, Tensor& d_bias) {
  const DType t = in.a.dtype(), ct = t == DType::F64 ? DType::F64 : DType::F32;
  d_a = matmul(gp, in.b.transpose(in.b.dim() - 2, in.b.dim() - 1));
  const Tensor at = in.a.transpose(in.a.dim() - 2, in.a.dim() - 1);
  if (in.batch == Batch::SharedB)
    d_b = sum(matmul(at.cast(ct), gp.cast(ct)), {0}).cast(t);
  else
    d_b = matmul(at, gp);
  std::vector<int64_t> lead;
  for (int64_t d = 0; d + 1 < gp.dim(); ++d) lead.push_back(d);
  d_bias = sum(gp_wide, lead).cast(t);
}

// grad * act'(...) with plain ops in the compute type (not rounded to the dtype), from the
// pre-activation (Gelu, Silu) or the output (others), as the fused pass does.
Tensor unfused_grad_pre(const Tensor& grad, const Tensor& saved, Activation act) {
  const DType ct = grad.dtype() == DType::F64 ? DType::F64 : DType::F32;
  const Tensor g = grad.cast(ct), s = saved.cast(ct);
  Tensor gp;
  switch (act) {
    case Activation::None: gp = g; break;
    case Activation::Relu: gp = relu_bwd(g, s); break;  // y > 0 exactly when x > 0
    case Activation::Gelu: gp = gelu_bwd(g, s); break;
    case Activation::Silu: gp = silu_bwd(g, s); break;
    case Activation::Sigmoid: gp = g * (s * rsub_scalar(s, 1.0)); break;
    case Activation::Tanh: gp = g * rsub_scalar(s * s, 1.0); break;
  }
  return gp;
}

// When the harness forces the backward's composition, the grad_pre the tests hand the
// reference GEMMs must come from the compositions too, so that both read the same values.
const std::initializer_list<OpId> kBackwardParts = {OpId::bias_activation_bwd,
                                                    OpId::matmul_bias_activation,
                                                    OpId::relu_bwd,
                                                    OpId::gelu_bwd,
                                                    OpId::silu_bwd,
                                                    OpId::sigmoid_bwd,
                                                    OpId::tanh_bwd};
bool backward_composed() { return composition_forced(OpId::matmul_bias_activation_bwd); }

std::string check_backward(const Inputs& in, Activation act, DType t, Device dev, uint64_t seed) {
  const ForceComposition path(backward_composed(), kBackwardParts);
  const Tensor grad = make_input(out_shape(in), t, dev, unit_spec(), seed);
  const EpilogueForward f = matmul_bias_activation_fwd(in.a, in.b, in.bias, act);
  const bool from_pre = needs_preactivation(act);
  const int64_t rows = in.batch == Batch::None ? in.m : kB * in.m;

  // The fused pass against the reference.
  RefTensor gp_ref, db_ref;
  reference::bias_act_bwd(to_ref(grad), to_ref(f.saved), act, from_pre, gp_ref, db_ref);
  const auto [gp, db] = bias_activation_bwd(grad, f.saved, act);
  std::string msg = compare(gp, gp_ref, tolerance_for(t));
  if (!msg.empty()) return with_label("grad_pre", act, in, msg);
  msg = compare(db, db_ref, accumulation_tolerance(t, rows));
  if (!msg.empty()) return with_label("bias_activation_bwd d_bias", act, in, msg);
  const Tensor gp_wide = unfused_grad_pre(grad, f.saved, act);
  msg = compare(gp, to_ref(gp_wide), tolerance_for(t));
  if (!msg.empty()) return with_label("grad_pre vs unfused", act, in, msg);

  // The whole backward from what the forward saved. Its GEMMs read grad_pre in the dtype,
  // which the pass above gives bit for bit (the same kernel), so the reference GEMMs take
  // that: a reference grad_pre rounded on its own may land one unit away in a few elements.
  const EpilogueGrads g = matmul_bias_activation_bwd_saved(grad, in.a, in.b, f.saved, act);
  RefTensor da_ref, dbw_ref;
  reference_gemm_grads(in, to_ref(gp), da_ref, dbw_ref);
  msg = compare(g.d_a, da_ref, gemm_tolerance(t, in.n));
  if (!msg.empty()) return with_label("d_a", act, in, msg);
  msg = compare(g.d_b, dbw_ref, gemm_tolerance(t, rows));
  if (!msg.empty()) return with_label("d_b", act, in, msg);
  msg = compare(g.d_bias, db_ref, accumulation_tolerance(t, rows));
  if (!msg.empty()) return with_label("d_bias", act, in, msg);

  // ... and against the unfused composition's gradients from the same grad_pre.
  Tensor da_u, dbw_u, dbias_u;
  unfused_gemm_grads(in, gp, gp_wide, da_u, dbw_u, dbias_u);
  msg = compare(g.d_a, to_ref(da_u), gemm_tolerance(t, in.n));
  if (!msg.empty()) return with_label("d_a vs unfused", act, in, msg);
  msg = compare(g.d_b, to_ref(dbw_u), gemm_tolerance(t, rows));
  if (!msg.empty()) return with_label("d_b vs unfused", act, in, msg);
  msg = compare(g.d_bias, to_ref(dbias_u), accumulation_tolerance(t, rows));
  if (!msg.empty()) return with_label("d_bias vs unfused", act, in, msg);
  return "";
}

TEST(ParityEpilogue, BackwardFromSaved) {
  for_each_case(OpId::matmul_bias_activation_bwd, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 700;
    for (Batch batch : kBatches)
      for (const auto& s : sizes())
        for (Activation act : kActs) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 4);
          const std::string msg = check_backward(in, act, t, dev, seed + 3);
          if (!msg.empty()) return msg;
        }
    return std::string();
  });
}

TEST(ParityEpilogue, BackwardTransposedOperands) {
  for_each_case(OpId::matmul_bias_activation_bwd, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 800;
    for (Batch batch : kBatches)
      for (Activation act : {Activation::Silu, Activation::Tanh}) {
        const Inputs in = make_inputs({130, 70, 90}, batch, t, dev, seed += 4, Layout::Transposed,
                                      Layout::Transposed);
        const std::string msg = check_backward(in, act, t, dev, seed + 3);
        if (!msg.empty()) return msg;
      }
    return std::string();
  });
}

// numr's signature recomputes the pre-activation and takes every derivative from it.
TEST(ParityEpilogue, BackwardRecomputing) {
  for_each_case(OpId::matmul_bias_activation_bwd, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 900;
    for (Batch batch : kBatches)
      for (const auto& s : sizes())
        for (Activation act : kActs) {
          const Inputs in = make_inputs(s, batch, t, dev, seed += 4);
          const Tensor grad = make_input(out_shape(in), t, dev, unit_spec(), seed + 3);
          const ForceComposition path(backward_composed(), kBackwardParts);
          const int64_t rows = in.batch == Batch::None ? in.m : kB * in.m;
          // The pre-activation as the op computes it (rounded to the dtype), and grad_pre
          // from it by numr's activation-backward op: the same formula, rounded once, so
          // the reference GEMMs read the grad_pre the op's GEMMs read.
          const Tensor pre = matmul_bias_activation_fwd(in.a, in.b, in.bias, Activation::None).out;
          RefTensor gp_ref, db_ref, da_ref, dbw_ref;
          reference::bias_act_bwd(to_ref(grad), to_ref(pre), act, true, gp_ref, db_ref);
          const Tensor gp = act_bwd_of(grad, pre, act);
          std::string msg = compare(gp, gp_ref, tolerance_for(t));
          if (!msg.empty()) return with_label("grad_pre", act, in, msg);
          reference_gemm_grads(in, to_ref(gp), da_ref, dbw_ref);
          const EpilogueGrads g = matmul_bias_activation_bwd(grad, in.a, in.b, in.bias, act);
          msg = compare(g.d_a, da_ref, gemm_tolerance(t, in.n));
          if (msg.empty()) msg = compare(g.d_b, dbw_ref, gemm_tolerance(t, rows));
          if (msg.empty()) msg = compare(g.d_bias, db_ref, accumulation_tolerance(t, rows));
          if (!msg.empty()) return with_label("bwd", act, in, msg);
        }
    return std::string();
  });
}

TEST(ParityEpilogue, BiasActivationBwdShapes) {
  for_each_case(OpId::bias_activation_bwd, float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 1000;
    for (const Shape& s :
         std::vector<Shape>{{1}, {7}, {33, 17}, {5, 7, 11}, {2, 1030}, {3000, 40}, {0, 5}, {4, 0}})
      for (Activation act : kActs) {
        const Tensor grad = make_input(s, t, dev, unit_spec(Layout::Contiguous), seed += 2);
        InputSpec xs;
        xs.lo = -4.0;
        xs.hi = 4.0;
        xs.layout = s.size() >= 2 ? Layout::Transposed : Layout::Contiguous;
        Tensor saved = make_input(s, t, dev, xs, seed + 1);
        if (!needs_preactivation(act)) saved = act_of(saved, act);  // an output
        RefTensor gp_ref, db_ref;
        reference::bias_act_bwd(to_ref(grad), to_ref(saved), act, needs_preactivation(act), gp_ref,
                                db_ref);
        const auto [gp, db] = bias_activation_bwd(grad, saved, act);
        const int64_t rows = s.back() == 0 ? 0 : shape_numel(s) / s.back();
        std::string msg = compare(gp, gp_ref, tolerance_for(t));
        if (msg.empty()) msg = compare(db, db_ref, accumulation_tolerance(t, rows));
        if (!msg.empty())
          return shape_str(s) + " " + std::string(activation_name(act)) + ": " + msg;
      }
    return std::string();
  });
}

// A derivative that is not finite (Silu and Gelu at -inf: 0 * inf) counts as 0, and the
// gradients stay finite.
TEST(ParityEpilogue, NonFiniteDerivativeIsZero) {
  for_each_case(OpId::bias_activation_bwd, float_dtypes(), [](DType t, Device dev) {
    const double inf = std::numeric_limits<double>::infinity();
    const Tensor saved =
        Tensor::from_vector(std::vector<double>{-inf, -inf, 0.5, -inf, 2.0, -inf}, {3, 2})
            .cast(t)
            .to(dev);
    const Tensor grad = full({3, 2}, 1.5, t, dev);
    for (Activation act : {Activation::Silu, Activation::Gelu}) {
      RefTensor gp_ref, db_ref;
      reference::bias_act_bwd(to_ref(grad), to_ref(saved), act, true, gp_ref, db_ref);
      if (gp_ref.v[0] != 0.0) return std::string("reference derivative at -inf is not 0");
      const auto [gp, db] = bias_activation_bwd(grad, saved, act);
      std::string msg = compare(gp, gp_ref, tolerance_for(t));
      if (msg.empty()) msg = compare(db, db_ref, accumulation_tolerance(t, 3));
      for (double v : to_ref(gp).v)
        if (!std::isfinite(v)) msg = "non-finite grad_pre";
      if (!msg.empty()) return std::string(activation_name(act)) + ": " + msg;

      // Through the whole backward: a pre-activation of -inf from an infinite bias.
      const Tensor a = make_input({4, 3}, t, dev, unit_spec(), 7);
      const Tensor b = make_input({3, 2}, t, dev, unit_spec(), 8);
      const Tensor g4 = full({4, 2}, 1.0, t, dev);
      const Tensor pre = full({4, 2}, -inf, t, dev);
      const EpilogueGrads g = matmul_bias_activation_bwd_saved(g4, a, b, pre, act);
      for (const Tensor* x : {&g.d_a, &g.d_b, &g.d_bias})
        for (double v : to_ref(*x).v)
          if (v != 0.0) return std::string(activation_name(act)) + ": gradient not 0 at -inf";
    }
    return std::string();
  });
}

}  // namespace
}  // namespace numr::test
