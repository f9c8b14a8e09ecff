// The linalg kernels of a backend without its own (WebGPU), written with Tensor ops alone:
// matmul, views, elementwise ops, reductions and where. Each kernel views the column-major
// operands of the call as logical row-major matrices ([batch, cols, rows] transposed),
// computes in that form and copies the results back in place. Loops run over columns or
// rounds on the host, each step a few batched ops; the only host reads are one scalar per
// Jacobi sweep for convergence. Pivot choice, swaps and failure flags stay on the device:
// one-hot masks from comparisons stand in for argmax and gather.
//
//   cholesky          left-looking, one column per step
//   lu_factor         partial pivoting, rank-1 trailing update per step
//   lu_solve          the pivots' swaps on b, then the two substitutions
//   triangular_solve  substitution one row (left) or column (right) per step
//   qr                Householder reflections, Q accumulated explicitly
//   eigh              cyclic Jacobi, round-robin order: n/2 disjoint rotations per round
//   svd               one-sided (Hestenes) Jacobi on columns, the same order; U completed
//                     by the Householder QR of its computed columns
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/linalg_backend.h"
#include "numr/ops.h"

namespace numr {
namespace {

constexpr int kMaxSweeps = 30;

double eps_of(DType t) {
  return t == DType::F64 ? std::numeric_limits<double>::epsilon()
                         : double(std::numeric_limits<float>::epsilon());
}

size_t itemsize(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64: return 8;
    default: return 4;
  }
}

// A non-owning contiguous tensor of `shape` over the operand r.
Tensor wrap(const TensorRef& r, const Shape& shape, Device d) {
  const size_t nbytes = size_t(r.offset + shape_numel(shape)) * itemsize(r.dtype);
  auto storage = std::make_shared<Storage>(&backend_for(d), r.base, nbytes, [] {});
  return Tensor(std::move(storage), shape, contiguous_strides(shape), r.offset, r.dtype);
}

// The logical [batch, rows, cols] view of a column-major operand.
Tensor wrap_matrix(const TensorRef& r, int64_t batch, int64_t rows, int64_t cols, Device d) {
  return wrap(r, Shape{batch, cols, rows}, d).transpose(1, 2);
}

Tensor scalar(double v, DType t, Device d) { return full(Shape{}, v, t, d); }

// Per matrix: info stays at its first failure; fail is Bool [batch].
void record_failure(Tensor& info, const Tensor& fail, double step) {
  info =
      where_cond(logical_and(eq(info, scalar(0, info.dtype(), info.device())), fail), step, info);
}

// ---- triangular solves on logical matrices ----

// X = A^-1 B for A [B, n, n] (upper or lower triangle, unit diagonal if unit), B [B, n, k].
Tensor solve_left(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  const int64_t n = a.size(1);
  Tensor x = zeros(b.shape(), b.dtype(), b.device());
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = upper ? n - 1 - s : s;
    Tensor r = b.narrow(1, i, 1);
    if (s > 0) {
      const int64_t lo = upper ? i + 1 : 0;
      r = r - matmul(a.narrow(1, i, 1).narrow(2, lo, s), x.narrow(1, lo, s));
    }
    if (!unit) r = r / a.narrow(1, i, 1).narrow(2, i, 1);
    x.narrow(1, i, 1).copy_(r);
  }
  return x;
}

// ---- kernels ----

void cholesky(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t n = c.n;
  Tensor av = wrap_matrix(c.a, c.batch, n, n, d);
  const Tensor a = av.contiguous();
  // The triangle read, as a full symmetric matrix.
  const Tensor sym =
      c.upper ? triu(a) + triu(a, 1).transpose(1, 2) : tril(a) + tril(a, -1).transpose(1, 2);
  Tensor l = zeros(a.shape(), a.dtype(), d);
  Tensor info = zeros(Shape{c.batch}, a.dtype(), d);
  for (int64_t j = 0; j < n; ++j) {
    Tensor v = sym.narrow(1, j, n - j).narrow(2, j, 1);
    if (j > 0)
      v = v - matmul(l.narrow(1, j, n - j).narrow(2, 0, j),
                     l.narrow(1, j, 1).narrow(2, 0, j).transpose(1, 2));
    const Tensor pivot = v.narrow(1, 0, 1);  // [B, 1, 1]
    const Tensor ok = gt(pivot, scalar(0, a.dtype(), d));
    record_failure(info, logical_not(ok).reshape(Shape{c.batch}), double(j + 1));
    l.narrow(1, j, n - j).narrow(2, j, 1).copy_(v / sqrt(where_cond(ok, pivot, 1.0)));
  }
  const Tensor out = c.upper ? l.transpose(1, 2) + tril(a, -1) : l + triu(a, 1);
  av.copy_(out);
  wrap(c.info, Shape{c.batch}, d).copy_(info);
}

