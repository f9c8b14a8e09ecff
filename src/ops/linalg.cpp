// Front ends of numr::linalg. The factorizations lay each matrix out column-major
// (transpose + contiguous), run the backend's linalg kernel (core/linalg_backend.h) and
// read the results back; everything else (det from the LU factors, P from the pivots,
// inverse from solve, kron, matrix_exp) is composed from other ops.
#include "ops/linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/linalg_backend.h"
#include "core/op_scope.h"
#include "numr/complex.h"
#include "numr/error.h"
#include "numr/ops.h"
#include "ops/linalg_compose.h"

namespace numr::linalg {
namespace detail {

void check_matrix(std::string_view op, const Tensor& a, bool square, bool allow_complex) {
  if (!a.defined()) fail<InvalidArgument>(op, "input must be defined");
  if (allow_complex && is_complex(a.dtype())) {
  } else if (a.dtype() != DType::F32 && a.dtype() != DType::F64) {
    fail<UnsupportedDType>(op, "expected a F32 or F64 tensor", allow_complex ? " (or complex)" : "",
                           ", got ", a.dtype());
  }
  if (a.dim() < 2)
    fail<InvalidDimension>(op, "expected a matrix or a batch of matrices [.., m, n], got ",
                           shape_str(a.shape()));
  if (square && a.size(-1) != a.size(-2))
    fail<ShapeMismatch>(op, "expected square matrices, got ", shape_str(a.shape()));
}

Shape lead(const Tensor& t, int64_t trailing) {
  return Shape(t.shape().begin(), t.shape().end() - trailing);
}

void check_same_kind(std::string_view op, const Tensor& a, const Tensor& b) {
  if (!b.defined()) fail<InvalidArgument>(op, "input must be defined");
  if (a.dtype() != b.dtype())
    fail<DTypeMismatch>(op, "a and b must have one dtype, got ", a.dtype(), " and ", b.dtype());
  if (a.device() != b.device()) fail<DeviceMismatch>(op, "a and b must be on one device");
}

void check_triangular_operands(const Tensor& a, const Tensor& b, bool left) {
  constexpr std::string_view op = "linalg.solve_triangular";
  check_matrix(op, a, true, true);
  check_same_kind(op, a, b);
  check_matrix(op, b, false, true);
  const int64_t n = a.size(-1), bn = left ? b.size(-2) : b.size(-1);
  if (bn != n)
    fail<ShapeMismatch>(op, "b ", shape_str(b.shape()), " does not fit a ", shape_str(a.shape()),
                        left ? " (left: b is [.., n, k])" : " (right: b is [.., k, n])");
  (void)broadcast_shapes(op, lead(a, 2), lead(b, 2));
}

bool solve_is_vector(const Tensor& a, const Tensor& b) {
  return b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == lead(a, 1));
}

Shape solve_batch(std::string_view op, const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(-1);
  if (b.dim() < 2 || b.size(-2) != n)
    fail<ShapeMismatch>(op, "b ", shape_str(b.shape()), " does not fit a ", shape_str(a.shape()),
                        " (b is [.., n, k] or [.., n])");
  return broadcast_shapes(op, lead(a, 2), lead(b, 2));
}

Tensor diagonal(const Tensor& a) {
  const Tensor mask = eye(a.size(-2), a.size(-1), DType::Bool, a.device());
  if (is_complex(a.dtype()))  // the masked sum on the parts: [.., n, n, 2] -> [.., n, 2]
    return view_as_complex(sum(where_cond(mask.unsqueeze(-1), view_as_real(a), 0.0), {-2}));
  return sum(where_cond(mask, a, 0.0), {-1});
}

Tensor triangle(const Tensor& a, bool upper, int64_t k) {
  if (!is_complex(a.dtype())) return upper ? triu(a, k) : tril(a, k);
  const Tensor ones_mask =
      ones(Shape{a.size(-2), a.size(-1)}, complex_part_dtype(a.dtype()), a.device());
  const Tensor mask = (upper ? triu(ones_mask, k) : tril(ones_mask, k)).unsqueeze(-1);
  return view_as_complex((view_as_real(a) * mask).contiguous());
}

Tensor eye_of(int64_t n, int64_t m, DType t, Device d) {
  return is_complex(t) ? eye(n, m, complex_part_dtype(t), d).cast(t) : eye(n, m, t, d);
}

Tensor scale_parts(const Tensor& z, const Tensor& r) {
  if (!is_complex(z.dtype())) return z * r;
  return view_as_complex((view_as_real(z) * r.unsqueeze(-1)).contiguous());
}

Tensor complex_prod(Tensor z) {
  // Pairwise products in log2(n) rounds: complex has mul but no prod reduction.
  if (z.size(-1) == 0) return ones(lead(z, 1), z.dtype(), z.device());
  while (z.size(-1) > 1) {
    const int64_t len = z.size(-1), h = len / 2;
    Tensor p = z.narrow(-1, 0, h) * z.narrow(-1, h, h);
    z = len % 2 ? cat({p, z.narrow(-1, 2 * h, 1)}, -1) : p;
  }
  return z.squeeze(-1).contiguous();
}

void check_kron(const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "linalg.kron";
  check_matrix(op, a, false, true);
  check_same_kind(op, a, b);
  check_matrix(op, b, false, true);
  (void)broadcast_shapes(op, lead(a, 2), lead(b, 2));
}

ExpPlan matrix_exp_plan(const Tensor& a) {
  // The Taylor remainder after degree d at ||x||_1 <= 1 is below 1/(d+1)!: under F64's
  // epsilon for d = 18, under F32's for d = 10.
  ExpPlan p;
  p.degree = complex_part_dtype(a.dtype()) == DType::F64 ? 18 : 10;
  if (a.numel() == 0) return p;
  const double norm = abs(a).sum({-2}).max().item_double();
  if (std::isfinite(norm) && norm > 1.0) p.squarings = int(std::ceil(std::log2(norm)));
  return p;
}

}  // namespace detail

