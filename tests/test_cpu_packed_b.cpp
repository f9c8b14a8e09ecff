// The CPU GEMMs with the right operand packed once per product (onednn_packed_b.h), which
// normally happens only for B of 4 MiB and more: here from any size, so the products stay
// small enough for the float64 reference. Row blocks of unequal height (a ragged last one),
// B given row- and column-major, every activation, a kept pre-activation and a residual;
// each check also asserts that B was packed. Every test runs twice: with the product split
// over numr's pool (Pool) and as one primitive on an OpenMP team (Team, which large
// products take: gemm_team_threads), here from any size; a staged product on a team runs
// in bands of rows, here small ones.
#include <array>
#include <string>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/onednn_packed_b.h"
#include "support/harness.h"

namespace numr::test {
namespace {

// Packing from any size and two threads (so a product splits into row blocks, or runs on
// a team of two) for the test's lifetime; the parameter: whether products run on a team.
class PackedBTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    threads_ = num_threads();
    set_num_threads(2);
    cpu::set_packed_b_min_bytes_for_testing(0);
    cpu::set_gemm_team_min_macs_for_testing(GetParam() ? 0.0 : 1e300);
    // A staged product on a team in bands of 32 rows, the last one ragged.
    cpu::set_team_stage_bytes_for_testing(16384);
  }
  void TearDown() override {
    cpu::set_team_stage_bytes_for_testing(0);
    cpu::set_gemm_team_min_macs_for_testing(-1.0);
    cpu::set_packed_b_min_bytes_for_testing(cpu::PackedB::kMinBytes);
    set_num_threads(threads_);
  }

 private:
  int threads_ = 1;
};

constexpr DType kDtypes[] = {DType::F32, DType::BF16};
// (M, K, N): M splits into blocks of unequal height; N and K past the kernels' blocking.
constexpr std::array<int64_t, 3> kSizes[] = {{600, 96, 160}, {257, 513, 129}};
constexpr Layout kBLayouts[] = {Layout::Contiguous, Layout::Transposed};

std::string label(DType t, std::array<int64_t, 3> s, Layout lb, const std::string& what) {
  return std::string(dtype_name(t)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
         "x" + std::to_string(s[2]) + " (b layout " + std::to_string(int(lb)) + ") " + what + ": ";
}

TEST_P(PackedBTest, MatmulMatchesReference) {
  uint64_t seed = 900;
  for (DType t : kDtypes)
    for (const auto& s : kSizes)
      for (Layout lb : kBLayouts) {
        const Tensor a =
            make_input({s[0], s[1]}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed += 2);
        const Tensor b = make_input({s[1], s[2]}, t, Device::cpu(), unit_spec(lb), seed + 1);
        const int64_t before = cpu::packed_b_count(), team_before = cpu::gemm_team_count();
        const Tensor got = matmul(a, b);
        EXPECT_GT(cpu::packed_b_count(), before) << label(t, s, lb, "matmul");
        EXPECT_EQ(cpu::gemm_team_count(), team_before + (GetParam() ? 1 : 0))
            << label(t, s, lb, "matmul on a team");
        const std::string msg =
            compare(got, reference::matmul(to_ref(a), to_ref(b)), accumulation_tolerance(t, s[1]));
        EXPECT_EQ(msg, "") << label(t, s, lb, "matmul") << msg;
      }
}

TEST_P(PackedBTest, EpilogueMatchesReference) {
  constexpr Activation kActs[] = {Activation::None, Activation::Relu,    Activation::Gelu,
                                  Activation::Silu, Activation::Sigmoid, Activation::Tanh};
  uint64_t seed = 1000;
  for (DType t : kDtypes)
    for (const auto& s : kSizes)
      for (Layout lb : kBLayouts) {
        const Tensor a =
            make_input({s[0], s[1]}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed += 4);
        const Tensor b = make_input({s[1], s[2]}, t, Device::cpu(), unit_spec(lb), seed + 1);
        const Tensor bias =
            make_input({s[2]}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed + 2);
        const Tolerance tol = gemm_tolerance(t, s[1]);
        for (Activation act : kActs) {
          const std::string what = "matmul_bias_activation " + std::string(activation_name(act));
          RefTensor pre_ref;
          const RefTensor want = reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), act,
                                                            nullptr, &pre_ref);
          // oneDNN runs (and packs) where numr's own GEMM does not.
          const bool onednn = !cpu::uses_own_gemm(t, act);
          int64_t before = cpu::packed_b_count();
          const int64_t team_before = cpu::gemm_team_count();
          const Tensor got = matmul_bias_activation(a, b, bias, act);
          if (onednn) {
            EXPECT_GT(cpu::packed_b_count(), before) << label(t, s, lb, what);
            EXPECT_EQ(cpu::gemm_team_count(), team_before + (GetParam() ? 1 : 0))
                << label(t, s, lb, what + " on a team");
          }
          std::string msg = compare(got, want, tol);
          EXPECT_EQ(msg, "") << label(t, s, lb, what) << msg;
          // Keeping the pre-activation takes the staged forms (an f32 stage per block).
          before = cpu::packed_b_count();
          const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
          if (onednn) {
            EXPECT_GT(cpu::packed_b_count(), before) << label(t, s, lb, what + " fwd");
          }
          msg = compare(f.out, want, tol);
          EXPECT_EQ(msg, "") << label(t, s, lb, what + " fwd out") << msg;
          msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, tol);
          EXPECT_EQ(msg, "") << label(t, s, lb, what + " fwd saved") << msg;
        }
        const Tensor r =
            make_input({s[0], s[2]}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed + 3);
        const RefTensor rr = to_ref(r);
        const int64_t before = cpu::packed_b_count();
        const Tensor got = matmul_bias_residual(a, b, bias, r);
        EXPECT_GT(cpu::packed_b_count(), before) << label(t, s, lb, "matmul_bias_residual");
        const std::string msg = compare(
            got,
            reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), Activation::None, &rr),
            tol);
        EXPECT_EQ(msg, "") << label(t, s, lb, "matmul_bias_residual") << msg;
      }
}

