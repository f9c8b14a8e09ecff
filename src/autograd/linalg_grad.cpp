// Var forms of numr::linalg. The forward is the Tensor op; each rule is PyTorch's
// derivative written with Var ops (its output read back through node.output(), which keeps
// its history), so gradients differentiate again. kron and matrix_exp are their
// compositions over Vars (src/ops/linalg_compose.h).
// Complex inputs follow PyTorch's convention (the gradient of a real loss is dL/dx + i dL/dy):
// the rules are written with the conjugate transpose mH, which is the transpose for real
// matrices, so one formula serves both.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/complex.h"
#include "numr/linalg.h"
#include "ops/linalg.h"
#include "ops/linalg_compose.h"

namespace numr::linalg {

using autograd::record;

namespace {

// The conjugate transpose of each matrix (conj of a real Var is the Var itself).
Var mH(const Var& x) { return conj(transpose(x, -2, -1)); }

Var constant_of(const Tensor& t) { return t.defined() ? autograd::constant(t) : Var(); }

// The identity and its complement (ones off the diagonal), [n, n] in t.
Tensor identity_of(int64_t n, DType t, Device d) { return detail::eye_of(n, n, t, d); }
Tensor off_diagonal_of(int64_t n, DType t, Device d) {
  if (!is_complex(t)) return 1.0 - eye(n, n, t, d);
  const DType part = complex_part_dtype(t);
  return (1.0 - eye(n, n, part, d)).cast(t);
}

// triu(x, k) (upper) or tril(x, k); a complex x is masked, since tril and triu are real.
Var triangle(const Var& x, bool upper, int64_t k) {
  if (!is_complex(x.dtype())) return upper ? triu(x, k) : tril(x, k);
  const Tensor ones_mask =
      ones(Shape{x.shape().end()[-2], x.shape().back()}, complex_part_dtype(x.dtype()), x.device());
  return x * (upper ? triu(ones_mask, k) : tril(ones_mask, k)).cast(x.dtype());
}

// The largest |Im| on the diagonals of the complex m: the part of a gradient that the phase
// of a complex singular or eigen vector (free up to e^{iφ}) would carry. A loss that depends
// on that phase has no gradient; the bound is PyTorch's (an absolute 1e-2).
void check_phase_invariant(std::string_view op, const Tensor& m, std::string_view what) {
  const Tensor d = imag(detail::diagonal(m));
  if (d.numel() == 0) return;
  const double worst = abs(d).max().item_double();
  if (!(worst <= 1e-2))
    fail<InvalidArgument>(op, "the loss depends on the phase of the ", what,
                          " (each is defined up to a factor e^{iφ}), so it has no gradient; "
                          "found |Im diag| = ",
                          worst);
}

// g [..] -> [.., 1, 1], to scale whole matrices.
Var per_matrix(const Var& g) { return unsqueeze(unsqueeze(g, -1), -1); }

void check_var(std::string_view op, const Var& v) {
  if (!v.defined()) fail<InvalidArgument>(op, "input must be defined");
}

// x broadcast to shape as a Var op (so its gradient sums back), or x itself.
Var expand_to(const Var& x, const Shape& shape) {
  return x.shape() == shape ? x : broadcast_to(x, shape);
}

Shape with_matrix(Shape lead, int64_t rows, int64_t cols) {
  lead.push_back(rows);
  lead.push_back(cols);
  return lead;
}

// Several results of one op as one Var: each flattened over its matrix dims and joined
// along the last dim, so one node (one rule) sees the gradients of all of them.
Tensor pack(const std::vector<Tensor>& ts, const Shape& lead) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) {
    Shape s = lead;
    s.push_back(shape_numel(Shape(t.shape().begin() + int64_t(lead.size()), t.shape().end())));
    flat.push_back(t.reshape(s));
  }
  return cat(flat, -1);
}

// The inverse of pack: shapes are the full shapes of the results.
std::vector<Var> unpack(const Var& p, const std::vector<Shape>& shapes, const Shape& lead) {
  std::vector<Var> out;
  int64_t at = 0;
  for (const Shape& s : shapes) {
    const int64_t len = shape_numel(Shape(s.begin() + int64_t(lead.size()), s.end()));
    out.push_back(narrow(p, -1, at, len).reshape(s));
    at += len;
  }
  return out;
}

}  // namespace

