// Var forms of numr::linalg. The forward is the Tensor op; each rule is PyTorch's
// derivative written with Var ops (its output read back through node.output(), which keeps
// its history), so gradients differentiate again. kron and matrix_exp are their
// compositions over Vars (src/ops/linalg_compose.h).
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/linalg.h"
#include "ops/linalg.h"
#include "ops/linalg_compose.h"

namespace numr::linalg {

using autograd::record;

namespace {

Var mT(const Var& x) { return transpose(x, -2, -1); }

Var constant_of(const Tensor& t) { return t.defined() ? autograd::constant(t) : Var(); }

Tensor identity_like(const Var& x) {
  const int64_t n = x.shape().back();
  return eye(n, n, x.dtype(), x.device());
}

// g [..] -> [.., 1, 1], to scale whole matrices.
Var per_matrix(const Var& g) { return unsqueeze(unsqueeze(g, -1), -1); }

void check_var(std::string_view op, const Var& v) {
  if (!v.defined()) fail<InvalidArgument>(op, "input must be defined");
  // The rules below are written with transposes, which are the adjoints of real matrices only.
  if (is_complex(v.dtype()))
    fail<UnsupportedDType>(op, "the Var form takes F32 or F64; for ", v.dtype(),
                           " call the Tensor form");
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
    // With A = L Lᵀ: gA = L⁻ᵀ Φ(Lᵀ gL) L⁻¹, Φ keeping the lower triangle with its diagonal
    // halved, symmetrized (A is taken as symmetric).
    const Var out = n.output();
    const Var l = upper ? mT(out) : out, gl = upper ? mT(g) : g;
    Var ga = tril(matmul(mT(l), gl));
    ga = 0.5 * (ga + mT(tril(ga, -1)));
    ga = solve_triangular(mT(l), ga, /*upper=*/true, /*left=*/true);
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
                  // left: A X = B, gB = A⁻ᵀ G, gA = -gB Xᵀ; right: X A = B, gB = G A⁻ᵀ,
                  // gA = -Xᵀ gB; gA kept to the triangle A was read from.
                  const Var& av = n.input(0);
                  const Var x = n.output();
                  const Var gb = solve_triangular(mT(av), g, !upper, left, unitriangular);
                  const Var full = left ? -matmul(gb, mT(x)) : -matmul(mT(x), gb);
                  const int64_t d = unitriangular ? 1 : 0;
                  const Var ga = upper ? triu(full, d) : tril(full, -d);
                  return std::vector<Var>{ga, gb};
                });
}

Var solve(const Var& a, const Var& b) {
  constexpr std::string_view op = "linalg.solve";
  const OpScope scope(op);
  check_var(op, a);
  check_var(op, b);
  detail::check_matrix(op, a.tensor(), true);
  detail::check_same_kind(op, a.tensor(), b.tensor());
  const bool vec = detail::solve_is_vector(a.tensor(), b.tensor());
  const Var bm = vec ? unsqueeze(b, -1) : b;
  const Shape bs = detail::solve_batch(op, a.tensor(), bm.tensor());
  const int64_t n = a.shape().back();
  const Var ab = expand_to(a, with_matrix(bs, n, n));
  const Var bb = expand_to(bm, with_matrix(bs, n, bm.shape().back()));
  Tensor value = solve(ab.tensor(), bb.tensor());
  const Var xv = record(op, std::move(value), {ab, bb}, [](const Var& g, const Node& node) {
    // A X = B: gB = A⁻ᵀ G, gA = -gB Xᵀ.
    const Var gb = solve(mT(node.input(0)), g);
    return std::vector<Var>{-matmul(gb, mT(node.output())), gb};
  });
  return vec ? squeeze(xv, -1) : xv;
}

Var inv(const Var& a) {
  constexpr std::string_view op = "linalg.inv";
  const OpScope scope(op);
  check_var(op, a);
  return record(op, inv(a.tensor()), {a}, [](const Var& g, const Node& n) {
    const Var y = n.output();  // gA = -Yᵀ G Yᵀ
    return std::vector<Var>{-matmul(matmul(mT(y), g), mT(y))};
  });
}

Var det(const Var& a) {
  constexpr std::string_view op = "linalg.det";
  const OpScope scope(op);
  check_var(op, a);
  return record(op, det(a.tensor()), {a}, [](const Var& g, const Node& n) {
    // d det(A) = det(A) tr(A⁻¹ dA): gA = g det(A) A⁻ᵀ (A invertible).
    return std::vector<Var>{per_matrix(g * n.output()) * mT(inv(n.input(0)))};
  });
}

SlogdetVar slogdet(const Var& a) {
  constexpr std::string_view op = "linalg.slogdet";
  const OpScope scope(op);
  check_var(op, a);
  Slogdet r = slogdet(a.tensor());
  Var l = record(op, std::move(r.logabsdet), {a}, [](const Var& g, const Node& n) {
    return std::vector<Var>{per_matrix(g) * mT(inv(n.input(0)))};
  });
  return {std::move(r.sign), std::move(l)};
}

