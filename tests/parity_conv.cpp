// Convolution and distance (conv1d, conv2d, depthwise_conv2d, conv_transpose1d, cdist,
// pdist) for every float dtype, with strides, padding, dilation, groups, K = 1, outputs of
// length 1 and non-contiguous inputs, against the definitions written here as float64
// loops; and against NumPy (tests/data/conv_oracle.inc, scripts/conv_table.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::Layout;
using test::RefTensor;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor input(const Shape& shape, DType t, Device dev, Layout layout, uint64_t seed) {
  return test::make_input(shape, t, dev, test::unit_spec(layout), seed);
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::F16: return 0x1p-11;
    case DType::BF16: return 0x1p-8;
    case DType::F32: return 0x1p-24;
    default: return 0x1p-53;
  }
}

// A sum of `terms` products of operands below 1 through the GEMM, then the bias added in
// the dtype: one more rounding of a value below terms + 1.
test::Tolerance conv_tolerance(DType t, int64_t terms) {
  test::Tolerance tol = test::gemm_tolerance(t, terms + 1);
  tol.atol += 2.0 * unit_roundoff(t) * double(terms + 1);
  return tol;
}

struct ConvArgs {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

// The definition: y[n, o, i, j] = b[o] + sum over c of o's group, kh, kw of
// x[n, c, i sh - ph + kh dh, j sw - pw + kw dw] w[o, c, kh, kw] (zero outside x).
// x is [N, C, H, W], w [O, C/G, KH, KW]; conv1d's case has H = KH = 1.
RefTensor ref_conv2d(const RefTensor& x, const RefTensor& w, const RefTensor* b,
                     const ConvArgs& a) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t ho = (h + 2 * a.padding[0] - a.dilation[0] * (kh - 1) - 1) / a.stride[0] + 1;
  const int64_t wo = (wd + 2 * a.padding[1] - a.dilation[1] * (kw - 1) - 1) / a.stride[1] + 1;
  const int64_t og = o / a.groups;
  RefTensor y{{n, o, ho, wo}, {}};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double s = b ? b->v[size_t(oc)] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t r = i * a.stride[0] - a.padding[0] + p * a.dilation[0];
                const int64_t t = j * a.stride[1] - a.padding[1] + q * a.dilation[1];
                if (r < 0 || r >= h || t < 0 || t >= wd) continue;
                const int64_t cin = (oc / og) * cg + ci;
                s += x.v[size_t(((in * c + cin) * h + r) * wd + t)] *
                     w.v[size_t(((oc * cg + ci) * kh + p) * kw + q)];
              }
          y.v.push_back(s);
        }
  return y;
}

// The definition of the transposed convolution: each x[n, c, l] adds x w[c, oc, k] to
// y[n, g C_out/G + oc, l stride - padding + k dilation] (g: c's group).
RefTensor ref_conv_transpose1d(const RefTensor& x, const RefTensor& w, const RefTensor* b,
                               int64_t stride, int64_t padding, int64_t output_padding,
                               int64_t groups, int64_t dilation) {
  const int64_t n = x.shape[0], cin = x.shape[1], len = x.shape[2];
  const int64_t cog = w.shape[1], k = w.shape[2], cig = cin / groups;
  const int64_t lo = (len - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1;
  const int64_t cout = cog * groups;
  RefTensor y{{n, cout, lo}, std::vector<double>(size_t(n * cout * lo), 0.0)};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < cout; ++oc)
      for (int64_t t = 0; t < lo; ++t)
        y.v[size_t((in * cout + oc) * lo + t)] = b ? b->v[size_t(oc)] : 0.0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t l = 0; l < len; ++l)
        for (int64_t oc = 0; oc < cog; ++oc)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t t = l * stride - padding + j * dilation;
            if (t < 0 || t >= lo) continue;
            const int64_t out_c = (c / cig) * cog + oc;
            y.v[size_t((in * cout + out_c) * lo + t)] +=
                x.v[size_t((in * cin + c) * len + l)] * w.v[size_t((c * cog + oc) * k + j)];
          }
  return y;
}

// x with a batch dim of 1 (and H = 1 for conv1d) as ref_conv2d takes it.
RefTensor reshaped(RefTensor r, Shape s) {
  r.shape = std::move(s);
  return r;
}

