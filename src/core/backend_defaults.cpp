// What a backend that implements only the required core answers and does.
#include <algorithm>

#include "core/backend.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr {
namespace {

[[noreturn]] void no_kernel(const Backend& be, std::string_view family) {
  fail<BackendLimitation>(current_op(family), "the ", be.name(), " backend has no ", family,
                          " kernels (the front end should have run the composition)");
}

}  // namespace

bool Backend::supports(OpId op, DType t) const {
  if (is_complex(t) && complex_elementwise_op(op)) return false;
  return !op_info(op).composed;
}

bool complex_elementwise_op(OpId op) {
  return op == OpId::mul || op == OpId::div || op == OpId::abs;
}

bool has_listed_kernel(OpId op, std::span<const OpId> kernels) {
  const OpInfo& info = op_info(op);
  if (!info.composed) return true;
  switch (info.family) {
    case OpFamily::ActMul:
    case OpFamily::ActBwd:
    case OpFamily::ActMulBwd: return true;
    default: return std::find(kernels.begin(), kernels.end(), op) != kernels.end();
  }
}

void Backend::along_axis(const AxisCall&) { no_kernel(*this, "along_axis"); }
void Backend::matmul(const MatmulCall&) { no_kernel(*this, "matmul"); }
void Backend::matmul_epilogue(const GemmEpilogueCall&) { no_kernel(*this, "matmul_epilogue"); }
void Backend::bias_activation_bwd(const BiasActBwdCall&) {
  no_kernel(*this, "bias_activation_bwd");
}
void Backend::row_norm(const RowNormCall&) { no_kernel(*this, "row_norm"); }
void Backend::row_norm_bwd(const RowNormBwdCall&) { no_kernel(*this, "row_norm_bwd"); }
void Backend::sort_rows(const SortCall&) { no_kernel(*this, "sort_rows"); }
void Backend::search_sorted(const SearchSortedCall&) { no_kernel(*this, "search_sorted"); }
void Backend::index_gather(const GatherCall&) { no_kernel(*this, "index_gather"); }
void Backend::index_scatter(const ScatterCall&) { no_kernel(*this, "index_scatter"); }
void Backend::attention(const AttentionCall&) { no_kernel(*this, "attention"); }
void Backend::attention_bwd(const AttentionBwdCall&) { no_kernel(*this, "attention_bwd"); }

}  // namespace numr
