// The fused CUDA kernels of scaled_dot_product_attention against the composition (run on
// the same device) and the float64 reference: sequence lengths around and far from the tile
// (1, 17, 64, 129, 1000), Lq != Lk, head dims 32, 64, 80, 128 and 256, Ev != E, causal,
// Bool and additive masks with fully masked queries, broadcast batch dims and views, F32,
// F16 and BF16, the output and the gradients in q, k and v (the F64 composition on the CPU
// is their reference), bitwise-repeatable gradients, and which path each call takes. Without
// a CUDA device those tests skip; the PtxAttention tests assemble every kernel with ptxas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/kernel_catalog.h"
#include "core/backend.h"
#include "core/composition.h"
#include "support/cuda_test.h"
#include "support/harness.h"
#include "support/ptxas.h"

namespace numr::test {
namespace {

constexpr OpId kOp = OpId::scaled_dot_product_attention;

// Mask kinds: none, Bool [Lq, Lk], additive [Lq, Lk] (-inf entries), Bool with every third
// query fully masked.
enum class MaskKind { None, Bool, Additive, DeadRows };

struct Case {
  int64_t b, h, lq, lk, e, ev;
  bool causal = false;
  MaskKind mask = MaskKind::None;
};

std::string describe(const Case& c, DType t) {
  return std::string(dtype_name(t)) + " B" + std::to_string(c.b) + " H" + std::to_string(c.h) +
         " Lq" + std::to_string(c.lq) + " Lk" + std::to_string(c.lk) + " E" + std::to_string(c.e) +
         " Ev" + std::to_string(c.ev) + (c.causal ? " causal" : "") + " mask" +
         std::to_string(int(c.mask));
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {1, 1, 1, 1, 32, 32},
      {2, 3, 17, 17, 64, 64, true},
      {1, 2, 64, 64, 80, 80},
      {2, 2, 129, 129, 128, 128, true},
      {1, 1, 1000, 1000, 64, 64, true},
      {1, 2, 129, 1000, 32, 32, false, MaskKind::Bool},
      {1, 2, 1000, 17, 128, 128, true},
      {2, 1, 17, 129, 80, 64, false, MaskKind::Additive},
      {1, 2, 64, 129, 64, 64, false, MaskKind::DeadRows},
      {1, 1, 33, 65, 128, 128, true, MaskKind::DeadRows},
      {1, 1, 100, 80, 256, 200},
  };
  return all;
}

// The mask of c on dev (undefined for None); q's dtype t for the additive one.
Tensor make_mask(const Case& c, DType t, Device dev, uint64_t seed) {
  if (c.mask == MaskKind::None) return Tensor();
  const std::vector<double> u =
      make_input({c.lq, c.lk}, DType::F64, Device::cpu(), {.lo = 0, .hi = 1}, seed)
          .to_vector<double>();
  std::vector<bool> keep(u.size());
  for (size_t n = 0; n < u.size(); ++n) {
    const int64_t i = int64_t(n) / c.lk;
    keep[n] = u[n] > 0.3 && !(c.mask == MaskKind::DeadRows && i % 3 == 1);
  }
  const Tensor kb = Tensor::from_vector(keep, {c.lq, c.lk}, dev);
  if (c.mask != MaskKind::Additive) return kb;
  const Tensor add = make_input({c.lq, c.lk}, t, dev, unit_spec(), seed + 1);
  return where_cond(kb, add, -std::numeric_limits<double>::infinity());
}

struct Inputs {
  Tensor q, k, v, mask, w;  // w: the weights of the loss sum(out * w)
};

Inputs make_inputs(const Case& c, DType t, Device dev, uint64_t seed) {
  Inputs in;
  in.q = make_input({c.b, c.h, c.lq, c.e}, t, dev, unit_spec(), seed);
  in.k = make_input({c.b, c.h, c.lk, c.e}, t, dev, unit_spec(), seed + 1);
  in.v = make_input({c.b, c.h, c.lk, c.ev}, t, dev, unit_spec(), seed + 2);
  in.w = make_input({c.b, c.h, c.lq, c.ev}, t, dev, unit_spec(), seed + 3);
  in.mask = make_mask(c, t, dev, seed + 4);
  return in;
}

Tensor on(const Tensor& x, Device dev) { return x.defined() ? x.to(dev) : x; }

// The float64 reference of the output, from the inputs' values.
RefTensor reference_out(const Case& c, const Inputs& in) {
  const Shape scores{c.b, c.h, c.lq, c.lk};
  const RefTensor rm =
      in.mask.defined() ? to_ref(in.mask.broadcast_to(scores).contiguous()) : RefTensor{};
  return reference::attention(
      to_ref(in.q), to_ref(in.k), to_ref(in.v), in.mask.defined() ? &rm : nullptr,
      in.mask.defined() && in.mask.dtype() == DType::Bool, c.causal, 1.0 / std::sqrt(double(c.e)));
}

struct Grads {
  Tensor out, d_q, d_k, d_v;
};

// The output and the gradients of sum(out * w) in q, k and v.
Grads run(const Inputs& in, bool causal) {
  const Var q(in.q, true), k(in.k, true), v(in.v, true);
  const Var out = scaled_dot_product_attention(q, k, v, in.mask, causal);
  const Gradients g = backward(sum(out * Var(in.w, false)));
  return {out.tensor(), g[q], g[k], g[v]};
}

// The same on the CPU in F64 through the composition: the gradients' reference.
Grads run_f64(const Inputs& in, bool causal) {
  Inputs w;
  auto f64 = [](const Tensor& x) {
    return x.to(Device::cpu()).cast(x.dtype() == DType::Bool ? DType::Bool : DType::F64);
  };
  w.q = f64(in.q);
  w.k = f64(in.k);
  w.v = f64(in.v);
  w.w = f64(in.w);
  if (in.mask.defined()) w.mask = f64(in.mask);
  return run(w, causal);
}

// The values as doubles (exact for every float dtype).
std::vector<double> host_values(const Tensor& x) {
  return x.to(Device::cpu()).cast(DType::F64).contiguous().to_vector<double>();
}

// Every element of rows i % 3 == 1 of x ([.., Lq, D]) is exactly 0.
std::string dead_rows_zero(const Tensor& x, int64_t lq) {
  const std::vector<double> v = host_values(x);
  const int64_t d = x.size(-1);
  for (size_t n = 0; n < v.size(); ++n) {
    const int64_t i = (int64_t(n) / d) % lq;
    if (i % 3 == 1 && v[n] != 0)
      return "element " + std::to_string(n) + " of a fully masked query is " + std::to_string(v[n]);
  }
  return "";
}

DType cuda_dtypes[] = {DType::F32, DType::F16, DType::BF16};

TEST(CudaAttention, ForwardMatchesReferenceAndComposition) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  uint64_t seed = 100;
  for (const Case& c : cases())
    for (DType t : cuda_dtypes) {
      const std::string what = describe(c, t);
      const Inputs in = make_inputs(c, t, Device::cpu(), seed += 10);
      const Tensor q = in.q.to(dev), k = in.k.to(dev), v = in.v.to(dev), m = on(in.mask, dev);
      const uint64_t before = path_counts(kOp).kernel;
      const Tensor got = scaled_dot_product_attention(q, k, v, m, c.causal);
      EXPECT_EQ(path_counts(kOp).kernel, before + 1) << what << ": the kernel did not run";
      Tensor composed;
      {
        const ForceComposition force({kOp});
        composed = scaled_dot_product_attention(q, k, v, m, c.causal);
      }
      const RefTensor want = reference_out(c, in);
      const Tolerance tol = accumulation_tolerance(t, c.e + c.lk);
      EXPECT_EQ(compare(got, want, tol), "") << what << " (kernel)";
      EXPECT_EQ(compare(composed, want, tol), "") << what << " (composition)";
      if (c.mask == MaskKind::DeadRows) {
        EXPECT_EQ(dead_rows_zero(got, c.lq), "") << what;
      }
    }
}

