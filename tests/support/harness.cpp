#include "support/harness.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string_view>

#include "core/backend.h"
#include "core/composition.h"
#include "support/gradcheck.h"

namespace numr::test {

namespace {
// Whether the comma-separated list holds name as one of its items.
bool lists(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}
}  // namespace

const std::vector<TestDevice>& test_devices() {
  static const std::vector<TestDevice> devices = [] {
    std::vector<TestDevice> out;
    // NUMR_TEST_DEVICES=webgpu (a comma-separated list of cpu, cuda, webgpu) leaves the
    // other devices out, so a tier can repeat the device suites for one backend alone.
    const char* only = std::getenv("NUMR_TEST_DEVICES");
    for (Device d : {Device::cpu(), Device::cuda(0), Device::webgpu(0)}) {
      const std::string kind = d.is_cpu() ? "cpu" : d.type == DeviceType::Cuda ? "cuda" : "webgpu";
      if (only && *only && !lists(only, kind)) {
        out.push_back({d, false, "left out by NUMR_TEST_DEVICES=" + std::string(only)});
        continue;
      }
      try {
        backend_for(d);
        out.push_back({d, true, ""});
      } catch (const BackendUnavailable& e) {
        out.push_back({d, false, e.what()});
      }
    }
    return out;
  }();
  return devices;
}

bool refused_dtype(const std::exception& e, Device dev) {
  // A tensor beyond what a WebGPU adapter can bind (lavapipe: 128 MiB) is its limit too.
  if (dev.type == DeviceType::WebGpu && dynamic_cast<const BackendLimitation*>(&e)) return true;
  if (dev.is_cpu() || !dynamic_cast<const UnsupportedDType*>(&e)) return false;
  // Only a backend that declares dtypes it lacks refuses them, and its message says so.
  const Backend& b = backend_for(dev);
  bool lacks_some = false;
  for (DType t : kAllDTypes) lacks_some |= !b.supports_dtype(t);
  return lacks_some &&
         std::string_view(e.what()).find("backend does not support") != std::string_view::npos;
}

std::vector<DType> float_dtypes() { return {DType::F64, DType::F32, DType::F16, DType::BF16}; }

std::vector<DType> dtypes_of(OpId op) {
  std::vector<DType> out;
  for (DType t : kAllDTypes)
    if (op_accepts(op, t)) out.push_back(t);
  return out;
}

namespace {

// Host values -> a contiguous tensor of `shape` in dtype, rounding directly from double.
Tensor from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype, Device dev) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> data;
    data.reserve(v.size());
    for (double x : v) {
      if constexpr (std::is_same_v<T, bool>)
        data.push_back(x != 0.0);
      else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
        data.push_back(T(x));
      else
        data.push_back(static_cast<T>(x));
    }
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(data.begin(), data.end());
      return Tensor::from_host(bytes.data(), bytes.size(), DType::Bool, shape, dev);
    } else {
      return Tensor::from_host(data.data(), data.size(), dtype, shape, dev);
    }
  });
}

// Row-major index helpers for rearranging values before building a view.
std::vector<double> swap_last_two(const std::vector<double>& v, const Shape& shape) {
  const size_t nd = shape.size();
  const int64_t r = shape[nd - 2], c = shape[nd - 1],
                batch = shape_numel(shape) / std::max<int64_t>(r * c, 1);
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        out[size_t(b * r * c + j * r + i)] = v[size_t(b * r * c + i * c + j)];
  return out;
}

}  // namespace

InputSpec unit_spec(Layout l) {
  InputSpec s;
  s.lo = -1.0;
  s.hi = 1.0;
  s.layout = l;
  return s;
}