// A one-hot [B, len, 1] at the first entry of x [B, len, 1] equal to its maximum; at entry
// 0 when there is none (x holds NaN).
Tensor first_max(const Tensor& x) {
  const Tensor hit = eq(x, max(x, {1}, true)).cast(x.dtype());
  Tensor first = hit * eq(cumsum(hit, 1), scalar(1, x.dtype(), x.device())).cast(x.dtype());
  const Tensor none = eq(sum(first, {1}, true), scalar(0, x.dtype(), x.device())).cast(x.dtype());
  const Tensor e0 =
      eq(arange(0, double(x.size(1)), 1, x.dtype(), x.device()).reshape(Shape{1, x.size(1), 1}),
         scalar(0, x.dtype(), x.device()))
          .cast(x.dtype());
  return first + none * e0;
}

// Swaps row 0 of s [B, len, cols] with the row one-hot e [B, len, 1] marks, exactly.
void swap_rows(Tensor& s, const Tensor& e) {
  const Tensor mask = gt(e, scalar(0, e.dtype(), e.device()));
  const Tensor top = s.narrow(1, 0, 1).clone();
  const Tensor picked = sum(where_cond(mask, s, 0.0), {1}, true);
  s.copy_(where_cond(mask, top, s));
  s.narrow(1, 0, 1).copy_(picked);
}

void lu_factor(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t m = c.m, n = c.n, k = std::min(m, n);
  Tensor av = wrap_matrix(c.a, c.batch, m, n, d);
  Tensor a = av.contiguous().clone();
  const DType t = a.dtype();
  Tensor info = zeros(Shape{c.batch}, t, d);
  std::vector<Tensor> pivots;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t len = m - j;
    Tensor s = a.narrow(1, j, len);
    const Tensor e = first_max(abs(s.narrow(2, j, 1)));
    const Tensor index = arange(0, double(len), 1, t, d).reshape(Shape{1, len, 1});
    pivots.push_back(sum(e * index, {1}).reshape(Shape{c.batch, 1}) + double(j + 1));
    swap_rows(s, e);
    const Tensor pivot = s.narrow(1, 0, 1).narrow(2, j, 1);
    const Tensor zero = eq(pivot, scalar(0, t, d));
    record_failure(info, zero.reshape(Shape{c.batch}), double(j + 1));
    if (len > 1) {
      Tensor below = s.narrow(1, 1, len - 1).narrow(2, j, 1);
      below.copy_(below / where_cond(zero, 1.0, pivot));
      if (j + 1 < n) {
        Tensor trailing = s.narrow(1, 1, len - 1).narrow(2, j + 1, n - j - 1);
        trailing.sub_(matmul(below, s.narrow(1, 0, 1).narrow(2, j + 1, n - j - 1)));
      }
    }
  }
  av.copy_(a);
  wrap(c.pivots, Shape{c.batch, k}, d).copy_(cat(pivots, 1));
  wrap(c.info, Shape{c.batch}, d).copy_(info);
  if (c.with_perm) {  // the pivots' swaps applied to 0..m-1, on the host
    const std::vector<int32_t> piv =
        wrap(c.pivots, Shape{c.batch, k}, d).to(Device::cpu()).to_vector<int32_t>();
    std::vector<int64_t> perm(size_t(c.batch * m));
    for (int64_t b = 0; b < c.batch; ++b) {
      int64_t* p = perm.data() + b * m;
      for (int64_t i = 0; i < m; ++i) p[i] = i;
      for (int64_t i = 0; i < k; ++i) std::swap(p[i], p[piv[size_t(b * k + i)] - 1]);
    }
    wrap(c.perm, Shape{c.batch, m}, d).copy_(Tensor::from_vector(perm, Shape{c.batch, m}));
  }
}