EighVar eigh(const Var& a) {
  constexpr std::string_view op = "linalg.eigh";
  const OpScope scope(op);
  check_var(op, a);
  const Eigh r = eigh(a.tensor());
  const int64_t n = a.shape().back();
  // One node for both results: [.., 1 + n, n] holds the eigenvalues in its first row and the
  // eigenvectors below, and the two outputs are views of it, so a loss on either or both
  // reaches the one rule.
  Tensor packed = cat({r.eigenvalues.unsqueeze(-2), r.eigenvectors}, -2);
  const Var p = record(op, std::move(packed), {a}, [n](const Var& g, const Node& node) {
    // A = V diag(w) Vᵀ: gA = V (diag(gw) + F ∘ skew(Vᵀ gV)) Vᵀ, F_ij = 1 / (w_j - w_i) off
    // the diagonal (distinct eigenvalues), skew(M) = (M - Mᵀ) / 2.
    const Var out = node.output();
    const Var w = squeeze(narrow(out, -2, 0, 1), -2), v = narrow(out, -2, 1, n);
    const Var gw = squeeze(narrow(g, -2, 0, 1), -2), gv = narrow(g, -2, 1, n);
    const Tensor id = identity_like(v);
    const Var m = matmul(mT(v), gv);
    const Var e = unsqueeze(w, -2) - unsqueeze(w, -1) + id;  // 1 on the diagonal
    const Var off = 0.5 * (m - mT(m)) / e * (1.0 - id);
    const Var inner = off + unsqueeze(gw, -1) * id;
    return std::vector<Var>{matmul(matmul(v, inner), mT(v))};
  });
  return {squeeze(narrow(p, -2, 0, 1), -2), narrow(p, -2, 1, n)};
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
        // A = Q R (m >= n): M = R gRᵀ - gQᵀ Q, gA = (gQ + Q copyltu(M)) R⁻ᵀ, copyltu(M) the
        // symmetric matrix with M's lower triangle.
        const std::vector<Var> out = unpack(node.output(), shapes, lead);
        const std::vector<Var> gs = unpack(g, shapes, lead);
        const Var &q = out[0], &r = out[1], &gq = gs[0], &gr = gs[1];
        const Var mm = matmul(r, mT(gr)) - matmul(mT(gq), q);
        const Var sym = tril(mm) + mT(tril(mm, -1));
        const Var x = gq + matmul(q, sym);
        return std::vector<Var>{solve_triangular(mT(r), x, /*upper=*/false, /*left=*/false)};
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
  const std::vector<Shape> shapes = {r.U.shape(), r.S.shape(), r.Vh.shape()};
  const Var p = record(
      op, pack({r.U, r.S, r.Vh}, lead), {a}, [shapes, lead, m, n](const Var& g, const Node& node) {
        // A = U S Vᵀ with distinct nonzero S: K = UᵀgU - gUᵀU, L = VᵀgV - gVᵀV,
        // gA = U [(K ∘ s_j + s_i ∘ L) / (s_j² - s_i²) off the diagonal + diag(gS)] Vᵀ
        //      + (I - UUᵀ) gU S⁻¹ Vᵀ (m > k) + U S⁻¹ gVᵀ (I - VVᵀ) (n > k).
        const std::vector<Var> out = unpack(node.output(), shapes, lead);
        const std::vector<Var> gs = unpack(g, shapes, lead);
        const Var &u = out[0], &s = out[1], v = mT(out[2]);
        const Var &gu = gs[0], &gsv = gs[1], gv = mT(gs[2]);
        const int64_t k = s.shape().back();
        const Tensor id = eye(k, k, s.dtype(), s.device());
        const Var utgu = matmul(mT(u), gu), vtgv = matmul(mT(v), gv);
        const Var kk = utgu - mT(utgu), ll = vtgv - mT(vtgv);
        const Var s_row = unsqueeze(s, -2), s_col = unsqueeze(s, -1);
        const Var e = s_row * s_row - s_col * s_col + id;  // 1 on the diagonal
        const Var inner = (kk * s_row + s_col * ll) / e * (1.0 - id) + unsqueeze(gsv, -1) * id;
        Var ga = matmul(matmul(u, inner), mT(v));
        if (m > k) ga = ga + matmul((gu - matmul(u, utgu)) / s_row, mT(v));
        if (n > k) ga = ga + matmul(u, mT((gv - matmul(v, vtgv)) / s_row));
        return std::vector<Var>{ga};
      });
  std::vector<Var> out = unpack(p, shapes, lead);
  return {out[0], out[1], out[2]};
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
  detail::check_matrix(op, a.tensor(), true);
  return detail::matrix_exp_of(a, detail::matrix_exp_plan(a.tensor()));
}

Var vector_norm(const Var& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  constexpr std::string_view op = "linalg.vector_norm";
  const OpScope scope(op);
  check_var(op, x);
  detail::check_floating(op, x.tensor());
  if (std::isnan(ord)) fail<InvalidArgument>(op, "ord must not be NaN");
  return detail::vector_norm_of(x, ord, dims, keepdim);
}

Var matrix_norm(const Var& a, std::string_view ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), false);
  detail::check_norm_name(op, ord);
  return detail::matrix_norm_named(a, ord, keepdim);
}

Var matrix_norm(const Var& a, double ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_matrix(op, a.tensor(), false);
  detail::check_norm_ord(op, ord);
  return detail::matrix_norm_p(a, ord, keepdim);
}

Var cond(const Var& a, double p) {
  constexpr std::string_view op = "linalg.cond";
  const OpScope scope(op);
  check_var(op, a);
  detail::check_norm_ord(op, p);
  detail::check_matrix(op, a.tensor(), std::abs(p) != 2);
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
  detail::check_matrix(op, a.tensor(), false);
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