std::string check_result(const Tensor& got, const RefTensor& want, const test::Tolerance& tol,
                         const std::vector<const Tensor*>& inputs) {
  std::string msg = test::compare(got, want, tol);
  if (msg.empty() && !got.is_contiguous()) msg = "result is not contiguous";
  for (const Tensor* x : inputs)
    if (msg.empty() && x->defined() && got.storage() == x->storage())
      msg = "result shares an input's memory";
  return msg;
}

// ---- conv1d ----
struct Conv1dCase {
  Shape x, w;
  bool bias;
  int64_t stride, padding, dilation, groups;
  Layout layout;
};

TEST(ParityConv, Conv1d) {
  test::for_each_case(OpId::conv1d, test::dtypes_of(OpId::conv1d), [](DType t, Device dev) {
    const std::vector<Conv1dCase> cases = {
        {{2, 3, 8}, {4, 3, 3}, true, 1, 0, 1, 1, Layout::Contiguous},
        {{2, 3, 8}, {4, 3, 3}, false, 2, 1, 1, 1, Layout::Transposed},
        {{1, 4, 11}, {6, 2, 3}, true, 1, 2, 2, 2, Layout::Strided},
        {{3, 4, 9}, {4, 1, 2}, true, 3, 1, 3, 4, Layout::Flipped},      // depthwise
        {{2, 5, 6}, {3, 5, 1}, true, 1, 0, 1, 1, Layout::Transposed},   // K = 1
        {{2, 2, 5}, {3, 2, 5}, true, 1, 0, 1, 1, Layout::Contiguous},   // output length 1
        {{1, 2, 4}, {2, 2, 3}, false, 5, 2, 2, 1, Layout::Contiguous},  // length 1 by stride
        {{4, 7}, {5, 4, 2}, true, 2, 1, 1, 1, Layout::Transposed},      // unbatched
        {{2, 6, 40}, {9, 2, 4}, true, 3, 3, 2, 3, Layout::Strided},
    };
    for (const Conv1dCase& c : cases) {
      const Tensor x = input(c.x, t, dev, c.layout, 1);
      const Tensor w =
          input(c.w, t, dev, c.layout == Layout::Flipped ? c.layout : Layout::Contiguous, 2);
      const Tensor b = c.bias ? input({c.w[0]}, t, dev, Layout::Contiguous, 3) : Tensor();
      const bool batched = c.x.size() == 3;
      const int64_t n = batched ? c.x[0] : 1;
      const RefTensor xr = reshaped(test::to_ref(x), {n, c.x[c.x.size() - 2], 1, c.x.back()});
      const RefTensor wr = reshaped(test::to_ref(w), {c.w[0], c.w[1], 1, c.w[2]});
      const RefTensor br = c.bias ? test::to_ref(b) : RefTensor{};
      RefTensor want = ref_conv2d(xr, wr, c.bias ? &br : nullptr,
                                  {{1, c.stride}, {0, c.padding}, {1, c.dilation}, c.groups});
      want.shape = batched ? Shape{n, c.w[0], want.shape[3]} : Shape{c.w[0], want.shape[3]};
      const Tensor got = conv1d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
      const std::string msg =
          check_result(got, want, conv_tolerance(t, c.w[1] * c.w[2]), {&x, &w, &b});
      if (!msg.empty())
        return "conv1d of " + shape_str(c.x) + " with " + shape_str(c.w) + ", stride " +
               std::to_string(c.stride) + ", padding " + std::to_string(c.padding) + ", dilation " +
               std::to_string(c.dilation) + ", groups " + std::to_string(c.groups) + ": " + msg;
    }
    return std::string();
  });
}

// ---- conv2d and depthwise_conv2d ----
struct Conv2dCase {
  Shape x, w;
  bool bias;
  Pair stride, padding, dilation;
  int64_t groups;
  Layout layout;
};

