// The text form of tensors and Vars: exact strings for small cases, and summaries of
// large (even huge broadcast) tensors that copy only the printed entries.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include "numr/numr.h"

namespace numr {
namespace {

TEST(Print, Matrix) {
  const Tensor t = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(t.to_string(),
            "tensor([[1.0000, 2.0000],\n"
            "        [3.0000, 4.0000]], dtype=f32, device=cpu)");
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), t.to_string());
  // A view prints its own values, in its own order.
  EXPECT_EQ(t.transpose(0, 1).to_string(),
            "tensor([[1.0000, 3.0000],\n"
            "        [2.0000, 4.0000]], dtype=f32, device=cpu)");
}

TEST(Print, PaddingAndKinds) {
  EXPECT_EQ(Tensor::from_vector<float>({1.5f, -2.f}, {2}).to_string(),
            "tensor([ 1.5000, -2.0000], dtype=f32, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<int64_t>({1, 20, -3}, {3}).to_string(),
            "tensor([ 1, 20, -3], dtype=i64, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<uint8_t>({7, 255}, {2}).to_string(),
            "tensor([  7, 255], dtype=u8, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<bool>({true, false}, {2}).to_string(),
            "tensor([ true, false], dtype=bool, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<double>({NAN, INFINITY, -INFINITY, 1}, {4}).to_string(),
            "tensor([   nan,    inf,   -inf, 1.0000], dtype=f64, device=cpu)");
  EXPECT_EQ(full({2}, 1.5, DType::BF16).to_string(),
            "tensor([1.5000, 1.5000], dtype=bf16, device=cpu)");
  EXPECT_EQ(zeros({2}).to_string(), "tensor([0.0000, 0.0000], dtype=f32, device=cpu)");
}

TEST(Print, ScientificWhenMagnitudesCallForIt) {
  EXPECT_EQ(Tensor::from_vector<double>({1e-5, 1}, {2}).to_string(),
            "tensor([1.0000e-05, 1.0000e+00], dtype=f64, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<double>({1e10, -2}, {2}).to_string(),
            "tensor([ 1.0000e+10, -2.0000e+00], dtype=f64, device=cpu)");
  EXPECT_EQ(Tensor::from_vector<double>({0.5, 400}, {2}).to_string(),
            "tensor([  0.5000, 400.0000], dtype=f64, device=cpu)");
}

TEST(Print, ZeroDimAndEmpty) {
  EXPECT_EQ(full({}, 2.5).to_string(), "tensor(2.5000, dtype=f32, device=cpu)");
  EXPECT_EQ(full({}, 3, DType::I32).to_string(), "tensor(3, dtype=i32, device=cpu)");
  EXPECT_EQ(zeros({0}).to_string(), "tensor([], dtype=f32, device=cpu)");
  EXPECT_EQ(zeros({2, 0}, DType::I64).to_string(),
            "tensor([], size=[2, 0], dtype=i64, device=cpu)");
  EXPECT_EQ(Tensor().to_string(), "tensor(undefined)");
}

TEST(Print, ThreeDims) {
  EXPECT_EQ(arange(0, 8, 1, DType::I64).reshape({2, 2, 2}).to_string(),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]], dtype=i64, device=cpu)");
}

TEST(Print, LongRowsWrap) {
  EXPECT_EQ(arange(0, 20).to_string(),
            "tensor([ 0.0000,  1.0000,  2.0000,  3.0000,  4.0000,  5.0000,  6.0000,  7.0000,\n"
            "         8.0000,  9.0000, 10.0000, 11.0000, 12.0000, 13.0000, 14.0000, 15.0000,\n"
            "        16.0000, 17.0000, 18.0000, 19.0000], dtype=f32, device=cpu)");
}

