// The backward pass: nodes in reverse topological order, gradient contributions summed
// per Var, leaf hooks fired once a leaf's last contribution is in.
#include <unordered_set>

#include "autograd/node.h"

namespace numr {
namespace autograd {

Var sum_to(const Var& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[size_t(d - lead)] == 1 && g.shape()[size_t(d)] != 1) {
      dims.push_back(d);
    }
  }
  Var s = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  return reshape(s, shape);
}

std::unordered_map<uint64_t, Var> run_backward(const std::vector<std::pair<Var, Var>>& seeds,
                                               bool create_graph,
                                               const std::vector<Var>& stop_at) {
  GradModeGuard mode(create_graph);
  std::unordered_set<uint64_t> terminal;
  for (const Var& t : stop_at) terminal.insert(t.id());
  const bool sub_pass = !stop_at.empty();
  auto is_end = [&](const Var& v) { return sub_pass ? terminal.count(v.id()) != 0 : v.is_leaf(); };
  // Post-order DFS over the nodes reachable from the seeds.
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::unordered_map<uint64_t, int> pending;  // leaf id -> contributions still to come
  std::vector<std::pair<Node*, size_t>> stack;
  for (const auto& [v, g] : seeds) {
    Node* root = v.grad_fn().get();
    if (!root || is_end(v) || !seen.insert(root).second) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        const Var& in = node->input(next++);
        if (!in.requires_grad()) continue;
        Node* child = in.grad_fn().get();
        if (is_end(in)) {
          ++pending[in.id()];
        } else if (child && seen.insert(child).second) {
          stack.push_back({child, 0});
        }
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }

  std::unordered_map<uint64_t, Var> grads;
  std::unordered_map<uint64_t, Var> leaves;  // leaf id -> the leaf (for hooks)
  auto accumulate = [&](const Var& target, const Var& g) {
    auto it = grads.find(target.id());
    if (it == grads.end())
      grads.emplace(target.id(), g);
    else
      it->second = add(it->second, g);
  };
  for (const auto& [v, g] : seeds) {
    if (v.shape() != g.shape())
      fail<ShapeMismatch>("backward", "seed gradient ", shape_str(g.shape()), " for a value of ",
                          shape_str(v.shape()));
    accumulate(v, g);
  }
  auto fire_hooks = [&](const Var& leaf) {
    if (sub_pass) return;
    const Tensor& g = grads.at(leaf.id()).tensor();
    for (const auto& hook : AutogradAccess::hooks(leaf)) hook(g);
  };
  // One contribution to an end input has come (or, from a node that got no gradient,
  // will not come); the last one fires the leaf's hooks.
  auto settle = [&](const Var& in) {
    if (--pending[in.id()] == 0 && in.is_leaf() && grads.count(in.id())) fire_hooks(in);
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto found = grads.find(node->output_id());
    if (found == grads.end()) {
      for (const Var& in : node->inputs())
        if (in.requires_grad() && is_end(in)) settle(in);
      continue;
    }
    const Var g = found->second;
    grads.erase(found);
    node->check_versions();
    const std::vector<Var> in_grads = node->apply(g);
    if (in_grads.size() != node->inputs().size())
      fail<BackendError>(node->name(), "gradient rule returned ", in_grads.size(),
                         " gradients for ", node->inputs().size(), " inputs");
    for (size_t i = 0; i < in_grads.size(); ++i) {
      const Var& in = node->input(i);
      if (!in.requires_grad()) continue;
      if (in_grads[i].defined()) {
        if (in_grads[i].shape() != in.shape())
          fail<BackendError>(node->name(), "gradient rule gave shape ",
                             shape_str(in_grads[i].shape()), " for input ", i, " of shape ",
                             shape_str(in.shape()));
        accumulate(in, in_grads[i]);
      }
      if (is_end(in)) settle(in);
    }
  }
  // A seed that is itself a leaf has no node; its hooks fire now.
  for (const auto& [v, g] : seeds)
    if (v.is_leaf() && v.requires_grad() && !pending.count(v.id())) fire_hooks(v);
  if (sub_pass) {
    std::unordered_map<uint64_t, Var> out;
    for (const Var& t : stop_at)
      if (auto it = grads.find(t.id()); it != grads.end()) out.emplace(t.id(), it->second);
    return out;
  }
  return grads;
}

}  // namespace autograd

const Tensor& Gradients::operator[](const Var& v) const {
  auto it = grads_.find(v.id());
  if (it == grads_.end())
    fail<MissingGradient>("gradients", "no gradient for this Var (does it require grad, and "
                                       "does the loss depend on it?)");
  return it->second;
}
bool Gradients::contains(const Var& v) const { return grads_.count(v.id()) != 0; }

const Var& VarGradients::operator[](const Var& v) const {
  auto it = grads_.find(v.id());
  if (it == grads_.end())
    fail<MissingGradient>("gradients", "no gradient for this Var (does it require grad, and "
                                       "does the loss depend on it?)");
  return it->second;
}
bool VarGradients::contains(const Var& v) const { return grads_.count(v.id()) != 0; }

namespace {

std::unordered_map<uint64_t, Var> backward_from_loss(const Var& loss, bool create_graph) {
  if (!loss.defined()) fail<InvalidArgument>("backward", "undefined loss");
  if (!loss.requires_grad())
    fail<MissingGradient>("backward", "the loss does not depend on any Var that requires grad");
  if (loss.numel() != 1)
    fail<InvalidArgument>("backward", "the loss must hold one element, it has shape ",
                          shape_str(loss.shape()));
  if (is_complex(loss.dtype()))
    fail<InvalidArgument>("backward", "the loss is ", loss.dtype(),
                          "; a loss must be real (take real(), abs() or a norm of it)");
  const Var seed(ones(loss.shape(), loss.dtype(), loss.device()), false);
  // What remains after the pass are the leaves' gradients: a node's is dropped once used.
  return autograd::run_backward({{loss, seed}}, create_graph);
}

}  // namespace

Gradients backward(const Var& loss) {
  Gradients g;
  for (auto& [id, v] : backward_from_loss(loss, false)) g.map().emplace(id, v.tensor());
  return g;
}

VarGradients backward(const Var& loss, const BackwardOptions& options) {
  VarGradients g;
  for (auto& [id, v] : backward_from_loss(loss, options.create_graph)) g.map().emplace(id, v);
  return g;
}

}  // namespace numr