std::vector<Conv2dCase> conv2d_cases() {
  return {
      {{2, 3, 6, 5}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1, Layout::Contiguous},
      {{1, 4, 7, 8}, {6, 2, 3, 2}, true, {2, 3}, {1, 2}, {2, 1}, 2, Layout::Transposed},
      {{2, 3, 5, 5}, {3, 1, 2, 2}, false, {1, 2}, {1, 0}, {1, 2}, 3, Layout::Strided},
      {{1, 2, 4, 4}, {5, 2, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1, Layout::Flipped},     // K = 1
      {{2, 2, 3, 4}, {3, 2, 3, 4}, true, {1, 1}, {0, 0}, {1, 1}, 1, Layout::Contiguous},  // 1x1
      {{3, 6, 5}, {4, 3, 2, 3}, true, {2, 1}, {1, 1}, {1, 2}, 1, Layout::Transposed},  // unbatched
      {{1, 4, 12, 10}, {8, 2, 3, 3}, true, {2, 2}, {2, 1}, {2, 3}, 2, Layout::Strided},
  };
}

std::string run_conv2d(const Conv2dCase& c, DType t, Device dev, bool depthwise) {
  const Tensor x = input(c.x, t, dev, c.layout, 4);
  const Tensor w = input(c.w, t, dev, Layout::Contiguous, 5);
  const Tensor b = c.bias ? input({c.w[0]}, t, dev, Layout::Contiguous, 6) : Tensor();
  const bool batched = c.x.size() == 4;
  const Shape xs = batched ? c.x : Shape{1, c.x[0], c.x[1], c.x[2]};
  const RefTensor xr = reshaped(test::to_ref(x), xs), wr = test::to_ref(w);
  const RefTensor br = c.bias ? test::to_ref(b) : RefTensor{};
  RefTensor want = ref_conv2d(xr, wr, c.bias ? &br : nullptr,
                              {{c.stride[0], c.stride[1]},
                               {c.padding[0], c.padding[1]},
                               {c.dilation[0], c.dilation[1]},
                               c.groups});
  if (!batched) want.shape.erase(want.shape.begin());
  const Tensor got = depthwise ? depthwise_conv2d(x, w, b, c.stride, c.padding, c.dilation)
                               : conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  const std::string msg =
      check_result(got, want, conv_tolerance(t, c.w[1] * c.w[2] * c.w[3]), {&x, &w, &b});
  if (msg.empty()) return msg;
  return std::string(depthwise ? "depthwise_conv2d" : "conv2d") + " of " + shape_str(c.x) +
         " with " + shape_str(c.w) + ", stride " + shape_str({c.stride[0], c.stride[1]}) +
         ", padding " + shape_str({c.padding[0], c.padding[1]}) + ", dilation " +
         shape_str({c.dilation[0], c.dilation[1]}) + ", groups " + std::to_string(c.groups) + ": " +
         msg;
}

TEST(ParityConv, Conv2d) {
  test::for_each_case(OpId::conv2d, test::dtypes_of(OpId::conv2d), [](DType t, Device dev) {
    for (const Conv2dCase& c : conv2d_cases()) {
      const std::string msg = run_conv2d(c, t, dev, false);
      if (!msg.empty()) return msg;
    }
    return std::string();
  });
}

TEST(ParityConv, DepthwiseConv2d) {
  test::for_each_case(
      OpId::depthwise_conv2d, test::dtypes_of(OpId::depthwise_conv2d), [](DType t, Device dev) {
        const std::vector<Conv2dCase> cases = {
            {{2, 3, 6, 5}, {3, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 3, Layout::Contiguous},
            {{1, 2, 7, 6},
             {6, 1, 2, 3},
             false,
             {2, 1},
             {0, 2},
             {2, 1},
             2,
             Layout::Transposed},  // multiplier 3
            {{4, 5, 5},
             {8, 1, 1, 2},
             true,
             {1, 3},
             {0, 1},
             {1, 2},
             4,
             Layout::Strided},  // unbatched
        };
        for (const Conv2dCase& c : cases) {
          const std::string msg = run_conv2d(c, t, dev, true);
          if (!msg.empty()) return msg;
        }
        return std::string();
      });
}

// ---- conv_transpose1d ----
struct TransposeCase {
  Shape x, w;
  bool bias;
  int64_t stride, padding, output_padding, groups, dilation;
  Layout layout;
};

TEST(ParityConv, ConvTranspose1d) {
  test::for_each_case(
      OpId::conv_transpose1d, test::dtypes_of(OpId::conv_transpose1d), [](DType t, Device dev) {
        const std::vector<TransposeCase> cases = {
            {{2, 3, 5}, {3, 4, 3}, true, 1, 0, 0, 1, 1, Layout::Contiguous},
            {{2, 3, 5}, {3, 2, 3}, true, 2, 1, 1, 1, 1, Layout::Transposed},
            {{1, 4, 6}, {4, 3, 2}, false, 3, 2, 2, 2, 2, Layout::Strided},
            {{3, 2, 4}, {2, 1, 2}, true, 2, 2, 1, 2, 1, Layout::Flipped},     // crops
            {{2, 3, 1}, {3, 2, 1}, true, 4, 0, 0, 1, 1, Layout::Contiguous},  // K = 1, length 1
            {{4, 6}, {4, 2, 3}, true, 2, 1, 0, 2, 1, Layout::Transposed},     // unbatched
            {{1, 6, 9}, {6, 2, 5}, true, 3, 4, 2, 3, 2, Layout::Strided},
        };
        for (const TransposeCase& c : cases) {
          const Tensor x = input(c.x, t, dev, c.layout, 7);
          const Tensor w = input(c.w, t, dev, Layout::Contiguous, 8);
          const int64_t cout = c.w[1] * c.groups;
          const Tensor b = c.bias ? input({cout}, t, dev, Layout::Contiguous, 9) : Tensor();
          const bool batched = c.x.size() == 3;
          const RefTensor xr =
              batched ? test::to_ref(x) : reshaped(test::to_ref(x), {1, c.x[0], c.x[1]});
          const RefTensor br = c.bias ? test::to_ref(b) : RefTensor{};
          RefTensor want =
              ref_conv_transpose1d(xr, test::to_ref(w), c.bias ? &br : nullptr, c.stride, c.padding,
                                   c.output_padding, c.groups, c.dilation);
          if (!batched) want.shape.erase(want.shape.begin());
          const Tensor got = conv_transpose1d(x, w, b, c.stride, c.padding, c.output_padding,
                                              c.groups, c.dilation);
          const int64_t terms = (c.x[c.x.size() - 2] / c.groups) * c.w[2];
          const std::string msg = check_result(got, want, conv_tolerance(t, terms), {&x, &w, &b});
          if (!msg.empty())
            return "conv_transpose1d of " + shape_str(c.x) + " with " + shape_str(c.w) +
                   ", stride " + std::to_string(c.stride) + ", padding " +
                   std::to_string(c.padding) + ", output_padding " +
                   std::to_string(c.output_padding) + ", groups " + std::to_string(c.groups) +
                   ", dilation " + std::to_string(c.dilation) + ": " + msg;
        }
        return std::string();
      });
}

// ---- cdist and pdist ----
// The definition: (sum |a_k - b_k|^p)^(1/p), max for p = inf, a count for p = 0.
double ref_distance(const double* a, const double* b, int64_t m, double p) {
  double s = 0.0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(a[k] - b[k]);
    if (p == 0.0)
      s += d != 0.0 ? 1.0 : 0.0;
    else if (std::isinf(p))
      s = std::max(s, d);
    else
      s += std::pow(d, p);
  }
  return p == 0.0 || std::isinf(p) ? s : std::pow(s, 1.0 / p);
}

// Each coordinate difference rounds once in the dtype (relative u), which |.|^p turns into
// p u and the root back into u; the power, the sum and the root round once more each.
test::Tolerance distance_tolerance(DType t, int64_t m, double p) {
  test::Tolerance tol = test::accumulation_tolerance(t, m);
  const double u = unit_roundoff(t);
  if (p == 0.0) return {0.0, 0.0, 0.0};  // a count of exactly computed differences
  tol.rtol += std::isinf(p) ? 2.0 * u : (3.0 + 2.0 / std::min(p, 1.0)) * u;
  tol.rel_norm += tol.rtol;
  return tol;
}

// x1 [B1.., P, M] and x2 [B2.., R, M], batch dims broadcast.
RefTensor ref_cdist(const RefTensor& a, const RefTensor& b, double p) {
  const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const Shape batch = broadcast_shapes("ref", ba, bb);
  const int64_t pr = a.shape[a.shape.size() - 2], r = b.shape[b.shape.size() - 2];
  const int64_t m = a.shape.back();
  Shape out = batch;
  out.push_back(pr);
  out.push_back(r);
  RefTensor y{out, {}};
  const int64_t nb = shape_numel(batch);
  for (int64_t k = 0; k < nb; ++k) {
    // The batch index in a's and b's own (broadcast) dims.
    int64_t ia = 0, ib = 0, rest = k, sa = 1, sb = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      const size_t da = d + ba.size() - batch.size(), db = d + bb.size() - batch.size();
      if (d + ba.size() >= batch.size()) {
        ia += (ba[da] == 1 ? 0 : idx) * sa;
        sa *= ba[da];
      }
      if (d + bb.size() >= batch.size()) {
        ib += (bb[db] == 1 ? 0 : idx) * sb;
        sb *= bb[db];
      }
    }
    for (int64_t i = 0; i < pr; ++i)
      for (int64_t j = 0; j < r; ++j)
        y.v.push_back(
            ref_distance(a.v.data() + (ia * pr + i) * m, b.v.data() + (ib * r + j) * m, m, p));
  }
  return y;
}

