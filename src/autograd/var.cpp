#include <atomic>

#include "autograd/node.h"
#include "core/op_scope.h"

namespace numr {
namespace {
std::atomic<uint64_t> g_next_id{1};
thread_local bool tl_grad_enabled = true;
}  // namespace

Var::Var(Tensor value, bool requires_grad) : impl_(std::make_shared<Impl>()) {
  if (!value.defined()) fail<InvalidArgument>("Var", "undefined tensor");
  if (requires_grad && !is_floating(value.dtype()) && !is_complex(value.dtype()))
    fail<UnsupportedDType>("Var", "only floating and complex tensors can require grad, got ",
                           value.dtype());
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
  impl_->id = g_next_id++;
}

Var Var::from_node(Tensor value, std::shared_ptr<Node> node) {
  Var v(std::move(value), false);
  if (node) {
    v.impl_->requires_grad = true;
    node->output_ = v.impl_;
    node->output_id_ = v.impl_->id;
    v.impl_->grad_fn = std::move(node);
  }
  return v;
}

const Tensor& Var::tensor() const {
  if (!impl_) fail<InvalidArgument>(current_op("Var"), "undefined Var");
  return impl_->value;
}
bool Var::requires_grad() const { return impl_ && impl_->requires_grad; }
bool Var::is_leaf() const { return impl_ && !impl_->grad_fn; }
uint64_t Var::id() const { return impl_ ? impl_->id : 0; }
const std::shared_ptr<Node>& Var::grad_fn() const {
  static const std::shared_ptr<Node> none;
  return impl_ ? impl_->grad_fn : none;
}

void Var::register_hook(std::function<void(const Tensor&)> hook) {
  if (!impl_) fail<InvalidArgument>("register_hook", "undefined Var");
  if (!is_leaf() || !impl_->requires_grad)
    fail<InvalidArgument>("register_hook", "hooks are for leaves that require grad");
  impl_->hooks.push_back(std::move(hook));
}

void Var::assign(Tensor value) {
  if (!impl_) fail<InvalidArgument>("assign", "undefined Var");
  if (!is_leaf()) fail<InvalidArgument>("assign", "only leaves can be assigned");
  const Tensor& old = impl_->value;
  if (!value.defined() || value.shape() != old.shape() || value.dtype() != old.dtype() ||
      value.device() != old.device())
    fail<InvalidArgument>("assign", "new value must match shape ", shape_str(old.shape()), ", ",
                          old.dtype(), " on ", old.device());
  impl_->value = std::move(value);
}

Node::~Node() {
  // Drop the rule first: what it captured may share inputs, whose counts the loop reads.
  rule_ = nullptr;
  std::vector<Var> pending = std::move(inputs_);
  while (!pending.empty()) {
    Var v = std::move(pending.back());
    pending.pop_back();
    // Where v holds the last reference to its Impl and that Impl the last one to its node,
    // the node's inputs move here before the node goes, so its destructor has none left.
    if (v.impl_ && v.impl_.use_count() == 1 && v.impl_->grad_fn &&
        v.impl_->grad_fn.use_count() == 1) {
      std::shared_ptr<Node> node = std::move(v.impl_->grad_fn);
      node->rule_ = nullptr;
      for (Var& in : node->inputs_) pending.push_back(std::move(in));
      node->inputs_.clear();
    }
  }
}

Var Node::output() const {
  std::shared_ptr<Var::Impl> impl = output_.lock();
  if (!impl) fail<BackendError>(name_, "output of the node is gone");
  return Var(std::move(impl));
}

Var detach(const Var& x) {
  const OpScope scope("detach");
  return Var(x.tensor(), false);
}

bool grad_enabled() { return tl_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(tl_grad_enabled) { tl_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { tl_grad_enabled = previous_; }

namespace autograd {

GradModeGuard::GradModeGuard(bool enabled) : previous_(tl_grad_enabled) {
  tl_grad_enabled = enabled;
}
GradModeGuard::~GradModeGuard() { tl_grad_enabled = previous_; }

namespace {
thread_local std::vector<uint64_t>* tl_reads = nullptr;  // the innermost ReadProbe's ids
}  // namespace

ReadProbe::ReadProbe() : previous_(tl_reads) { tl_reads = &ids_; }
ReadProbe::~ReadProbe() {
  tl_reads = previous_;
  if (previous_) previous_->insert(previous_->end(), ids_.begin(), ids_.end());
}

Var record(std::string_view name, Tensor value, std::vector<Var> inputs, Node::Rule rule) {
  bool needs = false;
  if (tl_grad_enabled) {
    for (const Var& v : inputs) needs |= v.requires_grad();
  } else if (tl_reads) {
    for (const Var& v : inputs)
      if (v.requires_grad()) tl_reads->push_back(v.id());
  }
  if (!needs || !(is_floating(value.dtype()) || is_complex(value.dtype())))
    return Var(std::move(value), false);
  auto node = std::make_shared<Node>(name, std::move(inputs), std::move(rule));
  node->save_versions(value);
  return Var::from_node(std::move(value), std::move(node));
}

}  // namespace autograd
}  // namespace numr