namespace {

using detail::check_matrix;
using detail::lead;

// A matrix operand of a kernel: a complex one as the real view of its storage, the layout
// LinalgCall::complex describes (core/linalg_backend.h).
TensorRef kref(const Tensor& t) {
  return is_complex(t.dtype()) ? ref_of(view_as_real(t)) : ref_of(t);
}

// The precision and complexity of a's operands.
void set_dtype(LinalgCall& c, const Tensor& a) {
  c.dtype = complex_part_dtype(a.dtype());
  c.complex = is_complex(a.dtype());
  c.device = a.device();
}

const char* kernel_name(LinalgKernel k) {
  switch (k) {
    case LinalgKernel::cholesky: return "cholesky";
    case LinalgKernel::lu_factor: return "lu_factor";
    case LinalgKernel::lu_solve: return "lu_solve";
    case LinalgKernel::triangular_solve: return "triangular_solve";
    case LinalgKernel::qr: return "qr";
    case LinalgKernel::eigh: return "eigh";
    case LinalgKernel::svd: return "svd";
    case LinalgKernel::eig: return "eig";
  }
  return "?";
}

// The kernels for a's backend, or BackendLimitation naming the op the user called (op
// unless a composite such as cond or pinv is running) and the backend.
LinalgKernels& kernels_for(std::string_view op, const Tensor& a, LinalgKernel k) {
  LinalgKernels* ks = linalg_kernels_for(a.device());
  if (ks == nullptr || !ks->supports(k, a.dtype()))
    fail<BackendLimitation>(current_op(op), "the ", backend_for(a.device()).name(),
                            " backend has no linalg kernel (", kernel_name(k), ") for ", a.dtype());
  return *ks;
}

// [.., m, n] -> [batch, n, m] contiguous: each matrix column-major, as the kernels take it.
// Always a new tensor (the kernels write into it), even where a's transpose is contiguous.
Tensor col_major(const Tensor& a, int64_t batch) {
  return a.transpose(-2, -1).clone().reshape(Shape{batch, a.size(-1), a.size(-2)});
}
// The inverse: [batch, cols, rows] holding column-major [rows, cols] matrices -> [lead.., rows,
// cols], contiguous.
Tensor from_col_major(const Tensor& t, const Shape& lead_shape) {
  Shape s = lead_shape;
  s.push_back(t.size(-1));
  s.push_back(t.size(-2));
  return t.transpose(-2, -1).contiguous().reshape(s);
}

int64_t batch_of(const Shape& lead_shape) { return shape_numel(lead_shape); }

Tensor new_info(int64_t batch, Device d) { return zeros(Shape{batch}, DType::I32, d); }

// The first matrix whose info is positive, or -1.
int64_t first_failure(const Tensor& info, int32_t* value) {
  const std::vector<int32_t> v = info.to(Device::cpu()).to_vector<int32_t>();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] > 0) {
      *value = v[i];
      return int64_t(i);
    }
  return -1;
}

