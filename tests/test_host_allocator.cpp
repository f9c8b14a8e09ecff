// The CPU backend's host allocator: alignment, reuse of freed large blocks, release.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "backends/cpu/host_allocator.h"
#include "numr/numr.h"

namespace numr::cpu {
namespace {

TEST(HostAllocator, BlocksAreAlignedAndWritable) {
  auto& a = HostAllocator::instance();
  for (size_t n : {size_t(1), size_t(100), size_t(4096), size_t(3) << 20, size_t(5) << 20}) {
    void* p = a.allocate(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    std::memset(p, 0x11, n);
    a.deallocate(p);
  }
}

TEST(HostAllocator, FreedLargeBlockIsReusedForItsSizeClass) {
  auto& a = HostAllocator::instance();
  a.release_cached();
  void* p = a.allocate((size_t(6) << 20) - 5);
  a.deallocate(p);
  EXPECT_EQ(a.cached_bytes(), size_t(6) << 20);
  void* q = a.allocate(size_t(6) << 20);  // same class
  EXPECT_EQ(p, q);
  a.deallocate(q);
  a.release_cached();
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(HostAllocator, TensorsSurviveReuse) {
  // A tensor made after another of the same size was freed holds its own values.
  std::vector<float> v(1 << 20, 3.f);
  { const Tensor t = Tensor::from_vector(v, {1 << 20}) + 1.0; }
  const Tensor u = full({1 << 20}, 7.0);
  const std::vector<float> got = u.to_vector<float>();
  EXPECT_EQ(got.front(), 7.f);
  EXPECT_EQ(got.back(), 7.f);
}

}  // namespace
}  // namespace numr::cpu