TEST(CudaAttention, GradientsMatchReferenceAndComposition) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  uint64_t seed = 5000;
  for (const Case& c : cases())
    for (DType t : cuda_dtypes) {
      const std::string what = describe(c, t);
      const Inputs host = make_inputs(c, t, Device::cpu(), seed += 10);
      Inputs in = host;
      in.q = host.q.to(dev);
      in.k = host.k.to(dev);
      in.v = host.v.to(dev);
      in.w = host.w.to(dev);
      in.mask = on(host.mask, dev);
      const Grads got = run(in, c.causal);
      Grads composed;
      {
        const ForceComposition force({kOp});
        composed = run(in, c.causal);
      }
      const Grads want = run_f64(host, c.causal);
      const Tolerance tol = accumulation_tolerance(t, c.lq + c.lk + c.e);
      const std::pair<const char*, const Tensor Grads::*> parts[] = {
          {"out", &Grads::out}, {"d_q", &Grads::d_q}, {"d_k", &Grads::d_k}, {"d_v", &Grads::d_v}};
      for (const auto& [name, part] : parts) {
        const RefTensor ref = to_ref(want.*part);
        EXPECT_EQ(compare(got.*part, ref, tol), "") << what << " " << name << " (kernel)";
        EXPECT_EQ(compare(composed.*part, ref, tol), "") << what << " " << name << " (composition)";
      }
      if (c.mask == MaskKind::DeadRows) {
        EXPECT_EQ(dead_rows_zero(got.d_q, c.lq), "") << what;
      }
    }
}

