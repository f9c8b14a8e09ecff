// Argument checks, per-call draws and the rejection loop of the samplers.
#include "ops/random_common.h"

#include "core/op_scope.h"
#include "numr/error.h"
#include "numr/ops.h"
#include "ops/common.h"

namespace numr::random::detail {

Shape check_params(std::string_view op, std::initializer_list<const Tensor*> ps) {
  Shape shape;
  bool first = true;
  for (const Tensor* p : ps) {
    ops::check_defined(op, *p);
    if (!is_floating(p->dtype()))
      fail<UnsupportedDType>(op, "parameters need a floating dtype, got ", dtype_name(p->dtype()));
    shape = first ? p->shape() : broadcast_shapes(op, shape, p->shape());
    first = false;
  }
  ops::check_same(op, ps);
  return shape;
}

DType work_dtype(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

Tensor prepare(const Tensor& p, const Shape& shape, DType dtype) {
  Tensor b = p.dtype() == dtype ? p : cast(p, dtype);
  return b.shape() == shape ? b.contiguous() : contiguous(broadcast_to(b, shape));
}

void require_all(std::string_view op, const Tensor& cond, std::string_view what) {
  if (cond.numel() == 0) return;
  if (!all(cond).item<bool>()) fail<InvalidArgument>(op, what);
}

// splitmix64's finaliser: distinct rounds give unrelated Philox keys.
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t round_seed(uint64_t seed, int round) {
  return round == 0 ? seed : mix64(seed ^ mix64(0x9E3779B97F4A7C15ull * uint64_t(round)));
}

Draws::Draws(Generator& gen, const Shape& shape, int draws_per_round, DType dtype, Device device)
    : seed_(gen.seed()),
      start_(0),
      numel_(shape_numel(shape)),
      draws_(draws_per_round),
      shape_(shape),
      dtype_(dtype),
      device_(device) {
  start_ = gen.advance(uint64_t(numel_) * uint64_t(draws_per_round));
}

Generator Draws::at(int round, int j) const {
  Generator g(round_seed(seed_, round));
  g.set_offset(start_ + uint64_t(j) * uint64_t(numel_));
  return g;
}

Tensor Draws::uniform(int round, int j) const {
  Generator g = at(round, j);
  return rand(shape_, dtype_, device_, g);
}

Tensor Draws::uniform_open(int round, int j) const { return uniform(round, j) + 1.0 / 33554432.0; }

Tensor Draws::normal(int round, int j) const {
  Generator g = at(round, j);
  return randn(shape_, dtype_, device_, g);
}

Tensor scalar_like(const Tensor& t, double v) { return full({}, v, t.dtype(), t.device()); }

Tensor rejection_loop(std::string_view op, Tensor init, Tensor done,
                      const std::function<std::pair<Tensor, Tensor>(int)>& propose) {
  Tensor out = std::move(init);
  // Acceptance probabilities are bounded away from 0, so this many rounds means NaN crept in.
  constexpr int kMaxRounds = 10000;
  for (int r = 0; r < kMaxRounds; ++r) {
    if (done.numel() == 0 || all(done).item<bool>()) return out;
    auto [cand, ok] = propose(r);
    const Tensor take = logical_and(ok, logical_not(done));
    out = where_cond(take, cand, out);
    done = logical_or(done, ok);
  }
  fail<InvalidArgument>(op, "rejection sampling did not finish in ", kMaxRounds, " rounds");
}

}  // namespace numr::random::detail
