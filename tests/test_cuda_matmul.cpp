// The CUDA GEMMs beyond what the parity harness reaches: which views cuBLASLt reads in
// place (transposed, strided, broadcast batch) and which get copied, empty inner dims,
// TF32 on and off, 16-bit products rounded once (small and split-K shapes), every epilogue
// form (fused by cuBLASLt or finished by the elementwise pass) with and without the saved
// pre-activation, F16/BF16 epilogues direct and staged in f32 (a bias cancelling the
// product, several blocks), GELU at the GEMM tolerance, misaligned operands, a large
// product against the CPU, and, with no GPU needed, the epilogue pass's PTX through ptxas,
// the choice of epilogue forms and the staging blocks run on a host model of cuBLASLt.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/gemm_epilogue_chunks.h"
#include "backends/cuda/gemm_epilogue_forms.h"
#include "backends/cuda/gemm_epilogue_own.h"
#include "backends/cuda/kernel_catalog.h"
#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/sm90_gemm.h"
#include "core/backend.h"
#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/harness.h"
#include "support/ptxas.h"

namespace {

using namespace numr;
namespace cu = numr::cuda;
using numr::test::compare;
using numr::test::gemm_tolerance;
using numr::test::to_ref;
using numr::test::Tolerance;

const Device kGpu = Device::cuda(0);

// Uniform values in [-1, 1] on the CPU, rounded to dt.
Tensor uniform(const Shape& shape, DType dt, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(size_t(shape_numel(shape)));
  for (float& x : v) x = u(rng);
  return Tensor::from_vector<float>(v, shape, Device::cpu()).cast(dt);
}

// Twice the GEMM tolerance: two results that may each be off by it.
Tolerance between_devices(DType dt, int64_t k) {
  Tolerance t = gemm_tolerance(dt, k);
  t.atol *= 2;
  t.rtol *= 2;
  t.rel_norm *= 2;
  return t;
}

// got (any device) against the float64 product of a and b (any device).
std::string vs_reference(const Tensor& got, const Tensor& a, const Tensor& b) {
  return compare(got, reference::matmul(to_ref(a), to_ref(b)),
                 gemm_tolerance(got.dtype(), a.shape().back()));
}

// The relative Frobenius-norm error of got against want.
double rel_norm_error(const Tensor& got, const Tensor& want) {
  const std::vector<double> g = to_ref(got).v, w = to_ref(want).v;
  double e2 = 0, w2 = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    e2 += (g[i] - w[i]) * (g[i] - w[i]);
    w2 += w[i] * w[i];
  }
  return std::sqrt(e2 / w2);
}

class Tf32Guard {
 public:
  explicit Tf32Guard(bool on) : old_(allow_tf32()) { set_allow_tf32(on); }
  ~Tf32Guard() { set_allow_tf32(old_); }

 private:
  bool old_;
};

// ---- no GPU needed ----

TEST(CudaMatmul, EpiloguePassGeneratesForEveryTarget) {
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    const std::vector<cu::GeneratedKernel> kernels = cu::epilogue_kernels(t);
    ASSERT_FALSE(kernels.empty());
    std::set<std::string> names;
    for (const cu::GeneratedKernel& k : kernels)
      EXPECT_TRUE(names.insert(k.name).second) << "two kernels named " << k.name;
  }
}

TEST(CudaMatmul, EpiloguePassAssemblesForEveryTarget) {
  NUMR_REQUIRE_PTXAS();
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    const std::vector<cu::GeneratedKernel> kernels = cu::epilogue_kernels(t);
    ASSERT_FALSE(kernels.empty());
    for (const cu::GeneratedKernel& k : kernels) {
      const numr::test::PtxasResult r = numr::test::assemble(k.ptx, t.sm);
      EXPECT_TRUE(r.ok()) << k.name << " sm_" << t.sm << ":\n" << r.output;
    }
  }
}

TEST(CudaMatmul, MatrixLayoutsReadInPlace) {
  using cu::lt_matrix_layout;
  auto is = [](cu::MatrixLayout l, bool col_major, int64_t ld) {
    return l.ok && l.col_major == col_major && l.ld == ld;
  };
  EXPECT_TRUE(is(lt_matrix_layout(3, 4, 4, 1), false, 4));   // dense
  EXPECT_TRUE(is(lt_matrix_layout(3, 4, 6, 1), false, 6));   // rows of a wider matrix
  EXPECT_TRUE(is(lt_matrix_layout(3, 4, 1, 3), true, 3));    // transposed
  EXPECT_TRUE(is(lt_matrix_layout(3, 4, 1, 8), true, 8));    // transposed, strided
  EXPECT_TRUE(is(lt_matrix_layout(1, 4, 99, 1), false, 4));  // one row: its stride unused
  EXPECT_TRUE(is(lt_matrix_layout(1, 4, 1, 5), true, 5));    // one row of a transposed view
  EXPECT_TRUE(is(lt_matrix_layout(4, 1, 7, 3), false, 7));   // one column
  EXPECT_FALSE(lt_matrix_layout(3, 4, 1, 2).ok);             // overlapping columns
  EXPECT_FALSE(lt_matrix_layout(3, 4, 0, 1).ok);             // broadcast rows
  EXPECT_FALSE(lt_matrix_layout(3, 4, 4, -1).ok);            // flipped
  EXPECT_FALSE(lt_matrix_layout(3, 4, 8, 2).ok);             // no unit stride
}

TEST(CudaMatmul, BatchPlansMergeFoldAndLoop) {
  const int64_t m = 5, k = 6, n = 7;
  auto pieces = [](const cu::BatchPlan& p) {
    std::vector<cu::GemmPiece> out;
    p.for_each_piece([&](const cu::GemmPiece& piece) { out.push_back(piece); });
    return out;
  };
  using Pieces = std::vector<cu::GemmPiece>;
  {  // no batch: one product
    const cu::BatchPlan p = cu::plan_batch({}, {}, {}, m, n, k);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 1}}));
  }
  {  // shared b, stacked row-major a: one tall product
    const cu::BatchPlan p = cu::plan_batch({4}, {m * k}, {0}, m, n, k);
    EXPECT_TRUE(p.rows_folded);
    EXPECT_EQ(p.inner_count, 4);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 1}}));
  }
  {  // shared b but a transposed: batched with b's stride 0
    const cu::BatchPlan p = cu::plan_batch({4}, {m * k}, {0}, m, n, 0);
    EXPECT_FALSE(p.rows_folded);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 4}}));
    EXPECT_EQ(p.a_stride, m * k);
    EXPECT_EQ(p.b_stride, 0);
    EXPECT_EQ(p.d_stride, m * n);
  }
  {  // shared a: batched with a's stride 0
    const cu::BatchPlan p = cu::plan_batch({1, 3}, {0, 0}, {0, k * n}, m, n, k);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 3}}));
    EXPECT_EQ(p.a_stride, 0);
    EXPECT_EQ(p.b_stride, k * n);
  }
  {  // two dense batch dims merge into one
    const cu::BatchPlan p = cu::plan_batch({2, 3}, {3 * m * k, m * k}, {3 * k * n, k * n}, m, n, k);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 6}}));
  }
  {  // b broadcast over the outer dim only: a loop over it
    const cu::BatchPlan p = cu::plan_batch({2, 3}, {3 * m * k, m * k}, {0, k * n}, m, n, k);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 3}, {3 * m * k, 0, 3 * m * n, 3}}));
  }
  {  // three dims, the middle one broadcast for a
    const cu::BatchPlan p =
        cu::plan_batch({2, 2, 3}, {3 * m * k, 0, m * k}, {6 * k * n, 3 * k * n, k * n}, m, n, k);
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, 3},
                                 {0, 3 * k * n, 3 * m * n, 3},
                                 {3 * m * k, 6 * k * n, 6 * m * n, 3},
                                 {3 * m * k, 9 * k * n, 9 * m * n, 3}}));
  }
  {  // more items than one call takes
    const int64_t items = cu::kMaxBatchCount + 10;
    const cu::BatchPlan p = cu::plan_batch({items}, {m * k}, {k * n}, m, n, k);
    const int64_t c = cu::kMaxBatchCount;
    EXPECT_EQ(pieces(p), (Pieces{{0, 0, 0, c}, {c * m * k, c * k * n, c * m * n, 10}}));
  }
}