void lu_solve(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t n = c.n;
  const Tensor lu = wrap_matrix(c.a, c.batch, n, n, d).contiguous();
  Tensor bv = wrap_matrix(c.b, c.batch, n, c.k, d);
  Tensor b = bv.contiguous().clone();
  const DType t = b.dtype();
  // Pivot indices relative to their step, in the float dtype, to compare with a ramp.
  const Tensor piv = wrap(c.pivots, Shape{c.batch, n}, d).cast(t);
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t len = n - i;
    const Tensor index = arange(double(i + 1), double(n + 1), 1, t, d).reshape(Shape{1, len, 1});
    const Tensor e = eq(index, piv.narrow(1, i, 1).reshape(Shape{c.batch, 1, 1})).cast(t);
    Tensor s = b.narrow(1, i, len);
    swap_rows(s, e);
  }
  const Tensor y = solve_left(lu, b, false, true);
  bv.copy_(solve_left(lu, y, true, false));
}

void triangular_solve(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t n = c.n;
  Tensor a = wrap_matrix(c.a, c.batch, n, n, d).contiguous();
  a = c.upper ? triu(a) : tril(a);
  if (c.left) {
    Tensor bv = wrap_matrix(c.b, c.batch, n, c.k, d);
    bv.copy_(solve_left(a, bv.contiguous(), c.upper, c.unitriangular));
  } else {  // X A = B  <=>  A^T X^T = B^T
    Tensor bv = wrap_matrix(c.b, c.batch, c.k, n, d);
    const Tensor xt = solve_left(a.transpose(1, 2).contiguous(), bv.transpose(1, 2).contiguous(),
                                 !c.upper, c.unitriangular);
    bv.copy_(xt.transpose(1, 2));
  }
}

struct QrResult {
  Tensor q, r;  // q [B, m, m] (complete) or [B, m, k]; r [B, m or k, n]
};

// Householder QR of a [B, m, n]. As LAPACK's geqrf, a column already zero below the
// diagonal is left as it is (no reflection), so R's diagonal keeps its sign there.
QrResult householder_qr(const Tensor& a_in, bool complete, bool with_q) {
  const Device d = a_in.device();
  const DType t = a_in.dtype();
  const int64_t batch = a_in.size(0), m = a_in.size(1), n = a_in.size(2), k = std::min(m, n);
  Tensor r = a_in.contiguous().clone();
  Tensor q;
  if (with_q) q = eye(m, m, t, d).reshape(Shape{1, m, m}).broadcast_to(Shape{batch, m, m}).clone();
  for (int64_t j = 0; j < k && j + 1 < m; ++j) {
    const int64_t len = m - j;
    const Tensor x = r.narrow(1, j, len).narrow(2, j, 1);  // [B, len, 1]
    const Tensor x0 = x.narrow(1, 0, 1);
    const Tensor tail2 = sum(square(x.narrow(1, 1, len - 1)), {1}, true);
    const Tensor norm = sqrt(tail2 + square(x0));
    const Tensor alpha = where_cond(ge(x0, scalar(0, t, d)), -norm, norm);
    const Tensor v0 = x0 - alpha;
    const Tensor v = cat({v0, x.narrow(1, 1, len - 1)}, 1);
    const Tensor vnorm2 = tail2 + square(v0);
    const Tensor reflect = gt(tail2, scalar(0, t, d));
    const Tensor beta = where_cond(reflect, 2.0 / where_cond(reflect, vnorm2, 1.0), 0.0);
    Tensor block = r.narrow(1, j, len).narrow(2, j, n - j);
    block.sub_(matmul(v * beta, matmul(v.transpose(1, 2), block)));
    if (with_q) {
      Tensor qb = q.narrow(2, j, len);
      qb.sub_(matmul(matmul(qb, v), (v * beta).transpose(1, 2)));
    }
  }
  QrResult out;
  const int64_t qc = complete ? m : k;
  if (with_q) out.q = q.narrow(2, 0, qc);
  out.r = r.narrow(1, 0, qc);
  return out;
}