std::string where_in_batch(int64_t i, int64_t batch) {
  return batch > 1 ? " (batch element " + std::to_string(i) + ")" : std::string();
}

struct Factored {
  Tensor lu;  // [batch, n, m] column-major
  Tensor pivots, info;
  Tensor perm;  // with_perm: [batch, m] I64
};

Factored lu_factor_col(std::string_view op, const Tensor& a, int64_t batch,
                       bool with_perm = false) {
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::lu_factor);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  Factored f;
  f.lu = col_major(a, batch);
  f.pivots = Tensor::empty(Shape{batch, k}, DType::I32, a.device());
  f.info = new_info(batch, a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::lu_factor;
  set_dtype(c, a);
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.a = kref(f.lu);
  c.pivots = ref_of(f.pivots);
  c.info = ref_of(f.info);
  if (with_perm) {
    f.perm = arange(0, double(m), 1, DType::I64, a.device())
                 .reshape(Shape{1, m})
                 .broadcast_to(Shape{batch, m})
                 .contiguous();
    c.perm = ref_of(f.perm);
    c.with_perm = true;
  }
  if (batch * m * n > 0) ks.run(c);
  return f;
}

// -1 or 1 per matrix: the parity of the row swaps in pivots [.., k] (1-based).
Tensor pivot_sign(const Tensor& pivots, DType t) {
  const int64_t k = pivots.size(-1);
  const Tensor rows = arange(1, double(k) + 1, 1, DType::I32, pivots.device());
  return prod(where_cond(ne(pivots, rows), full({}, -1.0, t, pivots.device()),
                         full({}, 1.0, t, pivots.device())),
              {-1});
}

// Solves a x = b for a factored a; b [batch, k, n] column-major, solved in place.
void lu_solve_col(std::string_view op, const Tensor& a, const Factored& f, Tensor& b,
                  int64_t batch) {
  int32_t v = 0;
  if (const int64_t i = first_failure(f.info, &v); i >= 0)
    fail<InvalidArgument>(current_op(op), "the matrix is singular", where_in_batch(i, batch),
                          ": U[", v - 1, ", ", v - 1, "] of its LU factorization is zero");
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::lu_solve);
  LinalgCall c;
  c.kernel = LinalgKernel::lu_solve;
  set_dtype(c, a);
  c.batch = batch;
  c.n = a.size(-1);
  c.k = b.size(-2);
  c.a = kref(f.lu);
  c.pivots = ref_of(f.pivots);
  c.b = kref(b);
  if (batch * c.n * c.k > 0) ks.run(c);
}

}  // namespace

Tensor cholesky(const Tensor& a, bool upper) {
  constexpr std::string_view op = "linalg.cholesky";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::cholesky);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), n = a.size(-1);
  Tensor col = col_major(a, batch);
  const Tensor info = new_info(batch, a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::cholesky;
  set_dtype(c, a);
  c.batch = batch;
  c.n = n;
  c.upper = upper;
  c.a = kref(col);
  c.info = ref_of(info);
  if (batch * n > 0) ks.run(c);
  int32_t v = 0;
  if (const int64_t i = first_failure(info, &v); i >= 0)
    fail<InvalidArgument>(current_op(op), "the matrix is not positive-definite",
                          where_in_batch(i, batch), ": its leading minor of order ", v,
                          " is not positive");
  const Tensor r = from_col_major(col, ls);
  return detail::triangle(r, upper, 0);
}