// cuBLASLt's column-major semantics run on the host: D = op(A) @ op(B) per batch item, with
// element (r, c) of a matrix at base + r + c * ld + item * batch_stride.
void simulate_lt(const cu::LtShape& s, const std::vector<double>& a_mem, int64_t a_base,
                 const std::vector<double>& b_mem, int64_t b_base, std::vector<double>& d_mem,
                 int64_t d_base) {
  const int64_t rows = int64_t(s.d.rows), cols = int64_t(s.d.cols);
  const bool ta = s.desc.trans_a == cu::CUBLAS_OP_T, tb = s.desc.trans_b == cu::CUBLAS_OP_T;
  const int64_t inner = ta ? int64_t(s.a.rows) : int64_t(s.a.cols);
  ASSERT_EQ(ta ? s.a.cols : s.a.rows, s.d.rows);
  ASSERT_EQ(tb ? s.b.rows : s.b.cols, s.d.cols);
  ASSERT_EQ(inner, tb ? int64_t(s.b.cols) : int64_t(s.b.rows));
  ASSERT_GE(s.a.ld, int64_t(s.a.rows));
  ASSERT_GE(s.b.ld, int64_t(s.b.rows));
  for (int64_t item = 0; item < s.d.batch_count; ++item) {
    const int64_t ab = a_base + item * s.a.batch_stride, bb = b_base + item * s.b.batch_stride;
    const int64_t db = d_base + item * s.d.batch_stride;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < inner; ++l) {
          const double x =
              ta ? a_mem[size_t(ab + l + i * s.a.ld)] : a_mem[size_t(ab + i + l * s.a.ld)];
          const double y =
              tb ? b_mem[size_t(bb + j + l * s.b.ld)] : b_mem[size_t(bb + l + j * s.b.ld)];
          acc += x * y;
        }
        d_mem[size_t(db + i + j * s.d.ld)] = acc;
      }
  }
}

// A strided operand in host memory: shape, strides and offset into mem.
struct HostView {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  std::vector<double> mem;
  double at(const std::vector<int64_t>& idx) const {
    int64_t o = offset;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
    return mem[size_t(o)];
  }
};

HostView host_view(Shape shape, Strides strides, int64_t offset, uint64_t seed) {
  HostView v{std::move(shape), std::move(strides), offset, {}};
  int64_t span = offset + 1;
  for (size_t d = 0; d < v.shape.size(); ++d) span += (v.shape[d] - 1) * v.strides[d];
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> u(-4, 4);  // small integers: exact sums
  v.mem.resize(size_t(span));
  for (double& x : v.mem) x = u(rng);
  return v;
}

// The plan and the descriptions of run_gemm, executed by simulate_lt, against a plain loop;
// with max_rows > 0, the staged epilogue's blocks of at most max_rows rows instead of the
// plan's calls.
void expect_described_product(const HostView& a, const HostView& b, int64_t max_rows = 0) {
  const size_t nd = a.shape.size();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  const int64_t m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  auto view_of = [&](const HostView& h) {
    const cu::MatrixLayout l = cu::lt_matrix_layout(h.shape[nd - 2], h.shape[nd - 1],
                                                    h.strides[nd - 2], h.strides[nd - 1]);
    EXPECT_TRUE(l.ok);
    cu::LtOperandView v;
    v.addr = uint64_t(h.offset);
    v.col_major = l.col_major;
    v.ld = l.ld;
    v.batch_strides.assign(h.strides.begin(), h.strides.end() - 2);
    return v;
  };
  const cu::LtOperandView av = view_of(a), bv = view_of(b);
  const cu::BatchPlan plan =
      cu::plan_batch(batch, av.batch_strides, bv.batch_strides, m, n, av.col_major ? 0 : av.ld);
  const int64_t items = shape_numel(batch);
  std::vector<double> d(size_t(items * m * n), std::nan(""));
  const int64_t rows = plan.rows_folded ? plan.inner_count * m : m;
  if (max_rows == 0) {
    plan.for_each_piece([&](const cu::GemmPiece& p) {
      const cu::LtShape s =
          cu::describe_gemm(cu::lt_types(DType::F64), rows, n, k, av, bv, plan, p.count);
      simulate_lt(s, b.mem, int64_t(bv.addr) + p.b_off, a.mem, int64_t(av.addr) + p.a_off, d,
                  p.d_off);
    });
  } else {
    // Each block computed into a staging buffer, then copied to its place in out, as the
    // staged epilogue does; every element of out must come from exactly one block.
    std::vector<int> written(d.size(), 0);
    for (const cu::RowChunk& c : cu::row_chunks(plan, rows, n, av.col_major, av.ld, max_rows)) {
      const int64_t size = c.gemm.count * c.rows * n;
      ASSERT_LE(c.gemm.count * c.rows, max_rows);
      ASSERT_GE(c.gemm.d_off, 0);
      ASSERT_LE(c.gemm.d_off + size, int64_t(d.size()));
      std::vector<double> stage(size_t(size), std::nan(""));
      const cu::LtShape s =
          cu::describe_gemm(cu::lt_types(DType::F64), c.rows, n, k, av, bv, plan, c.gemm.count);
      simulate_lt(s, b.mem, int64_t(bv.addr) + c.gemm.b_off, a.mem, int64_t(av.addr) + c.gemm.a_off,
                  stage, 0);
      for (int64_t e = 0; e < size; ++e) {
        d[size_t(c.gemm.d_off + e)] = stage[size_t(e)];
        ++written[size_t(c.gemm.d_off + e)];
      }
    }
    for (size_t e = 0; e < written.size(); ++e)
      ASSERT_EQ(written[e], 1) << "element " << e << " of " << shape_str(a.shape) << " @ "
                               << shape_str(b.shape) << ", blocks of " << max_rows << " rows";
  }
  std::vector<int64_t> idx(nd, 0);
  for (int64_t item = 0; item < items; ++item) {
    int64_t rest = item;
    for (size_t q = batch.size(); q-- > 0;) {
      idx[q] = rest % batch[q];
      rest /= batch[q];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t l = 0; l < k; ++l) {
          std::vector<int64_t> ia = idx, ib = idx;
          ia[nd - 2] = i;
          ia[nd - 1] = l;
          ib[nd - 2] = l;
          ib[nd - 1] = j;
          want += a.at(ia) * b.at(ib);
        }
        ASSERT_EQ(d[size_t((item * m + i) * n + j)], want)
            << shape_str(a.shape) << " @ " << shape_str(b.shape) << " item " << item << " (" << i
            << ", " << j << ")" << (max_rows ? " blocks of " + std::to_string(max_rows) : "");
      }
  }
}

TEST(CudaMatmul, DescribedCallsComputeTheProduct) {
  const int64_t m = 5, k = 4, n = 3;
  // 2-D: dense; a transposed and b with wider rows; b transposed; single rows and columns.
  expect_described_product(host_view({m, k}, {k, 1}, 0, 1), host_view({k, n}, {n, 1}, 0, 2));
  expect_described_product(host_view({m, k}, {1, m + 2}, 3, 3),
                           host_view({k, n}, {n + 4, 1}, 1, 4));
  expect_described_product(host_view({m, k}, {k, 1}, 0, 5), host_view({k, n}, {1, k}, 0, 6));
  expect_described_product(host_view({1, k}, {99, 1}, 0, 7), host_view({k, 1}, {1, 99}, 0, 8));
  expect_described_product(host_view({m, 1}, {1, 77}, 0, 9), host_view({1, n}, {55, 1}, 0, 10));
  // Batched: shared b (folded), shared b with a transposed, shared a, per-item transposed.
  expect_described_product(host_view({3, m, k}, {m * k, k, 1}, 0, 11),
                           host_view({3, k, n}, {0, n, 1}, 0, 12));
  expect_described_product(host_view({3, m, k}, {m * k, 1, m}, 0, 13),
                           host_view({3, k, n}, {0, n, 1}, 0, 14));
  expect_described_product(host_view({3, m, k}, {0, k, 1}, 2, 15),
                           host_view({3, k, n}, {k * n, 1, k}, 0, 16));
  // Two batch dims: merged, and b broadcast over the outer one (a loop).
  expect_described_product(host_view({2, 3, m, k}, {3 * m * k, m * k, k, 1}, 0, 17),
                           host_view({2, 3, k, n}, {3 * k * n, k * n, n, 1}, 0, 18));
  expect_described_product(host_view({2, 3, m, k}, {3 * m * k, m * k, k, 1}, 0, 19),
                           host_view({2, 3, k, n}, {0, k * n, n, 1}, 0, 20));
  expect_described_product(host_view({2, 3, m, k}, {m * k, 0, 1, m}, 0, 21),
                           host_view({2, 3, k, n}, {0, k * n, 1, k}, 0, 22));
}

