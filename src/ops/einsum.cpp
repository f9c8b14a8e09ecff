// einsum's equation parser and Tensor front end (the evaluation is in einsum.h).
#include "ops/einsum.h"

#include <string>

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace einsum_detail {
namespace {

constexpr int kLetters = 52;  // 'A'-'Z' then 'a'-'z', the implicit output's order
constexpr int kNone = -1;

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return kNone;
}
char label_char(int l) { return l < 26 ? char('A' + l) : char('a' + (l - 26)); }

// One term's subscripts: letters, and where "..." stands (kNone if absent).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = kNone;  // index into letters where "..." stands
};

Term parse_term(std::string_view s, const std::string& what) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (s.substr(i, 3) != "...")
        fail<InvalidArgument>("einsum", "'.' in ", what, " is not part of \"...\"");
      if (t.ellipsis_at != kNone)
        fail<InvalidArgument>("einsum", "more than one \"...\" in ", what);
      t.ellipsis_at = int(t.letters.size());
      i += 2;
      continue;
    }
    const int l = letter_label(c);
    if (l == kNone)
      fail<InvalidArgument>("einsum", "invalid character '", c, "' in ", what,
                            "; subscripts are letters A-Z, a-z");
    t.letters.push_back(l);
  }
  return t;
}

}  // namespace

EinsumPlan plan_einsum(std::string_view equation, const std::vector<const Tensor*>& operands) {
  if (operands.empty()) fail<InvalidArgument>("einsum", "expected at least one operand");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->defined()) fail<InvalidArgument>("einsum", "operand ", i, " is undefined");
    ops::check_same("einsum", {operands[0], operands[i]});
    shapes.push_back(operands[i]->shape());
  }
  ops::check_dtype(OpId::einsum, operands[0]->dtype());
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos)
    fail<InvalidArgument>("einsum", "more than one \"->\" in \"", equation, "\"");
  const std::string lhs = eq.substr(0, arrow);
  if (lhs.find('-') != std::string::npos || lhs.find('>') != std::string::npos ||
      (arrow != std::string::npos && (eq.find('-', arrow + 2) != std::string::npos ||
                                      eq.find('>', arrow + 2) != std::string::npos)))
    fail<InvalidArgument>("einsum", "'-' and '>' may only appear together as \"->\" in \"",
                          equation, "\"");
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    const std::string part = lhs.substr(start, comma - start);
    terms.push_back(parse_term(part, "operand " + std::to_string(terms.size())));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    fail<InvalidArgument>("einsum", "the equation \"", equation, "\" has ", terms.size(),
                          " operand terms, but ", shapes.size(), " operands were given");

  // Broadcast "..." dims: right-aligned across operands, labels kLetters + position.
  size_t ell_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t nd = shapes[i].size(), nl = terms[i].letters.size();
    if (terms[i].ellipsis_at == kNone ? nd != nl : nd < nl)
      fail<InvalidArgument>("einsum", "operand ", i, " has ", nd, " dims but its subscripts name ",
                            terms[i].ellipsis_at == kNone ? "" : "at least ", nl);
    if (terms[i].ellipsis_at != kNone) ell_rank = std::max(ell_rank, nd - nl);
  }
  EinsumPlan plan;
  plan.size.assign(size_t(kLetters) + ell_rank, kNone);
  std::vector<int> seen_count(size_t(kLetters), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const Shape& shape = shapes[i];
    std::vector<int> labels;
    const size_t ne = t.ellipsis_at == kNone ? 0 : shape.size() - t.letters.size();
    for (size_t j = 0; j < t.letters.size(); ++j) {
      if (int(j) == t.ellipsis_at)
        for (size_t e = 0; e < ne; ++e) labels.push_back(kLetters + int(ell_rank - ne + e));
      labels.push_back(t.letters[j]);
      ++seen_count[size_t(t.letters[j])];
    }
    if (t.ellipsis_at == int(t.letters.size()))
      for (size_t e = 0; e < ne; ++e) labels.push_back(kLetters + int(ell_rank - ne + e));
    // Extents: a label's dims agree, or are 1 and broadcast; a label repeated in one
    // operand (a diagonal) needs equal extents.
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      int64_t& e = plan.size[size_t(l)];
      for (size_t q = 0; q < d; ++q)
        if (labels[q] == l && shape[q] != shape[d])
          fail<ShapeMismatch>("einsum", "subscript '", label_char(l), "' repeats in operand ", i,
                              " over dims of extents ", shape[q], " and ", shape[d]);
      if (e == kNone || e == 1) {
        e = shape[d];
      } else if (shape[d] != e && shape[d] != 1) {
        if (l < kLetters)
          fail<ShapeMismatch>("einsum", "subscript '", label_char(l), "' has extent ", e,
                              " in an earlier operand and ", shape[d], " in operand ", i);
        fail<BroadcastError>("einsum", "the \"...\" dims of operand ", i, " (", shape_str(shape),
                             ") do not broadcast with the others'");
      }
    }
    plan.inputs.push_back(std::move(labels));
  }

  if (arrow == std::string::npos) {
    // Implicit output: "..." then the letters seen exactly once, in A-Z, a-z order.
    for (size_t e = 0; e < ell_rank; ++e) plan.output.push_back(kLetters + int(e));
    for (int l = 0; l < kLetters; ++l)
      if (seen_count[size_t(l)] == 1) plan.output.push_back(l);
  } else {
    const Term out = parse_term(eq.substr(arrow + 2), "the output");
    for (size_t j = 0; j <= out.letters.size(); ++j) {
      if (int(j) == out.ellipsis_at)
        for (size_t e = 0; e < ell_rank; ++e) plan.output.push_back(kLetters + int(e));
      if (j == out.letters.size()) break;
      const int l = out.letters[j];
      if (seen_count[size_t(l)] == 0)
        fail<InvalidArgument>("einsum", "output subscript '", label_char(l),
                              "' appears in no operand");
      if (has(plan.output, l))
        fail<InvalidArgument>("einsum", "output subscript '", label_char(l), "' repeats");
      plan.output.push_back(l);
    }
  }
  Shape out_shape;
  for (int l : plan.output) out_shape.push_back(plan.size[size_t(l)]);
  checked_numel("einsum", out_shape);
  return plan;
}

Tensor diagonal_view(const Tensor& x, int64_t i, int64_t j) {
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t n = s[size_t(i)], stride = st[size_t(i)] + st[size_t(j)];
  s.erase(s.begin() + j);
  s.erase(s.begin() + i);
  st.erase(st.begin() + j);
  st.erase(st.begin() + i);
  s.push_back(n);
  st.push_back(stride);
  return Tensor(x.storage(), s, st, x.offset(), x.dtype());
}

}  // namespace einsum_detail

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  const OpScope scope("einsum");
  std::vector<const Tensor*> ps;
  for (const Tensor& x : operands) ps.push_back(&x);
  const einsum_detail::EinsumPlan plan = einsum_detail::plan_einsum(equation, ps);
  Tensor r = einsum_detail::run_einsum(plan, operands, einsum_detail::diagonal_view);
  // A single operand only permuted (or diagonal-viewed) would come back as a view of it.
  for (const Tensor& x : operands)
    if (r.storage() == x.storage()) return clone(r);
  return contiguous(r);
}

}  // namespace numr