LuFactor lu_factor(const Tensor& a) {
  constexpr std::string_view op = "linalg.lu_factor";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  const Shape ls = lead(a, 2);
  const Factored f = lu_factor_col(op, a, batch_of(ls));
  Shape ps = ls;
  ps.push_back(f.pivots.size(-1));
  return {from_col_major(f.lu, ls), f.pivots.reshape(ps)};
}

Lu lu(const Tensor& a) {
  constexpr std::string_view op = "linalg.lu";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Factored f = lu_factor_col(op, a, batch, /*with_perm=*/true);
  const Tensor packed = from_col_major(f.lu, ls);
  Lu r;
  r.L = detail::triangle(packed.narrow(-1, 0, k), false, -1) +
        detail::eye_of(m, k, a.dtype(), a.device());
  r.U = detail::triangle(packed.narrow(-2, 0, k), true, 0);
  Shape s = ls;
  s.push_back(1);
  s.push_back(m);
  const Tensor pt = f.perm.reshape(s);
  // P[r, c] = 1 where perm[c] = r, so that (Pᵀ a)[c] = a[perm[c]].
  const Tensor rows = arange(0, double(m), 1, f.perm.dtype(), a.device()).reshape(Shape{m, 1});
  r.P = eq(pt, rows).cast(a.dtype());
  return r;
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular) {
  constexpr std::string_view op = "linalg.solve_triangular";
  const OpScope scope(op);
  detail::check_triangular_operands(a, b, left);
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::triangular_solve);
  Shape bs = broadcast_shapes(op, lead(a, 2), lead(b, 2));
  const int64_t batch = batch_of(bs), n = a.size(-1), k = left ? b.size(-1) : b.size(-2);
  Shape as = bs, bfull = bs;
  as.push_back(n);
  as.push_back(n);
  bfull.push_back(b.size(-2));
  bfull.push_back(b.size(-1));
  const Tensor ac = col_major(a.broadcast_to(as), batch);
  Tensor bc = col_major(b.broadcast_to(bfull), batch);
  LinalgCall c;
  c.kernel = LinalgKernel::triangular_solve;
  set_dtype(c, a);
  c.batch = batch;
  c.n = n;
  c.k = k;
  c.upper = upper;
  c.left = left;
  c.unitriangular = unitriangular;
  c.a = kref(ac);
  c.b = kref(bc);
  if (batch * n * k > 0) ks.run(c);
  return from_col_major(bc, bs);
}

Tensor solve(const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "linalg.solve";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  detail::check_same_kind(op, a, b);
  const bool vec = detail::solve_is_vector(a, b);
  const Tensor bm = vec ? b.unsqueeze(-1) : b;
  const Shape bs = detail::solve_batch(op, a, bm);
  const int64_t batch = batch_of(bs), n = a.size(-1);
  Shape as = bs, bfull = bs;
  as.push_back(n);
  as.push_back(n);
  bfull.push_back(n);
  bfull.push_back(bm.size(-1));
  const Tensor ab = a.broadcast_to(as);
  const Factored f = lu_factor_col(op, ab, batch);
  Tensor bc = col_major(bm.broadcast_to(bfull), batch);
  lu_solve_col(op, ab, f, bc, batch);
  const Tensor x = from_col_major(bc, bs);
  return vec ? x.squeeze(-1) : x;
}

Tensor inv(const Tensor& a) {
  constexpr std::string_view op = "linalg.inv";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), n = a.size(-1);
  const Factored f = lu_factor_col(op, a, batch);
  Shape s = ls;
  s.push_back(n);
  s.push_back(n);
  // The identity is symmetric, so its row-major copy is already column-major.
  Tensor x = detail::eye_of(n, n, a.dtype(), a.device())
                 .broadcast_to(s)
                 .contiguous()
                 .reshape(Shape{batch, n, n});
  lu_solve_col(op, a, f, x, batch);
  return from_col_major(x, ls);
}

