// The linalg kernels composed from Tensor ops (src/ops/linalg_composed.cpp), which backends
// without their own (WebGPU) run: numr::linalg through them on the CPU, F64 and F32, at sizes
// 1 to 100 (primes among them) and batches, against the same ops through LAPACK and by
// reconstruction; errors for singular and indefinite matrices; and numr::linalg on WebGPU.
// NUMR_TEST_LINALG=composed routes the whole test program's linalg through them (a CTest
// entry runs the Linalg suites that way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/linalg_backend.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

bool composed_from_env() {
  const char* v = std::getenv("NUMR_TEST_LINALG");
  return v != nullptr && std::string(v) == "composed";
}

// The switch's state as this file last set it; applied from the environment before any
// test runs.
bool g_composed = [] {
  const bool on = composed_from_env();
  if (on) set_composed_linalg_for_testing(true);
  return on;
}();

void set_composed(bool on) {
  g_composed = on;
  set_composed_linalg_for_testing(on);
}

// While alive, linalg runs through `on`'s kernels (the composed ones, or the device's own).
struct Composed {
  explicit Composed(bool on = true) : before(g_composed) { set_composed(on); }
  ~Composed() { set_composed(before); }
  bool before;
};

// f's result through LAPACK and through the compositions.
template <class F>
auto both(F&& f) {
  auto lapack = [&] {
    const Composed off(false);
    return f();
  }();
  const Composed on;
  return std::make_pair(lapack, f());
}

double eps_of(DType t) {
  return t == DType::F64 ? std::numeric_limits<double>::epsilon()
                         : double(std::numeric_limits<float>::epsilon());
}

std::vector<double> vals(const Tensor& t) {
  return t.to(Device::cpu()).cast(DType::F64).contiguous().to_vector<double>();
}

// max over the batch of ||got_i - want_i||_F / ||want_i||_F (absolute where want_i is 0).
double rel_err(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() != want.shape()) return INFINITY;
  const std::vector<double> g = vals(got), w = vals(want);
  const int64_t per = want.dim() >= 2 ? want.size(-1) * want.size(-2) : want.numel();
  double worst = 0;
  for (size_t b = 0; per > 0 && b < g.size() / size_t(per); ++b) {
    double d = 0, n = 0;
    for (int64_t i = 0; i < per; ++i) {
      const double x = g[b * size_t(per) + size_t(i)], y = w[b * size_t(per) + size_t(i)];
      d += (x - y) * (x - y);
      n += y * y;
    }
    worst = std::max(worst, std::isnan(d) ? INFINITY : std::sqrt(d) / (n > 0 ? std::sqrt(n) : 1.0));
  }
  return worst;
}

Tensor mT(const Tensor& x) { return x.transpose(-2, -1); }

Tensor random_matrix(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  return randn(shape, DType::F64, Device::cpu(), g).cast(t);
}

// ||x^T x - I|| for x [.., m, k] with orthonormal columns.
double orthonormality(const Tensor& x) {
  const int64_t k = x.size(-1);
  return rel_err(matmul(mT(x), x), eye(k, k, x.dtype()).broadcast_to([&] {
    Shape s = x.shape();
    s[s.size() - 2] = k;
    return s;
  }()));
}

template <class E>
void expect_error(const std::function<void()>& f, const std::string& prefix,
                  const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << prefix;
  } catch (const E& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m;
    EXPECT_NE(m.find(part), std::string::npos) << m;
  }
}

constexpr double kC = 8.0;
const DType kTypes[] = {DType::F64, DType::F32};
const std::vector<int64_t> kSizes = {1, 2, 3, 5, 8, 13, 31, 64, 97};

struct Shaped {
  Shape lead;
  int64_t m, n;
};
std::vector<Shaped> shapes() {
  std::vector<Shaped> out;
  for (int64_t n : kSizes) out.push_back({{}, n, n});
  for (const Shaped& s : std::vector<Shaped>{{{3}, 4, 4}, {{2, 2}, 7, 7}, {{2}, 17, 17}})
    out.push_back(s);
  return out;
}
std::vector<Shaped> rectangular() {
  return {{{}, 5, 3}, {{}, 3, 5}, {{2}, 23, 7}, {{2}, 7, 23},
          {{}, 1, 6}, {{}, 6, 1}, {{}, 60, 41}, {{3}, 2, 9}};
}

Shape mat(Shape lead, int64_t m, int64_t n) {
  lead.push_back(m);
  lead.push_back(n);
  return lead;
}

std::string what(const Shaped& s, DType t) {
  return shape_str(mat(s.lead, s.m, s.n)) + " " + std::string(dtype_name(t));
}

