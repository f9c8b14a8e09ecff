// einsum: the equation parsed once into labelled dims (EinsumPlan), then evaluated over
// T = Tensor or Var by one template, so the Var form's gradient is that of the ops it runs
// (diagonal views, sums, permutes, reshapes, batched matmuls), to any order.
//
// Evaluation: each operand first takes the diagonal of every label it repeats and sums
// the labels no other operand and not the output has; then the operands are contracted
// left to right, each pair as one batched matmul [batch, M, K] @ [batch, K, N] (labels in
// both and still needed after are batch dims, labels in both and needed nowhere after are
// K); last, the result is permuted into the output's order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "numr/tensor.h"

namespace numr::einsum_detail {

// A label is a subscript letter (0-51) or one dim of the broadcast "..." (52 on).
struct EinsumPlan {
  std::vector<std::vector<int>> inputs;  // each operand's label per dim (may repeat)
  std::vector<int> output;               // the result's labels, in order
  std::vector<int64_t> size;             // each label's extent (the largest of its dims)
};

// Checks the operands (defined, one dtype einsum takes, one device), parses the equation
// and checks it against their shapes; errors name "einsum".
EinsumPlan plan_einsum(std::string_view equation, const std::vector<const Tensor*>& operands);

// The diagonal of dims i < j (equal extents) as a view of x, appended as the last dim.
Tensor diagonal_view(const Tensor& x, int64_t i, int64_t j);

template <class T>
struct Labelled {
  T t;
  std::vector<int> labels;
};

inline bool has(const std::vector<int>& v, int l) {
  return std::find(v.begin(), v.end(), l) != v.end();
}

// Sums the dims of x whose label is not in `keep`.
template <class T>
Labelled<T> sum_unneeded(Labelled<T> x, const std::vector<int>& keep) {
  std::vector<int64_t> dims;
  std::vector<int> left;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (has(keep, x.labels[i]))
      left.push_back(x.labels[i]);
    else
      dims.push_back(int64_t(i));
  }
  if (dims.empty()) return x;
  return {sum(x.t, dims), left};
}

// x permuted to the labels `order` and broadcast to each label's full extent.
template <class T>
T arrange(const Labelled<T>& x, const std::vector<int>& order, const EinsumPlan& plan) {
  std::vector<int64_t> perm;
  Shape full;
  bool broadcast = false;
  for (int l : order) {
    const size_t i = size_t(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin());
    perm.push_back(int64_t(i));
    full.push_back(plan.size[size_t(l)]);
    broadcast = broadcast || x.t.shape()[i] != full.back();
  }
  T r = permute(x.t, perm);
  return broadcast ? broadcast_to(r, full) : r;
}

inline int64_t product(const std::vector<int>& labels, const EinsumPlan& plan) {
  int64_t p = 1;
  for (int l : labels) p *= plan.size[size_t(l)];
  return p;
}

// a and b contracted over the labels they share that `needed` lacks, as one batched matmul.
template <class T>
Labelled<T> contract(Labelled<T> a, Labelled<T> b, const std::vector<int>& needed,
                     const EinsumPlan& plan) {
  std::vector<int> keep_a = needed, keep_b = needed;
  keep_a.insert(keep_a.end(), b.labels.begin(), b.labels.end());
  keep_b.insert(keep_b.end(), a.labels.begin(), a.labels.end());
  a = sum_unneeded(std::move(a), keep_a);
  b = sum_unneeded(std::move(b), keep_b);
  std::vector<int> batch, m, k, n;
  for (int l : a.labels) {
    if (!has(b.labels, l))
      m.push_back(l);
    else if (has(needed, l))
      batch.push_back(l);
    else
      k.push_back(l);
  }
  for (int l : b.labels)
    if (!has(a.labels, l)) n.push_back(l);
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), m.begin(), m.end());
  a_order.insert(a_order.end(), k.begin(), k.end());
  b_order.insert(b_order.end(), k.begin(), k.end());
  b_order.insert(b_order.end(), n.begin(), n.end());
  const int64_t nb = product(batch, plan), nm = product(m, plan), nk = product(k, plan),
                nn = product(n, plan);
  const T a3 = reshape(arrange(a, a_order, plan), Shape{nb, nm, nk});
  const T b3 = reshape(arrange(b, b_order, plan), Shape{nb, nk, nn});
  std::vector<int> labels = batch;
  labels.insert(labels.end(), m.begin(), m.end());
  labels.insert(labels.end(), n.begin(), n.end());
  Shape shape;
  for (int l : labels) shape.push_back(plan.size[size_t(l)]);
  return {reshape(matmul(a3, b3), shape), labels};
}

// `diagonal(x, i, j)` (dims i < j of equal extent removed, their diagonal appended last)
// is found for T by argument-dependent lookup in the caller's file.
template <class T, class Diagonal>
T run_einsum(const EinsumPlan& plan, const std::vector<T>& operands, Diagonal diagonal) {
  const size_t count = operands.size();
  std::vector<Labelled<T>> ops;
  for (size_t i = 0; i < count; ++i) {
    Labelled<T> x{operands[i], plan.inputs[i]};
    // Each repeated label: its first two dims become their diagonal, until none repeats.
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < x.labels.size() && !again; ++p)
        for (size_t q = p + 1; q < x.labels.size() && !again; ++q)
          if (x.labels[p] == x.labels[q]) {
            const int l = x.labels[p];
            x.t = diagonal(x.t, int64_t(p), int64_t(q));
            x.labels.erase(x.labels.begin() + int64_t(q));
            x.labels.erase(x.labels.begin() + int64_t(p));
            x.labels.push_back(l);
            again = true;
          }
    }
    ops.push_back(std::move(x));
  }
  // needed_after[i]: the labels of the output and of operands after i.
  std::vector<std::vector<int>> needed_after(count, plan.output);
  for (size_t i = count - 1; i-- > 0;) {
    needed_after[i] = needed_after[i + 1];
    needed_after[i].insert(needed_after[i].end(), ops[i + 1].labels.begin(),
                           ops[i + 1].labels.end());
  }
  Labelled<T> acc = sum_unneeded(std::move(ops[0]), needed_after[0]);
  for (size_t i = 1; i < count; ++i)
    acc = contract(std::move(acc), std::move(ops[i]), needed_after[i], plan);
  acc = sum_unneeded(std::move(acc), plan.output);
  return arrange(acc, plan.output, plan);
}

}  // namespace numr::einsum_detail
