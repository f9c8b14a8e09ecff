// The discrete Fourier transforms on tensors: dtype and device checks, the CPU engine
// (src/backends/cpu/fft) run along one dim of any strided tensor, a GPU backend's FFT
// kernels, or else the composition of src/ops/fft_composed.cpp.
#include <complex>

#include "backends/cpu/fft/fft.h"
#include "core/fft_backend.h"
#include "core/op_scope.h"
#include "io/file.h"
#include "ops/common.h"
#include "ops/fft_compose.h"

namespace numr::fft {
namespace detail {

const Tensor& value_of(const Tensor& t) { return t; }
const Tensor& value_of(const Var& v) { return v.tensor(); }

DType input_dtype(std::string_view op, DType t, bool want_complex) {
  if (want_complex) {
    if (is_complex(t)) return t;
    if (is_floating(t)) return t == DType::F64 ? DType::Complex128 : DType::Complex64;
  } else if (is_floating(t)) {
    return t == DType::F64 ? DType::F64 : DType::F32;
  }
  fail<UnsupportedDType>(
      op, "unsupported dtype ", t, " (accepts ",
      want_complex ? "F64 F32 F16 BF16 Complex64 Complex128" : "F64 F32 F16 BF16", ")");
}

namespace {

namespace engine = numr::cpu::fft;

// The ref a GPU kernel takes: the real parts of a complex tensor.
TensorRef parts_ref(const Tensor& t) { return ref_of(is_complex(t.dtype()) ? view_as_real(t) : t); }

// A backend without FFT kernels composes the transforms from its other ops.
bool has_kernels(const Tensor& x) { return fft_kernels_for(x.device()) != nullptr; }

// A GPU transform along d: x's rows along d made contiguous (a fresh copy for C2R, which
// may overwrite its input), one batched call, and the result viewed back in x's dim order.
Tensor on_gpu(FftKind kind, bool forward, const Tensor& x, int64_t d, int64_t n, DType out_dtype) {
  FftKernels& k = *fft_kernels_for(x.device());
  std::vector<int64_t> perm, back(size_t(x.dim()));
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != d) perm.push_back(i);
  perm.push_back(d);
  for (size_t i = 0; i < perm.size(); ++i) back[size_t(perm[i])] = int64_t(i);
  const Tensor moved = x.permute(perm);
  const Tensor rows = kind == FftKind::C2R ? moved.clone() : moved.contiguous();
  Shape shape = rows.shape();
  shape.back() = kind == FftKind::R2C ? n / 2 + 1 : n;
  Tensor out = Tensor::empty(shape, out_dtype, x.device());
  if (out.numel() == 0) return out.permute(back);
  FftCall call;
  call.kind = kind;
  call.forward = forward;
  call.part = complex_part_dtype(is_complex(out_dtype) ? out_dtype : complex_dtype_for(out_dtype));
  call.n = n;
  call.batch = out.numel() / shape.back();
  call.device = x.device().index;
  call.in = parts_ref(rows);
  call.out = parts_ref(out);
  k.run(call);
  return out.permute(back);
}

// Every dim but d as an engine batch dim of x (in) and out.
std::vector<engine::BatchDim> batch_of(const Tensor& in, const Tensor& out, int64_t d) {
  std::vector<engine::BatchDim> batch;
  for (int64_t k = 0; k < in.dim(); ++k)
    if (k != d)
      batch.push_back({in.shape()[size_t(k)], in.strides()[size_t(k)], out.strides()[size_t(k)]});
  return batch;
}

template <class T>
T* at(const Tensor& t) {
  return reinterpret_cast<T*>(io::host_bytes(t));
}

Tensor scaled(const Tensor& t, double scale) { return scale == 1.0 ? t : t * scale; }

}  // namespace

Tensor c2c(const Tensor& z, int64_t d, bool forward, double scale) {
  if (!z.device().is_cpu())
    return scaled(has_kernels(z)
                      ? on_gpu(FftKind::C2C, forward, z, d, z.shape()[size_t(d)], z.dtype())
                      : composed_c2c(z, d, forward),
                  scale);
  Tensor out = Tensor::empty(z.shape(), z.dtype(), z.device());
  if (out.numel() == 0) return out;
  const auto batch = batch_of(z, out, d);
  const int64_t n = z.shape()[size_t(d)];
  const auto dir = forward ? engine::Direction::Forward : engine::Direction::Inverse;
  if (z.dtype() == DType::Complex128)
    engine::c2c<double>(n, dir, batch, at<const std::complex<double>>(z), z.strides()[size_t(d)],
                        at<std::complex<double>>(out), out.strides()[size_t(d)]);
  else
    engine::c2c<float>(n, dir, batch, at<const std::complex<float>>(z), z.strides()[size_t(d)],
                       at<std::complex<float>>(out), out.strides()[size_t(d)]);
  return scaled(out, scale);
}

Tensor r2c(const Tensor& x, int64_t d, double scale) {
  const int64_t n = x.shape()[size_t(d)];
  if (!x.device().is_cpu())
    return scaled(has_kernels(x) ? on_gpu(FftKind::R2C, true, x, d, n, complex_dtype_for(x.dtype()))
                                 : composed_r2c(x, d),
                  scale);
  Shape shape = x.shape();
  shape[size_t(d)] = n / 2 + 1;
  Tensor out = Tensor::empty(shape, complex_dtype_for(x.dtype()), x.device());
  if (out.numel() == 0) return out;
  const auto batch = batch_of(x, out, d);
  if (x.dtype() == DType::F64)
    engine::r2c<double>(n, batch, at<const double>(x), x.strides()[size_t(d)],
                        at<std::complex<double>>(out), out.strides()[size_t(d)]);
  else
    engine::r2c<float>(n, batch, at<const float>(x), x.strides()[size_t(d)],
                       at<std::complex<float>>(out), out.strides()[size_t(d)]);
  return scaled(out, scale);
}

Tensor c2r(const Tensor& z, int64_t d, int64_t n, double scale) {
  if (!z.device().is_cpu())
    return scaled(has_kernels(z)
                      ? on_gpu(FftKind::C2R, false, z, d, n, complex_part_dtype(z.dtype()))
                      : composed_c2r(z, d, n),
                  scale);
  Shape shape = z.shape();
  shape[size_t(d)] = n;
  Tensor out = Tensor::empty(shape, complex_part_dtype(z.dtype()), z.device());
  if (out.numel() == 0) return out;
  const auto batch = batch_of(z, out, d);
  if (z.dtype() == DType::Complex128)
    engine::c2r<double>(n, batch, at<const std::complex<double>>(z), z.strides()[size_t(d)],
                        at<double>(out), out.strides()[size_t(d)]);
  else
    engine::c2r<float>(n, batch, at<const std::complex<float>>(z), z.strides()[size_t(d)],
                       at<float>(out), out.strides()[size_t(d)]);
  return scaled(out, scale);
}

}  // namespace detail