TEST(LinalgComposed, FactorizationsMatchLapack) {
  uint64_t seed = 100;
  for (DType t : kTypes)
    for (const Shaped& s : shapes()) {
      const int64_t n = s.n;
      const double e = eps_of(t) * kC * double(n);
      const Tensor x = random_matrix(mat(s.lead, n, n), t, ++seed);
      // Cholesky of a well-conditioned SPD matrix: forward stable.
      const Tensor spd = matmul(x, mT(x)) / double(n) + eye(n, n, t);
      for (bool upper : {false, true}) {
        const auto [ref, got] = both([&] { return linalg::cholesky(spd, upper); });
        EXPECT_LE(rel_err(got, ref), e * 4) << what(s, t) << " cholesky";
      }
      // LU: the same pivots (random entries have no ties) and factors.
      const auto [lref, lgot] = both([&] { return linalg::lu_factor(x); });
      EXPECT_EQ(lgot.pivots.to_vector<int32_t>(), lref.pivots.to_vector<int32_t>()) << what(s, t);
      const linalg::Lu f = [&] {
        const Composed on;
        return linalg::lu(x);
      }();
      EXPECT_LE(rel_err(matmul(f.P, matmul(f.L, f.U)), x), e) << what(s, t) << " P L U";
      // Solves and what is made from LU: forward errors scale with the condition number.
      const double cond = linalg::cond(x.cast(DType::F64)).max().item_double();
      const double fe = e * cond;
      const Tensor b = random_matrix(mat(s.lead, n, 3), t, ++seed);
      const auto [sref, sgot] = both([&] { return linalg::solve(x, b); });
      EXPECT_LE(rel_err(sgot, sref), fe) << what(s, t) << " solve";
      const auto [iref, igot] = both([&] { return linalg::inv(x); });
      EXPECT_LE(rel_err(igot, iref), fe) << what(s, t) << " inv";
      const auto [dref, dgot] = both([&] { return linalg::slogdet(x); });
      EXPECT_EQ(vals(dgot.sign), vals(dref.sign)) << what(s, t);
      EXPECT_LE(rel_err(dgot.logabsdet, dref.logabsdet), fe) << what(s, t) << " slogdet";
      if (n <= 31) {  // beyond, det of a random matrix overflows F32
        const auto [tref, tgot] = both([&] { return linalg::det(x); });
        EXPECT_LE(rel_err(tgot, tref), fe * double(n)) << what(s, t) << " det";
      }
      // Triangular solves, both sides, both triangles, with and without a unit diagonal.
      const Tensor tri = x + eye(n, n, t) * double(2 * n);  // well conditioned triangles
      const Tensor bl = random_matrix(mat(s.lead, n, 4), t, ++seed);
      const Tensor br = random_matrix(mat(s.lead, 4, n), t, ++seed);
      for (bool upper : {false, true})
        for (bool left : {true, false})
          for (bool unit : {false, true}) {
            if (unit && n > 8) continue;  // a unit triangle of random entries is ill-conditioned
            const Tensor& rhs = left ? bl : br;
            const auto [r0, r1] =
                both([&] { return linalg::solve_triangular(tri, rhs, upper, left, unit); });
            EXPECT_LE(rel_err(r1, r0), e * 4)
                << what(s, t) << " triangular " << upper << left << unit;
          }
    }
}

TEST(LinalgComposed, QrMatchesLapack) {
  uint64_t seed = 200;
  std::vector<Shaped> all = shapes();
  for (const Shaped& r : rectangular()) all.push_back(r);
  for (DType t : kTypes)
    for (const Shaped& s : all) {
      const double e = eps_of(t) * kC * double(std::max(s.m, s.n));
      const Tensor a = random_matrix(mat(s.lead, s.m, s.n), t, ++seed);
      for (const char* mode : {"reduced", "complete", "r"}) {
        const auto [ref, got] = both([&] { return linalg::qr(a, mode); });
        // Householder with LAPACK's sign choice: R's diagonal signs agree.
        EXPECT_LE(rel_err(got.R, ref.R), e * 4) << what(s, t) << " R " << mode;
        if (std::string(mode) == "r") continue;
        EXPECT_LE(rel_err(matmul(got.Q, got.R), a), e) << what(s, t) << " Q R " << mode;
        EXPECT_LE(orthonormality(got.Q), e) << what(s, t) << " Q " << mode;
        // Q is unique where it has no columns beyond a's.
        if (s.m <= s.n || std::string(mode) == "reduced") {
          const double cond = linalg::cond(a.cast(DType::F64)).max().item_double();
          EXPECT_LE(rel_err(got.Q, ref.Q), e * 4 * cond) << what(s, t) << " Q " << mode;
        }
      }
    }
}