void qr(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t m = c.m, n = c.n, qc = c.complete ? m : std::min(m, n);
  const QrResult f = householder_qr(wrap_matrix(c.a, c.batch, m, n, d), c.complete, c.with_q);
  if (c.with_q) wrap_matrix(c.q, c.batch, m, qc, d).copy_(f.q);
  wrap_matrix(c.r, c.batch, qc, n, d).copy_(f.r);
}

// One round of the round-robin order over n indices: pair[i] is i's partner, or i itself
// when i sits this round out (n odd).
struct Round {
  Tensor partner;  // [n, n]: 1 at (i, pair[i]) for paired i, else 0
  Tensor swap;     // [n, n] permutation: x @ swap moves entry pair[i] to i (identity if unpaired)
  Tensor role;     // [n]: +1 where i < pair[i], -1 where i > pair[i], 0 unpaired
};

std::vector<Round> rounds(int64_t n, DType t, Device d) {
  const int64_t players = n + (n % 2);
  std::vector<Round> out;
  for (int64_t r = 0; r + 1 < players; ++r) {
    std::vector<int64_t> pair(static_cast<size_t>(players));
    const auto link = [&](int64_t x, int64_t y) {
      pair[size_t(x)] = y;
      pair[size_t(y)] = x;
    };
    link(players - 1, r);
    for (int64_t i = 1; i < players / 2; ++i)
      link((r + i) % (players - 1), (r - i + players - 1) % (players - 1));
    std::vector<double> partner(size_t(n * n), 0.0), swap(size_t(n * n), 0.0),
        role(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = pair[size_t(i)] < n ? pair[size_t(i)] : i;
      swap[size_t(i * n + p)] = 1;
      if (p != i) partner[size_t(i * n + p)] = 1;
      role[size_t(i)] = p == i ? 0 : (i < p ? 1 : -1);
    }
    out.push_back({Tensor::from_vector(partner, Shape{n, n}).cast(t).to(d),
                   Tensor::from_vector(swap, Shape{n, n}).cast(t).to(d),
                   Tensor::from_vector(role, Shape{n}).cast(t).to(d)});
  }
  return out;
}

// The rotation [B, n, n] of one round from per-index 2x2 problems [[a_ii, g], [g, a_jj]]
// (j = pair[i]): diff = a_jj - a_ii, g the coupling. J[i, i] = c, J[i, pair[i]] = s_i with
// s_i = role_i * t c, t the smaller root of t^2 + 2 theta t - 1 = 0, theta = diff / (2 g)
// seen from the pair's lower index (role makes it one value for both members).
Tensor rotation(const Tensor& diff, const Tensor& g, const Round& rd) {
  const Device d = diff.device();
  const DType t = diff.dtype();
  const Tensor zero = scalar(0, t, d);
  const Tensor active = ne(g, zero);
  const Tensor theta = rd.role * diff / (2.0 * where_cond(active, g, 1.0));
  const Tensor root = sqrt(square(theta) + 1.0);
  Tensor tan = where_cond(ge(theta, zero), 1.0, scalar(-1, t, d)) / (abs(theta) + root);
  // theta^2 overflows: t ~ 1 / (2 theta).
  tan = where_cond(isinf(root), 0.5 / theta, tan);
  tan = where_cond(active, tan, 0.0);
  const Tensor cos = rsqrt(square(tan) + 1.0);
  const Tensor sin = rd.role * tan * cos;
  const int64_t n = diff.size(-1);
  const Tensor id = eye(n, n, t, d);
  return id * cos.unsqueeze(-1) + rd.partner * sin.unsqueeze(-1);
}