struct CdistCase {
  Shape x1, x2;
  double p;
  Layout layout;
};

TEST(ParityConv, Cdist) {
  test::for_each_case(OpId::cdist, test::dtypes_of(OpId::cdist), [](DType t, Device dev) {
    const std::vector<CdistCase> cases = {
        {{4, 3}, {5, 3}, 2.0, Layout::Contiguous},
        {{4, 3}, {5, 3}, 1.0, Layout::Transposed},
        {{2, 3, 6}, {5, 6}, 3.0, Layout::Strided},
        {{3, 4}, {2, 1, 6, 4}, 0.5, Layout::Flipped},
        {{4, 5}, {3, 5}, kInf, Layout::Transposed},
        {{4, 5}, {3, 5}, 0.0, Layout::Contiguous},
        {{1, 7}, {1, 7}, 2.0, Layout::Contiguous},
        {{3, 0}, {2, 0}, 2.0, Layout::Contiguous},
        {{3, 0}, {2, 0}, kInf, Layout::Contiguous},
        {{300, 8}, {40, 8}, 2.0, Layout::Strided},  // through the differences, as asked
        {{2, 1, 3, 2}, {4, 5, 2}, 1.5, Layout::Contiguous},
    };
    for (const CdistCase& c : cases) {
      const Tensor a = input(c.x1, t, dev, c.layout, 10);
      const Tensor b = input(c.x2, t, dev, Layout::Contiguous, 11);
      const RefTensor want = ref_cdist(test::to_ref(a), test::to_ref(b), c.p);
      const std::string msg = check_result(cdist(a, b, c.p, CdistCompute::Differences), want,
                                           distance_tolerance(t, c.x1.back(), c.p), {&a, &b});
      if (!msg.empty())
        return "cdist of " + shape_str(c.x1) + " and " + shape_str(c.x2) + ", p " +
               std::to_string(c.p) + ": " + msg;
    }
    // Rows equal to rows of the other operand are at distance exactly 0.
    const Tensor a = input({3, 5}, t, dev, Layout::Contiguous, 12);
    const Tensor b = cat({input({2, 5}, t, dev, Layout::Contiguous, 13), a}, 0);
    for (double p : {2.0, 1.0, 0.5, 3.0, kInf, 0.0}) {
      const RefTensor d = test::to_ref(cdist(a, b, p, CdistCompute::Differences));
      for (int64_t i = 0; i < 3; ++i)
        if (d.v[size_t(i * 5 + 2 + i)] != 0.0)
          return "cdist p " + std::to_string(p) + ": identical rows at distance " +
                 std::to_string(d.v[size_t(i * 5 + 2 + i)]);
    }
    return std::string();
  });
}