TEST(CudaMatmul, StagingBlocksComputeTheProduct) {
  const int64_t m = 10, k = 4, n = 3;
  for (int64_t max_rows : {1, 3, 7, 12, 25, 1000}) {
    // 2-D, dense and transposed a: row slices.
    expect_described_product(host_view({m, k}, {k, 1}, 0, 1), host_view({k, n}, {n, 1}, 0, 2),
                             max_rows);
    expect_described_product(host_view({m, k}, {1, m + 2}, 3, 3),
                             host_view({k, n}, {n + 4, 1}, 1, 4), max_rows);
    // Shared b, folded: slices crossing item boundaries.
    expect_described_product(host_view({3, m, k}, {m * k, k, 1}, 0, 5),
                             host_view({3, k, n}, {0, n, 1}, 0, 6), max_rows);
    // Per-item b: items grouped, or sliced; a transposed per item.
    expect_described_product(host_view({4, m, k}, {m * k, k, 1}, 0, 7),
                             host_view({4, k, n}, {k * n, n, 1}, 0, 8), max_rows);
    expect_described_product(host_view({3, m, k}, {m * k, 1, m}, 0, 9),
                             host_view({3, k, n}, {0, n, 1}, 0, 10), max_rows);
    // A looped outer dim (b broadcast over it only).
    expect_described_product(host_view({2, 3, m, k}, {3 * m * k, m * k, k, 1}, 0, 11),
                             host_view({2, 3, k, n}, {0, k * n, n, 1}, 0, 12), max_rows);
  }
}

TEST(CudaMatmul, StagingBlocksHoldTheWholeProductUpToTheBound) {
  const int64_t bound = cu::kMaxStageBytes / 4;  // f32 elements
  EXPECT_EQ(cu::staged_chunk_rows(4096), bound / 4096);
  EXPECT_GE(cu::staged_chunk_rows(4096), 2048);  // blocks that still fill the GPU
  EXPECT_LE(cu::staged_chunk_rows(1000) * 1000, bound);
  EXPECT_EQ(cu::staged_chunk_rows(int64_t(1) << 30), 8);  // a floor: 8-row slices stay aligned
  cu::set_staged_chunk_rows_for_testing(5);
  EXPECT_EQ(cu::staged_chunk_rows(256), 5);
  cu::set_staged_chunk_rows_for_testing(0);
  EXPECT_EQ(cu::staged_chunk_rows(256), bound / 256);

  // A call that fits is one block, whatever its item count; one that does not is cut
  // into groups of a multiple of 8 items.
  const int64_t m = 10, k = 4, n = 3, items = 11;
  const cu::BatchPlan plan = cu::plan_batch({items}, {m * k}, {k * n}, m, n, k);
  const std::vector<cu::RowChunk> one = cu::row_chunks(plan, m, n, false, k, 1000);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].gemm, (cu::GemmPiece{0, 0, 0, items}));
  const std::vector<cu::RowChunk> two = cu::row_chunks(plan, m, n, false, k, 100);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].gemm.count, 8);
  EXPECT_EQ(two[1].gemm, (cu::GemmPiece{8 * m * k, 8 * k * n, 8 * m * n, 3}));
}

// Which dtypes and activations cuBLASLt's epilogues serve (gemm_epilogue.cpp's table).
TEST(CudaMatmul, DirectEpilogueFormsPerDtype) {
  using F = cu::EpilogueForm;
  const F bias{cu::CUBLASLT_EPILOGUE_BIAS, false, false, false, false};
  const F bias_c{cu::CUBLASLT_EPILOGUE_BIAS, false, true, false, false};
  const F relu_bias{cu::CUBLASLT_EPILOGUE_RELU_BIAS, false, false, false, false};
  const F bias_pass{cu::CUBLASLT_EPILOGUE_BIAS, false, false, true, false};
  const F pre_pass{cu::CUBLASLT_EPILOGUE_BIAS, true, false, true, false};
  const F plain_pass{cu::CUBLASLT_EPILOGUE_DEFAULT, false, false, true, true};
  const F plain_pre_pass{cu::CUBLASLT_EPILOGUE_DEFAULT, true, false, true, true};
  using Forms = std::vector<F>;
  const auto forms = cu::direct_epilogue_forms;
  for (DType dt : {DType::F32, DType::F64}) {
    EXPECT_EQ(forms(dt, Activation::None, false, false), (Forms{bias, plain_pass, bias_pass}));
    EXPECT_EQ(forms(dt, Activation::None, false, true), (Forms{bias_c, plain_pass, bias_pass}));
    EXPECT_EQ(forms(dt, Activation::Relu, false, false), (Forms{relu_bias, plain_pass, bias_pass}));
    EXPECT_EQ(forms(dt, Activation::Relu, false, true), (Forms{plain_pass, bias_pass}));
    EXPECT_EQ(forms(dt, Activation::Gelu, true, true), (Forms{plain_pre_pass, pre_pass}));
  }
  // F16/BF16: cuBLASLt's epilogues round a @ b to 16 bits first, so always staged.
  for (DType dt : {DType::F16, DType::BF16})
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                           Activation::Sigmoid, Activation::Tanh})
      for (bool pre : {false, true})
        for (bool res : {false, true}) EXPECT_EQ(forms(dt, act, pre, res), Forms{});
}

// 16-bit D under the COMPUTE_32F types: split-K only with partial sums in f32.
TEST(CudaMatmul, SixteenBitOutputsKeepPartialSumsInF32) {
  const uint32_t all = cu::CUBLASLT_REDUCTION_SCHEME_MASK;
  const uint32_t f32_only = cu::CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  EXPECT_EQ(cu::reduction_scheme_mask(cu::CUBLAS_COMPUTE_32F, cu::CUDA_R_16BF), f32_only);
  EXPECT_EQ(cu::reduction_scheme_mask(cu::CUBLAS_COMPUTE_32F, cu::CUDA_R_16F), f32_only);
  EXPECT_EQ(cu::reduction_scheme_mask(cu::CUBLAS_COMPUTE_32F, cu::CUDA_R_32F), all);
  EXPECT_EQ(cu::reduction_scheme_mask(cu::CUBLAS_COMPUTE_32F_FAST_TF32, cu::CUDA_R_32F), all);
  EXPECT_EQ(cu::reduction_scheme_mask(cu::CUBLAS_COMPUTE_64F, cu::CUDA_R_64F), all);
}

// ---- views ----

TEST(CudaMatmul, TransposedAndStridedViewsAreReadInPlace) {
  REQUIRE_CUDA();
  for (DType dt : {DType::F32, DType::BF16, DType::F64}) {
    const int64_t m = 45, k = 38, n = 27;
    const Tensor at = uniform({k, m}, dt, 1).to(kGpu);      // a = atᵀ: column-major
    const Tensor bw = uniform({k, n + 9}, dt, 2).to(kGpu);  // b = a narrow of wider rows
    const Tensor a = at.transpose(0, 1);
    const Tensor b = bw.narrow(1, 4, n);
    const Tensor bt = uniform({n, k}, dt, 3).to(kGpu).transpose(0, 1);
    const uint64_t copies = cu::gemm_operand_copies();
    const Tensor c1 = matmul(a, b);
    const Tensor c2 = matmul(a, bt);
    const Tensor c3 = matmul(b.transpose(0, 1), a.transpose(0, 1));  // [n, m]
    EXPECT_EQ(cu::gemm_operand_copies(), copies) << dt;
    EXPECT_EQ(vs_reference(c1, a, b), "") << dt;
    EXPECT_EQ(vs_reference(c2, a, bt), "") << dt;
    EXPECT_EQ(vs_reference(c3, b.transpose(0, 1), a.transpose(0, 1)), "") << dt;
  }
}

