// Bit-for-bit comparison of a device's result with the CPU's, and the check that a device ran
// an op as its own kernel rather than as a composition.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/composition.h"
#include "numr/numr.h"

namespace numr::test {

// Equal shapes and dtypes and the same bytes in every element (Bool compared as its bytes,
// NaN payloads and the sign of zero included); one failure names the first element that
// differs, with got's device.
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what);

// Both parts of a sort or topk result, as above (" values", " indices" appended to what).
void expect_same_bits(const SortResult& got, const SortResult& want, const std::string& what);

// sort of each row of x (both directions), its argsort unless with_argsort is false, and
// topk (both ends, each k of ks) on dev, bit for bit as on the CPU.
void expect_sorts_match(const Tensor& x, Device dev, const std::vector<int64_t>& ks,
                        const std::string& what, bool with_argsort = true);

// run() dispatches op to a backend's kernel `times` times and never to its composition.
template <class F>
void expect_kernel_runs(OpId op, int64_t times, F&& run) {
  const PathCounts before = path_counts(op);
  run();
  const PathCounts after = path_counts(op);
  EXPECT_EQ(after.kernel, before.kernel + times) << op_name(op);
  EXPECT_EQ(after.composed, before.composed) << op_name(op);
}

}  // namespace numr::test
