// Optimizers: update leaf Vars from the gradients backward() returned.
//   AdamW opt(params, {.lr = 1e-3});
//   for (...) { Gradients g = backward(loss(...)); opt.step(g); }
#pragma once

#include <string_view>
#include <vector>

#include "numr/autograd.h"

namespace numr {

// A step is atomic: it first checks every gradient (each parameter's is absent, meaning the
// parameter is left as it is, or defined with exactly the parameter's shape, dtype and
// device), then computes every new value, then commits them. When it throws, the
// parameters and the optimizer's state are as they were.
class Optimizer {
 public:
  explicit Optimizer(std::vector<Var> params);
  virtual ~Optimizer() = default;
  // Applies one update to every parameter that has a gradient in g.
  virtual void step(const Gradients& g) = 0;
  const std::vector<Var>& params() const { return params_; }

 protected:
  // Throws (naming op) unless every gradient in g for a parameter matches it exactly.
  void check_gradients(std::string_view op, const Gradients& g) const;

  std::vector<Var> params_;
};

// Hyper-parameters are checked at construction and by set_lr: all finite, lr >= 0,
// momentum >= 0, weight_decay >= 0 (InvalidArgument otherwise).
struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;  // added to the gradient (L2), as in classic SGD
  bool nesterov = false;
};

// v = momentum * v + (g + weight_decay * p);  p -= lr * (nesterov ? g + momentum * v : v)
class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Var> params, SgdOptions options);
  void step(const Gradients& g) override;
  const SgdOptions& options() const { return opt_; }
  void set_lr(double lr);  // e.g. for a schedule; checked like the constructor's
  // Parameter i's momentum buffer; undefined before its first update with momentum.
  const Tensor& velocity(size_t i) const { return velocity_.at(i); }

 private:
  SgdOptions opt_;
  std::vector<Tensor> velocity_;
};

// Hyper-parameters are checked at construction and by set_lr: all finite, lr >= 0,
// 0 <= beta1, beta2 < 1, eps > 0, weight_decay >= 0, and lr * weight_decay finite
// (InvalidArgument otherwise).
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;  // decoupled: p -= lr * weight_decay * p
};

// Adam with decoupled weight decay (Loshchilov & Hutter), bias-corrected moments. A
// parameter without a gradient in a step is left as it is; its moments are corrected for
// the number of updates it has had (as PyTorch counts steps per parameter).
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Var> params, AdamWOptions options);
  void step(const Gradients& g) override;
  int64_t steps() const { return t_; }
  const AdamWOptions& options() const { return opt_; }
  void set_lr(double lr);  // e.g. for a schedule; checked like the constructor's
  // Parameter i's moments (undefined before its first update) and update count.
  const Tensor& exp_avg(size_t i) const { return m_.at(i); }
  const Tensor& exp_avg_sq(size_t i) const { return v_.at(i); }
  int64_t updates(size_t i) const { return updates_.at(i); }

 private:
  AdamWOptions opt_;
  int64_t t_ = 0;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> updates_;  // per parameter
};

}  // namespace numr