Tensor make_input(const Shape& shape, DType dtype, Device dev, const InputSpec& spec,
                  uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::uniform_real_distribution<double> uni(spec.lo, spec.hi);
  const int64_t n = shape_numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  const bool integral = spec.integers || !is_floating(dtype);
  for (auto& x : v) {
    x = uni(rng);
    if (integral) x = std::round(x);
    if (dtype == DType::U8) x = std::clamp(x, 0.0, 255.0);
    if (dtype == DType::Bool) x = (rng() & 1) ? 1.0 : 0.0;
  }
  if (spec.specials && is_floating(dtype)) {
    const double sp[] = {std::numeric_limits<double>::quiet_NaN(), HUGE_VAL, -HUGE_VAL, 0.0, -0.0};
    for (int64_t i = 0; i < n; ++i)
      if (rng() % 8 == 0) v[size_t(i)] = sp[rng() % 5];
  }
  const size_t nd = shape.size();
  Layout layout = spec.layout;
  if (layout == Layout::Transposed && nd < 2) layout = Layout::Strided;
  if (nd == 0) layout = Layout::Contiguous;
  switch (layout) {
    case Layout::Contiguous: return from_doubles(v, shape, dtype, dev);
    case Layout::Transposed: {
      Shape s = shape;
      std::swap(s[nd - 1], s[nd - 2]);
      return from_doubles(swap_last_two(v, shape), s, dtype, dev).transpose(-1, -2);
    }
    case Layout::Strided: {
      Shape s = shape;
      const int64_t c = shape[nd - 1];
      s[nd - 1] = c + 3;
      std::vector<double> w(static_cast<size_t>(shape_numel(s)), 7.0);
      const int64_t rows = c == 0 ? 0 : n / c;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < c; ++j) w[size_t(i * (c + 3) + 1 + j)] = v[size_t(i * c + j)];
      return from_doubles(w, s, dtype, dev).narrow(-1, 1, c);
    }
    case Layout::Flipped: {
      const int64_t c = shape[nd - 1];
      std::vector<double> w(v.size());
      const int64_t rows = c == 0 ? 0 : n / c;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < c; ++j) w[size_t(i * c + (c - 1 - j))] = v[size_t(i * c + j)];
      return from_doubles(w, shape, dtype, dev).flip({-1});
    }
  }
  return from_doubles(v, shape, dtype, dev);
}

Tensor grad_input(const Shape& shape, uint64_t seed, Layout layout, double bound) {
  return make_input(shape, DType::F64, Device::cpu(), {.lo = -bound, .hi = bound, .layout = layout},
                    seed);
}

RefTensor to_ref(const Tensor& t) {
  return RefTensor{t.shape(), t.to(Device::cpu()).cast(DType::F64).to_vector<double>()};
}

namespace {

double round_to(double x, DType t) {
  switch (t) {
    case DType::F32: return double(float(x));
    case DType::F16: return double(f16(x));
    case DType::BF16: return double(bf16(x));
    default: return x;
  }
}

}  // namespace

std::string compare(const Tensor& got, const RefTensor& ref, const Tolerance& tol) {
  if (got.shape() != ref.shape) {
    return "shape " + shape_str(got.shape()) + " != reference " + shape_str(ref.shape);
  }
  const RefTensor g = to_ref(got);
  double max_abs = 0.0, err2 = 0.0, ref2 = 0.0;
  std::ostringstream worst;
  double worst_excess = 0.0;
  for (size_t i = 0; i < g.v.size(); ++i) {
    const double r = round_to(ref.v[i], got.dtype()), x = g.v[i];
    std::string bad;
    if (std::isnan(r) || std::isnan(x)) {
      if (std::isnan(r) != std::isnan(x)) bad = "NaN mismatch";
    } else if (std::isinf(r) || std::isinf(x)) {
      if (r != x) bad = "Inf mismatch";
    } else {
      const double e = std::fabs(x - r);
      max_abs = std::max(max_abs, e);
      err2 += e * e;
      ref2 += r * r;
      const double limit = tol.atol + tol.rtol * std::fabs(r);
      if (e > limit) {
        if (e - limit > worst_excess || worst_excess == 0.0) {
          worst_excess = e - limit;
          worst.str("");
          worst << "element " << i << ": got " << x << ", reference " << r << " (error " << e
                << " > " << limit << ")";
        }
      }
    }
    if (!bad.empty()) {
      std::ostringstream os;
      os << bad << " at element " << i << ": got " << x << ", reference " << r;
      return os.str();
    }
  }
  if (worst_excess > 0.0) return worst.str();
  // The norm form of the elementwise bound: ||e|| <= rel_norm ||ref|| + atol sqrt(n).
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  const double n_finite = double(g.v.size());
  if (std::sqrt(err2) > tol.rel_norm * std::sqrt(ref2) + tol.atol * std::sqrt(n_finite)) {
    std::ostringstream os;
    os << "relative norm error " << rel << " > " << tol.rel_norm << " (max abs " << max_abs << ")";
    return os.str();
  }
  return "";
}