Slogdet slogdet(const Tensor& a) {
  constexpr std::string_view op = "linalg.slogdet";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  const Shape ls = lead(a, 2);
  const Factored f = lu_factor_col(op, a, batch_of(ls));
  Shape ds = ls;
  ds.push_back(a.size(-1));
  const Tensor d = detail::diagonal(f.lu).reshape(ds);
  Shape ps = ls;
  ps.push_back(f.pivots.size(-1));
  Slogdet r;
  const Tensor mag = abs(d);
  const DType part = complex_part_dtype(a.dtype());
  const Tensor psign = pivot_sign(f.pivots.reshape(ps), part);
  if (is_complex(a.dtype())) {
    // sign = det / |det|: the product of the unit phases d / |d|, 0 when some d is 0.
    const Tensor unit = where_cond(eq(mag, zeros({}, part, a.device())).unsqueeze(-1), 0.0,
                                   view_as_real(d) / mag.unsqueeze(-1));
    r.sign = detail::scale_parts(detail::complex_prod(view_as_complex(unit.contiguous())), psign);
  } else {
    r.sign = prod(sign(d), {-1}) * psign;
  }
  r.logabsdet = sum(log(mag), {-1});
  return r;
}

Tensor det(const Tensor& a) {
  constexpr std::string_view op = "linalg.det";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  const Shape ls = lead(a, 2);
  const Factored f = lu_factor_col(op, a, batch_of(ls));
  Shape ds = ls, ps = ls;
  ds.push_back(a.size(-1));
  ps.push_back(f.pivots.size(-1));
  const Tensor d = detail::diagonal(f.lu).reshape(ds);
  const Tensor psign = pivot_sign(f.pivots.reshape(ps), complex_part_dtype(a.dtype()));
  if (is_complex(a.dtype())) return detail::scale_parts(detail::complex_prod(d), psign);
  return prod(d, {-1}) * psign;
}

Qr qr(const Tensor& a, std::string_view mode) {
  constexpr std::string_view op = "linalg.qr";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  if (mode != "reduced" && mode != "complete" && mode != "r")
    fail<InvalidArgument>(op, "mode must be \"reduced\", \"complete\" or \"r\", got \"", mode,
                          "\"");
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::qr);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const bool complete = mode == "complete", with_q = mode != "r";
  const int64_t qc = complete ? m : k;
  Tensor ac = col_major(a, batch);
  Tensor q = with_q ? Tensor::empty(Shape{batch, qc, m}, a.dtype(), a.device()) : Tensor();
  Tensor r = Tensor::empty(Shape{batch, n, qc}, a.dtype(), a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::qr;
  set_dtype(c, a);
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.complete = complete;
  c.with_q = with_q;
  c.a = kref(ac);
  if (with_q) c.q = kref(q);
  c.r = kref(r);
  if (batch > 0 && (qc > 0 || n > 0)) {
    if (m * n == 0) {  // nothing to factor: Q is the identity's first columns, R zero
      if (with_q)
        q = detail::eye_of(qc, m, a.dtype(), a.device())
                .broadcast_to(Shape{batch, qc, m})
                .contiguous();
      r = zeros(Shape{batch, n, qc}, a.dtype(), a.device());
    } else {
      ks.run(c);
    }
  }
  Qr out;
  if (with_q) out.Q = from_col_major(q, ls);
  out.R = triu(from_col_major(r, ls));  // kernels may leave reflectors below the diagonal
  return out;
}

namespace {

Eigh eigh_impl(std::string_view op, const Tensor& a, bool with_vectors) {
  check_matrix(op, a, true, true);
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::eigh);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), n = a.size(-1);
  Tensor ac = col_major(a, batch);
  Tensor w = Tensor::empty(Shape{batch, n}, complex_part_dtype(a.dtype()), a.device());
  const Tensor info = new_info(batch, a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::eigh;
  set_dtype(c, a);
  c.batch = batch;
  c.n = n;
  c.upper = false;
  c.with_vectors = with_vectors;
  c.a = kref(ac);
  c.w = ref_of(w);
  c.info = ref_of(info);
  if (batch * n > 0) ks.run(c);
  int32_t v = 0;
  if (const int64_t i = first_failure(info, &v); i >= 0)
    fail<InvalidArgument>(current_op(op), "the eigenvalue iteration did not converge",
                          where_in_batch(i, batch), " (the input may hold NaN or infinity)");
  Shape ws = ls;
  ws.push_back(n);
  Eigh r;
  r.eigenvalues = w.reshape(ws);
  if (with_vectors) r.eigenvectors = from_col_major(ac, ls);
  return r;
}

