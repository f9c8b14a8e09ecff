// What a backend that implements only the required core answers and does.
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

bool Backend::supports(OpId op, DType) const { return !op_info(op).composed; }

void Backend::along_axis(const AxisCall&) { no_kernel(*this, "along_axis"); }
void Backend::matmul(const MatmulCall&) { no_kernel(*this, "matmul"); }
void Backend::matmul_epilogue(const GemmEpilogueCall&) { no_kernel(*this, "matmul_epilogue"); }
void Backend::bias_activation_bwd(const BiasActBwdCall&) {
  no_kernel(*this, "bias_activation_bwd");
}
void Backend::row_norm(const RowNormCall&) { no_kernel(*this, "row_norm"); }
void Backend::row_norm_bwd(const RowNormBwdCall&) { no_kernel(*this, "row_norm_bwd"); }

}  // namespace numr