Var cholesky(const Var& a, bool upper) {
  constexpr std::string_view op = "linalg.cholesky";
  const OpScope scope(op);
  check_var(op, a);
  return record(op, cholesky(a.tensor(), upper), {a}, [upper](const Var& g, const Node& n) {
    // With A = L Lᴴ: gA = L⁻ᴴ Φ(Lᴴ gL) L⁻¹, Φ keeping the lower triangle with its diagonal
    // halved, made Hermitian (A is taken as Hermitian).
    const Var out = n.output();
    const Var l = upper ? mH(out) : out, gl = upper ? mH(g) : g;
    Var ga = triangle(matmul(mH(l), gl), false, 0);
    ga = 0.5 * (ga + mH(triangle(ga, false, -1)));
    ga = solve_triangular(mH(l), ga, /*upper=*/true, /*left=*/true);
    ga = solve_triangular(l, ga, /*upper=*/false, /*left=*/false);
    return std::vector<Var>{ga};
  });
}

Var solve_triangular(const Var& a, const Var& b, bool upper, bool left, bool unitriangular) {
  constexpr std::string_view op = "linalg.solve_triangular";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_triangular_operands(a.tensor(), b.tensor(), left);
  const Shape bs = broadcast_shapes(op, detail::lead(a.tensor(), 2), detail::lead(b.tensor(), 2));
  const Var ab = expand_to(a, with_matrix(bs, a.shape().end()[-2], a.shape().back()));
  const Var bb = expand_to(b, with_matrix(bs, b.shape().end()[-2], b.shape().back()));
  Tensor value = solve_triangular(ab.tensor(), bb.tensor(), upper, left, unitriangular);
  return record(op, std::move(value), {ab, bb},
                [upper, left, unitriangular](const Var& g, const Node& n) {
                  // left: A X = B, gB = A⁻ᴴ G, gA = -gB Xᴴ; right: X A = B, gB = G A⁻ᴴ,
                  // gA = -Xᴴ gB; gA kept to the triangle A was read from.
                  const Var& av = n.input(0);
                  const Var x = n.output();
                  const Var gb = solve_triangular(mH(av), g, !upper, left, unitriangular);
                  const Var full = left ? -matmul(gb, mH(x)) : -matmul(mH(x), gb);
                  const int64_t d = unitriangular ? 1 : 0;
                  const Var ga = triangle(full, upper, upper ? d : -d);
                  return std::vector<Var>{ga, gb};
                });
}

Var solve(const Var& a, const Var& b) {
  constexpr std::string_view op = "linalg.solve";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_matrix(op, a.tensor(), true, true);
  detail::check_same_kind(op, a.tensor(), b.tensor());
  const bool vec = detail::solve_is_vector(a.tensor(), b.tensor());
  const Var bm = vec ? unsqueeze(b, -1) : b;
  const Shape bs = detail::solve_batch(op, a.tensor(), bm.tensor());
  const int64_t n = a.shape().back();
  const Var ab = expand_to(a, with_matrix(bs, n, n));
  const Var bb = expand_to(bm, with_matrix(bs, n, bm.shape().back()));
  Tensor value = solve(ab.tensor(), bb.tensor());
  const Var xv = record(op, std::move(value), {ab, bb}, [](const Var& g, const Node& node) {
    // A X = B: gB = A⁻ᴴ G, gA = -gB Xᴴ.
    const Var gb = solve(mH(node.input(0)), g);
    return std::vector<Var>{-matmul(gb, mH(node.output())), gb};
  });
  return vec ? squeeze(xv, -1) : xv;
}

Var inv(const Var& a) {
  constexpr std::string_view op = "linalg.inv";
  const OpScope scope(op);
  check_var(op, a);
  return record(op, inv(a.tensor()), {a}, [](const Var& g, const Node& n) {
    const Var y = n.output();  // gA = -Yᴴ G Yᴴ
    return std::vector<Var>{-matmul(matmul(mH(y), g), mH(y))};
  });
}

Var det(const Var& a) {
  constexpr std::string_view op = "linalg.det";
  const OpScope scope(op);
  check_var(op, a);
  return record(op, det(a.tensor()), {a}, [](const Var& g, const Node& n) {
    // d det(A) = det(A) tr(A⁻¹ dA), holomorphic: gA = g conj(det(A)) A⁻ᴴ (A invertible).
    return std::vector<Var>{per_matrix(g * conj(n.output())) * mH(inv(n.input(0)))};
  });
}