void set_poison(bool on) { set_poison_allocations(on); }

namespace {
struct CoverageKey {
  OpId op;
  DType dtype;
  std::string backend;
  bool composed;  // the run went through the op's composition, not the backend's kernel
  bool operator<(const CoverageKey& o) const {
    return std::tie(op, dtype, backend, composed) < std::tie(o.op, o.dtype, o.backend, o.composed);
  }
};
std::mutex g_cov_mu;
std::map<CoverageKey, Outcome>& coverage() {
  static std::map<CoverageKey, Outcome> m;
  return m;
}
}  // namespace

void record(OpId op, DType dtype, const std::string& backend, Outcome outcome, bool composed) {
  std::lock_guard<std::mutex> lock(g_cov_mu);
  auto [it, inserted] = coverage().try_emplace(CoverageKey{op, dtype, backend, composed}, outcome);
  if (!inserted && outcome == Outcome::Failed) it->second = Outcome::Failed;
}

static std::string backend_label(Device d) {
  return d.type == DeviceType::Cpu ? "cpu" : d.type == DeviceType::Cuda ? "cuda" : "webgpu";
}

void for_each_case(OpId op, const std::vector<DType>& dtypes,
                   const std::function<std::string(DType, Device)>& check) {
  // A composed op runs twice: as the backend chooses, and with its composition forced
  // (unless NUMR_TEST_COMPOSE=off: the repeats on other CPU instruction sets, whose
  // compositions are the same front-end code over kernels those runs test anyway).
  const char* compose_env = std::getenv("NUMR_TEST_COMPOSE");
  const bool compose = !(compose_env && std::string_view(compose_env) == "off");
  const int runs = op_info(op).composed && compose ? 2 : 1;
  for (DType t : dtypes) {
    for (const TestDevice& td : test_devices()) {
      const std::string label = backend_label(td.device);
      if (!td.available) {
        for (int r = 0; r < runs; ++r) record(op, t, label, Outcome::Skipped, r == 1);
        continue;
      }
      // A dtype the backend cannot hold at all is skipped, and said so once.
      if (!backend_for(td.device).supports_dtype(t)) {
        for (int r = 0; r < runs; ++r) record(op, t, label, Outcome::Skipped, r == 1);
        continue;
      }
      // Where the backend has no kernel for the op, its own choice is the composition too.
      const bool has_kernel = backend_for(td.device).supports(op, t);
      for (int r = 0; r < runs; ++r) {
        if (r == 0 && runs == 2 && !has_kernel) continue;
        std::optional<ForceComposition> force;
        if (r == 1) force.emplace(std::initializer_list<OpId>{op});
        const PathCounts before = path_counts(op);
        std::string msg;
        bool refused = false;
        try {
          msg = check(t, td.device);
        } catch (const std::exception& e) {
          refused = refused_dtype(e, td.device);
          msg = std::string("threw: ") + e.what();
        }
        if (refused) {  // another operand's dtype (e.g. an F64 operand) is not held there
          record(op, t, label, Outcome::Skipped, r == 1);
          continue;
        }
        // Which path ran, as the front end counted it.
        const bool composed = path_counts(op).composed > before.composed;
        if (msg.empty()) {
          record(op, t, label, Outcome::Passed, composed);
        } else {
          record(op, t, label, Outcome::Failed, composed);
          ADD_FAILURE() << "[" << op_name(op) << "] " << t << " on " << td.device
                        << (composed ? " (composition)" : "") << ": " << msg;
        }
      }
    }
  }
}

