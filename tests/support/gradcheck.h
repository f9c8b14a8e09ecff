// Gradient checks (DESIGN §8): the gradient backward() computes, compared in float64
// with central differences; and the same for the gradient of the gradient.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numr/autograd.h"

namespace numr::test {

using VarFn = std::function<Var(const std::vector<Var>&)>;

// A tensor a gradient test's function captures (an index, a mask, a constant), as that
// function's input v has it: on v's device, and a F64 one in v's dtype (a device without
// F64 runs the checks in F32).
inline Tensor like(const Tensor& t, const Var& v) {
  if (!t.defined()) return t;
  return (t.dtype() == DType::F64 ? t.cast(v.dtype()) : t).to(v.device());
}

struct GradcheckOptions {
  double eps = 1e-6;   // central-difference step
  double atol = 1e-6;  // |analytic - numeric| <= atol + rtol |numeric|
  double rtol = 1e-5;
};

// Checks d/dx_i sum(f(x) * w) for fixed random weights w, for every input that is F64.
// Returns "" on success, else the first mismatch.
std::string gradcheck(const VarFn& f, const std::vector<Tensor>& inputs,
                      const GradcheckOptions& opts = {});

// Checks the second order: h(x) = Σ_i sum(∂L/∂x_i * v_i) with L as above (computed with
// create_graph) and fixed random v_i, then gradcheck(h).
std::string gradgradcheck(const VarFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& opts = {});

// Records that op passed (or failed) its gradient check of the given order (1 or 2). At
// the end of a full run every op the table marks DIFF must have passed both orders.
void record_gradcheck(OpId op, int order, bool passed);

// Runs gradcheck and gradgradcheck of f for op, records both, and reports failures to
// the current test with `what` describing the case.
void check_gradients(OpId op, const std::string& what, const VarFn& f,
                     const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});

// The environment that prints and enforces gradient-check coverage.
::testing::Environment* gradcheck_report();

}  // namespace numr::test