// Batched products: one b for every item, a b per item, and a batch dim looped outside
// oneDNN (a [2, 3] batch whose b broadcasts over the first dim), and a batched epilogue.
TEST_P(PackedBTest, BatchedMatchesReference) {
  uint64_t seed = 1100;
  const Shape shapes[][2] = {
      {{3, 72, 96}, {96, 80}}, {{3, 72, 96}, {3, 96, 80}}, {{2, 3, 40, 96}, {3, 96, 80}}};
  for (DType t : kDtypes)
    for (const auto& s : shapes) {
      const Tensor a = make_input(s[0], t, Device::cpu(), unit_spec(Layout::Contiguous), seed += 4);
      const Tensor b = make_input(s[1], t, Device::cpu(), unit_spec(Layout::Contiguous), seed + 1);
      const std::string what = std::string(dtype_name(t)) + " batched matmul " +
                               std::to_string(s[0].size()) + "-D @ " + std::to_string(s[1].size()) +
                               "-D: ";
      const int64_t team_before = cpu::gemm_team_count();
      const Tensor got = matmul(a, b);
      EXPECT_EQ(cpu::gemm_team_count(), team_before + (GetParam() ? 1 : 0)) << what << "team";
      std::string msg =
          compare(got, reference::matmul(to_ref(a), to_ref(b)), accumulation_tolerance(t, 96));
      EXPECT_EQ(msg, "") << what << msg;
      if (s[0].size() != 3) continue;
      const Tensor bias =
          make_input({80}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed + 2);
      for (Activation act : {Activation::None, Activation::Gelu}) {
        RefTensor pre_ref;
        const RefTensor want =
            reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), act, nullptr, &pre_ref);
        const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
        msg = compare(f.out, want, gemm_tolerance(t, 96));
        EXPECT_EQ(msg, "") << what << activation_name(act) << " out " << msg;
        msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, gemm_tolerance(t, 96));
        EXPECT_EQ(msg, "") << what << activation_name(act) << " saved " << msg;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Split, PackedBTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Team" : "Pool";
                         });

}  // namespace
}  // namespace numr::test
