// checkpoint(f, inputs): the forward pass keeps only f's outputs; the first gradient rule
// that runs recomputes f on the same inputs with recording on, and every output's rule
// then differentiates the recomputed graph down to the inputs (and no further: the outer
// pass continues from there).
#include <algorithm>

#include "autograd/node.h"

namespace numr {

namespace {
struct CheckpointState {
  std::function<std::vector<Var>(const std::vector<Var>&)> f;
  std::vector<Var> inputs;
  std::vector<Var> recomputed;  // empty until the first rule runs
};
}  // namespace

std::vector<Var> checkpoint(const std::function<std::vector<Var>(const std::vector<Var>&)>& f,
                            const std::vector<Var>& inputs) {
  std::vector<Var> outs;
  std::vector<uint64_t> read;  // Vars requiring grad that f read
  {
    NoGradGuard no_grad;
    autograd::ReadProbe probe;
    outs = f(inputs);
    read = probe.ids();
  }
  if (!grad_enabled()) return outs;
  // The recomputed graph is differentiated down to the inputs only: a Var that f reads
  // from elsewhere (a captured parameter) would get no gradient.
  for (uint64_t id : read)
    if (std::none_of(inputs.begin(), inputs.end(), [&](const Var& v) { return v.id() == id; }))
      fail<InvalidArgument>("checkpoint",
                            "f reads a Var that requires grad but is not among the inputs; pass "
                            "it as an input so that it gets its gradient");
  bool needs = false;
  for (const Var& v : inputs) needs |= v.requires_grad();
  if (!needs) return outs;
  auto state = std::make_shared<CheckpointState>(CheckpointState{f, inputs, {}});
  std::vector<Var> result;
  for (size_t k = 0; k < outs.size(); ++k) {
    result.push_back(autograd::record(
        "checkpoint", outs[k].tensor(), inputs,
        [state, k](const Var& g, const Node&) -> std::vector<Var> {
          if (state->recomputed.empty()) {
            autograd::GradModeGuard on(true);
            state->recomputed = state->f(state->inputs);
          }
          const Var& out = state->recomputed.at(k);
          std::vector<Var> grads(state->inputs.size());
          if (!out.requires_grad()) return grads;
          auto found = autograd::run_backward({{out, g}}, grad_enabled(), state->inputs);
          // A Var passed more than once gets its total once, at its first position.
          for (size_t i = 0; i < state->inputs.size(); ++i)
            if (auto it = found.find(state->inputs[i].id()); it != found.end()) {
              grads[i] = it->second;
              found.erase(it);
            }
          return grads;
        }));
  }
  return result;
}

}  // namespace numr