// p = 2 through the GEMM: d^2 = |a|^2 + |b|^2 - 2 a.b carries an error e of at most about
// (m + 2) u (|a| + |b|)^2 (each of the three terms rounds through m products and sums), and
// |sqrt(d^2 + e) - d| <= min(|e| / d, sqrt|e|); the root rounds once more.
std::string check_cdist_matmul(const Tensor& got, const RefTensor& a, const RefTensor& b,
                               const RefTensor& want, DType t) {
  const RefTensor g = test::to_ref(got);
  if (g.shape != want.shape)
    return "shape " + shape_str(g.shape) + ", want " + shape_str(want.shape);
  const int64_t pr = a.shape[0], r = b.shape[0], m = a.shape[1];
  // F16 and BF16 compute in F32 and round once at the end.
  const double u = unit_roundoff(DType::F32), u_out = unit_roundoff(t);
  for (int64_t i = 0; i < pr; ++i)
    for (int64_t j = 0; j < r; ++j) {
      double na = 0.0, nb = 0.0;
      for (int64_t k = 0; k < m; ++k) {
        na += a.v[size_t(i * m + k)] * a.v[size_t(i * m + k)];
        nb += b.v[size_t(j * m + k)] * b.v[size_t(j * m + k)];
      }
      const double e = double(m + 2) * u * std::pow(std::sqrt(na) + std::sqrt(nb), 2);
      const double w = want.v[size_t(i * r + j)], v = g.v[size_t(i * r + j)];
      const double bound = std::min(w > 0.0 ? e / w : kInf, std::sqrt(e)) + 2.0 * u_out * w;
      if (!(std::fabs(v - w) <= bound))
        return "element [" + std::to_string(i) + ", " + std::to_string(j) + "] " +
               std::to_string(v) + ", want " + std::to_string(w) + " within " +
               std::to_string(bound);
    }
  return std::string();
}