SlogdetVar slogdet(const Var& a) {
  constexpr std::string_view op = "linalg.slogdet";
  const OpScope scope(op);
  check_var(op, a);
  Slogdet r = slogdet(a.tensor());
  // With t = tr(A⁻¹ dA): d logabsdet = Re t and, for complex A, d sign = i sign Im t, so a
  // loss dL = gl Re t + c Im t has gA = (gl + i c) A⁻ᴴ. The sign of a real A is constant.
  Var l = record(op, std::move(r.logabsdet), {a}, [](const Var& g, const Node& n) {
    const Var& av = n.input(0);
    return std::vector<Var>{per_matrix(detail::like_dtype(g, av)) * mH(inv(av))};
  });
  if (!is_complex(a.dtype())) return {constant_of(r.sign), std::move(l)};
  Var s = record(op, std::move(r.sign), {a}, [](const Var& g, const Node& n) {
    const Var c = imag(g * conj(n.output()));  // Re(conj(g) i sign) = Im(g conj(sign))
    return std::vector<Var>{per_matrix(complex(c * 0.0, c)) * mH(inv(n.input(0)))};
  });
  return {std::move(s), std::move(l)};
}

EighVar eigh(const Var& a) {
  constexpr std::string_view op = "linalg.eigh";
  const OpScope scope(op);
  check_var(op, a);
  const Eigh r = eigh(a.tensor());
  const int64_t n = a.shape().back();
  const bool cplx = is_complex(a.dtype());
  // One node for both results: [.., 1 + n, n] holds the eigenvalues in its first row (in a's
  // complex dtype for complex a, read back as their real part) and the eigenvectors below,
  // and the two outputs are views of it, so a loss on either or both reaches the one rule.
  const Tensor w_row = (cplx ? r.eigenvalues.cast(a.dtype()) : r.eigenvalues).unsqueeze(-2);
  Tensor packed = cat({w_row, r.eigenvectors}, -2);
  const Var p = record(op, std::move(packed), {a}, [n, cplx](const Var& g, const Node& node) {
    // A = V diag(w) Vᴴ: gA = V (diag(gw) + F ∘ skew(Vᴴ gV)) Vᴴ, F_ij = 1 / (w_j - w_i) off
    // the diagonal (distinct eigenvalues), skew(M) = (M - Mᴴ) / 2. The imaginary diagonal of
    // Vᴴ gV is the phase of each complex eigenvector, which the loss must not depend on.
    const Var out = node.output();
    const Var w = squeeze(narrow(out, -2, 0, 1), -2), v = narrow(out, -2, 1, n);
    const Var gw = squeeze(narrow(g, -2, 0, 1), -2), gv = narrow(g, -2, 1, n);
    const Tensor id = identity_of(n, v.dtype(), v.device());
    const Var m = matmul(mH(v), gv);
    if (cplx) check_phase_invariant("linalg.eigh", m.tensor(), "eigenvectors");
    const Var e = unsqueeze(w, -2) - unsqueeze(w, -1) + id;  // 1 on the diagonal
    const Var off = 0.5 * (m - mH(m)) / e * off_diagonal_of(n, v.dtype(), v.device());
    const Var inner = off + unsqueeze(gw, -1) * id;
    return std::vector<Var>{matmul(matmul(v, inner), mH(v))};
  });
  const Var w = squeeze(narrow(p, -2, 0, 1), -2);
  return {cplx ? real(w) : w, narrow(p, -2, 1, n)};
}

Var eigvalsh(const Var& a) {
  const OpScope scope("linalg.eigvalsh");
  return eigh(a).eigenvalues;
}