// Batch dims that broadcast (k and v shared by the query heads' batch), a 1-D padding mask,
// a transposed q and a narrowed k: the front end's views and the summed gradients.
TEST(CudaAttention, BroadcastAndViews) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  for (DType t : cuda_dtypes) {
    const Tensor q = make_input({2, 3, 40, 64}, t, Device::cpu(), unit_spec(Layout::Transposed), 1);
    const Tensor k = make_input({1, 3, 70, 64}, t, Device::cpu(), unit_spec(Layout::Strided), 2);
    const Tensor v = make_input({3, 70, 48}, t, Device::cpu(), unit_spec(), 3);
    const Tensor w = make_input({2, 3, 40, 48}, t, Device::cpu(), unit_spec(), 4);
    std::vector<bool> keep(70, true);
    for (size_t j = 0; j < keep.size(); j += 4) keep[j] = false;
    const Tensor mask = Tensor::from_vector(keep, {70}, Device::cpu());
    Inputs host{q, k, v, mask, w};
    Inputs in{q.to(dev), k.to(dev), v.to(dev), mask.to(dev), w.to(dev)};
    for (bool causal : {false, true}) {
      const std::string what = std::string(dtype_name(t)) + (causal ? " causal" : "");
      const uint64_t before = path_counts(kOp).kernel;
      const Grads got = run(in, causal);
      EXPECT_EQ(path_counts(kOp).kernel, before + 1) << what;
      const Grads want = run_f64(host, causal);
      const Tolerance tol = accumulation_tolerance(t, 40 + 70 + 64);
      EXPECT_EQ(compare(got.out, to_ref(want.out), tol), "") << what << " out";
      EXPECT_EQ(compare(got.d_q, to_ref(want.d_q), tol), "") << what << " d_q";
      EXPECT_EQ(compare(got.d_k, to_ref(want.d_k), tol), "") << what << " d_k";
      EXPECT_EQ(compare(got.d_v, to_ref(want.d_v), tol), "") << what << " d_v";
    }
  }
}

// The backward writes each gradient element from one thread in a fixed order: two runs give
// the same bits.
TEST(CudaAttention, GradientsRepeatBitwise) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  const Case c{2, 4, 300, 257, 64, 64, true};
  for (DType t : cuda_dtypes) {
    Inputs in = make_inputs(c, t, dev, 77);
    const Grads a = run(in, true), b = run(in, true);
    for (const auto& [x, y] : {std::pair{a.d_q, b.d_q}, {a.d_k, b.d_k}, {a.d_v, b.d_v}})
      EXPECT_EQ(host_values(x), host_values(y)) << dtype_name(t);
  }
}

