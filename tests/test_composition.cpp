// The kernel-or-composition choice of the front ends (core/composition.h) and the backend
// table (core/backend.h).
#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/composition.h"
#include "numr/numr.h"

namespace numr {
namespace {

TEST(Composition, ForcedScopesNestAndRestore) {
  EXPECT_FALSE(composition_forced(OpId::softmax));
  {
    const ForceComposition outer({OpId::softmax});
    EXPECT_TRUE(composition_forced(OpId::softmax));
    EXPECT_FALSE(composition_forced(OpId::matmul));
    {
      const ForceComposition all;
      EXPECT_TRUE(composition_forced(OpId::matmul));
      const ForceComposition nothing(false, {OpId::cumsum});
      EXPECT_TRUE(composition_forced(OpId::cumsum));  // still under `all`
    }
    EXPECT_FALSE(composition_forced(OpId::matmul));
    EXPECT_TRUE(composition_forced(OpId::softmax));
  }
  EXPECT_FALSE(composition_forced(OpId::softmax));
}

TEST(Composition, FrontEndsCountThePathTaken) {
  const Tensor x = arange(0, 12).reshape({3, 4});
  const PathCounts before = path_counts(OpId::softmax);
  const Tensor k = softmax(x, 1);
  PathCounts after = path_counts(OpId::softmax);
  EXPECT_EQ(after.kernel, before.kernel + 1);
  EXPECT_EQ(after.composed, before.composed);
  Tensor c;
  {
    const ForceComposition force({OpId::softmax});
    c = softmax(x, 1);
  }
  after = path_counts(OpId::softmax);
  EXPECT_EQ(after.composed, before.composed + 1);
  const std::vector<float> kv = k.to_vector<float>(), cv = c.to_vector<float>();
  ASSERT_EQ(kv.size(), cv.size());
  for (size_t i = 0; i < kv.size(); ++i) EXPECT_NEAR(kv[i], cv[i], 1e-6f) << i;
}

// Every composed op, forced, still gives its kernel's answer on a small case.
TEST(Composition, EveryComposedFamilyRunsForced) {
  Generator gen(3);
  const Tensor a = randn({2, 5, 6}, DType::F32, Device::cpu(), gen);
  const Tensor b = randn({6, 4}, DType::F32, Device::cpu(), gen);
  const Tensor bias = randn({4}, DType::F32, Device::cpu(), gen);
  auto run = [&] {
    std::vector<Tensor> r;
    r.push_back(silu_mul(a, a));
    r.push_back(gelu_bwd(a, a));
    r.push_back(silu_mul_bwd(a, a, a).first);
    r.push_back(var(a, {1}));
    r.push_back(logsumexp(a, {0, 2}));
    r.push_back(cumprod(a, 2));
    r.push_back(log_softmax(a, 0));
    r.push_back(matmul(a, b));
    r.push_back(matmul_bias_activation(a, b, bias, Activation::Gelu));
    r.push_back(bias_activation_bwd(a, a, Activation::Tanh).second);
    return r;
  };
  const std::vector<Tensor> kernel = run();
  std::vector<Tensor> composed;
  {
    const ForceComposition all;
    composed = run();
  }
  ASSERT_EQ(kernel.size(), composed.size());
  for (size_t i = 0; i < kernel.size(); ++i) {
    ASSERT_EQ(kernel[i].shape(), composed[i].shape()) << i;
    const std::vector<float> kv = kernel[i].to_vector<float>(), cv = composed[i].to_vector<float>();
    for (size_t j = 0; j < kv.size(); ++j)
      EXPECT_NEAR(kv[j], cv[j], 1e-4f * (1.0f + std::abs(kv[j]))) << "result " << i << " at " << j;
  }
}

TEST(BackendTable, OneRowPerDeviceTypeAndCpuAlwaysPresent) {
  const auto table = backend_table();
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(table[0].type, DeviceType::Cpu);
  EXPECT_EQ(table[0].count(), 1);
  for (size_t i = 0; i < table.size(); ++i)
    for (size_t j = i + 1; j < table.size(); ++j) EXPECT_NE(table[i].type, table[j].type);
  const std::vector<Device> devices = available_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0], Device::cpu());
  EXPECT_THROW(backend_for(Device::webgpu(99)), BackendUnavailable);  // one adapter at most
}

// A backend of the required core only answers no for the composed ops and yes for the rest.
TEST(BackendTable, TheDefaultSupportsIsTheRequiredCore) {
  class CoreOnly : public Backend {
   public:
    Device device() const override { return Device::cpu(); }
    std::string name() const override { return "core-only"; }
    void* allocate(size_t) override { return nullptr; }
    void deallocate(void*) noexcept override {}
    void copy_from_host(void*, size_t, const void*, size_t) override {}
    void copy_to_host(void*, const void*, size_t, size_t) override {}
    void synchronize() override {}
    void fill_bytes(void*, size_t, uint8_t) override {}
    void elementwise(const ElementwiseCall&) override {}
    void reduce(const ReduceCall&) override {}
    void copy(const CopyCall&) override {}
    void fill(const FillCall&) override {}
    void sequence(const SequenceCall&) override {}
    void random(const RandomCall&) override {}
  } core;
  for (const OpInfo& info : all_ops())
    EXPECT_EQ(core.supports(info.id, DType::F32), !info.composed) << info.name;
  EXPECT_THROW(core.matmul(MatmulCall{}), BackendLimitation);
  EXPECT_THROW(core.along_axis(AxisCall{}), BackendLimitation);
  EXPECT_THROW(core.sort_rows(SortCall{}), BackendLimitation);
  EXPECT_THROW(core.search_sorted(SearchSortedCall{}), BackendLimitation);
  EXPECT_TRUE(backend_for(Device::cpu()).supports(OpId::softmax, DType::F32));
}

// A backend lists the composed ops it has kernels for; a composed op in no list (as a new
// one is) runs as its composition, while the core and the generated gates need no entry.
TEST(BackendTable, SupportsComesFromTheListOfWrittenKernels) {
  const OpId none[] = {OpId::add};
  EXPECT_TRUE(has_listed_kernel(OpId::add, {}));
  EXPECT_TRUE(has_listed_kernel(OpId::silu_mul, {}));
  EXPECT_TRUE(has_listed_kernel(OpId::gelu_mul_bwd, {}));
  EXPECT_FALSE(has_listed_kernel(OpId::rms_norm, none));
  EXPECT_FALSE(has_listed_kernel(OpId::softmax, {}));
  const OpId norms[] = {OpId::rms_norm};
  EXPECT_TRUE(has_listed_kernel(OpId::rms_norm, norms));
  EXPECT_FALSE(has_listed_kernel(OpId::layer_norm, norms));
  // The CPU lists kernels for the row norms and the fused add-norms; group_norm, added to
  // the Norm family with no backend edit, runs as its composition.
  const Backend& cpu = backend_for(Device::cpu());
  for (OpId op : {OpId::rms_norm, OpId::fused_add_rms_norm, OpId::fused_add_layer_norm}) {
    EXPECT_TRUE(cpu.supports(op, DType::F32)) << op_name(op);
    EXPECT_FALSE(cpu.supports(op, DType::Bool)) << op_name(op);
  }
  EXPECT_FALSE(cpu.supports(OpId::group_norm, DType::F32));
}

}  // namespace
}  // namespace numr