Svd svd_impl(std::string_view op, const Tensor& a, bool with_vectors, bool full) {
  check_matrix(op, a, false, true);
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::svd);
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const int64_t uc = full ? m : k, vr = full ? n : k;
  Tensor ac = col_major(a, batch);
  Tensor s = Tensor::empty(Shape{batch, k}, complex_part_dtype(a.dtype()), a.device());
  Tensor u, vt;
  if (with_vectors) {
    u = Tensor::empty(Shape{batch, uc, m}, a.dtype(), a.device());
    vt = Tensor::empty(Shape{batch, n, vr}, a.dtype(), a.device());
  }
  const Tensor info = new_info(batch, a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::svd;
  set_dtype(c, a);
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.complete = full;
  c.with_vectors = with_vectors;
  c.a = kref(ac);
  c.w = ref_of(s);
  if (with_vectors) {
    c.u = kref(u);
    c.vt = kref(vt);
  }
  c.info = ref_of(info);
  if (batch > 0 && m * n > 0) {
    ks.run(c);
  } else if (with_vectors && batch > 0) {  // an empty matrix: identities (as LAPACK's "A")
    u = detail::eye_of(uc, m, a.dtype(), a.device()).broadcast_to(Shape{batch, uc, m}).contiguous();
    vt =
        detail::eye_of(n, vr, a.dtype(), a.device()).broadcast_to(Shape{batch, n, vr}).contiguous();
  }
  int32_t v = 0;
  if (const int64_t i = first_failure(info, &v); i >= 0)
    fail<InvalidArgument>(current_op(op), "the SVD did not converge", where_in_batch(i, batch),
                          " (the input may hold NaN or infinity)");
  Shape ss = ls;
  ss.push_back(k);
  Svd r;
  r.S = s.reshape(ss);
  if (with_vectors) {
    r.U = from_col_major(u, ls);
    r.Vh = from_col_major(vt, ls);
  }
  return r;
}

}  // namespace

Eigh eigh(const Tensor& a) {
  const OpScope scope("linalg.eigh");
  return eigh_impl("linalg.eigh", a, true);
}

Tensor eigvalsh(const Tensor& a) {
  const OpScope scope("linalg.eigvalsh");
  return eigh_impl("linalg.eigvalsh", a, false).eigenvalues;
}

Svd svd(const Tensor& a, bool full_matrices) {
  const OpScope scope("linalg.svd");
  return svd_impl("linalg.svd", a, true, full_matrices);
}

Tensor svdvals(const Tensor& a) {
  const OpScope scope("linalg.svdvals");
  return svd_impl("linalg.svdvals", a, false, false).S;
}

