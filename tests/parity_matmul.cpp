// Parity of matmul against the float64 reference: sizes around the BLAS's tile widths,
// batches (shared, per-item and broadcast), transposed, strided and flipped operands,
// K = 0 and empty results, large and long-K products, for every float dtype.
#include <array>
#include <string>

#include "support/harness.h"

namespace numr::test {
namespace {

struct Case {
  Shape a, b;
  Layout la = Layout::Contiguous, lb = Layout::Contiguous;
};

std::string check(const Case& c, DType t, Device dev, uint64_t seed) {
  const Tensor a = make_input(c.a, t, dev, unit_spec(c.la), seed);
  const Tensor b = make_input(c.b, t, dev, unit_spec(c.lb), seed + 1);
  const RefTensor want = reference::matmul(to_ref(a), to_ref(b));
  const Tensor got = matmul(a, b);
  if (got.shape() != want.shape)
    return shape_str(c.a) + " @ " + shape_str(c.b) + ": shape " + shape_str(got.shape()) +
           ", expected " + shape_str(want.shape);
  const std::string msg = compare(got, want, accumulation_tolerance(t, c.a.back()));
  if (msg.empty()) return "";
  return shape_str(c.a) + " (layout " + std::to_string(int(c.la)) + ") @ " + shape_str(c.b) +
         " (layout " + std::to_string(int(c.lb)) + "): " + msg;
}

std::string run_cases(const std::vector<Case>& cases, DType t, Device dev) {
  uint64_t seed = 11;
  for (const Case& c : cases) {
    std::string msg = check(c, t, dev, seed);
    seed += 2;
    if (!msg.empty()) return msg;
  }
  return "";
}

// (M, K, N) straddling vector widths and the BLAS's blocking; 130x70x90 is large enough
// for the BLAS to use several threads.
const std::vector<std::array<int64_t, 3>>& sizes() {
  static const std::vector<std::array<int64_t, 3>> s = {
      {1, 1, 1}, {7, 5, 3}, {33, 17, 9}, {64, 64, 64}, {130, 70, 90}, {1, 40, 1}, {5, 1, 6}};
  return s;
}

TEST(ParityMatmul, Square2d) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) {
    std::vector<Case> cases;
    for (auto [m, k, n] : sizes()) cases.push_back({{m, k}, {k, n}});
    return run_cases(cases, t, dev);
  });
}

TEST(ParityMatmul, Batched) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) {
    std::vector<Case> cases;
    for (auto [m, k, n] : sizes()) {
      cases.push_back({{3, m, k}, {k, n}});        // one right-hand matrix for all
      cases.push_back({{m, k}, {3, k, n}});        // one left-hand matrix for all
      cases.push_back({{3, m, k}, {3, k, n}});     // one pair per item
      cases.push_back({{2, 1, m, k}, {3, k, n}});  // batch dims broadcast both ways
    }
    // Many small products: the batch is spread over the thread pool.
    cases.push_back({{64, 8, 8}, {64, 8, 8}});
    cases.push_back({{2, 3, 4, 5, 6}, {1, 4, 6, 7}});
    return run_cases(cases, t, dev);
  });
}

TEST(ParityMatmul, Layouts) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) {
    constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                                   Layout::Flipped};
    std::vector<Case> cases;
    for (Layout la : kLayouts)
      for (Layout lb : kLayouts) {
        cases.push_back({{33, 17}, {17, 9}, la, lb});
        cases.push_back({{3, 7, 5}, {5, 4}, la, lb});
        cases.push_back({{2, 6, 9}, {2, 9, 65}, la, lb});
        cases.push_back({{130, 70}, {70, 90}, la, lb});
      }
    return run_cases(cases, t, dev);
  });
}

// Sizes past the GEMM kernels' blocking in every dim (odd, so every edge is partial),
// transposed and strided operands with broadcast batches, and a long K: 16-bit types must
// accumulate in f32, which a 16-bit running sum over 4096 terms would miss by far.
TEST(ParityMatmul, LargeAndLongK) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) {
    const std::vector<Case> cases = {
        {{257, 513}, {513, 129}},
        {{257, 513}, {513, 129}, Layout::Transposed, Layout::Transposed},
        {{3, 257, 513}, {513, 129}, Layout::Contiguous, Layout::Transposed},
        {{257, 513}, {3, 513, 129}, Layout::Transposed, Layout::Strided},
        {{2, 1, 65, 300}, {1, 3, 300, 70}, Layout::Strided, Layout::Transposed},
        {{2, 130, 300}, {300, 70}, Layout::Flipped, Layout::Flipped},
        {{65, 300}, {2, 300, 257}, Layout::Transposed, Layout::Contiguous},
        {{2, 33, 4096}, {4096, 40}},
        {{40, 4096}, {4096, 33}, Layout::Transposed, Layout::Strided},
    };
    return run_cases(cases, t, dev);
  });
}

TEST(ParityMatmul, ViewsOfViews) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) -> std::string {
    // A matrix slice taken along a batch dim, and a broadcast (stride 0) matrix row.
    const Tensor base = make_input({4, 9, 12}, t, dev, unit_spec(Layout::Contiguous), 5);
    const Tensor a = base.narrow(0, 1, 2).narrow(2, 3, 7);  // [2, 9, 7], row stride 12
    const Tensor b = make_input({1, 5}, t, dev, unit_spec(Layout::Contiguous), 6)
                         .broadcast_to({7, 5});  // row stride 0
    const RefTensor want = reference::matmul(to_ref(a), to_ref(b));
    std::string msg = compare(matmul(a, b), want, accumulation_tolerance(t, 7));
    if (!msg.empty()) return "narrowed @ broadcast: " + msg;
    const Tensor at = base.permute({2, 0, 1});  // [12, 4, 9]: batch stride 1
    const Tensor bt = make_input({9, 3}, t, dev, unit_spec(Layout::Transposed), 8);
    msg = compare(matmul(at, bt), reference::matmul(to_ref(at), to_ref(bt)),
                  accumulation_tolerance(t, 9));
    if (!msg.empty()) return "permuted @ transposed: " + msg;
    return "";
  });
}

TEST(ParityMatmul, EmptyAndZeroK) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) {
    const std::vector<Case> cases = {
        {{4, 0}, {0, 3}},        // K = 0: all zeros
        {{2, 4, 0}, {0, 3}},     // batched, K = 0
        {{0, 5}, {5, 3}},        // empty M
        {{4, 5}, {5, 0}},        // empty N
        {{0, 4, 5}, {5, 3}},     // empty batch
        {{2, 0, 5}, {1, 5, 3}},  // empty M in a batch
    };
    return run_cases(cases, t, dev);
  });
}

TEST(ParityMatmul, SpecialValuesPropagate) {
  for_each_case(OpId::matmul, float_dtypes(), [](DType t, Device dev) -> std::string {
    InputSpec s = unit_spec(Layout::Contiguous);
    s.specials = true;
    const Tensor a = make_input({9, 6}, t, dev, s, 21);
    const Tensor b = make_input({6, 5}, t, dev, unit_spec(Layout::Contiguous), 22);
    return compare(matmul(a, b), reference::matmul(to_ref(a), to_ref(b)),
                   accumulation_tolerance(t, 6));
  });
}

}  // namespace
}  // namespace numr::test
