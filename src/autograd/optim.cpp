#include "numr/optim.h"

#include <cmath>
#include <unordered_set>

namespace numr {

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

Sgd::Sgd(std::vector<Var> params, SgdOptions options)
    : Optimizer(std::move(params)), opt_(options), velocity_(params_.size()) {
  if (!(opt_.lr > 0) || opt_.momentum < 0 || opt_.weight_decay < 0)
    fail<InvalidArgument>("sgd", "need lr > 0, momentum >= 0, weight_decay >= 0");
}

void Sgd::step(const Gradients& g) {
  NoGradGuard no_grad;
  // Every gradient is checked before any parameter changes: a bad one (a broadcastable
  // shape would otherwise pass silently) leaves the step undone.
  for (const Var& p : params_) {
    if (!g.contains(p)) continue;
    const Tensor& d = g[p];
    if (!d.defined()) fail<InvalidArgument>("sgd", "undefined gradient");
    if (d.dtype() != p.dtype())
      fail<DTypeMismatch>("sgd", "gradient is ", d.dtype(), ", parameter ", p.dtype());
    if (d.device() != p.device())
      fail<DeviceMismatch>("sgd", "gradient on ", d.device(), ", parameter on ", p.device());
    if (d.shape() != p.shape())
      fail<ShapeMismatch>("sgd", "gradient ", shape_str(d.shape()), " for a parameter ",
                          shape_str(p.shape()));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    Var& p = params_[i];
    if (!g.contains(p)) continue;
    Tensor d = g[p];
    if (opt_.weight_decay != 0) d = d + p.tensor() * opt_.weight_decay;
    if (opt_.momentum != 0) {
      velocity_[i] = velocity_[i].defined() ? velocity_[i] * opt_.momentum + d : d;
      d = opt_.nesterov ? d + velocity_[i] * opt_.momentum : velocity_[i];
    }
    p.assign(p.tensor() - d * opt_.lr);
  }
}

AdamW::AdamW(std::vector<Var> params, AdamWOptions options)
    : Optimizer(std::move(params)),
      opt_(options),
      m_(params_.size()),
      v_(params_.size()),
      updates_(params_.size(), 0) {
  if (!(opt_.lr > 0) || !(opt_.beta1 >= 0 && opt_.beta1 < 1) || !(opt_.beta2 >= 0 && opt_.beta2 < 1) ||
      !(opt_.eps > 0) || opt_.weight_decay < 0)
    fail<InvalidArgument>("adamw", "need lr > 0, 0 <= betas < 1, eps > 0, weight_decay >= 0");
}

void AdamW::step(const Gradients& g) {
  NoGradGuard no_grad;
  ++t_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Var& p = params_[i];
    if (!g.contains(p)) continue;
    const Tensor& d = g[p];
    // The moments are corrected for the updates this parameter has had, which are fewer
    // than the steps where it got no gradient in some.
    const int64_t t = ++updates_[i];
    const double c1 = 1.0 - std::pow(opt_.beta1, double(t));
    const double c2 = 1.0 - std::pow(opt_.beta2, double(t));
    if (!m_[i].defined()) {
      m_[i] = zeros(d.shape(), d.dtype(), d.device());
      v_[i] = zeros(d.shape(), d.dtype(), d.device());
    }
    m_[i] = fused_mul_add(m_[i], full({}, opt_.beta1, d.dtype(), d.device()), d * (1.0 - opt_.beta1));
    v_[i] = fused_mul_add(v_[i], full({}, opt_.beta2, d.dtype(), d.device()),
                          square(d) * (1.0 - opt_.beta2));
    const Tensor update = (m_[i] / c1) / (sqrt(v_[i] / c2) + opt_.eps);
    const Tensor decayed = p.tensor() * (1.0 - opt_.lr * opt_.weight_decay);
    p.assign(decayed - update * opt_.lr);
  }
}

}  // namespace numr