namespace {

Eig eig_impl(std::string_view op, const Tensor& a, bool with_vectors) {
  check_matrix(op, a, true, true);
  LinalgKernels& ks = kernels_for(op, a, LinalgKernel::eig);
  // geev's balancing and QR iteration are not defined on NaN or infinity (PyTorch checks too).
  const Tensor parts = is_complex(a.dtype()) ? view_as_real(a) : a;
  // x * 0 is 0 for finite x and NaN for NaN or infinity.
  if (a.numel() > 0 && sum(parts * 0.0).item_double() != 0.0)
    fail<InvalidArgument>(current_op(op), "the input holds NaN or infinity");
  const Shape ls = lead(a, 2);
  const int64_t batch = batch_of(ls), n = a.size(-1);
  const DType ct = complex_dtype_for(complex_part_dtype(a.dtype()));
  Tensor ac = col_major(a, batch);
  Tensor w = Tensor::empty(Shape{batch, n}, ct, a.device());
  Tensor v = with_vectors ? Tensor::empty(Shape{batch, n, n}, ct, a.device()) : Tensor();
  const Tensor info = new_info(batch, a.device());
  LinalgCall c;
  c.kernel = LinalgKernel::eig;
  set_dtype(c, a);
  c.batch = batch;
  c.n = n;
  c.with_vectors = with_vectors;
  c.a = kref(ac);
  c.w = kref(w);
  if (with_vectors) c.u = kref(v);
  c.info = ref_of(info);
  if (batch * n > 0) ks.run(c);
  int32_t bad = 0;
  if (const int64_t i = first_failure(info, &bad); i >= 0)
    fail<InvalidArgument>(current_op(op), "the eigenvalue iteration did not converge",
                          where_in_batch(i, batch));
  Shape ws = ls;
  ws.push_back(n);
  Eig r;
  r.eigenvalues = w.reshape(ws);
  if (with_vectors) r.eigenvectors = from_col_major(v, ls);
  return r;
}

}  // namespace

Eig eig(const Tensor& a) {
  const OpScope scope("linalg.eig");
  return eig_impl("linalg.eig", a, true);
}

Tensor eigvals(const Tensor& a) {
  const OpScope scope("linalg.eigvals");
  return eig_impl("linalg.eigvals", a, false).eigenvalues;
}

}  // namespace numr::linalg

namespace numr::linalg {

Tensor kron(const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "linalg.kron";
  const OpScope scope(op);
  detail::check_kron(a, b);
  return detail::kron_of(a, b);
}

Tensor matrix_exp(const Tensor& a) {
  constexpr std::string_view op = "linalg.matrix_exp";
  const OpScope scope(op);
  check_matrix(op, a, true, true);
  return detail::matrix_exp_of(a, detail::matrix_exp_plan(a));
}

}  // namespace numr::linalg

namespace numr::linalg {
namespace detail {

void check_floating(std::string_view op, const Tensor& x) {
  if (!x.defined()) fail<InvalidArgument>(op, "input must be defined");
  if (!is_floating(x.dtype()))
    fail<UnsupportedDType>(op, "expected a floating tensor, got ", x.dtype());
}

void check_norm_ord(std::string_view op, double ord) {
  if (ord != 1 && ord != -1 && ord != 2 && ord != -2 && !std::isinf(ord))
    fail<InvalidArgument>(op, "ord must be 1, -1, 2, -2, inf or -inf (or \"fro\", \"nuc\"), got ",
                          ord);
}

void check_norm_name(std::string_view op, std::string_view ord) {
  if (ord != "fro" && ord != "nuc")
    fail<InvalidArgument>(op, "ord must be \"fro\" or \"nuc\" (or a number), got \"", ord, "\"");
}

double default_rtol(const Tensor& a) {
  return double(std::max(a.size(-2), a.size(-1))) *
         (complex_part_dtype(a.dtype()) == DType::F64
              ? std::numeric_limits<double>::epsilon()
              : double(std::numeric_limits<float>::epsilon()));
}

void check_lstsq(const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "linalg.lstsq";
  check_matrix(op, a, false, true);
  check_same_kind(op, a, b);
  const bool vec = solve_is_vector(a, b);
  if (b.dim() < 1 || (vec ? b.size(-1) : b.dim() >= 2 ? b.size(-2) : -1) != a.size(-2))
    fail<ShapeMismatch>(op, "b ", shape_str(b.shape()), " does not fit a ", shape_str(a.shape()),
                        " (b is [.., m, k] or [.., m])");
  (void)broadcast_shapes(op, lead(a, 2), lead(b, vec ? 1 : 2));
}

double lstsq_rcond(const Tensor& a, std::string_view driver, std::optional<double> rcond) {
  constexpr std::string_view op = "linalg.lstsq";
  if (driver != "gels" && driver != "gelsd")
    fail<InvalidArgument>(op, "driver must be \"gels\" or \"gelsd\", got \"", driver, "\"");
  if (rcond && std::isnan(*rcond)) fail<InvalidArgument>(op, "rcond must not be NaN");
  return rcond ? *rcond : default_rtol(a);
}

}  // namespace detail

Tensor vector_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  constexpr std::string_view op = "linalg.vector_norm";
  const OpScope scope(op);
  if (x.defined() && is_complex(x.dtype())) {  // the norm of the moduli
    if (std::isnan(ord)) fail<InvalidArgument>(op, "ord must not be NaN");
    return detail::vector_norm_of(abs(x), ord, dims, keepdim);
  }
  detail::check_floating(op, x);
  if (std::isnan(ord)) fail<InvalidArgument>(op, "ord must not be NaN");
  return detail::vector_norm_of(x, ord, dims, keepdim);
}

