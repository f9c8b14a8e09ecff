// Which backends have linalg kernels: one row per device type that has them; the others
// get the kernels composed from Tensor ops.
#include <atomic>
#include <iterator>
#include <memory>
#include <vector>

#include "core/linalg_backend.h"

namespace numr {
namespace {

struct LinalgEntry {
  DeviceType type;
  LinalgKernels& (*get)();
};

constexpr LinalgEntry kLinalgTable[] = {
    {DeviceType::Cpu, &cpu_linalg_kernels},
    {DeviceType::Cuda, &cuda_linalg_kernels},
};

std::atomic<bool> g_composed_everywhere{false};

// Under the test switch: the composed kernels for every call they support, the device's own
// for the rest (kernels or dtypes the compositions do not cover).
class ComposedFirst final : public LinalgKernels {
 public:
  explicit ComposedFirst(LinalgKernels& own) : own_(own) {}
  bool supports(LinalgKernel k, DType t) const override {
    return composed_linalg_kernels().supports(k, t) || own_.supports(k, t);
  }
  void run(const LinalgCall& c) override {
    const DType t = !c.complex              ? c.dtype
                    : c.dtype == DType::F64 ? DType::Complex128
                                            : DType::Complex64;
    if (composed_linalg_kernels().supports(c.kernel, t))
      composed_linalg_kernels().run(c);
    else
      own_.run(c);
  }

 private:
  LinalgKernels& own_;
};

LinalgKernels& composed_first(size_t row) {
  static const std::vector<std::unique_ptr<ComposedFirst>> routed = [] {
    std::vector<std::unique_ptr<ComposedFirst>> v;
    for (const LinalgEntry& e : kLinalgTable) v.push_back(std::make_unique<ComposedFirst>(e.get()));
    return v;
  }();
  return *routed[row];
}

}  // namespace

LinalgKernels* linalg_kernels_for(Device device) {
  const bool composed = g_composed_everywhere.load(std::memory_order_relaxed);
  for (size_t i = 0; i < std::size(kLinalgTable); ++i)
    if (kLinalgTable[i].type == device.type)
      return composed ? &composed_first(i) : &kLinalgTable[i].get();
  return &composed_linalg_kernels();
}

void set_composed_linalg_for_testing(bool on) {
  g_composed_everywhere.store(on, std::memory_order_relaxed);
}

}  // namespace numr
