// cuFFT for numr's FFT family, loaded with dlopen on first use: libcufft.so.12 (CUDA 12 and
// 13), then .so.11 and .so, on the loader's path and under $CUDA_HOME/lib64, $CUDA_PATH/lib64
// and /usr/local/cuda/lib64; NUMR_CUFFT names a file to use instead. cuFFT runs in the
// device's primary context, which is numr's, on numr's stream.
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_library.h"
#include "core/fft_backend.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr {
namespace {

using cufftHandle = int;
using cufftResult = int;
constexpr int kC2C = 0x29, kR2C = 0x2a, kC2R = 0x2c, kZ2Z = 0x69, kD2Z = 0x6a, kZ2D = 0x6c;
constexpr int kForward = -1, kInverse = 1;

struct Cufft {
  std::string path;
  cufftResult (*plan1d)(cufftHandle*, int, int, int) = nullptr;
  cufftResult (*set_stream)(cufftHandle, void*) = nullptr;
  cufftResult (*destroy)(cufftHandle) = nullptr;
  cufftResult (*exec_c2c)(cufftHandle, void*, void*, int) = nullptr;
  cufftResult (*exec_z2z)(cufftHandle, void*, void*, int) = nullptr;
  cufftResult (*exec_r2c)(cufftHandle, void*, void*) = nullptr;
  cufftResult (*exec_d2z)(cufftHandle, void*, void*) = nullptr;
  cufftResult (*exec_c2r)(cufftHandle, void*, void*) = nullptr;
  cufftResult (*exec_z2d)(cufftHandle, void*, void*) = nullptr;
};

// The library, or the reason it could not be loaded (decided once).
const Cufft* load(std::string& failure) {
  static std::string why;
  static const Cufft* lib = []() -> const Cufft* {
    const cuda::OpenedLibrary opened =
        cuda::open_cuda_library("NUMR_CUFFT", {"libcufft.so.12", "libcufft.so.11", "libcufft.so"});
    if (!opened.handle) {
      why = "cuFFT could not be loaded (" + opened.failure +
            "); install libcufft (CUDA 12 or 13) or set NUMR_CUFFT to its path";
      return nullptr;
    }
    void* h = opened.handle;
    auto* f = new Cufft;  // kept for the process's lifetime
    f->path = opened.path;
    std::string missing;
    auto resolve = [&](auto& out, const char* name) {
      return cuda::resolve_symbol(h, out, name, missing);
    };
    if (resolve(f->plan1d, "cufftPlan1d") && resolve(f->set_stream, "cufftSetStream") &&
        resolve(f->destroy, "cufftDestroy") && resolve(f->exec_c2c, "cufftExecC2C") &&
        resolve(f->exec_z2z, "cufftExecZ2Z") && resolve(f->exec_r2c, "cufftExecR2C") &&
        resolve(f->exec_d2z, "cufftExecD2Z") && resolve(f->exec_c2r, "cufftExecC2R") &&
        resolve(f->exec_z2d, "cufftExecZ2D"))
      return f;
    why = opened.path + " has no entry point " + missing;
    delete f;
    dlclose(h);
    return nullptr;
  }();
  failure = why;
  return lib;
}

void check(cufftResult r, const char* call) {
  if (r == 0) return;
  if (r == 2) fail<OutOfMemory>(current_op("fft"), call, ": CUFFT_ALLOC_FAILED");
  fail<BackendError>(current_op("fft"), call, " failed with cufftResult ", r);
}

class CudaFft final : public FftKernels {
 public:
  void run(const FftCall& c) override {
    std::string why;
    const Cufft* f = load(why);
    if (!f) fail<BackendUnavailable>(current_op("fft"), why);
    if (c.n > 0x7fffffff || c.batch > 0x7fffffff)
      fail<BackendLimitation>(current_op("fft"), "cuFFT plans take 32-bit lengths and batches");
    cuda::CudaDevice& dev = cuda::cuda_device(c.device);
    dev.make_current();
    const bool dbl = c.part == DType::F64;
    const int type = c.kind == FftKind::C2C   ? (dbl ? kZ2Z : kC2C)
                     : c.kind == FftKind::R2C ? (dbl ? kD2Z : kR2C)
                                              : (dbl ? kZ2D : kC2R);
    std::lock_guard<std::mutex> lock(mu_);
    const cufftHandle plan = plan_for(*f, dev.index(), type, c.n, c.batch);
    check(f->set_stream(plan, dev.stream()), "cufftSetStream");
    void* in = address(c.in);
    void* out = address(c.out);
    const int dir = c.forward ? kForward : kInverse;
    switch (type) {
      case kC2C: check(f->exec_c2c(plan, in, out, dir), "cufftExecC2C"); break;
      case kZ2Z: check(f->exec_z2z(plan, in, out, dir), "cufftExecZ2Z"); break;
      case kR2C: check(f->exec_r2c(plan, in, out), "cufftExecR2C"); break;
      case kD2Z: check(f->exec_d2z(plan, in, out), "cufftExecD2Z"); break;
      case kC2R: check(f->exec_c2r(plan, in, out), "cufftExecC2R"); break;
      default: check(f->exec_z2d(plan, in, out), "cufftExecZ2D"); break;
    }
  }

 private:
  static void* address(const TensorRef& t) {
    return static_cast<char*>(t.base) + t.offset * int64_t(dtype_size(t.dtype));
  }

  // Plans are kept per (device, type, n, batch); a full cache is emptied, as plans hold
  // their own workspace.
  cufftHandle plan_for(const Cufft& f, int device, int type, int64_t n, int64_t batch) {
    const auto key = std::make_tuple(device, type, n, batch);
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
    if (plans_.size() >= 32) {
      for (auto& [k, p] : plans_) f.destroy(p);
      plans_.clear();
    }
    cufftHandle plan = 0;
    check(f.plan1d(&plan, int(n), type, int(batch)), "cufftPlan1d");
    plans_.emplace(key, plan);
    return plan;
  }

  std::mutex mu_;
  std::map<std::tuple<int, int, int64_t, int64_t>, cufftHandle> plans_;
};

}  // namespace

FftKernels& cuda_fft_kernels() {
  static CudaFft* k = new CudaFft;  // never destroyed: plans outlive static teardown
  return *k;
}

}  // namespace numr