TEST(CudaMatmul, LayoutsCuBlasLtCannotReadAreCopied) {
  REQUIRE_CUDA();
  const int64_t m = 20, k = 16, n = 12;
  const Tensor a = uniform({m, 2 * k}, DType::F32, 4).to(kGpu);
  const Tensor b = uniform({k, n}, DType::F32, 5).to(kGpu);
  // Every other column: neither dim has stride 1.
  const Tensor a_step = a.reshape({m, k, 2}).narrow(2, 0, 1).squeeze(2);
  uint64_t copies = cu::gemm_operand_copies();
  const Tensor c = matmul(a_step, b);
  EXPECT_EQ(cu::gemm_operand_copies(), copies + 1);
  EXPECT_EQ(vs_reference(c, a_step, b), "");
  // Negative strides.
  const Tensor b_flip = b.flip({1});
  copies = cu::gemm_operand_copies();
  const Tensor c2 = matmul(a.narrow(1, 0, k), b_flip);
  EXPECT_EQ(cu::gemm_operand_copies(), copies + 1);
  EXPECT_EQ(vs_reference(c2, a.narrow(1, 0, k), b_flip), "");
}

TEST(CudaMatmul, BroadcastBatchesAreStridedOrLooped) {
  REQUIRE_CUDA();
  const int64_t m = 19, k = 24, n = 33;
  const uint64_t copies = cu::gemm_operand_copies();
  {  // a shared by every item: batch stride 0 for a
    const Tensor a = uniform({1, m, k}, DType::F32, 6).to(kGpu);
    const Tensor b = uniform({5, k, n}, DType::F32, 7).to(kGpu);
    EXPECT_EQ(vs_reference(matmul(a, b), a, b), "");
  }
  {  // b shared: the items of a stack into one tall product
    const Tensor a = uniform({4, m, k}, DType::F32, 8).to(kGpu);
    const Tensor b = uniform({k, n}, DType::F32, 9).to(kGpu);
    EXPECT_EQ(vs_reference(matmul(a, b), a, b), "");
  }
  {  // b broadcast over the outer of two batch dims: one strided call per outer index
    const Tensor a = uniform({2, 3, m, k}, DType::F32, 10).to(kGpu);
    const Tensor b = uniform({3, k, n}, DType::F32, 11).to(kGpu);
    EXPECT_EQ(vs_reference(matmul(a, b), a, b), "");
  }
  {  // transposed items with a batch stride
    const Tensor a = uniform({3, k, m}, DType::BF16, 12).to(kGpu).transpose(1, 2);
    const Tensor b = uniform({3, n, k}, DType::BF16, 13).to(kGpu).transpose(1, 2);
    EXPECT_EQ(vs_reference(matmul(a, b), a, b), "");
  }
  EXPECT_EQ(cu::gemm_operand_copies(), copies);
}

TEST(CudaMatmul, MisalignedOperandsStillMultiply) {
  REQUIRE_CUDA();
  // Views starting one element into their storage, with odd row strides: no 16-byte
  // alignment anywhere.
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    const int64_t m = 31, k = 17, n = 23;
    const Tensor a = uniform({m + 1, k}, dt, 14).to(kGpu).narrow(0, 1, m);
    const Tensor b = uniform({k, n + 1}, dt, 15).to(kGpu).narrow(1, 1, n);
    EXPECT_EQ(vs_reference(matmul(a, b), a, b), "") << dt;
    const Tensor bias = uniform({n + 1}, dt, 16).to(kGpu).narrow(0, 1, n);
    const Tensor res = uniform({m + 1, n}, dt, 17).to(kGpu).narrow(0, 1, m);
    const Tensor got = matmul_bias_residual(a, b, bias, res);
    const reference::RefTensor res_ref = to_ref(res);
    const reference::RefTensor want =
        reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), Activation::None, &res_ref);
    EXPECT_EQ(compare(got, want, gemm_tolerance(dt, k)), "") << dt;
  }
}

// ---- 16-bit products ----

// F16/BF16 products rounded once from the f32 sum, on shapes whose algorithms may split K
// (a long K and a tiny output most of all): partial sums kept in a 16-bit D would be
// rounded each, off by several output units where they cancel. Against the float64
// product at the GEMM tolerance, then at one output unit (the f32 sums of the GPU and the
// reference may straddle a rounding boundary) plus the f32 accumulation error.
TEST(CudaMatmul, SixteenBitProductsRoundedOnce) {
  REQUIRE_CUDA();
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{33, 17}, {17, 9}},
                        {{67, 45}, {45, 40}},
                        {{3, 300}, {300, 5}},
                        {{2, 4096}, {4096, 3}},
                        {{16, 2048}, {2048, 8}}};
  for (DType dt : {DType::BF16, DType::F16})
    for (const Case& c : cases) {
      const Tensor a = uniform(c.a, dt, 90), b = uniform(c.b, dt, 91);
      const Tensor got = matmul(a.to(kGpu), b.to(kGpu));
      const std::string label =
          std::string(dtype_name(dt)) + " " + shape_str(c.a) + " @ " + shape_str(c.b);
      EXPECT_EQ(vs_reference(got, a, b), "") << label;
      Tolerance one_unit = gemm_tolerance(dt, c.a.back());
      one_unit.rtol = dt == DType::BF16 ? 0x1p-7 : 0x1p-10;  // an ulp, relative, at most
      EXPECT_EQ(compare(got, reference::matmul(to_ref(a), to_ref(b)), one_unit), "") << label;
    }
}

// ---- empty inner dim ----

TEST(CudaMatmul, EmptyInnerDimGivesZerosAndBias) {
  REQUIRE_CUDA();
  Backend& be = backend_for(kGpu);
  // The backend itself (the front end fills before calling it).
  const Tensor a = Tensor::empty({2, 5, 0}, DType::F32, kGpu);
  const Tensor b = Tensor::empty({2, 0, 7}, DType::F32, kGpu);
  const Tensor out = full({2, 5, 7}, 3.0, DType::F32, kGpu);
  MatmulCall call{ref_of(a), ref_of(b), ref_of(out)};
  be.matmul(call);
  for (float v : out.to_vector<float>()) ASSERT_EQ(v, 0.f);

  // The epilogue: out = act(bias) (+ residual), pre = bias.
  const Tensor a2 = Tensor::empty({6, 0}, DType::F32, kGpu);
  const Tensor b2 = Tensor::empty({0, 9}, DType::F32, kGpu);
  const Tensor bias = uniform({9}, DType::F32, 18);
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                         Activation::Sigmoid, Activation::Tanh}) {
    const EpilogueForward f = matmul_bias_activation_fwd(a2, b2, bias.to(kGpu), act);
    const EpilogueForward want =
        matmul_bias_activation_fwd(a2.to(Device::cpu()), b2.to(Device::cpu()), bias, act);
    EXPECT_EQ(compare(f.out, to_ref(want.out), gemm_tolerance(DType::F32, 1)), "")
        << activation_name(act);
    EXPECT_EQ(compare(f.saved, to_ref(want.saved), gemm_tolerance(DType::F32, 1)), "")
        << activation_name(act);
  }
  const Tensor res = uniform({6, 9}, DType::F32, 19);
  const Tensor r = matmul_bias_residual(a2, b2, bias.to(kGpu), res.to(kGpu));
  const Tensor rw = matmul_bias_residual(a2.to(Device::cpu()), b2.to(Device::cpu()), bias, res);
  EXPECT_EQ(compare(r, to_ref(rw), gemm_tolerance(DType::F32, 1)), "");
}

