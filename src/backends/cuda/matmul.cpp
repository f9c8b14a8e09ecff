// run_matmul: out[i] = a[i] @ b[i] through cuBLASLt, reading a and b in place wherever
// their layout allows (matmul_plan.h). When cuBLASLt has no algorithm for the views as
// they are (a pointer or leading dimension too poorly aligned for every kernel), both
// operands are copied into fresh dense buffers and the product is tried once more.
#include <string>

#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/ops.h"
#include "numr/error.h"

namespace numr::cuda {

void run_matmul(CudaDevice& dev, const MatmulCall& call) {
  const TensorRef& out = call.out;
  const size_t nd = out.shape.size();
  if (nd < 2 || call.a.shape.size() != nd || call.b.shape.size() != nd)
    fail<InvalidArgument>("matmul", "operands and output need the same rank (at least 2)");
  if (call.a.dtype != out.dtype || call.b.dtype != out.dtype)
    fail<DTypeMismatch>("matmul", "operand dtypes differ from the output's");
  if (out.numel() == 0) return;
  if (call.a.shape[nd - 1] == 0) {  // an empty sum: every element is 0
    run_fill(dev, FillCall{out, 0.0});
    return;
  }
  const Shape batch(out.shape.begin(), out.shape.end() - 2);
  GemmOutputs dst;
  dst.d = operand_address(out.base, out.offset, out.dtype);
  {
    const GemmPlan plan(dev, call.a, call.b, batch, false);
    if (run_gemm(dev, out.dtype, plan, dst)) return;
  }  // its copies are released before the dense ones are made
  const GemmPlan dense(dev, call.a, call.b, batch, true);
  if (run_gemm(dev, out.dtype, dense, dst)) return;
  fail<BackendLimitation>("matmul", "cuBLASLt has no algorithm for ", dtype_name(out.dtype), " [",
                          dense.m, ", ", dense.k, "] @ [", dense.k, ", ", dense.n, "]");
}

}  // namespace numr::cuda
