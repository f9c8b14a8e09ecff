// Optimizers: update leaf Vars from the gradients backward() returned.
//   AdamW opt(params, {.lr = 1e-3});
//   for (...) { Gradients g = backward(loss(...)); opt.step(g); }
#pragma once

#include <vector>

#include "numr/autograd.h"

namespace numr {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Var> params);
  virtual ~Optimizer() = default;
  // Applies one update to every parameter that has a gradient in g.
  virtual void step(const Gradients& g) = 0;
  const std::vector<Var>& params() const { return params_; }

 protected:
  std::vector<Var> params_;
};

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

 private:
  SgdOptions opt_;
  std::vector<Tensor> velocity_;
};

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

 private:
  AdamWOptions opt_;
  int64_t t_ = 0;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> updates_;  // per parameter
};

}  // namespace numr