TEST(LinalgComposed, EighMatchesLapack) {
  uint64_t seed = 300;
  for (DType t : kTypes)
    for (const Shaped& s : shapes()) {
      const int64_t n = s.n;
      const double e = eps_of(t) * kC * double(n);
      const Tensor x = random_matrix(mat(s.lead, n, n), t, ++seed);
      const Tensor a = (x + mT(x)) * 0.5;
      const auto [ref, got] = both([&] { return linalg::eigh(a); });
      // Eigenvalues are perfectly conditioned: |w - w_ref| <= c n eps ||a||.
      const double norm = linalg::matrix_norm(a.cast(DType::F64), "fro").max().item_double();
      const std::vector<double> w = vals(got.eigenvalues), wr = vals(ref.eigenvalues);
      double worst = 0;
      for (size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(w[i] - wr[i]));
      EXPECT_LE(worst, e * norm) << what(s, t) << " eigenvalues";
      const Tensor v = got.eigenvectors;
      EXPECT_LE(rel_err(matmul(a, v), v * got.eigenvalues.unsqueeze(-2)), e * 2)
          << what(s, t) << " A V = V diag(w)";
      EXPECT_LE(orthonormality(v), e) << what(s, t) << " V";
      const auto [vr, vg] = both([&] { return linalg::eigvalsh(a); });
      EXPECT_LE(rel_err(vg, got.eigenvalues), e) << what(s, t) << " eigvalsh";
    }
  // Repeated eigenvalues: the identity and a rank-one update of it.
  for (DType t : kTypes) {
    const Composed on;
    const Tensor u = random_matrix(Shape{9, 1}, t, 7);
    const Tensor a = eye(9, 9, t) * 3.0 + matmul(u, mT(u));
    const linalg::Eigh r = linalg::eigh(a);
    const double e = eps_of(t) * kC * 9;
    EXPECT_LE(rel_err(matmul(a, r.eigenvectors), r.eigenvectors * r.eigenvalues.unsqueeze(-2)), e);
    EXPECT_LE(orthonormality(r.eigenvectors), e);
    const std::vector<double> w = vals(r.eigenvalues);
    for (size_t i = 0; i + 1 < w.size(); ++i) EXPECT_NEAR(w[i], 3.0, 3.0 * e);
  }
}

TEST(LinalgComposed, SvdMatchesLapack) {
  uint64_t seed = 400;
  std::vector<Shaped> all = shapes();
  for (const Shaped& r : rectangular()) all.push_back(r);
  for (DType t : kTypes)
    for (const Shaped& s : all) {
      const int64_t k = std::min(s.m, s.n);
      const double e = eps_of(t) * kC * double(std::max(s.m, s.n));
      const Tensor a = random_matrix(mat(s.lead, s.m, s.n), t, ++seed);
      const double norm = linalg::matrix_norm(a.cast(DType::F64), "fro").max().item_double();
      for (bool full : {false, true}) {
        const auto [ref, got] = both([&] { return linalg::svd(a, full); });
        const std::vector<double> sg = vals(got.S), sr = vals(ref.S);
        double worst = 0;
        for (size_t i = 0; i < sg.size(); ++i) worst = std::max(worst, std::abs(sg[i] - sr[i]));
        EXPECT_LE(worst, e * norm) << what(s, t) << " S";
        const Tensor us = got.U.narrow(-1, 0, k) * got.S.unsqueeze(-2);
        EXPECT_LE(rel_err(matmul(us, got.Vh.narrow(-2, 0, k)), a), e) << what(s, t) << " U S Vh";
        EXPECT_LE(orthonormality(got.U), e) << what(s, t) << " U " << full;
        EXPECT_LE(orthonormality(mT(got.Vh)), e) << what(s, t) << " Vh " << full;
      }
      const auto [vr, vg] = both([&] { return linalg::svdvals(a); });
      EXPECT_LE(rel_err(vg, vr), e) << what(s, t) << " svdvals";
    }
  // Rank-deficient: zero singular values get orthonormal columns of U all the same.
  for (DType t : kTypes) {
    const Composed on;
    Tensor a = random_matrix(Shape{8, 5}, t, 11);
    a = cat({a.narrow(1, 0, 2), zeros(Shape{8, 2}, t), a.narrow(1, 0, 1)}, 1);
    for (bool full : {false, true}) {
      const linalg::Svd r = linalg::svd(a, full);
      const double e = eps_of(t) * kC * 8;
      EXPECT_LE(orthonormality(r.U), e);
      EXPECT_LE(orthonormality(mT(r.Vh)), e);
      EXPECT_LE(rel_err(matmul(r.U.narrow(-1, 0, 5) * r.S.unsqueeze(-2), r.Vh.narrow(-2, 0, 5)), a),
                e);
    }
    const linalg::Svd z = linalg::svd(zeros(Shape{4, 3}, t), true);
    EXPECT_EQ(vals(z.S), std::vector<double>(3, 0.0));
    EXPECT_LE(orthonormality(z.U), eps_of(t) * kC * 4);
  }
}

