// The linalg kernels of a backend without its own (WebGPU), written with Tensor ops alone:
// views, elementwise ops, reductions, where and cat; matmul only for the final reordering of
// eigen- and singular vectors (a backend without linalg kernels may compose matmul itself,
// so the steps use broadcast products and sums instead). Each kernel views the column-major
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
      // row i of a times the rows solved so far: [B, 1, s] . [B, s, k]
      r = r -
          sum(a.narrow(1, i, 1).narrow(2, lo, s).transpose(1, 2) * x.narrow(1, lo, s), {1}, true);
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
      v = v -
          sum(l.narrow(1, j, n - j).narrow(2, 0, j) * l.narrow(1, j, 1).narrow(2, 0, j), {2}, true);
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
        trailing.sub_(below * s.narrow(1, 0, 1).narrow(2, j + 1, n - j - 1));
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
    wrap(c.perm, Shape{c.batch, m}, d)
        .copy_(Tensor::from_vector(perm, Shape{c.batch, m}).cast(c.perm.dtype));
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
    block.sub_((v * beta) * sum(v * block, {1}, true));
    if (with_q) {
      Tensor qb = q.narrow(2, j, len);
      qb.sub_(sum(qb * v.transpose(1, 2), {2}, true) * (v * beta).transpose(1, 2));
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

// ---- Jacobi: round-robin pairs kept in the top and bottom halves ----
//
// The N (even) indices sit in a layout whose position k pairs with position k + h (h = N / 2),
// so one round's h disjoint rotations are elementwise ops on the two halves. After each
// round the layout moves as the circle method does (position 0 fixed, the others one step
// round the circle), so N - 1 rounds meet every pair once and restore the layout.

// [top, bottom] along dim in the next round's layout.
Tensor next_layout(const Tensor& top, const Tensor& bot, int64_t dim) {
  const int64_t h = top.size(dim);
  if (h == 1) return cat({top, bot}, dim);
  std::vector<Tensor> parts = {top.narrow(dim, 0, 1), bot.narrow(dim, 0, 1)};
  if (h > 2) parts.push_back(top.narrow(dim, 1, h - 2));
  parts.push_back(bot.narrow(dim, 1, h - 1));
  parts.push_back(top.narrow(dim, h - 1, 1));
  return cat(parts, dim);
}

// x [B, N, N] contiguous: the diagonal of its block at (row0, col0), h long, as a view.
Tensor block_diagonal(const Tensor& x, int64_t row0, int64_t col0, int64_t h) {
  const int64_t n = x.size(1);
  return Tensor(x.storage(), Shape{x.size(0), h}, Strides{n * n, n + 1},
                x.offset() + row0 * n + col0, x.dtype());
}

// The rotation (c, s) [B, h] that diagonalises each [[a_pp, g], [g, a_qq]] (diff = a_qq -
// a_pp): t = tan, the smaller root of t^2 + 2 theta t - 1 = 0 with theta = diff / (2 g),
// written without dividing by g; |t| <= 1.
std::pair<Tensor, Tensor> rotation(const Tensor& diff, const Tensor& g) {
  const Device d = diff.device();
  const DType t = diff.dtype();
  const Tensor zero = scalar(0, t, d);
  const Tensor sgn = where_cond(ge(diff, zero), 2.0, scalar(-2, t, d));
  const Tensor den = abs(diff) + sqrt(square(diff) + 4.0 * square(g));
  const Tensor tan = clamp(sgn * g / where_cond(gt(den, zero), den, 1.0), -1.0, 1.0);
  const Tensor cos = rsqrt(square(tan) + 1.0);
  return {cos, tan * cos};
}

// The rotated halves [c x_p - s x_q, s x_p + c x_q] of x along dim, in the next layout; c
// and s broadcast against a half.
Tensor rotate(const Tensor& x, int64_t dim, const Tensor& c, const Tensor& s) {
  const int64_t h = x.size(dim) / 2;
  const Tensor top = x.narrow(dim, 0, h), bot = x.narrow(dim, h, h);
  return next_layout(c * top - s * bot, s * top + c * bot, dim);
}

// Per matrix, a power of two that brings max |x| into [1/2, 1] (1 for zero or non-finite
// matrices), so the squares in the rotations neither overflow nor underflow; exact.
Tensor power_of_two_scale(const Tensor& x) {
  const Device d = x.device();
  const DType t = x.dtype();
  const Tensor big = max(abs(x), {1, 2}, true);
  const Tensor ok = logical_and(gt(big, scalar(0, t, d)), lt(big, scalar(INFINITY, t, d)));
  return exp2(neg(ceil(log2(where_cond(ok, big, 1.0)))));
}

// x [B, n, n] with a zero row and column appended when n is odd.
Tensor pad_even(const Tensor& x, bool rows, bool cols) {
  const int64_t n = x.size(2);
  if (n % 2 == 0) return x.contiguous();
  return pad(x, {0, cols ? 1 : 0, 0, rows ? 1 : 0});
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

// w [B, n] reordered by the permutation matrix p [B, n, n].
Tensor permuted(const Tensor& w, const Tensor& p) { return sum(w.unsqueeze(2) * p, {1}); }

void eigh(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t n = c.n, batch = c.batch;
  Tensor av = wrap_matrix(c.a, batch, n, n, d);
  const Tensor a0 = av.contiguous();
  const DType t = a0.dtype();
  const Tensor sym =
      c.upper ? triu(a0) + triu(a0, 1).transpose(1, 2) : tril(a0) + tril(a0, -1).transpose(1, 2);
  const Tensor scale = power_of_two_scale(sym);
  Tensor a = pad_even(sym * scale, true, true);
  const int64_t big_n = a.size(1), h = big_n / 2;
  Tensor v = eye(big_n, big_n, t, d)
                 .reshape(Shape{1, big_n, big_n})
                 .broadcast_to(Shape{batch, big_n, big_n})
                 .clone();
  const Tensor off_mask = 1.0 - eye(big_n, big_n, t, d);
  const double tol = eps_of(t) * double(n);
  const auto off_ratio = [&](const Tensor& x) {  // per matrix: ||offdiag|| / ||x||
    const Tensor total = sum(square(x), {1, 2});
    const Tensor off = sum(square(x * off_mask), {1, 2});
    return sqrt(off / where_cond(gt(total, scalar(0, t, d)), total, 1.0));
  };
  Tensor ratio = off_ratio(a);
  bool last = false;
  for (int sweep = 0; sweep < kMaxSweeps && n > 1; ++sweep) {
    const double worst = max(ratio).to(Device::cpu()).item_double();
    if (!std::isfinite(worst)) break;
    if (worst <= tol) {
      if (last) break;
      last = true;  // one more sweep squares what is left
    }
    for (int64_t round = 0; round + 1 < big_n; ++round) {
      const Tensor g =
          (block_diagonal(a, 0, h, h) + block_diagonal(a, h, 0, h)) * 0.5;  // a_pq, a_qp
      const auto [cs, sn] = rotation(block_diagonal(a, h, h, h) - block_diagonal(a, 0, 0, h), g);
      a = rotate(a, 2, cs.unsqueeze(1), sn.unsqueeze(1));  // a J
      a = rotate(a, 1, cs.unsqueeze(2), sn.unsqueeze(2));  // J^T a J
      if (c.with_vectors) v = rotate(v, 2, cs.unsqueeze(1), sn.unsqueeze(1));
    }
    a = (a + a.transpose(1, 2)) * 0.5;
    ratio = off_ratio(a);
  }
  const Tensor info = logical_not(le(ratio, scalar(tol, t, d)));
  const Tensor w = block_diagonal(a, 0, 0, n) / scale.reshape(Shape{batch, 1});
  const Tensor p = sorting_matrix(w, true);
  wrap(c.w, Shape{batch, n}, d).copy_(permuted(w, p));
  if (c.with_vectors) av.copy_(matmul(v.narrow(1, 0, n).narrow(2, 0, n), p));
  wrap(c.info, Shape{batch}, d).copy_(info);
}

void svd(const LinalgCall& c) {
  const Device d = c.device;
  const int64_t batch = c.batch;
  const bool wide = c.m < c.n;
  // Work on a tall [m, n] (the transpose of a wide input): A = U S V^T.
  const int64_t m = wide ? c.n : c.m, n = wide ? c.m : c.n;
  const Tensor a = wrap_matrix(c.a, batch, c.m, c.n, d);
  const Tensor tall = (wide ? a.transpose(1, 2) : a).contiguous();
  const DType t = tall.dtype();
  const Tensor scale = power_of_two_scale(tall);
  Tensor u = pad_even(tall * scale, false, true);
  const int64_t big_n = u.size(2), h = big_n / 2;
  Tensor v = eye(big_n, big_n, t, d)
                 .reshape(Shape{1, big_n, big_n})
                 .broadcast_to(Shape{batch, big_n, big_n})
                 .clone();
  const double tol = eps_of(t) * double(m);
  // Per matrix: the largest |u_p . u_q| / (|u_p| |u_q|) over the pairs of the sweep.
  Tensor worst = zeros(Shape{batch}, t, d);
  bool last = false;
  for (int sweep = 0; sweep < kMaxSweeps && n > 1; ++sweep) {
    worst = zeros(Shape{batch}, t, d);
    for (int64_t round = 0; round + 1 < big_n; ++round) {
      const Tensor top = u.narrow(2, 0, h), bot = u.narrow(2, h, h);
      const Tensor alpha = sum(square(top), {1}), beta = sum(square(bot), {1});
      const Tensor g = sum(top * bot, {1});
      const Tensor norms = sqrt(alpha * beta);
      const Tensor rel = abs(g) / where_cond(gt(norms, scalar(0, t, d)), norms, 1.0);
      worst = maximum(worst, max(where_cond(isnan(rel), INFINITY, rel), {1}));
      const auto [cs, sn] = rotation(beta - alpha, g);
      u = rotate(u, 2, cs.unsqueeze(1), sn.unsqueeze(1));
      if (c.with_vectors) v = rotate(v, 2, cs.unsqueeze(1), sn.unsqueeze(1));
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
  const Tensor cols_scaled = u.narrow(2, 0, n);
  const Tensor sigma = sqrt(sum(square(cols_scaled), {1}));  // [B, n], scaled
  const Tensor p = sorting_matrix(sigma, false);
  const Tensor s_scaled = permuted(sigma, p);
  wrap(c.w, Shape{batch, n}, d).copy_(s_scaled / scale.reshape(Shape{batch, 1}));
  wrap(c.info, Shape{batch}, d).copy_(info);
  if (!c.with_vectors) return;
  const Tensor nonzero = gt(s_scaled, scalar(0, t, d)).unsqueeze(1);
  const Tensor cols = where_cond(
      nonzero, matmul(cols_scaled, p) / where_cond(nonzero, s_scaled.unsqueeze(1), 1.0), 0.0);
  // Orthonormal columns for zero singular values and for a complete U: Q of cols' QR, its
  // columns signed as cols' own (R's diagonal is +-1 where cols has a unit column).
  const QrResult f = householder_qr(cols, c.complete, true);
  const int64_t uc = f.q.size(2);
  const Tensor rdiag = sum(f.r.narrow(1, 0, n) * eye(n, n, t, d), {2});  // [B, n]
  Tensor signs = where_cond(lt(rdiag, scalar(0, t, d)), -1.0, scalar(1, t, d));
  if (uc > n) signs = cat({signs, ones(Shape{batch, uc - n}, t, d)}, 1);
  const Tensor uu = f.q * signs.unsqueeze(1);                      // [B, m, uc]
  const Tensor vv = matmul(v.narrow(1, 0, n).narrow(2, 0, n), p);  // [B, n, n]
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