TEST(ParityConv, CdistThroughTheGemm) {
  test::for_each_case(OpId::cdist, test::dtypes_of(OpId::cdist), [](DType t, Device dev) {
    for (const auto& [x1, x2, compute] : std::vector<std::tuple<Shape, Shape, CdistCompute>>{
             {{300, 8}, {40, 8}, CdistCompute::MatmulIfLarge},
             {{26, 3}, {2, 3}, CdistCompute::MatmulIfLarge},
             {{4, 5}, {3, 5}, CdistCompute::Matmul},
             {{5, 0}, {3, 0}, CdistCompute::Matmul}}) {
      const Tensor a = input(x1, t, dev, Layout::Transposed, 17);
      const Tensor b = input(x2, t, dev, Layout::Contiguous, 18);
      const RefTensor ar = test::to_ref(a), br = test::to_ref(b);
      const std::string msg =
          check_cdist_matmul(cdist(a, b, 2.0, compute), ar, br, ref_cdist(ar, br, 2.0), t);
      if (!msg.empty()) return "cdist of " + shape_str(x1) + " and " + shape_str(x2) + ": " + msg;
    }
    return std::string();
  });
}

TEST(ParityConv, Pdist) {
  test::for_each_case(OpId::pdist, test::dtypes_of(OpId::pdist), [](DType t, Device dev) {
    for (const auto& [shape, p, layout] :
         std::vector<std::tuple<Shape, double, Layout>>{{{5, 3}, 2.0, Layout::Contiguous},
                                                        {{4, 6}, 1.0, Layout::Transposed},
                                                        {{6, 2}, kInf, Layout::Strided},
                                                        {{3, 4}, 0.5, Layout::Flipped},
                                                        {{2, 3}, 0.0, Layout::Contiguous},
                                                        {{1, 3}, 2.0, Layout::Contiguous},
                                                        {{0, 3}, 2.0, Layout::Contiguous}}) {
      const Tensor x = input(shape, t, dev, layout, 14);
      const RefTensor xr = test::to_ref(x);
      const int64_t n = shape[0], m = shape[1];
      RefTensor want{{n * (n - 1) / 2 > 0 ? n * (n - 1) / 2 : 0}, {}};
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j)
          want.v.push_back(ref_distance(xr.v.data() + i * m, xr.v.data() + j * m, m, p));
      const std::string msg = check_result(pdist(x, p), want, distance_tolerance(t, m, p), {&x});
      if (!msg.empty())
        return "pdist of " + shape_str(shape) + ", p " + std::to_string(p) + ": " + msg;
    }
    return std::string();
  });
}

// ---- against NumPy ----
struct OracleCase {
  const char* op;
  Shape x, w, bias;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups, output_padding;
  double p;
  Shape out;
  int64_t terms;
  std::vector<double> values;
};
const std::vector<OracleCase>& oracle_cases() {
  static const std::vector<OracleCase> cases = {
#include "data/conv_oracle.inc"
  };
  return cases;
}

// Operand i as scripts/conv_table.py makes it: element k = ((7k + 3i) mod 11 - 5) / 8.
Tensor oracle_operand(size_t i, const Shape& shape, DType t, Device dev) {
  const int64_t n = shape_numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[size_t(k)] = double((k * 7 + int64_t(i) * 3) % 11 - 5) / 8.0;
  return Tensor::from_vector(v, shape).cast(t).to(dev);
}

