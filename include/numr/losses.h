// Loss functions for Tensor and Var, composed from the op set (so every backend has them
// and their gradients follow from the ops'). Contracts in docs/semantics.md.
//
//   Var loss = cross_entropy(logits, target);              // mean over the batch
//   Var per_sample = cross_entropy(logits, target, Reduction::None);
#pragma once

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

// How a per-sample loss becomes the result: its mean, its sum (both 0-d), or the
// per-sample values themselves.
enum class Reduction : uint8_t { Mean, Sum, None };

// -log_softmax(logits)[n, target[n]] per sample n. logits: [N, C], floating; target: I64
// [N] with values in [0, C): others throw IndexOutOfBounds (checked on the host: one small
// reduction and a one-element copy, which waits for the device).
Tensor cross_entropy(const Tensor& logits, const Tensor& target,
                     Reduction reduction = Reduction::Mean);
Var cross_entropy(const Var& logits, const Tensor& target, Reduction reduction = Reduction::Mean);
// -log_probs[n, target[n]] per sample n; the same shapes and checks as cross_entropy.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target,
                Reduction reduction = Reduction::Mean);
Var nll_loss(const Var& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean);
// (a - b)^2 elementwise; a and b have the same shape and dtype (no broadcasting).
Tensor mse_loss(const Tensor& a, const Tensor& b, Reduction reduction = Reduction::Mean);
Var mse_loss(const Var& a, const Var& b, Reduction reduction = Reduction::Mean);
Var mse_loss(const Var& a, const Tensor& b, Reduction reduction = Reduction::Mean);

}  // namespace numr
