// Var ops and gradient rules of views, copies and shape ops.
#include "autograd/grad_util.h"

namespace numr {

using autograd::record;
using autograd::sum_to;

Var reshape(const Var& x, const Shape& shape) {
  return record("reshape", reshape(x.tensor(), shape), {x},
                [](const Var& g, const Node& n) -> std::vector<Var> {
                  return {reshape(g, n.input(0).shape())};
                });
}

Var broadcast_to(const Var& x, const Shape& shape) {
  return record("broadcast_to", broadcast_to(x.tensor(), shape), {x},
                [](const Var& g, const Node& n) -> std::vector<Var> {
                  return {sum_to(g, n.input(0).shape())};
                });
}

Var unsqueeze(const Var& x, int64_t dim) {
  return record("unsqueeze", unsqueeze(x.tensor(), dim), {x},
                [](const Var& g, const Node& n) -> std::vector<Var> {
                  return {reshape(g, n.input(0).shape())};
                });
}

}  // namespace numr