// The order of w [B, n] as a permutation matrix [B, n, n]: w @ P is w sorted ascending
// (descending when !ascending), ties kept in index order.
Tensor sorting_matrix(const Tensor& w, bool ascending) {
  const Device d = w.device();
  const DType t = w.dtype();
  const int64_t n = w.size(1);
  const Tensor wi = w.unsqueeze(2), wj = w.unsqueeze(1);  // i rows, j columns
  const Tensor before = ascending ? lt(wj, wi) : gt(wj, wi);
  const Tensor idx = arange(0, double(n), 1, t, d);
  const Tensor earlier = lt(idx.reshape(Shape{1, 1, n}), idx.reshape(Shape{1, n, 1}));
  const Tensor rank =
      sum(logical_or(before, logical_and(eq(wj, wi), earlier)).cast(t), {2}, true);  // [B,n,1]
  return eq(rank, idx.reshape(Shape{1, 1, n})).cast(t);
}

void eigh(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t n = c.n, batch = c.batch;
  Tensor av = wrap_matrix(c.a, batch, n, n, d);
  const Tensor a0 = av.contiguous();
  const DType t = a0.dtype();
  Tensor a =
      c.upper ? triu(a0) + triu(a0, 1).transpose(1, 2) : tril(a0) + tril(a0, -1).transpose(1, 2);
  Tensor v = eye(n, n, t, d).reshape(Shape{1, n, n}).broadcast_to(Shape{batch, n, n}).clone();
  const Tensor id = eye(n, n, t, d);
  const double tol = eps_of(t) * double(std::max<int64_t>(n, 1));
  const auto off_ratio = [&](const Tensor& x) {  // per matrix: ||offdiag|| / ||x||
    const Tensor total = sum(square(x), {1, 2});
    const Tensor off = sum(square(x * (1.0 - id)), {1, 2});
    return sqrt(off / where_cond(gt(total, scalar(0, t, d)), total, 1.0));
  };
  const std::vector<Round> rs = rounds(n, t, d);
  Tensor ratio = off_ratio(a);
  bool last = false;
  for (int sweep = 0; sweep < kMaxSweeps && n > 1; ++sweep) {
    const double worst = max(ratio).to(Device::cpu()).item_double();
    if (!std::isfinite(worst)) break;
    if (worst <= tol) {
      if (last) break;
      last = true;  // one more sweep squares what is left
    }
    for (const Round& rd : rs) {
      const Tensor diag = sum(a * id, {2});              // [B, n]
      const Tensor diff = matmul(diag, rd.swap) - diag;  // a_jj - a_ii
      // a_i,pair(i), the same value for both members even where a drifted from symmetry
      const Tensor g = sum((a + a.transpose(1, 2)) * rd.partner, {2}) * 0.5;
      const Tensor j = rotation(diff, g, rd);
      a = matmul(j.transpose(1, 2), matmul(a, j));
      v = matmul(v, j);
    }
    a = (a + a.transpose(1, 2)) * 0.5;
    ratio = off_ratio(a);
  }
  const Tensor info = logical_not(le(ratio, scalar(tol, t, d)));
  const Tensor w = sum(a * id, {2});
  const Tensor p = sorting_matrix(w, true);
  wrap(c.w, Shape{batch, n}, d).copy_(matmul(w.unsqueeze(1), p).squeeze(1));
  if (c.with_vectors) av.copy_(matmul(v, p));
  wrap(c.info, Shape{batch}, d).copy_(info);
}

