// Op families without CUDA kernels yet. Each definition moves to its own file when its
// kernels are written.
#include "backends/cuda/ops.h"
#include "numr/error.h"

namespace numr::cuda {

void run_elementwise(CudaDevice&, const ElementwiseCall&) {
  fail<BackendLimitation>("elementwise", "not implemented on CUDA yet");
}
void run_reduce(CudaDevice&, const ReduceCall&) {
  fail<BackendLimitation>("reduce", "not implemented on CUDA yet");
}
void run_along_axis(CudaDevice&, const AxisCall&) {
  fail<BackendLimitation>("along_axis", "not implemented on CUDA yet");
}
void run_matmul(CudaDevice&, const MatmulCall&) {
  fail<BackendLimitation>("matmul", "not implemented on CUDA yet");
}
void run_matmul_epilogue(CudaDevice&, const GemmEpilogueCall&) {
  fail<BackendLimitation>("matmul_epilogue", "not implemented on CUDA yet");
}
void run_bias_activation_bwd(CudaDevice&, const BiasActBwdCall&) {
  fail<BackendLimitation>("bias_activation_bwd", "not implemented on CUDA yet");
}
void run_copy(CudaDevice&, const CopyCall&) {
  fail<BackendLimitation>("copy", "not implemented on CUDA yet");
}
void run_fill(CudaDevice&, const FillCall&) {
  fail<BackendLimitation>("fill", "not implemented on CUDA yet");
}
void run_sequence(CudaDevice&, const SequenceCall&) {
  fail<BackendLimitation>("sequence", "not implemented on CUDA yet");
}
void run_random(CudaDevice&, const RandomCall&) {
  fail<BackendLimitation>("random", "not implemented on CUDA yet");
}

}  // namespace numr::cuda
