// Complex tensors: Complex64 and Complex128 hold (re, im) pairs of F32 and F64.
//
// A complex tensor of shape [..] shares its storage with the real tensor [.., 2] of its
// parts (view_as_real), and every complex op is built from real ops on that view, so it
// runs on every backend that has the real ops (mul, div and abs run as one kernel pass
// where the backend has one, with the same results). The ops that take complex tensors: add,
// sub, mul, div, neg, abs, exp, log, mul_scalar, div_scalar, sum, mean, matmul, the views,
// contiguous/clone/cast/to_device, cat/stack, zeros/ones, and the functions below.
// Gradients follow PyTorch's convention: the gradient of a real loss L with respect to
// z = x + iy is dL/dx + i dL/dy (docs/semantics.md).
#pragma once

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

// The parts of a complex tensor as a real view [.., 2] (F32 for Complex64, F64 for
// Complex128), sharing storage: writes through one show in the other.
Tensor view_as_real(const Tensor& z);
// The complex view of a real F32/F64 tensor whose last dim has size 2 and stride 1 (and
// whose other strides and offset are even); shares storage.
Tensor view_as_complex(const Tensor& x);
// re + i im from two real F32/F64 tensors of the same dtype (broadcast together).
Tensor complex(const Tensor& re, const Tensor& im);
// abs · (cos angle + i sin angle).
Tensor polar(const Tensor& abs, const Tensor& angle);
// The real and imaginary parts, as real views of z's storage. real of a real tensor is
// the tensor itself; imag of a real tensor is an error, as in PyTorch.
Tensor real(const Tensor& z);
Tensor imag(const Tensor& z);
// x - iy (a new tensor); conj of a real tensor is the tensor itself.
Tensor conj(const Tensor& z);
// atan2(im, re), real.
Tensor angle(const Tensor& z);

Var view_as_real(const Var& z);
Var view_as_complex(const Var& x);
Var complex(const Var& re, const Var& im);
Var polar(const Var& abs, const Var& angle);
Var real(const Var& z);
Var imag(const Var& z);
Var conj(const Var& z);
Var angle(const Var& z);

}  // namespace numr