void svd(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t batch = c.batch;
  const bool wide = c.m < c.n;
  // Work on a tall [m, n] (the transpose of a wide input): A = U S V^T.
  const int64_t m = wide ? c.n : c.m, n = wide ? c.m : c.n;
  Tensor a = wrap_matrix(c.a, batch, c.m, c.n, d);
  Tensor u = (wide ? a.transpose(1, 2) : a).contiguous().clone();
  const DType t = u.dtype();
  const Tensor id = eye(n, n, t, d);
  Tensor v = id.reshape(Shape{1, n, n}).broadcast_to(Shape{batch, n, n}).clone();
  const double tol = eps_of(t) * double(m);
  const std::vector<Round> rs = n > 1 ? rounds(n, t, d) : std::vector<Round>();
  // Per matrix: the largest |u_i . u_j| / (|u_i| |u_j|) over the pairs of the sweep.
  Tensor worst = zeros(Shape{batch}, t, d);
  bool last = false;
  for (int sweep = 0; sweep < kMaxSweeps && n > 1; ++sweep) {
    worst = zeros(Shape{batch}, t, d);
    for (const Round& rd : rs) {
      const Tensor norms = sum(square(u), {1});                                  // [B, n]
      const Tensor other = matmul(norms, rd.swap);                               // |u_pair(i)|^2
      const Tensor g = sum(u * matmul(u, rd.swap), {1}) * sum(rd.partner, {1});  // u_i . u_pair
      const Tensor scale = sqrt(norms * other);
      const Tensor rel = abs(g) / where_cond(gt(scale, scalar(0, t, d)), scale, 1.0);
      worst = maximum(worst, max(where_cond(isnan(rel), INFINITY, rel), {1}));
      const Tensor j = rotation(other - norms, g, rd);
      u = matmul(u, j);
      v = matmul(v, j);
    }
    const double w = max(worst).to(Device::cpu()).item_double();
    if (!std::isfinite(w)) break;
    if (w <= tol) {
      if (last) break;
      last = true;
    }
  }
  if (n == 1) worst = zeros(Shape{batch}, t, d);
  const Tensor info = logical_not(le(worst, scalar(tol, t, d)));
  const Tensor sigma = sqrt(sum(square(u), {1}));  // [B, n]
  const Tensor p = sorting_matrix(sigma, false);
  const Tensor s = matmul(sigma.unsqueeze(1), p).squeeze(1);
  wrap(c.w, Shape{batch, n}, d).copy_(s);
  wrap(c.info, Shape{batch}, d).copy_(info);
  if (!c.with_vectors) return;
  const Tensor nonzero = gt(s, scalar(0, t, d)).unsqueeze(1);
  Tensor cols = where_cond(nonzero, matmul(u, p) / where_cond(nonzero, s.unsqueeze(1), 1.0), 0.0);
  // Orthonormal columns for zero singular values and for a complete U: Q of cols' QR, its
  // columns signed as cols' own (R's diagonal is +-1 where cols has a unit column).
  const bool complete_u = c.complete;
  const QrResult f = householder_qr(cols, complete_u, true);
  const int64_t uc = f.q.size(2);
  const Tensor rdiag = sum(f.r.narrow(1, 0, n) * id, {2});  // [B, n]
  Tensor signs = where_cond(lt(rdiag, scalar(0, t, d)), -1.0, scalar(1, t, d));
  if (uc > n) signs = cat({signs, ones(Shape{batch, uc - n}, t, d)}, 1);
  const Tensor uu = f.q * signs.unsqueeze(1);  // [B, m, uc]
  const Tensor vv = matmul(v, p);              // [B, n, n]
  if (!wide) {
    wrap_matrix(c.u, batch, c.m, uc, d).copy_(uu);
    wrap_matrix(c.vt, batch, n, c.n, d).copy_(vv.transpose(1, 2));
  } else {  // A = (U S V^T)^T = V S U^T
    wrap_matrix(c.u, batch, c.m, n, d).copy_(vv);
    wrap_matrix(c.vt, batch, uc, c.n, d).copy_(uu.transpose(1, 2));
  }
}

class ComposedLinalg final : public LinalgKernels {
 public:
  bool supports(LinalgKernel k, DType t) const override {
    return int(k) <= int(LinalgKernel::svd) && (t == DType::F32 || t == DType::F64);
  }
  void run(const LinalgCall& c) override {
    switch (c.kernel) {
      case LinalgKernel::cholesky: return cholesky(c);
      case LinalgKernel::lu_factor: return lu_factor(c);
      case LinalgKernel::lu_solve: return lu_solve(c);
      case LinalgKernel::triangular_solve: return triangular_solve(c);
      case LinalgKernel::qr: return qr(c);
      case LinalgKernel::eigh: return eigh(c);
      case LinalgKernel::svd: return svd(c);
      default: break;
    }
  }
};

}  // namespace

LinalgKernels& composed_linalg_kernels() {
  static ComposedLinalg k;
  return k;
}

}  // namespace numr