QrVar qr(const Var& a, std::string_view mode) {
  constexpr std::string_view op = "linalg.qr";
  const OpScope scope(op);
  check_var(op, a);
  const Qr f = qr(a.tensor(), mode);
  const Shape lead = detail::lead(a.tensor(), 2);
  const int64_t m = a.shape().end()[-2], n = a.shape().back();
  if (!a.requires_grad() || !grad_enabled()) return {constant_of(f.Q), constant_of(f.R)};
  if (mode != "reduced" || m < n)
    fail<InvalidArgument>(op,
                          "the gradient is defined for mode \"reduced\" with m >= n, got mode \"",
                          mode, "\" and a ", shape_str(a.shape()));
  const std::vector<Shape> shapes = {f.Q.shape(), f.R.shape()};
  const Var p =
      record(op, pack({f.Q, f.R}, lead), {a}, [shapes, lead](const Var& g, const Node& node) {
        // A = Q R (m >= n): M = R gRᴴ - gQᴴ Q, gA = (gQ + Q copyltu(M)) R⁻ᴴ, copyltu(M) the
        // Hermitian matrix with M's strict lower triangle and Re diag(M) (R's diagonal is
        // real, so Im diag(M) belongs to Q's phases, which the triangular R fixes).
        const std::vector<Var> out = unpack(node.output(), shapes, lead);
        const std::vector<Var> gs = unpack(g, shapes, lead);
        const Var &q = out[0], &r = out[1], &gq = gs[0], &gr = gs[1];
        const Var mm = matmul(r, mH(gr)) - matmul(mH(gq), q);
        Var sym;
        if (is_complex(mm.dtype())) {
          const Var low = triangle(mm, false, -1);
          const Tensor id = identity_of(mm.shape().back(), mm.dtype(), mm.device());
          sym = low + mH(low) + detail::like_dtype(real(mm), mm) * id;
        } else {
          sym = tril(mm) + transpose(tril(mm, -1), -2, -1);
        }
        const Var x = gq + matmul(q, sym);
        return std::vector<Var>{solve_triangular(mH(r), x, /*upper=*/false, /*left=*/false)};
      });
  std::vector<Var> out = unpack(p, shapes, lead);
  return {out[0], out[1]};
}

SvdVar svd(const Var& a, bool full_matrices) {
  constexpr std::string_view op = "linalg.svd";
  const OpScope scope(op);
  check_var(op, a);
  const Svd r = svd(a.tensor(), full_matrices);
  const Shape lead = detail::lead(a.tensor(), 2);
  const int64_t m = a.shape().end()[-2], n = a.shape().back();
  if (!a.requires_grad() || !grad_enabled())
    return {constant_of(r.U), constant_of(r.S), constant_of(r.Vh)};
  if (full_matrices && m != n)
    fail<InvalidArgument>(op, "the gradient needs full_matrices = false for a non-square ",
                          shape_str(a.shape()), " (the extra singular vectors are not unique)");
  const bool cplx = is_complex(a.dtype());
  const std::vector<Shape> shapes = {r.U.shape(), r.S.shape(), r.Vh.shape()};
  // S joins U and Vh in their dtype (complex for complex a) and is read back as its real part.
  const Tensor s_packed = cplx ? r.S.cast(a.dtype()) : r.S;
  const Var p = record(
      op, pack({r.U, s_packed, r.Vh}, lead), {a},
      [shapes, lead, m, n, cplx](const Var& g, const Node& node) {
        // A = U S Vᴴ with distinct nonzero S: K = UᴴgU - gUᴴU, L = VᴴgV - gVᴴV,
        // gA = U [(K ∘ s_j + s_i ∘ L) / (s_j² - s_i²) off the diagonal + diag(gS)
        //         + diag(K) / 2S (complex: the phases, taken from U)] Vᴴ
        //      + (I - UUᴴ) gU S⁻¹ Vᴴ (m > k) + U S⁻¹ gVᴴ (I - VVᴴ) (n > k).
        // A pair (u_i, v_i) is defined up to one common phase e^{iφ}, which the loss must not
        // depend on: Im diag(K + L) = 0.
        const std::vector<Var> out = unpack(node.output(), shapes, lead);
        const std::vector<Var> gs = unpack(g, shapes, lead);
        const Var &u = out[0], &s = out[1], v = mH(out[2]);
        const Var &gu = gs[0], &gsv = gs[1], gv = mH(gs[2]);
        const int64_t k = s.shape().back();
        const Tensor id = identity_of(k, s.dtype(), s.device());
        const Var utgu = matmul(mH(u), gu), vtgv = matmul(mH(v), gv);
        const Var kk = utgu - mH(utgu), ll = vtgv - mH(vtgv);
        if (cplx) check_phase_invariant("linalg.svd", (kk + ll).tensor(), "singular vector pairs");
        const Var s_row = unsqueeze(s, -2), s_col = unsqueeze(s, -1);
        const Var e = s_row * s_row - s_col * s_col + id;  // 1 on the diagonal
        Var inner = (kk * s_row + s_col * ll) / e * off_diagonal_of(k, s.dtype(), s.device()) +
                    unsqueeze(gsv, -1) * id;
        if (cplx) inner = inner + kk * id / (s_col * 2.0);
        Var ga = matmul(matmul(u, inner), mH(v));
        if (m > k) ga = ga + matmul((gu - matmul(u, utgu)) / s_row, mH(v));
        if (n > k) ga = ga + matmul(u, mH((gv - matmul(v, vtgv)) / s_row));
        return std::vector<Var>{ga};
      });
  std::vector<Var> out = unpack(p, shapes, lead);
  return {out[0], cplx ? real(out[1]) : out[1], out[2]};
}