#define NUMR_FFT_1D(name, forward, real_in, real_out)                              \
  Tensor name(const Tensor& x, std::optional<int64_t> n, int64_t dim, Norm norm) { \
    const OpScope scope(#name);                                                    \
    return detail::one_dim(#name, x, n, dim, norm, forward, real_in, real_out);    \
  }                                                                                \
  Var name(const Var& x, std::optional<int64_t> n, int64_t dim, Norm norm) {       \
    const OpScope scope(#name);                                                    \
    return detail::one_dim(#name, x, n, dim, norm, forward, real_in, real_out);    \
  }
#define NUMR_FFT_ND(name, op, forward, real_in, real_out)                                       \
  Tensor name(const Tensor& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, \
              Norm norm) {                                                                      \
    const OpScope scope(#name);                                                                 \
    return detail::n_dim(#name, x, s, dims, norm, forward, real_in, real_out);                  \
  }
NUMR_FFT_1D(fft, true, false, false)
NUMR_FFT_1D(ifft, false, false, false)
NUMR_FFT_1D(rfft, true, true, false)
NUMR_FFT_1D(irfft, false, false, true)
NUMR_FFT_ND(fftn, fftn, true, false, false)
NUMR_FFT_ND(ifftn, ifftn, false, false, false)
NUMR_FFT_ND(rfftn, rfftn, true, true, false)
NUMR_FFT_ND(irfftn, irfftn, false, false, true)
NUMR_FFT_ND(fft2, fftn, true, false, false)
NUMR_FFT_ND(ifft2, ifftn, false, false, false)
NUMR_FFT_ND(rfft2, rfftn, true, true, false)
NUMR_FFT_ND(irfft2, irfftn, false, false, true)
#undef NUMR_FFT_1D
#undef NUMR_FFT_ND

#define NUMR_FFT_ND_VAR(name, forward, real_in, real_out)                                 \
  Var name(const Var& x, const std::vector<int64_t>& s, const std::vector<int64_t>& dims, \
           Norm norm) {                                                                   \
    const OpScope scope(#name);                                                           \
    return detail::n_dim(#name, x, s, dims, norm, forward, real_in, real_out);            \
  }
NUMR_FFT_ND_VAR(fftn, true, false, false)
NUMR_FFT_ND_VAR(ifftn, false, false, false)
NUMR_FFT_ND_VAR(rfftn, true, true, false)
NUMR_FFT_ND_VAR(irfftn, false, false, true)
#undef NUMR_FFT_ND_VAR

}  // namespace numr::fft