TEST(Print, SummarisesLargeTensors) {
  const Tensor v = arange(0, 2000, 1, DType::I64);
  EXPECT_EQ(v.to_string(),
            "tensor([   0,    1,    2, ..., 1997, 1998, 1999], dtype=i64, device=cpu)");
  EXPECT_EQ(v.flip({0}).to_string(),
            "tensor([1999, 1998, 1997, ...,    2,    1,    0], dtype=i64, device=cpu)");
  // 1000 elements are printed in full; 1001 are summarised.
  EXPECT_EQ(arange(0, 1000, 1, DType::I64).to_string().find("..."), std::string::npos);
  EXPECT_NE(arange(0, 1001, 1, DType::I64).to_string().find("..."), std::string::npos);
  EXPECT_EQ(arange(0, 1600, 1, DType::I64).reshape({40, 40}).to_string(),
            "tensor([[   0,    1,    2, ...,   37,   38,   39],\n"
            "        [  40,   41,   42, ...,   77,   78,   79],\n"
            "        [  80,   81,   82, ...,  117,  118,  119],\n"
            "        ...,\n"
            "        [1480, 1481, 1482, ..., 1517, 1518, 1519],\n"
            "        [1520, 1521, 1522, ..., 1557, 1558, 1559],\n"
            "        [1560, 1561, 1562, ..., 1597, 1598, 1599]], dtype=i64, device=cpu)");
  // Short dims of a large tensor are printed whole.
  EXPECT_EQ(arange(0, 2000, 1, DType::I64).reshape({2, 1000}).to_string(),
            "tensor([[   0,    1,    2, ...,  997,  998,  999],\n"
            "        [1000, 1001, 1002, ..., 1997, 1998, 1999]], dtype=i64, device=cpu)");
}

TEST(Print, HugeBroadcastViewIsNotCopied) {
  const auto t0 = std::chrono::steady_clock::now();
  // 2^40 elements (4 TiB as F32): printing must gather only the edges.
  const Tensor huge = Tensor::from_vector({7.f}, {1}).broadcast_to({int64_t(1) << 40});
  EXPECT_EQ(huge.to_string(),
            "tensor([7.0000, 7.0000, 7.0000, ..., 7.0000, 7.0000, 7.0000], dtype=f32, device=cpu)");
  const Tensor wide =
      arange(0, 3, 1, DType::I64).reshape({1, 3}).broadcast_to({int64_t(1) << 20, 3});
  EXPECT_EQ(wide.to_string(),
            "tensor([[0, 1, 2],\n"
            "        [0, 1, 2],\n"
            "        [0, 1, 2],\n"
            "        ...,\n"
            "        [0, 1, 2],\n"
            "        [0, 1, 2],\n"
            "        [0, 1, 2]], dtype=i64, device=cpu)");
  const Tensor square = full({1, 1}, 1.0).broadcast_to({int64_t(1) << 20, int64_t(1) << 20});
  const std::string s = square.to_string();
  EXPECT_EQ(s.rfind("tensor([[1.0000, 1.0000, 1.0000, ..., 1.0000, 1.0000, 1.0000],\n", 0), 0u)
      << s;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0);  // a copy of any of them would not finish, or not fit
}

TEST(Print, Var) {
  const Tensor t = Tensor::from_vector<float>({1, 2}, {2});
  EXPECT_EQ(Var(t).to_string(), "tensor([1.0000, 2.0000], dtype=f32, device=cpu)");
  const Var leaf(t, true);
  EXPECT_EQ(leaf.to_string(),
            "tensor([1.0000, 2.0000], dtype=f32, device=cpu, requires_grad=true)");
  EXPECT_EQ((leaf * 2.0).to_string(),
            "tensor([2.0000, 4.0000], dtype=f32, device=cpu, grad_fn=mul_scalar)");
  std::ostringstream os;
  os << leaf;
  EXPECT_EQ(os.str(), leaf.to_string());
  EXPECT_EQ(Var().to_string(), "Var(undefined)");
}

}  // namespace
}  // namespace numr