// ---- TF32 ----

TEST(CudaMatmul, Tf32OnlyWhenAllowed) {
  REQUIRE_CUDA();
  const int64_t s = 1024;
  const Tensor a = uniform({s, s}, DType::F32, 20);
  const Tensor b = uniform({s, s}, DType::F32, 21);
  const Tensor want = matmul(a.cast(DType::F64), b.cast(DType::F64));  // on the CPU
  const Tensor ag = a.to(kGpu), bg = b.to(kGpu);
  double exact_err = 0, tf32_err = 0;
  {
    const Tf32Guard off(false);
    exact_err = rel_norm_error(matmul(ag, bg), want);
  }
  {
    const Tf32Guard on(true);
    tf32_err = rel_norm_error(matmul(ag, bg), want);
  }
  EXPECT_LE(exact_err, gemm_tolerance(DType::F32, s).rel_norm);
  // Inputs rounded to a 10-bit mantissa: about 2^-11 relative per operand.
  EXPECT_GT(tf32_err, 5e-5) << "TF32 was allowed but the product looks exact";
  EXPECT_LT(tf32_err, 5e-3);
  EXPECT_GT(tf32_err, 10 * exact_err);
}

// ---- epilogues against the CPU backend ----

constexpr Activation kActs[] = {Activation::None, Activation::Relu,    Activation::Gelu,
                                Activation::Silu, Activation::Sigmoid, Activation::Tanh};

struct EpilogueCase {
  Shape a, b;
  int64_t n;
};

// Calls the backend of t's device directly, so the pre-activation can be asked for with any
// activation, and a residual with one.
EpilogueForward run_backend(const Tensor& a, const Tensor& b, const Tensor& bias,
                            const Tensor* residual, Activation act, bool has_pre) {
  Shape out_shape = a.shape();
  out_shape.back() = b.shape().back();
  const Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  const Tensor pre = has_pre ? Tensor::empty(out_shape, a.dtype(), a.device()) : out;
  GemmEpilogueCall c;
  c.a = ref_of(a);
  if (a.dim() == 3)
    c.b = ref_of(b.dim() == 3 ? b : b.broadcast_to({a.shape()[0], b.shape()[0], b.shape()[1]}));
  else
    c.b = ref_of(b);
  c.bias = ref_of(bias);
  c.out = ref_of(out);
  c.act = act;
  c.has_pre = has_pre;
  if (has_pre) c.pre = ref_of(pre);
  c.has_residual = residual != nullptr;
  if (residual) c.residual = ref_of(*residual);
  backend_for(a.device()).matmul_epilogue(c);
  return {out, pre};
}

void check_epilogues(DType dt, const EpilogueCase& ec, bool with_residual) {
  const Tensor a = uniform(ec.a, dt, 30);
  const Tensor b = uniform(ec.b, dt, 31);
  const Tensor bias = uniform({ec.n}, dt, 32);
  Shape out_shape = ec.a;
  out_shape.back() = ec.n;
  const Tensor res = uniform(out_shape, dt, 33);
  const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu), resg = res.to(kGpu);
  const Tolerance tol = between_devices(dt, ec.a.back());
  const std::string where = std::string(dtype_name(dt)) + " " + shape_str(ec.a) + " @ " +
                            shape_str(ec.b) + (with_residual ? " + residual" : "");
  for (Activation act : kActs)
    for (bool has_pre : {false, true}) {
      const EpilogueForward got =
          run_backend(ag, bg, biasg, with_residual ? &resg : nullptr, act, has_pre);
      const EpilogueForward want =
          run_backend(a, b, bias, with_residual ? &res : nullptr, act, has_pre);
      const std::string label =
          where + " " + std::string(activation_name(act)) + (has_pre ? " (pre kept)" : "");
      EXPECT_EQ(compare(got.out, to_ref(want.out), tol), "") << label;
      if (has_pre) {
        EXPECT_EQ(compare(got.saved, to_ref(want.saved), tol), "") << label << " pre";
      }
    }
  if (with_residual) return;
  // The front ends too (the fused forms they pick: saved pre only for Gelu and Silu).
  for (Activation act : kActs) {
    const EpilogueForward got = matmul_bias_activation_fwd(ag, bg, biasg, act);
    const EpilogueForward want = matmul_bias_activation_fwd(a, b, bias, act);
    EXPECT_EQ(compare(got.out, to_ref(want.out), tol), "") << where << " fwd";
    EXPECT_EQ(compare(got.saved, to_ref(want.saved), tol), "") << where << " fwd saved";
    const Tensor y = matmul_bias_activation(ag, bg, biasg, act);
    EXPECT_EQ(compare(y, to_ref(want.out), tol), "") << where << " " << activation_name(act);
  }
}

// n = 40 lets the pass move 16 bytes per step (n a multiple of every vector width);
// n = 37 leaves it element by element. Shared b folds the batch into one tall product.
const std::vector<EpilogueCase>& epilogue_cases() {
  static const std::vector<EpilogueCase> cases = {
      {{67, 45}, {45, 40}, 40},       {{67, 45}, {45, 37}, 37},       {{3, 29, 45}, {45, 40}, 40},
      {{3, 29, 45}, {3, 45, 40}, 40}, {{3, 29, 45}, {3, 45, 37}, 37}, {{2, 130, 64}, {64, 96}, 96},
  };
  return cases;
}

TEST(CudaMatmul, EveryEpilogueF32MatchesCpu) {
  REQUIRE_CUDA();
  for (const EpilogueCase& c : epilogue_cases()) check_epilogues(DType::F32, c, false);
}

TEST(CudaMatmul, EveryEpilogueBf16MatchesCpu) {
  REQUIRE_CUDA();
  for (const EpilogueCase& c : epilogue_cases()) check_epilogues(DType::BF16, c, false);
}

TEST(CudaMatmul, EpilogueF64AndF16MatchCpu) {
  REQUIRE_CUDA();
  check_epilogues(DType::F64, epilogue_cases()[3], false);
  check_epilogues(DType::F16, epilogue_cases()[2], false);
}

TEST(CudaMatmul, ResidualWithEveryActivationMatchesCpu) {
  REQUIRE_CUDA();
  for (DType dt : {DType::F32, DType::BF16}) {
    check_epilogues(dt, epilogue_cases()[0], true);
    check_epilogues(dt, epilogue_cases()[3], true);
  }
}

// Forces the staged epilogue's blocks to `rows` rows for its lifetime.
class StagingRowsGuard {
 public:
  explicit StagingRowsGuard(int64_t rows) { cu::set_staged_chunk_rows_for_testing(rows); }
  ~StagingRowsGuard() { cu::set_staged_chunk_rows_for_testing(0); }
  StagingRowsGuard(const StagingRowsGuard&) = delete;
  StagingRowsGuard& operator=(const StagingRowsGuard&) = delete;
};

// F16/BF16 results many times smaller than a @ b: the top half of a's rows equal its first
// row, and the bias is minus that row's product, rounded to dt. A product rounded to 16
// bits before the bias is added loses every digit of these results (they come out 0 or a
// few output ulps of a @ b off); numr adds in f32 and rounds once.
void check_bias_cancelling(int64_t m, int64_t k, int64_t n) {
  for (DType dt : {DType::BF16, DType::F16}) {
    std::vector<float> av =
        uniform({m, k}, DType::F32, 60).cast(dt).cast(DType::F32).to_vector<float>();
    for (int64_t i = 1; i < m / 2; ++i) std::copy(av.begin(), av.begin() + k, av.begin() + i * k);
    const Tensor a = Tensor::from_vector<float>(av, {m, k}, Device::cpu()).cast(dt);
    const Tensor b = uniform({k, n}, dt, 61);
    const reference::RefTensor ab = reference::matmul(to_ref(a), to_ref(b));
    std::vector<float> bv(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) bv[size_t(j)] = float(-ab.v[size_t(j)]);
    const Tensor bias = Tensor::from_vector<float>(bv, {n}, Device::cpu()).cast(dt);
    const Tensor res = uniform({m, n}, dt, 62) * 1e-3;  // on the scale of the results
    const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu), resg = res.to(kGpu);
    const Tolerance tol = between_devices(dt, k);
    for (Activation act : kActs)
      for (bool has_pre : {false, true})
        for (bool with_res : {false, true}) {
          const EpilogueForward got =
              run_backend(ag, bg, biasg, with_res ? &resg : nullptr, act, has_pre);
          const EpilogueForward want =
              run_backend(a, b, bias, with_res ? &res : nullptr, act, has_pre);
          const std::string label = std::string(dtype_name(dt)) + " [" + std::to_string(m) + ", " +
                                    std::to_string(k) + "] @ [" + std::to_string(k) + ", " +
                                    std::to_string(n) + "] " + std::string(activation_name(act)) +
                                    (has_pre ? " (pre kept)" : "") +
                                    (with_res ? " + residual" : "");
          EXPECT_EQ(compare(got.out, to_ref(want.out), tol), "") << label;
          if (has_pre) {
            EXPECT_EQ(compare(got.saved, to_ref(want.saved), tol), "") << label << " pre";
          }
        }
  }
}