Tensor matrix_norm(const Tensor& a, std::string_view ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  detail::check_norm_name(op, ord);
  // Of a complex a, the Frobenius norm is that of the moduli; "nuc" takes the SVD of a.
  return detail::matrix_norm_named(is_complex(a.dtype()) && ord == "fro" ? abs(a) : a, ord,
                                   keepdim);
}

Tensor matrix_norm(const Tensor& a, double ord, bool keepdim) {
  constexpr std::string_view op = "linalg.matrix_norm";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  detail::check_norm_ord(op, ord);
  return detail::matrix_norm_p(a, ord, keepdim);
}

Tensor cond(const Tensor& a, double p) {
  constexpr std::string_view op = "linalg.cond";
  const OpScope scope(op);
  detail::check_norm_ord(op, p);
  check_matrix(op, a, std::abs(p) != 2, true);
  if (std::abs(p) == 2) {
    const Tensor s = svdvals(a);
    const int64_t k = s.size(-1);
    const Tensor big = s.narrow(-1, 0, 1).squeeze(-1), small = s.narrow(-1, k - 1, 1).squeeze(-1);
    return p > 0 ? big / small : small / big;
  }
  return matrix_norm(a, p) * matrix_norm(inv(a), p);
}

Tensor cond(const Tensor& a, std::string_view p) {
  constexpr std::string_view op = "linalg.cond";
  const OpScope scope(op);
  detail::check_norm_name(op, p);
  check_matrix(op, a, true, true);
  return matrix_norm(a, p) * matrix_norm(inv(a), p);
}

Tensor pinv(const Tensor& a) {
  constexpr std::string_view op = "linalg.pinv";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  return detail::pinv_of(a, detail::default_rtol(a));
}

Tensor matrix_rank(const Tensor& a) {
  constexpr std::string_view op = "linalg.matrix_rank";
  const OpScope scope(op);
  check_matrix(op, a, false, true);
  Shape out = detail::lead(a, 2);
  if (std::min(a.size(-2), a.size(-1)) == 0) return zeros(out, DType::I64, a.device());
  const Tensor s = svdvals(a);
  return sum(gt(s, s.narrow(-1, 0, 1) * detail::default_rtol(a)).cast(DType::I64), {-1});
}

Tensor lstsq(const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "linalg.lstsq";
  const OpScope scope(op);
  detail::check_lstsq(a, b);
  const bool vec = detail::solve_is_vector(a, b);
  const Tensor x = detail::lstsq_of(a, vec ? b.unsqueeze(-1) : b);
  return vec ? x.squeeze(-1) : x;
}

Lstsq lstsq(const Tensor& a, const Tensor& b, std::string_view driver,
            std::optional<double> rcond) {
  constexpr std::string_view op = "linalg.lstsq";
  const OpScope scope(op);
  detail::check_lstsq(a, b);
  const double rc = detail::lstsq_rcond(a, driver, rcond);
  const bool vec = detail::solve_is_vector(a, b);
  auto r = detail::lstsq_driver_of(a, vec ? b.unsqueeze(-1) : b, driver, rc);
  if (vec) {
    r.solution = r.solution.squeeze(-1);
    if (r.residuals.dim() > 1) r.residuals = r.residuals.squeeze(-1);
  }
  return {r.solution, r.residuals, r.rank, r.singular_values};
}

}  // namespace numr::linalg