const std::vector<Shape>& parity_shapes() {
  static const std::vector<Shape> shapes = {{},  {1},       {7},       {33, 17}, {5, 7, 11},
                                            {0}, {3, 0, 2}, {2, 1030}, {65537}};
  return shapes;
}

namespace {

// Whether the available backend labelled `label` has a kernel for op at t (false for a
// backend that is not available: its cells say skipped).
bool has_kernel(std::string_view label, OpId op, DType t) {
  for (const TestDevice& td : test_devices())
    if (td.available && backend_label(td.device) == label)
      return backend_for(td.device).supports(op, t);
  return true;
}

// s followed by spaces up to `width` (at least one).
std::string padded(std::string_view s, size_t width) {
  std::string out(s);
  out.append(s.size() < width ? width - s.size() : 1, ' ');
  return out;
}

}  // namespace

bool coverage_enforced() {
  const char* env = std::getenv("NUMR_TEST_COVERAGE");
  if (env && std::string_view(env) == "on") return true;
  // One shard of a sharded run sees part of the table only.
  const char* shards = std::getenv("GTEST_TOTAL_SHARDS");
  return ::testing::GTEST_FLAG(filter) == "*" && !(shards && std::atoi(shards) > 1);
}

namespace {

// Prints the op x dtype x backend matrix after all tests and, on a run that must cover
// the table (coverage_enforced), fails if an op of the table has no parity result on the CPU for a
// dtype it accepts.
class CoverageReport : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(g_cov_mu);
    std::ostringstream os;
    os << "\nCoverage (per backend: dtypes passed / accepted through the kernel, then through the "
          "composition for composed ops; - = no kernel, S = skipped, F = failed)\n";
    os << padded("op", 27) << padded("family", 12) << padded("cpu", 26) << padded("cuda", 26)
       << "webgpu\n";
    std::vector<std::string> missing;
    for (const OpInfo& info : all_ops()) {
      os << padded(info.name, 27) << padded(family_name(info.family), 12);
      for (const char* be : {"cpu", "cuda", "webgpu"}) {
        std::string cell;
        for (bool composed : {false, true}) {
          if (composed && !info.composed) break;
          int accepted = 0, passed = 0, failed = 0, skipped = 0, no_kernel = 0;
          for (DType t : kAllDTypes) {
            if (!op_accepts(info.id, t)) continue;
            ++accepted;
            auto it = coverage().find(CoverageKey{info.id, t, be, composed});
            if (it == coverage().end() && !composed && info.composed &&
                !has_kernel(be, info.id, t)) {
              ++no_kernel;
              continue;
            }
            if (it == coverage().end()) {
              if (std::string(be) == "cpu")
                missing.push_back(std::string(info.name) + "/" + std::string(dtype_name(t)) +
                                  (composed ? " (composition)" : ""));
              continue;
            }
            if (it->second == Outcome::Passed) ++passed;
            if (it->second == Outcome::Failed) ++failed;
            if (it->second == Outcome::Skipped) ++skipped;
          }
          if (composed) cell += " c ";
          if (no_kernel == accepted) {
            cell += "-";  // no kernel on this backend: the composition ran
            continue;
          }
          cell += std::to_string(passed) + "/" + std::to_string(accepted);
          if (skipped) cell += " S" + std::to_string(skipped);
          if (failed) cell += " F" + std::to_string(failed);
        }
        os << padded(cell, 26);
      }
      os << "\n";
    }
    for (const TestDevice& td : test_devices())
      if (!td.available) os << "skipped " << td.device << ": " << td.reason << "\n";
    std::cout << os.str();
    if (coverage_enforced() && !missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += " " + m;
      ADD_FAILURE() << "ops without a CPU parity result:" << list;
    }
  }
};

}  // namespace
}  // namespace numr::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new numr::test::CoverageReport);
  ::testing::AddGlobalTestEnvironment(numr::test::gradcheck_report());
  numr::test::set_poison(true);
  return RUN_ALL_TESTS();
}
