// Argument checks of the shape and misc ops (roll, repeat_interleave, meshgrid,
// slice_assign, masked_fill, dropout), shared by the Tensor front ends and the Var forms,
// so both raise the same errors before anything is computed.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "numr/random.h"
#include "numr/tensor.h"

namespace numr::ops {

// roll's dims wrapped; empty for the flattened form (one shift, no dims).
std::vector<int64_t> roll_dims(const Tensor& x, const std::vector<int64_t>& shifts,
                               const std::vector<int64_t>& dims);
// repeat_interleave's dim wrapped; nullopt when x is to be flattened first.
std::optional<int64_t> repeat_interleave_dim(const Tensor& x, int64_t repeats,
                                             std::optional<int64_t> dim);
// repeat_interleave with a tensor of repeats (I64 or I32, 0-d or 1-D of length 1 or of the
// repeated dim's length, each >= 0): the dim (nullopt: x is flattened first) and the I64
// index on x's device that index_select takes along it. The repeats are read to the host.
struct RepeatIndex {
  std::optional<int64_t> dim;
  Tensor index;
};
RepeatIndex repeat_interleave_index(const Tensor& x, const Tensor& repeats,
                                    std::optional<int64_t> dim);
// Checks the list and the indexing; returns whether it is "xy".
bool meshgrid_xy(const std::vector<const Tensor*>& xs, std::string_view indexing);
// slice_assign's dim wrapped and start made non-negative.
struct SliceAt {
  int64_t dim, start;
};
SliceAt slice_assign_at(const Tensor& x, const Tensor& src, int64_t dim, int64_t start);
// masked_fill's mask broadcast to x's shape, after checking it and value.
Tensor masked_fill_mask(const Tensor& x, const Tensor& mask, double value);
// Checks x and p (in [0, 1]).
void check_dropout(const Tensor& x, double p);
// The kept elements: 1 where rand(x.shape(), F32, x.device(), gen) >= p, 0 elsewhere, in
// x's dtype (the caller scales by 1 / (1 - p) once, after the mask: one rounding). Draws
// x.numel() numbers from gen. 0 < p < 1.
Tensor dropout_mask(const Tensor& x, double p, Generator& gen);

}  // namespace numr::ops