TEST(CudaMatmul, Bf16AndF16BiasCancellingTheProduct) {
  REQUIRE_CUDA();
  check_bias_cancelling(48, 45, 40);
  check_bias_cancelling(8, 1024, 8);  // long K, tiny output
}

// None and Relu through the staged path too (they are direct by default), against the CPU.
TEST(CudaMatmul, StagedF16AndBf16EpiloguesMatchCpu) {
  REQUIRE_CUDA();
  for (const EpilogueCase& c : epilogue_cases()) check_epilogues(DType::BF16, c, false);
  check_epilogues(DType::F16, epilogue_cases()[2], false);
  check_epilogues(DType::BF16, epilogue_cases()[0], true);
  check_epilogues(DType::F16, epilogue_cases()[3], true);
}

// Compares the own GEMM's BF16 results with the staged path's. Its Gelu and Silu divide
// with one reciprocal per pair of values (Sm90GemmConfig::dtype), each quotient within a few
// f32 ulp of div.full.f32's, so their BF16 rounding may land one BF16 ulp away where the f32
// value lies that close to a rounding boundary: about 1 in 10^4 elements. Those may differ
// in at most 1 in 10^3 elements, each by one BF16 ulp (`paired`); every other result must
// equal the staged path bit for bit.
void expect_matches_staged(const std::vector<float>& got, const std::vector<float>& want,
                           bool paired, const std::string& label) {
  ASSERT_EQ(got.size(), want.size()) << label;
  size_t differ = 0, far = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint32_t g = std::bit_cast<uint32_t>(got[i]) >> 16,
                   w = std::bit_cast<uint32_t>(want[i]) >> 16;
    if (g == w) continue;
    ++differ;
    const bool adjacent = (g ^ w) < 0x8000u && (g > w ? g - w : w - g) == 1 &&
                          !std::isnan(got[i]) && !std::isnan(want[i]);
    far += !adjacent;
  }
  if (!paired) {
    EXPECT_EQ(differ, 0u) << label << ": elements that differ of " << got.size();
    return;
  }
  EXPECT_EQ(far, 0u) << label << ": elements more than one BF16 ulp apart of " << got.size();
  EXPECT_LE(differ, got.size() / 1000) << label << ": elements that differ of " << got.size();
}

// Whether the BF16 kernel's activation divides with one reciprocal per pair of values.
bool paired_reciprocals(Activation act) {
  return act == Activation::Gelu || act == Activation::Silu;
}

// Shapes numr's own sm_90 GEMM takes (gemm_epilogue_own.h): 2-D, a stack of items on one
// shared b, per-item b (which it leaves to cuBLASLt), and a bias cancelling the product.
// On a GPU of compute capability 9.0 the eligible calls must run there and give the staged
// path's results bit for bit; elsewhere they must not run there.
TEST(CudaMatmul, OwnGemmEpilogueMatchesCpuAndStagedPath) {
  REQUIRE_CUDA();
  const std::vector<EpilogueCase> cases = {{{256, 128}, {128, 256}, 256},
                                           {{2, 128, 64}, {64, 512}, 512},
                                           {{2, 128, 64}, {2, 64, 256}, 256}};
  for (const EpilogueCase& c : cases) check_epilogues(DType::BF16, c, false);
  check_bias_cancelling(256, 64, 256);

  const bool sm90 = cu::sm90_gemm_supported(cu::cuda_device(0));
  const Tensor a = uniform({512, 192}, DType::BF16, 40).to(kGpu);
  const Tensor b = uniform({192, 768}, DType::BF16, 41).to(kGpu);
  const Tensor bias = uniform({768}, DType::BF16, 42).to(kGpu);
  for (Activation act : kActs) {
    const int64_t before = cu::own_gemm_epilogue_calls();
    const Tensor own = matmul_bias_activation(a, b, bias, act);
    const bool took = cu::own_gemm_epilogue_calls() > before;
    const bool eligible = act == Activation::None || act == Activation::Relu ||
                          act == Activation::Gelu || act == Activation::Silu;
    EXPECT_EQ(took, sm90 && eligible) << activation_name(act);
    cu::set_own_gemm_epilogue_for_testing(false);
    const Tensor staged = matmul_bias_activation(a, b, bias, act);
    cu::set_own_gemm_epilogue_for_testing(true);
    expect_matches_staged(own.cast(DType::F32).to_vector<float>(),
                          staged.cast(DType::F32).to_vector<float>(),
                          took && paired_reciprocals(act), std::string(activation_name(act)));
  }
}

// The BF16 kernel with clusters of 1 and 2, an F32 and a BF16 bias, on the full grid and on
// one CTA (every tile in turn on it), with 3 k blocks (fewer than the deferred epilogue's
// units: every unit left runs in the last k block) and 10 (one unit per k block): each
// equal to the staged path (within one BF16 ulp where Gelu and Silu pair reciprocals).
TEST(CudaMatmul, OwnGemmClustersEqualStagedPath) {
  REQUIRE_CUDA();
  if (!cu::sm90_gemm_supported(cu::cuda_device(0))) GTEST_SKIP() << "needs compute capability 9.0";
  for (int64_t k : {192, 640}) {
    const Tensor a = uniform({512, k}, DType::BF16, 43).to(kGpu);
    const Tensor b = uniform({k, 768}, DType::BF16, 44).to(kGpu);
    const Tensor bias = uniform({768}, DType::BF16, 45).to(kGpu);
    const Tensor bias_f32 = bias.cast(DType::F32);
    for (Activation act :
         {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu}) {
      cu::set_own_gemm_epilogue_for_testing(false);
      const std::vector<float> want =
          matmul_bias_activation(a, b, bias, act).cast(DType::F32).to_vector<float>();
      cu::set_own_gemm_epilogue_for_testing(true);
      for (int cluster : {1, 2})
        for (bool bf16_bias : {false, true})
          for (int max_ctas : {0, 1}) {
            const std::vector<float> got =
                cu::sm90_gemm_bias_act(a, b, bf16_bias ? bias : bias_f32, act, max_ctas, cluster)
                    .cast(DType::F32)
                    .to_vector<float>();
            expect_matches_staged(got, want, paired_reciprocals(act),
                                  std::string(activation_name(act)) + " cluster " +
                                      std::to_string(cluster) + (bf16_bias ? " BF16 bias" : "") +
                                      " K " + std::to_string(k) + (max_ctas ? " on one CTA" : ""));
          }
    }
  }
}