EigVar eig(const Var& a) {
  constexpr std::string_view op = "linalg.eig";
  const OpScope scope(op);
  check_var(op, a);
  if (a.requires_grad() && grad_enabled())
    fail<InvalidArgument>(op, "the gradient of eig is not implemented; detach the input");
  const Eig r = eig(a.tensor());
  return {constant_of(r.eigenvalues), constant_of(r.eigenvectors)};
}

Var eigvals(const Var& a) {
  constexpr std::string_view op = "linalg.eigvals";
  const OpScope scope(op);
  check_var(op, a);
  if (a.requires_grad() && grad_enabled())
    fail<InvalidArgument>(op, "the gradient of eigvals is not implemented; detach the input");
  return constant_of(eigvals(a.tensor()));
}

Var svdvals(const Var& a) {
  const OpScope scope("linalg.svdvals");
  if (a.defined() && (!a.requires_grad() || !grad_enabled()))
    return constant_of(svdvals(a.tensor()));
  return svd(a, /*full_matrices=*/false).S;
}

Var kron(const Var& a, const Var& b) {
  constexpr std::string_view op = "linalg.kron";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_kron(a.tensor(), b.tensor());
  return detail::kron_of(a, b);
}

Var matrix_exp(const Var& a) {
  constexpr std::string_view op = "linalg.matrix_exp";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), true, true);
  return detail::matrix_exp_of(a, detail::matrix_exp_plan(a.tensor()));
}

Var vector_norm(const Var& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  constexpr std::string_view op = "linalg.vector_norm";
  const OpScope scope(op);
  check_var(op, x);
  if (std::isnan(ord)) fail<InvalidArgument>(op, "ord must not be NaN");
  if (is_complex(x.dtype())) return detail::vector_norm_of(abs(x), ord, dims, keepdim);
  detail::check_floating(op, x.tensor());
  return detail::vector_norm_of(x, ord, dims, keepdim);
}

Var matrix_norm(const Var& a, std::string_view ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), false, true);
  detail::check_norm_name(op, ord);
  return detail::matrix_norm_named(is_complex(a.dtype()) && ord == "fro" ? abs(a) : a, ord,
                                   keepdim);
}

Var matrix_norm(const Var& a, double ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), false, true);
  detail::check_norm_ord(op, ord);
  return detail::matrix_norm_p(a, ord, keepdim);
}

Var cond(const Var& a, double p) {
  constexpr std::string_view op = "linalg.cond";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_norm_ord(op, p);
  detail::check_matrix(op, a.tensor(), std::abs(p) != 2, true);
  if (std::abs(p) == 2) {
    const Var s = svdvals(a);
    const int64_t k = s.shape().back();
    const Var big = squeeze(narrow(s, -1, 0, 1), -1), small = squeeze(narrow(s, -1, k - 1, 1), -1);
    return p > 0 ? big / small : small / big;
  }
  return matrix_norm(a, p) * matrix_norm(inv(a), p);
}

Var pinv(const Var& a) {
  constexpr std::string_view op = "linalg.pinv";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), false, true);
  return detail::pinv_of(a, detail::default_rtol(a.tensor()));
}

Var lstsq(const Var& a, const Var& b) {
  constexpr std::string_view op = "linalg.lstsq";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_lstsq(a.tensor(), b.tensor());
  const bool vec = detail::solve_is_vector(a.tensor(), b.tensor());
  const Var x = detail::lstsq_of(a, vec ? unsqueeze(b, -1) : b);
  return vec ? squeeze(x, -1) : x;
}

LstsqVar lstsq(const Var& a, const Var& b, std::string_view driver, std::optional<double> rcond) {
  constexpr std::string_view op = "linalg.lstsq";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_lstsq(a.tensor(), b.tensor());
  const double rc = detail::lstsq_rcond(a.tensor(), driver, rcond);
  const bool vec = detail::solve_is_vector(a.tensor(), b.tensor());
  auto r = detail::lstsq_driver_of(a, vec ? unsqueeze(b, -1) : b, driver, rc);
  if (vec) {
    r.solution = squeeze(r.solution, -1);
    if (r.residuals.shape().size() > 1) r.residuals = squeeze(r.residuals, -1);
  }
  return {r.solution, r.residuals, r.rank, r.singular_values};
}

}  // namespace numr::linalg
