// The parity harness (DESIGN §8): inputs with odd shapes, views and special values,
// comparison against the float64 reference with a tolerance per dtype, poisoned
// outputs, and the op x dtype x backend coverage matrix printed at the end of the run.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "reference/reference.h"
#include "support/tolerance.h"

namespace numr::test {

using reference::RefTensor;

// The devices every parity test runs on; those not on this machine are skipped.
struct TestDevice {
  Device device;
  bool available;
  std::string reason;  // why not available
};
const std::vector<TestDevice>& test_devices();

// Whether e is a backend's refusal of a dtype it cannot hold at all (Backend::supports_dtype,
// e.g. WebGPU's F64), or of a tensor larger than a WebGPU adapter binds, on dev:
// such a case is reported as skipped, never as passed.
bool refused_dtype(const std::exception& e, Device dev);

// Float dtypes, and all dtypes an op accepts, in op-table order.
// Whether this run must cover the whole op table (the coverage and gradient reports fail
// on a gap): a run of every test, or one that NUMR_TEST_COVERAGE=on marks as the run of
// every suite that records parity or gradient results (tests/CMakeLists.txt).
bool coverage_enforced();

std::vector<DType> float_dtypes();
std::vector<DType> dtypes_of(OpId op);

// How an input is laid out in memory.
enum class Layout {
  Contiguous,
  Transposed,  // a transposed view of a contiguous tensor (needs >= 2 dims)
  Strided,     // a narrow()ed view into a larger tensor: inner stride 1, gaps between rows
  Flipped,     // negative strides on the last dim
};

struct InputSpec {
  double lo = -3.0, hi = 3.0;  // uniform values in [lo, hi]
  bool integers = false;       // round values (always for integer dtypes)
  bool specials = false;       // sprinkle NaN, +Inf, -Inf, ±0 (floating dtypes only)
  Layout layout = Layout::Contiguous;
};

// Values uniform in [-1, 1] in layout l: products of such values stay below 1, as
// accumulation_tolerance's "terms of magnitude ~1" assumes (matmul, GEMM epilogues).
InputSpec unit_spec(Layout l = Layout::Contiguous);

// A tensor of `shape` with values from spec, rounded to dtype, on dev.
Tensor make_input(const Shape& shape, DType dtype, Device dev, const InputSpec& spec,
                  uint64_t seed);

// An F64 input on the CPU for the gradient checks: values uniform in [-bound, bound].
Tensor grad_input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous,
                  double bound = 2.0);

// The tensor's values as doubles (on the host, row-major).
RefTensor to_ref(const Tensor& t);

// Compares; NaN must match NaN, ±Inf the same Inf. ref is rounded to got's dtype first.
// Returns an empty string on success, else a description of the worst mismatch.
std::string compare(const Tensor& got, const RefTensor& ref, const Tolerance& tol);

// When on, new device allocations are filled with the byte 0x5A, so elements an op fails
// to write show up as wrong values.
void set_poison(bool on);

// Coverage: each parity check records (op, dtype, backend) as passed/failed/skipped.
enum class Outcome { Passed, Failed, Skipped };
// composed: the run went through the op's composition (see core/composition.h).
void record(OpId op, DType dtype, const std::string& backend, Outcome outcome,
            bool composed = false);

// Runs `check` for every (dtype, device) pair: records outcomes, reports skipped devices,
// and fails the current test with the message check returns when it is not empty.
// check returns "" on success.
void for_each_case(OpId op, const std::vector<DType>& dtypes,
                   const std::function<std::string(DType, Device)>& check);

// The shapes every elementwise op is tried on: they straddle vector and tile widths, and
// include a 0-d tensor and an empty one.
const std::vector<Shape>& parity_shapes();

}  // namespace numr::test
