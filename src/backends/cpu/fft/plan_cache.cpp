#include "backends/cpu/fft/plan_cache.h"

#include <map>
#include <mutex>
#include <tuple>

#include "backends/cpu/fft/complex_plan.h"
#include "backends/cpu/fft/real_plan.h"

namespace numr::cpu::fft {

namespace {

enum class Kind { Complex, Real };

struct Key {
  int64_t n;
  bool is_double;
  Direction dir;
  Kind kind;
  auto operator<=>(const Key&) const = default;
};

// A bounded cache: past kCapacity plans the least recently used one is dropped.
constexpr size_t kCapacity = 64;

struct Cache {
  std::mutex mu;
  std::map<Key, std::pair<std::shared_ptr<const void>, uint64_t>> plans;
  uint64_t clock = 0;
};

Cache& cache() {
  static Cache c;
  return c;
}

// Plans are built outside the lock: a Bluestein plan asks the cache for its own sub-plans.
template <class Plan>
std::shared_ptr<const Plan> get(const Key& key, auto&& build) {
  Cache& c = cache();
  {
    std::lock_guard lock(c.mu);
    auto it = c.plans.find(key);
    if (it != c.plans.end()) {
      it->second.second = ++c.clock;
      return std::static_pointer_cast<const Plan>(it->second.first);
    }
  }
  std::shared_ptr<const Plan> plan = build();
  std::lock_guard lock(c.mu);
  auto [it, inserted] = c.plans.try_emplace(key, plan, ++c.clock);
  if (!inserted) return std::static_pointer_cast<const Plan>(it->second.first);
  if (c.plans.size() > kCapacity) {
    auto oldest = c.plans.begin();
    for (auto i = c.plans.begin(); i != c.plans.end(); ++i)
      if (i->second.second < oldest->second.second) oldest = i;
    c.plans.erase(oldest);
  }
  return plan;
}

}  // namespace

template <class T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n, Direction dir) {
  return get<ComplexPlan<T>>(Key{n, sizeof(T) == 8, dir, Kind::Complex},
                             [&] { return std::make_shared<const ComplexPlan<T>>(n, dir); });
}

template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n, Direction dir) {
  return get<RealPlan<T>>(Key{n, sizeof(T) == 8, dir, Kind::Real},
                          [&] { return std::make_shared<const RealPlan<T>>(n, dir); });
}

int64_t cached_plan_count() {
  std::lock_guard lock(cache().mu);
  return static_cast<int64_t>(cache().plans.size());
}

template std::shared_ptr<const ComplexPlan<float>> complex_plan<float>(int64_t, Direction);
template std::shared_ptr<const ComplexPlan<double>> complex_plan<double>(int64_t, Direction);
template std::shared_ptr<const RealPlan<float>> real_plan<float>(int64_t, Direction);
template std::shared_ptr<const RealPlan<double>> real_plan<double>(int64_t, Direction);

}  // namespace numr::cpu::fft