TEST(LinalgComposed, TestSwitch) {
  {
    const Composed on;
    LinalgKernels* cpu = linalg_kernels_for(Device::cpu());
    EXPECT_NE(cpu, &cpu_linalg_kernels());
    EXPECT_TRUE(cpu->supports(LinalgKernel::svd, DType::F32));
  }
  const Composed off(false);
  EXPECT_EQ(linalg_kernels_for(Device::cpu()), &cpu_linalg_kernels());
  EXPECT_EQ(linalg_kernels_for(Device::webgpu(0)), &composed_linalg_kernels());
  EXPECT_FALSE(composed_linalg_kernels().supports(LinalgKernel::qr, DType::I32));
}

TEST(LinalgComposed, ErrorsNameTheOp) {
  const Composed on;
  for (DType t : kTypes) {
    const Tensor singular = Tensor::from_vector<double>({1, 2, 2, 4}, {2, 2}).cast(t);
    expect_error<InvalidArgument>([&] { linalg::inv(singular); }, "[linalg.inv]", "singular");
    expect_error<InvalidArgument>([&] { linalg::solve(singular, eye(2, 2, t)); }, "[linalg.solve]",
                                  "U[1, 1]");
    const Tensor batch = stack({eye(3, 3, t), -eye(3, 3, t)}, 0);
    expect_error<InvalidArgument>([&] { linalg::cholesky(batch); }, "[linalg.cholesky]",
                                  "(batch element 1): its leading minor of order 1");
    const Tensor indefinite =
        Tensor::from_vector<double>({4, 2, 0, 2, 1, 0, 0, 0, 1}, {3, 3}).cast(t);
    expect_error<InvalidArgument>([&] { linalg::cholesky(indefinite); }, "[linalg.cholesky]",
                                  "order 2");
    const Tensor nan = full(Shape{3, 3}, NAN, t);
    expect_error<InvalidArgument>([&] { linalg::eigh(nan); }, "[linalg.eigh]", "converge");
    expect_error<InvalidArgument>([&] { linalg::svd(nan); }, "[linalg.svd]", "converge");
    // A zero column: U[0, 0] = 0 is the first zero pivot, as LAPACK's getrf reports it.
    const Tensor zero_col = Tensor::from_vector<double>({0, 1, 0, 2}, {2, 2}).cast(t);
    const auto [ref, got] = both([&] { return linalg::lu_factor(zero_col); });
    EXPECT_EQ(rel_err(got.LU, ref.LU), 0.0);
    EXPECT_EQ(linalg::det(zero_col).item_double(), 0.0);  // singular, not an error
  }
}

