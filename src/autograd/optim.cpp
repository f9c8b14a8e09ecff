#include "numr/optim.h"

#include <cmath>
#include <unordered_set>

#include "core/op_scope.h"

namespace numr {
namespace {

void check_finite(std::string_view op, const char* name, double v) {
  if (!std::isfinite(v)) fail<InvalidArgument>(op, name, " must be finite, got ", v);
}

void check_at_least_zero(std::string_view op, const char* name, double v) {
  if (!std::isfinite(v) || v < 0)
    fail<InvalidArgument>(op, name, " must be finite and >= 0, got ", v);
}

void check_sgd(const SgdOptions& o) {
  check_at_least_zero("Sgd", "lr", o.lr);
  check_at_least_zero("Sgd", "momentum", o.momentum);
  check_at_least_zero("Sgd", "weight_decay", o.weight_decay);
}

void check_adamw(const AdamWOptions& o) {
  check_at_least_zero("AdamW", "lr", o.lr);
  for (auto [name, beta] : {std::pair{"beta1", o.beta1}, std::pair{"beta2", o.beta2}})
    if (!std::isfinite(beta) || beta < 0 || beta >= 1)
      fail<InvalidArgument>("AdamW", name, " must be finite and in [0, 1), got ", beta);
  check_finite("AdamW", "eps", o.eps);
  if (!(o.eps > 0)) fail<InvalidArgument>("AdamW", "eps must be finite and > 0, got ", o.eps);
  check_at_least_zero("AdamW", "weight_decay", o.weight_decay);
  // The decay factor is 1 - lr * weight_decay.
  if (!std::isfinite(o.lr * o.weight_decay))
    fail<InvalidArgument>("AdamW", "lr * weight_decay must be finite, got ", o.lr, " * ",
                          o.weight_decay);
}

}  // namespace

Optimizer::Optimizer(std::vector<Var> params) : params_(std::move(params)) {
  std::unordered_set<uint64_t> ids;
  for (const Var& p : params_) {
    if (!p.defined() || !p.is_leaf() || !p.requires_grad())
      fail<InvalidArgument>("optimizer", "parameters must be leaves that require grad");
    // Listed twice, a parameter would be updated twice per step.
    if (!ids.insert(p.id()).second)
      fail<InvalidArgument>("optimizer", "a parameter is listed more than once");
  }
}

void Optimizer::check_gradients(std::string_view op, const Gradients& g) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Var& p = params_[i];
    if (!g.contains(p)) continue;
    const Tensor& d = g[p];
    if (!d.defined()) fail<InvalidArgument>(op, "the gradient of parameter ", i, " is undefined");
    // Exactly the parameter's shape: a broadcast gradient would hide a wrong one.
    if (d.shape() != p.shape())
      fail<ShapeMismatch>(op, "the gradient of parameter ", i, " has shape ", shape_str(d.shape()),
                          ", the parameter ", shape_str(p.shape()));
    if (d.dtype() != p.dtype())
      fail<DTypeMismatch>(op, "the gradient of parameter ", i, " is ", d.dtype(),
                          ", the parameter ", p.dtype());
    if (d.device() != p.device())
      fail<DeviceMismatch>(op, "the gradient of parameter ", i, " is on ", d.device(),
                           ", the parameter on ", p.device());
  }
}

Sgd::Sgd(std::vector<Var> params, SgdOptions options)
    : Optimizer(std::move(params)), opt_(options), velocity_(params_.size()) {
  check_sgd(opt_);
}

void Sgd::set_lr(double lr) {
  SgdOptions o = opt_;
  o.lr = lr;
  check_sgd(o);
  opt_ = o;
}

void Sgd::step(const Gradients& g) {
  const OpScope scope("Sgd");  // e.g. out of memory in an update names the optimizer
  check_gradients("Sgd", g);
  NoGradGuard no_grad;
  // Every new value is computed before any is stored, so a failure part way (out of
  // memory) leaves the parameters and buffers as they were.
  std::vector<Tensor> next_p(params_.size()), next_v(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Var& p = params_[i];
    if (!g.contains(p)) continue;
    Tensor d = g[p];
    if (opt_.weight_decay != 0) d = d + p.tensor() * opt_.weight_decay;
    if (opt_.momentum != 0) {
      next_v[i] = velocity_[i].defined() ? velocity_[i] * opt_.momentum + d : d;
      d = opt_.nesterov ? d + next_v[i] * opt_.momentum : next_v[i];
    }
    next_p[i] = p.tensor() - d * opt_.lr;
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!next_p[i].defined()) continue;
    params_[i].assign(std::move(next_p[i]));
    if (next_v[i].defined()) velocity_[i] = std::move(next_v[i]);
  }
}

AdamW::AdamW(std::vector<Var> params, AdamWOptions options)
    : Optimizer(std::move(params)),
      opt_(options),
      m_(params_.size()),
      v_(params_.size()),
      updates_(params_.size(), 0) {
  check_adamw(opt_);
}

void AdamW::set_lr(double lr) {
  AdamWOptions o = opt_;
  o.lr = lr;
  check_adamw(o);
  opt_ = o;
}

void AdamW::step(const Gradients& g) {
  const OpScope scope("AdamW");  // e.g. out of memory in an update names the optimizer
  check_gradients("AdamW", g);
  NoGradGuard no_grad;
  // Every new value is computed before any is stored (and the step counted), so a failure
  // part way (out of memory) leaves the parameters and the state as they were.
  const size_t n = params_.size();
  std::vector<Tensor> next_p(n), next_m(n), next_v(n);
  for (size_t i = 0; i < n; ++i) {
    const Var& p = params_[i];
    if (!g.contains(p)) continue;
    const Tensor& d = g[p];
    // The moments are corrected for the updates this parameter has had, which are fewer
    // than the steps where it got no gradient in some.
    const int64_t t = updates_[i] + 1;
    const double c1 = 1.0 - std::pow(opt_.beta1, double(t));
    const double c2 = 1.0 - std::pow(opt_.beta2, double(t));
    const Tensor m = m_[i].defined() ? m_[i] : zeros(d.shape(), d.dtype(), d.device());
    const Tensor v = v_[i].defined() ? v_[i] : zeros(d.shape(), d.dtype(), d.device());
    next_m[i] =
        fused_mul_add(m, full({}, opt_.beta1, d.dtype(), d.device()), d * (1.0 - opt_.beta1));
    next_v[i] = fused_mul_add(v, full({}, opt_.beta2, d.dtype(), d.device()),
                              square(d) * (1.0 - opt_.beta2));
    const Tensor update = (next_m[i] / c1) / (sqrt(next_v[i] / c2) + opt_.eps);
    const Tensor decayed = p.tensor() * (1.0 - opt_.lr * opt_.weight_decay);
    next_p[i] = decayed - update * opt_.lr;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!next_p[i].defined()) continue;
    params_[i].assign(std::move(next_p[i]));
    m_[i] = std::move(next_m[i]);
    v_[i] = std::move(next_v[i]);
    ++updates_[i];
  }
  ++t_;
}

}  // namespace numr