// Grouped reciprocals where denominators grow past 2^126 and to infinity: a bias spread
// over about +-100 puts Gelu's and Silu's pre-activations far into their saturated ends,
// where a group's product of denominators overflows and its batch is redone with
// div.full.f32. Within one BF16 ulp of the staged path, as above.
TEST(CudaMatmul, OwnGemmGroupedReciprocalsAtLargeDenominators) {
  REQUIRE_CUDA();
  if (!cu::sm90_gemm_supported(cu::cuda_device(0))) GTEST_SKIP() << "needs compute capability 9.0";
  const Tensor a = uniform({256, 128}, DType::BF16, 50).to(kGpu);
  const Tensor b = uniform({128, 512}, DType::BF16, 51).to(kGpu);
  const Tensor bias = (uniform({512}, DType::F32, 52) * 100.0).cast(DType::BF16).to(kGpu);
  const Tensor bias_f32 = bias.cast(DType::F32);
  for (Activation act : {Activation::Gelu, Activation::Silu}) {
    cu::set_own_gemm_epilogue_for_testing(false);
    const std::vector<float> want =
        matmul_bias_activation(a, b, bias, act).cast(DType::F32).to_vector<float>();
    cu::set_own_gemm_epilogue_for_testing(true);
    const std::vector<float> got =
        cu::sm90_gemm_bias_act(a, b, bias_f32, act).cast(DType::F32).to_vector<float>();
    expect_matches_staged(got, want, true, std::string(activation_name(act)));
  }
}

// The cooperative BF16 kernel splitting the tiles of a partly filled last wave along K
// (Sm90GemmConfig::split_tail), on grids where it does, with parts that start, continue and
// end tiles, runs across tile boundaries and tiles of two and three parts (runs of 1 to 7 k
// blocks). The tiles it does not split equal the unsplit kernel's bit for bit; the split
// ones differ only in how their f32 sums are grouped, so the whole result must be within
// the GEMM tolerance of the float64 reference; and a second call must give the first's bits
// (a fixed order of additions, and no flag of the first call taken for the second's).
// With an F32 and a BF16 bias.
TEST(CudaMatmul, OwnGemmSplitTailMatchesUnsplitKernel) {
  REQUIRE_CUDA();
  if (!cu::sm90_gemm_supported(cu::cuda_device(0))) GTEST_SKIP() << "needs compute capability 9.0";
  struct Case {
    int64_t m, k, n;
    int grid;
  };
  for (const Case& c : {Case{512, 640, 768, 5}, Case{1024, 1024, 768, 7}, Case{1024, 1024, 768, 10},
                        Case{1024, 256, 768, 10}}) {
    const int64_t tiles_n = c.n / 256, units = c.m / 128 * tiles_n, k_blocks = c.k / 64;
    const int64_t split = cu::sm90_gemm_split_tiles(units, c.grid, k_blocks);
    ASSERT_GT(split, 0) << "the case splits no tile";
    // Which outputs lie in a split tile: the last `split` units in the kernel's tile order
    // (groups of 16 unit rows, M fastest inside a group).
    std::vector<bool> in_split(size_t(c.m * c.n), false);
    for (int64_t u = units - split; u < units; ++u) {
      const int64_t rows_m = units / tiles_n, per_group = tiles_n * 16, grp = u / per_group;
      const int64_t within = u - grp * per_group, row0 = grp * 16;
      const int64_t rows = std::min<int64_t>(rows_m - row0, 16);
      const int64_t m_blk = row0 + within % rows, n_blk = within / rows;
      for (int64_t i = m_blk * 128; i < m_blk * 128 + 128; ++i)
        for (int64_t j = n_blk * 256; j < n_blk * 256 + 256; ++j)
          in_split[size_t(i * c.n + j)] = true;
    }
    const Tensor a = uniform({c.m, c.k}, DType::BF16, 47), b = uniform({c.k, c.n}, DType::BF16, 48);
    const Tensor bias = uniform({c.n}, DType::BF16, 49);
    const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu);
    const Tensor bias_f32 = biasg.cast(DType::F32);
    const Tolerance tol = gemm_tolerance(DType::BF16, c.k);
    for (Activation act :
         {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu}) {
      const Tensor want = matmul_bias_activation(a.cast(DType::F64), b.cast(DType::F64),
                                                 bias.cast(DType::F64), act);
      for (bool bf16_bias : {false, true}) {
        cu::Sm90GemmConfig config = cu::sm90_gemm_default_config(act, 1, DType::BF16);
        config.bias_dtype = bf16_bias ? DType::BF16 : DType::F32;
        config.split_tail = false;
        const Tensor& bias_arg = bf16_bias ? biasg : bias_f32;
        const Tensor unsplit = cu::sm90_gemm_bias_act(ag, bg, bias_arg, act, c.grid, 1, &config);
        config.split_tail = true;
        const Tensor got = cu::sm90_gemm_bias_act(ag, bg, bias_arg, act, c.grid, 1, &config);
        const Tensor again = cu::sm90_gemm_bias_act(ag, bg, bias_arg, act, c.grid, 1, &config);
        const std::string label = config.name() + " " + std::to_string(c.m) + "x" +
                                  std::to_string(c.k) + "x" + std::to_string(c.n) + " on " +
                                  std::to_string(c.grid) + " CTAs";
        EXPECT_EQ(compare(got, to_ref(want), tol), "") << label;
        EXPECT_EQ(compare(unsplit, to_ref(want), tol), "") << label << " (unsplit)";
        const std::vector<float> g = got.cast(DType::F32).to_vector<float>(),
                                 g2 = again.cast(DType::F32).to_vector<float>(),
                                 u = unsplit.cast(DType::F32).to_vector<float>();
        size_t outside = 0, repeat = 0;
        for (size_t i = 0; i < g.size(); ++i) {
          outside += !in_split[i] && std::bit_cast<uint32_t>(g[i]) != std::bit_cast<uint32_t>(u[i]);
          repeat += std::bit_cast<uint32_t>(g[i]) != std::bit_cast<uint32_t>(g2[i]);
        }
        EXPECT_EQ(outside, 0u) << label << ": outputs of unsplit tiles that differ";
        EXPECT_EQ(repeat, 0u) << label << ": outputs that differ between two calls";
      }
    }
  }
}

// The TF32 form computes each element in the same order with clusters of 1 and 2, on the
// full grid and on one CTA: equal bit for bit, and within TF32's error of the float64
// reference. K = 96 takes an odd number of k blocks of 32.
TEST(CudaMatmul, OwnGemmTf32ClustersAgree) {
  REQUIRE_CUDA();
  if (!cu::sm90_gemm_supported(cu::cuda_device(0))) GTEST_SKIP() << "needs compute capability 9.0";
  struct Case {
    int64_t m, k, n;
  };
  for (const Case& c : {Case{512, 192, 768}, Case{256, 96, 256}}) {
    const Tensor a = uniform({c.m, c.k}, DType::F32, 53), b = uniform({c.k, c.n}, DType::F32, 54);
    const Tensor bias = uniform({c.n}, DType::F32, 55);
    const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu);
    for (Activation act :
         {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu}) {
      const Tensor want = matmul_bias_activation(a.cast(DType::F64), b.cast(DType::F64),
                                                 bias.cast(DType::F64), act);
      const std::string label = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
                                std::to_string(c.n) + " " + std::string(activation_name(act));
      std::vector<float> first;
      for (int cluster : {1, 2})
        for (int max_ctas : {0, 1}) {
          const std::string what = label + " cluster " + std::to_string(cluster);
          const Tensor got = cu::sm90_gemm_bias_act(ag, bg, biasg, act, max_ctas, cluster);
          EXPECT_LT(rel_norm_error(got, want), 5e-3) << what;
          const std::vector<float> v = got.to_vector<float>();
          if (first.empty()) {
            first = v;
            continue;
          }
          size_t differ = 0;
          for (size_t i = 0; i < v.size(); ++i) differ += v[i] != first[i];
          EXPECT_EQ(differ, 0u) << what << (max_ctas ? " on one CTA" : "")
                                << ": elements that differ from cluster 1's of " << v.size();
        }
    }
  }
}