// numr::linalg on each test device without linalg kernels of its own (WebGPU): the
// compositions run there and agree with the CPU's LAPACK.
TEST(LinalgComposed, OnDevicesWithoutLinalgKernels) {
  bool ran = false;
  std::string why = "no test device without linalg kernels";
  for (const test::TestDevice& td : test::test_devices()) {
    if (td.device.type != DeviceType::WebGpu) continue;
    if (!td.available) {
      why = td.reason;
      continue;
    }
    ran = true;
    const Device dev = td.device;
    const DType t = DType::F32;
    // The triangle masks the front ends use.
    const Tensor m = random_matrix(Shape{2, 5, 7}, t, 499);
    for (int64_t diag : {-2, 0, 3}) {
      EXPECT_EQ(rel_err(tril(m.to(dev), diag), tril(m, diag)), 0.0);
      EXPECT_EQ(rel_err(triu(m.to(dev), diag), triu(m, diag)), 0.0);
    }
    for (int64_t n : {1, 4, 13, 40}) {
      const std::string w = "n " + std::to_string(n);
      const double e = eps_of(t) * kC * double(n) * 4;
      const Tensor x = random_matrix(Shape{2, n, n}, t, 500 + uint64_t(n));
      const Tensor xd = x.to(dev);
      const Tensor spd = matmul(x, mT(x)) / double(n) + eye(n, n, t);
      const Tensor l = linalg::cholesky(spd.to(dev));
      EXPECT_EQ(l.device(), dev);
      EXPECT_LE(rel_err(l, linalg::cholesky(spd)), e) << w;
      const double cond = linalg::cond(x.cast(DType::F64)).max().item_double();
      const Tensor b = random_matrix(Shape{2, n, 2}, t, 600 + uint64_t(n));
      EXPECT_LE(rel_err(linalg::solve(xd, b.to(dev)), linalg::solve(x, b)), e * cond) << w;
      EXPECT_LE(rel_err(linalg::inv(xd), linalg::inv(x)), e * cond) << w;
      EXPECT_LE(rel_err(linalg::det(xd), linalg::det(x)), e * cond * double(n)) << w;
      const linalg::LuFactor lf = linalg::lu_factor(xd);
      EXPECT_EQ(lf.pivots.to(Device::cpu()).to_vector<int32_t>(),
                linalg::lu_factor(x).pivots.to_vector<int32_t>())
          << w;
      const linalg::Lu lu = linalg::lu(xd);
      EXPECT_LE(rel_err(matmul(lu.P, matmul(lu.L, lu.U)), x), e) << w;
      EXPECT_EQ(rel_err(lu.P, linalg::lu(x).P), 0.0) << w;
      const Tensor tri = x + eye(n, n, t) * double(2 * n);
      EXPECT_LE(rel_err(linalg::solve_triangular(tri.to(dev), b.to(dev), true),
                        linalg::solve_triangular(tri, b, true)),
                e)
          << w;
      const linalg::Qr q = linalg::qr(xd);
      EXPECT_LE(rel_err(matmul(q.Q, q.R), xd), e) << w;
      EXPECT_LE(rel_err(q.R, linalg::qr(x).R), e * cond) << w;
      const Tensor sym = (x + mT(x)) * 0.5;
      const linalg::Eigh eh = linalg::eigh(sym.to(dev));
      EXPECT_LE(rel_err(eh.eigenvalues, linalg::eigvalsh(sym)), e) << w;
      EXPECT_LE(rel_err(matmul(sym.to(dev), eh.eigenvectors),
                        eh.eigenvectors * eh.eigenvalues.unsqueeze(-2)),
                e)
          << w;
      const Tensor r = random_matrix(Shape{2, n + 3, n}, t, 700 + uint64_t(n));
      const linalg::Svd sv = linalg::svd(r.to(dev), false);
      EXPECT_LE(rel_err(sv.S, linalg::svdvals(r)), e) << w;
      EXPECT_LE(rel_err(matmul(sv.U * sv.S.unsqueeze(-2), sv.Vh), r), e) << w;
      // The rank is I64, held on WebGPU as word pairs.
      const Tensor rank = linalg::matrix_rank(r.to(dev));
      EXPECT_EQ(rank.dtype(), DType::I64);
      EXPECT_EQ(rank.to(Device::cpu()).to_vector<int64_t>(),
                linalg::matrix_rank(r).to_vector<int64_t>())
          << w;
      // Wide and complete; what is composed from the kernels.
      const Tensor wide = mT(r);
      const linalg::Svd full = linalg::svd(wide.to(dev), true);
      EXPECT_LE(orthonormality(full.U), e) << w;
      EXPECT_LE(orthonormality(mT(full.Vh)), e) << w;
      EXPECT_LE(rel_err(matmul(full.U * full.S.unsqueeze(-2), full.Vh.narrow(-2, 0, n)), wide), e)
          << w;
      const linalg::Qr qc = linalg::qr(r.to(dev), "complete");
      EXPECT_LE(orthonormality(qc.Q), e) << w;
      EXPECT_LE(rel_err(matmul(qc.Q, qc.R), r), e) << w;
      const linalg::Slogdet sd = linalg::slogdet(xd);
      EXPECT_LE(rel_err(sd.logabsdet, linalg::slogdet(x).logabsdet), e * cond) << w;
      const double rcond = linalg::cond(r.cast(DType::F64)).max().item_double();
      EXPECT_LE(rel_err(linalg::pinv(r.to(dev)), linalg::pinv(r)), e * rcond) << w;
      const Tensor rb = random_matrix(Shape{2, n + 3, 2}, t, 800 + uint64_t(n));
      EXPECT_LE(rel_err(linalg::lstsq(r.to(dev), rb.to(dev)), linalg::lstsq(r, rb)),
                e * rcond * rcond)
          << w;
    }
  }
  if (!ran) GTEST_SKIP() << why;
}

}  // namespace
}  // namespace numr
