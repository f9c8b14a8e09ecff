// Reverse-mode automatic differentiation. A Var wraps a Tensor; ops on Vars have the same
// names as ops on Tensors and record a graph node when gradients are wanted. backward()
// walks the graph from a scalar loss. With create_graph, the backward pass is itself
// recorded, so gradients can be differentiated again, to any order.
//
//   Var x(t, /*requires_grad=*/true);
//   Var loss = sum(silu(x) * x);
//   Gradients g = backward(loss);             // g[x] is a Tensor shaped like x
//   VarGradients gg = backward(loss, {.create_graph = true});
//   Gradients g2 = backward(sum(gg[x]));      // second derivative
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "numr/ops.h"
#include "numr/tensor.h"

namespace numr {

class Node;

class Var {
 public:
  Var() = default;  // undefined
  // A leaf. requires_grad asks backward() to produce its gradient (floating dtypes only).
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& tensor() const;
  bool requires_grad() const;
  bool is_leaf() const;
  uint64_t id() const;  // unique per Var; gradients are keyed by it
  const std::shared_ptr<Node>& grad_fn() const;

  const Shape& shape() const { return tensor().shape(); }
  DType dtype() const { return tensor().dtype(); }
  Device device() const { return tensor().device(); }
  int64_t dim() const { return tensor().dim(); }
  int64_t numel() const { return tensor().numel(); }

  // ---- method forms of common ops, the value and printing (src/autograd/var_methods.cpp) ----
  Var reshape(const Shape& shape) const;
  Var view(const Shape& shape) const;
  template <ShapeLike S>
  Var reshape(const S& shape) const {
    return reshape(to_shape("reshape", shape));
  }
  template <ShapeLike S>
  Var view(const S& shape) const {
    return view(to_shape("view", shape));
  }
  Var transpose(int64_t d0, int64_t d1) const;
  Var permute(const std::vector<int64_t>& dims) const;
  Var sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Var mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  // The value of a one-element Var (see Tensor::item).
  template <class T>
  T item() const {
    return tensor().template item<T>();
  }
  double item_double() const { return tensor().item_double(); }
  // The value as Tensor::to_string prints it, then requires_grad and the op that made it.
  std::string to_string() const;

  // Replaces a leaf's value (same shape, dtype and device), as an optimizer step does.
  // Graphs recorded before see the new value; record a new one after updating.
  void assign(Tensor value);

  // Called with this leaf's gradient as soon as backward() has accumulated every
  // contribution to it (before the pass finishes), e.g. to start an all-reduce early.
  void register_hook(std::function<void(const Tensor&)> hook);

  // The result of an op: value made by `node` (nullptr for a constant).
  static Var from_node(Tensor value, std::shared_ptr<Node> node);

 private:
  friend class Node;
  friend struct AutogradAccess;
  struct Impl;
  explicit Var(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Var& v);

// The same value with no history: gradients stop here.
Var detach(const Var& x);

// Whether ops on Vars record graph nodes (thread-local; on by default).
bool grad_enabled();
// Turns recording off for its lifetime.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Gradients of the leaves that require grad, keyed by Var id.
class Gradients {
 public:
  const Tensor& operator[](const Var& v) const;  // throws MissingGradient
  bool contains(const Var& v) const;
  std::unordered_map<uint64_t, Tensor>& map() { return grads_; }

 private:
  std::unordered_map<uint64_t, Tensor> grads_;
};

// Gradients that are Vars with history (from create_graph), differentiable again.
class VarGradients {
 public:
  const Var& operator[](const Var& v) const;  // throws MissingGradient
  bool contains(const Var& v) const;
  std::unordered_map<uint64_t, Var>& map() { return grads_; }

 private:
  std::unordered_map<uint64_t, Var> grads_;
};

struct BackwardOptions {
  bool create_graph = false;
};

// d loss / d leaf for every leaf that requires grad. loss must hold one element.
Gradients backward(const Var& loss);
VarGradients backward(const Var& loss, const BackwardOptions& options);

// Runs f without keeping its intermediate values; backward() runs f again (with
// recording) to get them. Saves memory for the price of a second forward pass. Every Var
// that requires grad and that f reads must come through `inputs`: one read from elsewhere
// (a captured parameter) makes checkpoint throw InvalidArgument, since it would get no
// gradient.
std::vector<Var> checkpoint(const std::function<std::vector<Var>(const std::vector<Var>&)>& f,
                            const std::vector<Var>& inputs);

}  // namespace numr

#include "numr/autograd_ops.h"
