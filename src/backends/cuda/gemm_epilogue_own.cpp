#include "backends/cuda/gemm_epilogue_own.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/sm90_gemm.h"
#include "numr/device.h"

namespace numr::cuda {
namespace {

std::atomic<int64_t> g_calls{0};

std::atomic<bool>& enabled() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("NUMR_CUDA_OWN_GEMM");
    return !(v && std::strcmp(v, "0") == 0);
  }()};
  return on;
}

bool dense(const TensorRef& r) { return r.strides == contiguous_strides(r.shape); }

// b's matrix [k, n] dense row-major, the same for every batch item (stride 0 or extent 1
// along each batch dim).
bool shared_dense_matrix(const TensorRef& b) {
  const size_t nd = b.shape.size();
  for (size_t d = 0; d + 2 < nd; ++d)
    if (b.shape[d] != 1 && b.strides[d] != 0) return false;
  return b.strides[nd - 1] == 1 && b.strides[nd - 2] == b.shape[nd - 1];
}

}  // namespace

bool try_own_gemm_epilogue(CudaDevice& dev, const GemmEpilogueCall& call) {
  const TensorRef& out = call.out;
  const DType dt = out.dtype;
  // F32 only where TF32 products are allowed: the kernel multiplies F32 as TF32.
  if (!enabled().load() || !(dt == DType::BF16 || (dt == DType::F32 && allow_tf32())) ||
      call.has_pre || call.has_residual)
    return false;
  if (call.act != Activation::None && call.act != Activation::Relu &&
      call.act != Activation::Gelu && call.act != Activation::Silu)
    return false;
  const size_t nd = out.shape.size();
  const int64_t n = out.shape[nd - 1], k = call.a.shape[nd - 1];
  const int64_t rows = n == 0 ? 0 : out.numel() / n;
  // a stacks the batch items' rows (it has out's batch shape, dense); b is one matrix.
  for (size_t d = 0; d + 2 < nd; ++d)
    if (call.a.shape[d] != out.shape[d]) return false;
  if (!dense(out) || !dense(call.a) || !shared_dense_matrix(call.b) ||
      call.bias.shape.size() != 1 || !sm90_gemm_shape_ok(rows, n, k, dt) ||
      !sm90_gemm_supported(dev))
    return false;
  Sm90GemmArgs args;
  args.dtype = dt;
  args.a = operand_address(call.a.base, call.a.offset, dt);
  args.b = operand_address(call.b.base, call.b.offset, dt);
  args.d = operand_address(out.base, out.offset, dt);
  if (args.a % 16 != 0 || args.b % 16 != 0 || args.d % 16 != 0) return false;
  // The kernel reads a dense bias of the operands' dtype in place where it is (a BF16 one
  // widened as it is read); any other is widened (exactly) or gathered into a dense f32
  // temporary.
  std::optional<DeviceTemp> temp;
  if (call.bias.dtype == dt && dense(call.bias) &&
      operand_address(call.bias.base, call.bias.offset, dt) % 16 == 0) {
    args.bias = operand_address(call.bias.base, call.bias.offset, dt);
    args.bias_dtype = dt;
  } else {
    temp.emplace(dev, size_t(n) * sizeof(float));
    TensorRef wide;
    wide.base = temp->get();
    wide.dtype = DType::F32;
    wide.shape = {n};
    wide.strides = {1};
    copy_on_device(dev, call.bias, wide);
    args.bias = operand_address(temp->get(), 0, DType::F32);
  }
  args.m = rows;
  args.n = n;
  args.k = k;
  args.act = call.act;
  sm90_gemm_bias_act(dev, args);
  ++g_calls;
  return true;
}

int64_t own_gemm_epilogue_calls() { return g_calls.load(); }

void set_own_gemm_epilogue_for_testing(bool on) { enabled().store(on); }

}  // namespace numr::cuda
