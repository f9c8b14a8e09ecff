// A recorded op: its inputs, the Var it made (held weakly: the graph never owns its own
// outputs), and its gradient rule. Rules are written with Var ops, so the same rule serves
// the plain backward pass (run with recording off) and the create_graph pass (recorded,
// hence differentiable again).
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "numr/autograd.h"

namespace numr {

struct Var::Impl {
  Tensor value;
  bool requires_grad = false;
  uint64_t id = 0;
  std::shared_ptr<Node> grad_fn;
  std::vector<std::function<void(const Tensor&)>> hooks;
};

struct AutogradAccess {
  static const std::vector<std::function<void(const Tensor&)>>& hooks(const Var& v) {
    return v.impl_->hooks;
  }
};

class Node {
 public:
  // Returns one gradient per input (an undefined Var where there is none), each shaped
  // like its input.
  using Rule = std::function<std::vector<Var>(const Var& grad, const Node& node)>;

  Node(std::string_view name, std::vector<Var> inputs, Rule rule)
      : name_(name), inputs_(std::move(inputs)), rule_(std::move(rule)) {}
  // Releases the history behind this node with a loop, not by recursion: a chain of
  // 10^5 nodes freed through nested destructors would overflow the stack.
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  std::string_view name() const { return name_; }
  const std::vector<Var>& inputs() const { return inputs_; }
  const Var& input(size_t i) const { return inputs_[i]; }
  // The Var this node produced, with its history (alive whenever backward reaches here).
  Var output() const;
  uint64_t output_id() const { return output_id_; }

  std::vector<Var> apply(const Var& grad) const { return rule_(grad, *this); }

  // Saved-tensor checks (saved_versions.cpp): the rule may read its inputs' values and its
  // output's, so their storages' versions are taken when the node is recorded; backward
  // throws InvalidArgument if one was written in place since, rather than use new values.
  void save_versions(const Tensor& output);
  void check_versions() const;

 private:
  friend class Var;
  struct SavedVersion {
    std::weak_ptr<Storage> storage;  // weak: the graph never owns its outputs' memory
    uint64_t version = 0;
  };
  std::string_view name_;
  std::vector<Var> inputs_;
  Rule rule_;
  std::weak_ptr<Var::Impl> output_;
  uint64_t output_id_ = 0;
  std::vector<SavedVersion> saved_versions_;
};

namespace autograd {

// The Var for an op's result: records a node with `rule` when recording is on and an
// input requires grad; otherwise a constant.
Var record(std::string_view name, Tensor value, std::vector<Var> inputs, Node::Rule rule);

// While alive, collects the ids of the Vars that require grad which ops read with
// recording off (checkpoint's forward); hands them on to an enclosing probe.
class ReadProbe {
 public:
  ReadProbe();
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;
  const std::vector<uint64_t>& ids() const { return ids_; }

 private:
  std::vector<uint64_t> ids_;
  std::vector<uint64_t>* previous_;
};

// Turns recording on or off for its lifetime.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// The engine: gradients of the seeds' Vars (each seeded with its gradient) with respect to
// every leaf that requires grad and is reached. With `stop_at`, the walk ends at those
// Vars instead (their own history is not entered), only their gradients are returned and
// no hook fires: a sub-pass inside a gradient rule (checkpoint).
std::unordered_map<uint64_t, Var> run_backward(const std::vector<std::pair<Var, Var>>& seeds,
                                               bool create_graph,
                                               const std::vector<Var>& stop_at = {});

// Sums g over the dims that broadcasting added or stretched, giving `shape`.
Var sum_to(const Var& g, const Shape& shape);

}  // namespace autograd
}  // namespace numr
