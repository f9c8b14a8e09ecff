// Gradients of the complex ops. The pair views carry gradients both ways unchanged; the
// rest is built from real ops on the parts (src/ops/complex_ops.h), so every derivative,
// of any order, follows from the real ones.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "ops/common.h"
#include "ops/complex_ops.h"

namespace numr {

using autograd::constant;
using autograd::record;
using Grads = std::vector<Var>;

Var view_as_real(const Var& z) {
  const OpScope scope("view_as_real");
  return record("view_as_real", view_as_real(z.tensor()), {z},
                [](const Var& g, const Node&) -> Grads {
                  // A contiguous g can still start at an odd element (a view into a larger
                  // gradient, e.g. cat's), where no pair starts: copy it then.
                  const Var c = contiguous(g);
                  return {view_as_complex(c.tensor().offset() % 2 ? clone(c) : c)};
                });
}

Var view_as_complex(const Var& x) {
  const OpScope scope("view_as_complex");
  return record("view_as_complex", view_as_complex(x.tensor()), {x},
                [](const Var& g, const Node&) -> Grads { return {view_as_real(g)}; });
}

Var complex(const Var& re, const Var& im) {
  const OpScope scope("complex");
  ops::check_same("complex", {&re.tensor(), &im.tensor()});
  ops::check_dtype(OpId::complex, re.dtype());
  const Shape shape = broadcast_shapes("complex", re.shape(), im.shape());
  return view_as_complex(stack({broadcast_to(re, shape), broadcast_to(im, shape)}, -1));
}

Var polar(const Var& abs, const Var& angle) {
  const OpScope scope("polar");
  ops::check_same("polar", {&abs.tensor(), &angle.tensor()});
  ops::check_dtype(OpId::polar, abs.dtype());
  return complex(abs * cos(angle), abs * sin(angle));
}

Var real(const Var& z) {
  const OpScope scope("real");
  if (!is_complex(z.dtype())) return z;
  return squeeze(narrow(view_as_real(z), -1, 0, 1), -1);
}

Var imag(const Var& z) {
  const OpScope scope("imag");
  ops::check_defined("imag", z.tensor());
  ops::check_dtype(OpId::imag, z.dtype());
  return squeeze(narrow(view_as_real(z), -1, 1, 1), -1);
}

Var conj(const Var& z) {
  const OpScope scope("conj");
  if (!is_complex(z.dtype())) return z;
  return complex(real(z), -imag(z));
}

Var angle(const Var& z) {
  const OpScope scope("angle");
  ops::check_defined("angle", z.tensor());
  ops::check_dtype(OpId::angle, z.dtype());
  return atan2(imag(z), real(z));
}

namespace complex_ops {

Var mul(const Var& a, const Var& b) { return mul_parts(a, b); }
Var div(const Var& a, const Var& b) { return div_parts(a, b); }
Var exp(const Var& z) { return exp_parts(z); }
Var log(const Var& z) { return log_parts(z); }
Var matmul(const Var& a, const Var& b) { return matmul_parts(a, b); }

// d|z| = re(conj(sgn z) dz): the gradient is g sgn(z), with sgn(0) = 0 as PyTorch.
Var abs(const Var& z) {
  return record("abs", unary(OpId::abs, z.tensor()), {z}, [](const Var& g, const Node& n) -> Grads {
    const Var& x = n.input(0);
    const Var r = n.output();
    const Tensor at_zero = eq(r.tensor(), zeros({}, r.dtype(), r.device()));
    const Var den = where_cond(constant(at_zero), autograd::scalar_like(r, 1.0), r);
    const Var w = g / den;
    return {complex(w * real(x), w * imag(x))};
  });
}

}  // namespace complex_ops
}  // namespace numr