// The own GEMM's TF32 form: F32 products on TF32 tensor cores while they are allowed (and
// never otherwise). Against the float64 reference it must show TF32's error and no more
// (below 5e-3 in relative norm, as the TF32 matmul above), and agree with the staged path
// (cuBLASLt's TF32 product, then the pass) to that error. K = 96 takes an odd number of
// k blocks of 32, K = 192 an even one; a grid of one CTA runs every tile of the product in
// turn on it.
TEST(CudaMatmul, OwnGemmTf32EpilogueMatchesReferenceAndStagedPath) {
  REQUIRE_CUDA();
  const bool sm90 = cu::sm90_gemm_supported(cu::cuda_device(0));
  struct Case {
    Shape a, b;
  };
  for (const Case& c : {Case{{512, 192}, {192, 768}}, Case{{2, 256, 96}, {96, 256}}}) {
    const int64_t n = c.b.back();
    const Tensor a = uniform(c.a, DType::F32, 50), b = uniform(c.b, DType::F32, 51);
    const Tensor bias = uniform({n}, DType::F32, 52);
    const Tensor ag = a.to(kGpu), bg = b.to(kGpu), biasg = bias.to(kGpu);
    const std::string where = shape_str(c.a) + " @ " + shape_str(c.b);
    for (Activation act : kActs) {
      const std::string label = where + " " + std::string(activation_name(act));
      const bool eligible = act == Activation::None || act == Activation::Relu ||
                            act == Activation::Gelu || act == Activation::Silu;
      const Tensor want = matmul_bias_activation(a.cast(DType::F64), b.cast(DType::F64),
                                                 bias.cast(DType::F64), act);
      Tensor own, staged;
      {
        const Tf32Guard on(true);
        const int64_t before = cu::own_gemm_epilogue_calls();
        own = matmul_bias_activation(ag, bg, biasg, act);
        EXPECT_EQ(cu::own_gemm_epilogue_calls() > before, sm90 && eligible) << label;
        cu::set_own_gemm_epilogue_for_testing(false);
        staged = matmul_bias_activation(ag, bg, biasg, act);
        cu::set_own_gemm_epilogue_for_testing(true);
      }
      {
        const Tf32Guard off(false);
        const int64_t before = cu::own_gemm_epilogue_calls();
        (void)matmul_bias_activation(ag, bg, biasg, act);
        EXPECT_EQ(cu::own_gemm_epilogue_calls(), before) << label << " with TF32 off";
      }
      EXPECT_LT(rel_norm_error(own, want), 5e-3) << label;
      EXPECT_LT(rel_norm_error(staged, want), 5e-3) << label;
      EXPECT_LT(rel_norm_error(own, staged), 5e-3) << label;
      // The kernel itself, for every activation it has: against the reference, and on a
      // grid of one CTA equal to the full grid's result.
      if (sm90 && eligible && c.a.size() == 2) {
        const Tensor full = cu::sm90_gemm_bias_act(ag, bg, biasg, act);
        const Tensor one_cta = cu::sm90_gemm_bias_act(ag, bg, biasg, act, /*max_ctas=*/1);
        EXPECT_LT(rel_norm_error(full, want), 5e-3) << label << " (kernel)";
        const std::vector<float> x = one_cta.to_vector<float>(), y = full.to_vector<float>();
        size_t differ = 0;
        for (size_t i = 0; i < x.size(); ++i) differ += x[i] != y[i];
        EXPECT_EQ(differ, 0u) << label << " on one CTA: elements that differ of " << x.size();
      }
    }
  }
}

// cuBLASLt's GELU is not accurate enough for these; numr's pass is.
TEST(CudaMatmul, GeluF32AndF64AtGemmTolerance) {
  REQUIRE_CUDA();
  const Tf32Guard exact(false);
  for (DType dt : {DType::F32, DType::F64})
    for (const EpilogueCase& ec :
         {EpilogueCase{{67, 45}, {45, 40}, 40}, EpilogueCase{{3, 29, 45}, {45, 37}, 37}}) {
      const Tensor a = uniform(ec.a, dt, 70).to(kGpu);
      const Tensor b = uniform(ec.b, dt, 71).to(kGpu);
      const Tensor bias = uniform({ec.n}, dt, 72).to(kGpu);
      Shape out_shape = ec.a;
      out_shape.back() = ec.n;
      const Tensor res = uniform(out_shape, dt, 73).to(kGpu);
      const Tolerance tol = gemm_tolerance(dt, ec.a.back());
      const std::string where =
          std::string(dtype_name(dt)) + " " + shape_str(ec.a) + " @ " + shape_str(ec.b);
      for (bool has_pre : {false, true})
        for (bool with_res : {false, true}) {
          const EpilogueForward got =
              run_backend(a, b, bias, with_res ? &res : nullptr, Activation::Gelu, has_pre);
          const reference::RefTensor res_ref = to_ref(res);
          reference::RefTensor pre_ref;
          const reference::RefTensor want =
              reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), Activation::Gelu,
                                         with_res ? &res_ref : nullptr, &pre_ref);
          const std::string label =
              where + (has_pre ? " (pre kept)" : "") + (with_res ? " + residual" : "");
          EXPECT_EQ(compare(got.out, want, tol), "") << label;
          if (has_pre) {
            EXPECT_EQ(compare(got.saved, pre_ref, tol), "") << label << " pre";
          }
        }
      const Tensor y = matmul_bias_activation(a, b, bias, Activation::Gelu);
      EXPECT_EQ(
          compare(y,
                  reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), Activation::Gelu),
                  tol),
          "")
          << where << " front end";
    }
}

// The staged F16/BF16 epilogue (for every activation) in several blocks: forced small, so
// that a matrix is cut into row slices (also across the items of a folded batch) and
// batch items are grouped.
TEST(CudaMatmul, StagedEpilogueInSeveralBlocks) {
  REQUIRE_CUDA();
  for (int64_t rows : {50, 64}) {
    const StagingRowsGuard guard(rows);
    for (const EpilogueCase& c : epilogue_cases()) check_epilogues(DType::BF16, c, false);
    check_epilogues(DType::F16, epilogue_cases()[2], false);
    check_epilogues(DType::BF16, epilogue_cases()[5], true);
    check_epilogues(DType::F16, epilogue_cases()[3], true);
  }
}

TEST(CudaMatmul, TransposedEpilogueOperands) {
  REQUIRE_CUDA();
  const int64_t bt = 3, m = 50, k = 36, n = 24;
  const Tensor a = uniform({bt, k, m}, DType::F32, 40).transpose(1, 2);
  const Tensor b = uniform({n, k}, DType::F32, 41).transpose(0, 1);
  const Tensor bias = uniform({n}, DType::F32, 42);
  // The same views on the GPU: built there, so their strides are those of the CPU's.
  const Tensor ag = uniform({bt, k, m}, DType::F32, 40).to(kGpu).transpose(1, 2);
  const Tensor bg = uniform({n, k}, DType::F32, 41).to(kGpu).transpose(0, 1);
  const uint64_t before = cu::gemm_operand_copies();
  for (Activation act : {Activation::Gelu, Activation::Silu, Activation::Relu}) {
    const EpilogueForward got = matmul_bias_activation_fwd(ag, bg, bias.to(kGpu), act);
    const EpilogueForward want = matmul_bias_activation_fwd(a, b, bias, act);
    const Tolerance tol = between_devices(DType::F32, k);
    EXPECT_EQ(compare(got.out, to_ref(want.out), tol), "") << activation_name(act);
    EXPECT_EQ(compare(got.saved, to_ref(want.saved), tol), "") << activation_name(act);
  }
  EXPECT_EQ(cu::gemm_operand_copies(), before);
}

// ---- large ----

TEST(CudaMatmul, Large1024CubedMatchesCpu) {
  REQUIRE_CUDA();
  const int64_t s = 1024;
  for (DType dt : {DType::F32, DType::BF16}) {
    const Tensor a = uniform({s, s}, dt, 50);
    const Tensor b = uniform({s, s}, dt, 51);
    const Tensor got = matmul(a.to(kGpu), b.to(kGpu));
    const Tensor want = matmul(a, b);
    EXPECT_EQ(compare(got, to_ref(want), between_devices(dt, s)), "") << dt;
    const Tensor bias = uniform({s}, dt, 52);
    const Tensor y =
        matmul_bias_activation(a.to(kGpu), b.to(kGpu), bias.to(kGpu), Activation::Gelu);
    const Tensor yw = matmul_bias_activation(a, b, bias, Activation::Gelu);
    EXPECT_EQ(compare(y, to_ref(yw), between_devices(dt, s)), "") << dt << " gelu";
  }
}

}  // namespace
