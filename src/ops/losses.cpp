// Losses composed from the op set, for Tensor and Var: the target's one-hot mask is a
// comparison of the targets with an arange of the classes, so every backend runs them.
#include "numr/losses.h"

#include "ops/common.h"

namespace numr {
namespace {

// Checks scores [N, C] (floating) against target (I64 [N], values in [0, C)) and returns
// the Bool [N, C] mask that is true at (n, target[n]).
Tensor target_mask(std::string_view op, const Tensor& scores, const Tensor& target) {
  ops::check_defined(op, scores);
  ops::check_defined(op, target);
  if (!is_floating(scores.dtype()))
    fail<UnsupportedDType>(op, "scores must be floating, got ", scores.dtype());
  if (scores.dim() != 2)
    fail<InvalidArgument>(op, "expects scores [N, C], got ", shape_str(scores.shape()));
  if (target.dtype() != DType::I64)
    fail<DTypeMismatch>(op, "target must be I64, got ", target.dtype());
  if (target.dim() != 1 || target.size(0) != scores.size(0))
    fail<ShapeMismatch>(op, "target ", shape_str(target.shape()), " for scores ",
                        shape_str(scores.shape()), " (expected [", scores.size(0), "])");
  const Device dev = scores.device();
  if (target.device() != dev)
    fail<DeviceMismatch>(op, "scores on ", dev, ", target on ", target.device());
  const int64_t n = scores.size(0), c = scores.size(1);
  if (n > 0) {
    // One reduction and a one-element copy; the full targets come to the host only to
    // name a bad one.
    const Tensor bad = logical_or(lt(target, zeros(Shape{}, DType::I64, dev)),
                                  ge(target, full(Shape{}, double(c), DType::I64, dev)));
    if (any(bad).item<bool>()) {
      const std::vector<int64_t> values = target.to_vector<int64_t>();
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i] < 0 || values[i] >= c)
          fail<IndexOutOfBounds>(op, "target[", i, "] = ", values[i], " is outside [0, ", c, ")");
    }
  }
  const Tensor classes = arange(0, double(c), 1, DType::I64, dev).reshape({1, c});
  return eq(target.reshape({n, 1}), classes);
}

template <class T>
T reduce(const T& per_sample, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean: return mean(per_sample);
    case Reduction::Sum: return sum(per_sample);
    case Reduction::None: return per_sample;
  }
  fail<InvalidArgument>("loss", "unknown reduction");
}

// -log_probs[n, target[n]] per sample, from the mask.
template <class T>
T nll(const T& log_probs, const Tensor& mask, Reduction reduction) {
  return reduce(-sum(where_cond(mask, log_probs, 0.0), {1}), reduction);
}

void check_mse(const Tensor& a, const Tensor& b) {
  ops::check_same("mse_loss", {&a, &b});
  if (a.shape() != b.shape())
    fail<ShapeMismatch>("mse_loss", "shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
                        " differ (no broadcasting)");
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction) {
  return nll(log_probs, target_mask("nll_loss", log_probs, target), reduction);
}
Var nll_loss(const Var& log_probs, const Tensor& target, Reduction reduction) {
  return nll(log_probs, target_mask("nll_loss", log_probs.tensor(), target), reduction);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction) {
  const Tensor mask = target_mask("cross_entropy", logits, target);
  return nll(log_softmax(logits, 1), mask, reduction);
}
Var cross_entropy(const Var& logits, const Tensor& target, Reduction reduction) {
  const Tensor mask = target_mask("cross_entropy", logits.tensor(), target);
  return nll(log_softmax(logits, 1), mask, reduction);
}

Tensor mse_loss(const Tensor& a, const Tensor& b, Reduction reduction) {
  check_mse(a, b);
  return reduce(square(a - b), reduction);
}
Var mse_loss(const Var& a, const Var& b, Reduction reduction) {
  check_mse(a.tensor(), b.tensor());
  return reduce(square(a - b), reduction);
}
Var mse_loss(const Var& a, const Tensor& b, Reduction reduction) {
  check_mse(a.tensor(), b);
  return reduce(square(a - b), reduction);
}

}  // namespace numr
