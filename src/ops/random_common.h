// Shared pieces of the samplers in namespace numr::random: argument checks, the draws of
// one call and the rejection loop (docs/semantics.md, "Random distributions").
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "numr/random.h"
#include "numr/tensor.h"

namespace numr::random::detail {

// Parameters of a floating dtype, defined, on one device with one dtype; returns their
// broadcast shape.
Shape check_params(std::string_view op, std::initializer_list<const Tensor*> ps);
// F64 stays F64; F32, F16 and BF16 are sampled in F32.
DType work_dtype(DType t);
// p broadcast to shape, contiguous, in dtype.
Tensor prepare(const Tensor& p, const Shape& shape, DType dtype);
// Throws InvalidArgument "[op] <what>" unless every element of cond (Bool) is true.
void require_all(std::string_view op, const Tensor& cond, std::string_view what);

// The counters of one sampling call. The call reserves draws_per_round * numel counters of
// the caller's generator (a data-independent advance); draw j of round r reads those at
// start + j * numel under the key round_seed(seed, r), so round 0 is the caller's stream and
// each later round an independent one.
class Draws {
 public:
  Draws(Generator& gen, const Shape& shape, int draws_per_round, DType dtype, Device device);
  Tensor uniform(int round, int j) const;       // [0, 1), 24 bits
  Tensor uniform_open(int round, int j) const;  // (0, 1): uniform + 2^-25
  Tensor normal(int round, int j) const;

 private:
  Generator at(int round, int j) const;
  uint64_t seed_, start_;
  int64_t numel_;
  int draws_;
  Shape shape_;
  DType dtype_;
  Device device_;
};
uint64_t round_seed(uint64_t seed, int round);

// Rounds of a rejection sampler: propose(r) returns (candidate, accepted) for every element;
// each element keeps its first accepted candidate. Elements where `done` is already true
// keep `init`. Runs until every element is accepted (checking on the host after each round).
Tensor rejection_loop(std::string_view op, Tensor init, Tensor done,
                      const std::function<std::pair<Tensor, Tensor>(int)>& propose);

// Scalars as 0-d tensors of t's dtype and device.
Tensor scalar_like(const Tensor& t, double v);

}  // namespace numr::random::detail