std::string run_oracle(const OracleCase& c, DType t, Device dev) {
  const Tensor x = oracle_operand(0, c.x, t, dev), w = oracle_operand(1, c.w, t, dev);
  const Tensor b = c.bias.empty() ? Tensor() : oracle_operand(2, c.bias, t, dev);
  const std::string op = c.op;
  Tensor got;
  test::Tolerance tol = conv_tolerance(t, c.terms);
  if (op == "conv1d") {
    got = conv1d(x, w, b, c.stride[0], c.padding[0], c.dilation[0], c.groups);
  } else if (op == "conv2d") {
    got = conv2d(x, w, b, {c.stride[0], c.stride[1]}, {c.padding[0], c.padding[1]},
                 {c.dilation[0], c.dilation[1]}, c.groups);
  } else if (op == "conv_transpose1d") {
    got = conv_transpose1d(x, w, b, c.stride[0], c.padding[0], c.output_padding, c.groups,
                           c.dilation[0]);
  } else {
    got = cdist(x, w, c.p);
    tol = distance_tolerance(t, c.terms, c.p);
  }
  return test::compare(got, RefTensor{c.out, c.values}, tol);
}

#define NUMR_ORACLE_TEST(Name, op_id, name)                                                  \
  TEST(ParityConv, Name##AgainstNumPy) {                                                     \
    test::for_each_case(OpId::op_id, test::dtypes_of(OpId::op_id), [](DType t, Device dev) { \
      for (const OracleCase& c : oracle_cases()) {                                           \
        if (std::string(c.op) != name) continue;                                             \
        const std::string msg = run_oracle(c, t, dev);                                       \
        if (!msg.empty()) return std::string(c.op) + " " + shape_str(c.x) + ": " + msg;      \
      }                                                                                      \
      return std::string();                                                                  \
    });                                                                                      \
  }
NUMR_ORACLE_TEST(Conv1d, conv1d, "conv1d")
NUMR_ORACLE_TEST(Conv2d, conv2d, "conv2d")
NUMR_ORACLE_TEST(ConvTranspose1d, conv_transpose1d, "conv_transpose1d")
NUMR_ORACLE_TEST(Cdist, cdist, "cdist")
#undef NUMR_ORACLE_TEST

// A convolution whose outer product of x and w (2^32 elements) a broadcast multiply would
// materialise: through the matmul it needs only the columns and the result.
TEST(ConvOps, Conv2dContractsThroughTheGemm) {
  const Tensor x = full({1, 1, 1, 1}, 0.5, DType::F32).broadcast_to({2, 64, 32, 32});
  const Tensor w = full({1, 1, 1, 1}, 2.0, DType::F32).broadcast_to({64, 64, 3, 3});
  const Tensor y = conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  EXPECT_EQ(y.shape(), (Shape{2, 64, 32, 32}));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_EQ(v[0], 64.0f * 4.0f);           // a corner sees 2 x 2 of the 3 x 3 window
  EXPECT_EQ(v[size_t(33)], 64.0f * 9.0f);  // an inner position sees all of it
}

// Differences whose squares or cubes F16 cannot hold (300^2 > 65504) still give the
// distance rounded once.
TEST(ConvOps, CdistOfHalfComputesInFloat) {
  for (DType t : {DType::F16, DType::BF16}) {
    const Tensor a = Tensor::from_vector(std::vector<double>{300, -200, 0, 64}, {2, 2}).cast(t);
    const Tensor b = Tensor::from_vector(std::vector<double>{-100, 100, 1, 2}, {2, 2}).cast(t);
    for (double p : {2.0, 3.0, 1.0, kInf}) {
      const RefTensor want = ref_cdist(test::to_ref(a), test::to_ref(b), p);
      EXPECT_EQ(test::compare(cdist(a, b, p), want, distance_tolerance(t, 2, p)), "")
          << t << " p " << p;
    }
  }
}

// Enough rows that cdist works in two blocks of rows (2^24 differences at a time); the
// blocks meet without a seam.
TEST(ConvOps, CdistInBlocksOfRows) {
  const Tensor a = input({16400, 16}, DType::F32, Device::cpu(), Layout::Contiguous, 15);
  const Tensor b = input({64, 16}, DType::F32, Device::cpu(), Layout::Transposed, 16);
  const RefTensor want = ref_cdist(test::to_ref(a), test::to_ref(b), 1.0);
  EXPECT_EQ(test::compare(cdist(a, b, 1.0), want, distance_tolerance(DType::F32, 16, 1.0)), "");
}

}  // namespace
}  // namespace numr
