// The compositions: each composed op (OpInfo::composed) built from other ops, for backends
// without its kernel (Backend::supports) and for the parity tests, which run both. The
// front end has checked the arguments; F16 and BF16 compute in F32 and round once, as the
// kernels do.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "numr/ops.h"

namespace numr::compose {

// An ActMul or ActBwd op from its formula over the inputs (broadcast to `shape`).
Tensor elementwise(OpId op, std::initializer_list<const Tensor*> ins, const Shape& shape);
// An ActMulBwd op: (d_a, d_b) of `shape`, in the compute dtype (the caller reduces and
// rounds).
std::pair<Tensor, Tensor> act_mul_bwd(OpId op, const Tensor& g, const Tensor& a,
                                      const Tensor& b, const Shape& shape);

// mean, var, std or logsumexp over normalised dims (empty: all), reducing `count` > 0
// elements into each output.
Tensor reduce(OpId op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
              int64_t correction, int64_t count);

// cumsum, cumprod, softmax or log_softmax along dim d (already wrapped; x has >= 1 dim).
Tensor along_axis(OpId op, const Tensor& x, int64_t d);

// a [.., M, K] @ b [.., K, N] with batch dims already broadcast to equal shapes.
Tensor matmul(const Tensor& a, const Tensor& b);

// act(a @ b + bias) (+ residual), and the pre-activation when want_pre; a, b as the
// epilogue front end takes them.
EpilogueForward epilogue(const Tensor& a, const Tensor& b, const Tensor& bias,
                         const Tensor* residual, Activation act, bool want_pre);
// (grad * act'(saved), Σ over leading dims), as bias_activation_bwd's kernel.
std::pair<Tensor, Tensor> bias_activation_bwd(const Tensor& grad, const Tensor& saved,
                                              Activation act, bool saved_is_pre);

}  // namespace numr::compose