// Second order through the kernel's Var: the create_graph pass composes the gradients, so
// they differentiate again and agree with the F64 composition's.
TEST(CudaAttention, SecondOrder) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  const Case c{1, 2, 20, 30, 32, 32, true, MaskKind::DeadRows};
  const Inputs host = make_inputs(c, DType::F32, Device::cpu(), 9);
  auto second = [&](const Inputs& in) {
    const Var q(in.q, true), k(in.k, true), v(in.v, true);
    const Var out = scaled_dot_product_attention(q, k, v, in.mask, true);
    const VarGradients g = backward(sum(out * Var(in.w, false)), {.create_graph = true});
    const Gradients g2 = backward(sum(g[q] * g[q]) + sum(g[k]) + sum(g[v] * g[v]));
    return std::vector<Tensor>{g2[q], g2[k], g2[v]};
  };
  Inputs in{host.q.to(dev), host.k.to(dev), host.v.to(dev), host.mask.to(dev), host.w.to(dev)};
  Inputs h64{host.q.cast(DType::F64), host.k.cast(DType::F64), host.v.cast(DType::F64), host.mask,
             host.w.cast(DType::F64)};
  const std::vector<Tensor> got = second(in), want = second(h64);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(compare(got[i], to_ref(want[i]), accumulation_tolerance(DType::F32, 200)), "")
        << "input " << i;
}

// F64 and head dims above kAttentionMaxDim run the composition on CUDA; the kernel dtypes
// run the kernel.
TEST(CudaAttention, PathChoice) {
  REQUIRE_CUDA();
  const Device dev = Device::cuda(0);
  auto path = [&](DType t, int64_t e) {
    const Tensor q = zeros({2, 4, e}, t, dev);
    const PathCounts before = path_counts(kOp);
    scaled_dot_product_attention(q, q, q);
    return path_counts(kOp).kernel > before.kernel ? "kernel" : "composition";
  };
  EXPECT_STREQ(path(DType::F32, 64), "kernel");
  EXPECT_STREQ(path(DType::BF16, 256), "kernel");
  EXPECT_STREQ(path(DType::F16, kAttentionMaxDim + 1), "composition");
  EXPECT_STREQ(path(DType::F64, 64), "composition");
}

TEST(PtxAttention, SharedMemoryFitsSm80) {
  // sm_80's opt-in limit of dynamic shared memory per block (sm_90 allows more).
  constexpr int64_t kSm80Shared = 163 * 1024;
  for (cuda::AttentionKernel kind :
       {cuda::AttentionKernel::forward, cuda::AttentionKernel::backward_kv,
        cuda::AttentionKernel::backward_q})
    for (int dmax : {32, 64, 128, 256}) {
      const cuda::AttentionKernelConfig cfg{kind, DType::F16, dmax};
      EXPECT_LE(cfg.shared_bytes(), kSm80Shared) << cfg.name();
      if (kind == cuda::AttentionKernel::forward && dmax <= 128) {
        const cuda::AttentionKernelConfig mma{kind, DType::BF16, dmax, true};
        EXPECT_LE(mma.shared_bytes(), kSm80Shared) << mma.name();
      }
    }
}

// The tensor-core kernels and every kind at head dim 64 (PtxCatalog assembles them all).
TEST(PtxAttention, AssemblesForSm80AndSm90) {
  NUMR_REQUIRE_PTXAS();
  for (const ptx::Target t : {ptx::Target{80, 8, 7}, ptx::Target{90, 8, 7}}) {
    const std::vector<cuda::GeneratedKernel> ks = cuda::attention_kernels(t);
    EXPECT_EQ(ks.size(), 42u);
    for (const cuda::GeneratedKernel& k : ks) {
      const bool mma = k.name.ends_with("_mma");
      if (!mma && !k.name.ends_with("_d64")) continue;
      const PtxasResult r = assemble(k.ptx, t.sm);
      EXPECT_TRUE(r.ok()) << k.name << " sm_" << t.sm << ": " << r.output;
    }
  }
}

}  // namespace
}  // namespace numr::test
