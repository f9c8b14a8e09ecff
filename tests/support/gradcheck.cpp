#include "support/gradcheck.h"

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <random>
#include <sstream>

#include "core/backend.h"
#include "support/harness.h"

namespace numr::test {
namespace {

Tensor random_like(const Tensor& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (auto& x : v) x = u(rng);
  return Tensor::from_vector(v, t.shape(), t.device());
}

// sum(f(x) * w) as a Var.
Var weighted_loss(const VarFn& f, const std::vector<Var>& xs, Tensor& w) {
  const Var y = f(xs);
  if (!w.defined()) w = random_like(y.tensor().cast(DType::F64), 77);
  // Cast before moving: a device may not hold F64 (WebGPU).
  return sum(y * Var(w.cast(y.dtype()).to(y.device())));
}

// The loss at `inputs`. Inputs require grad as in the analytic pass, since f may itself
// take gradients (the second-order check does).
double eval(const VarFn& f, const std::vector<Tensor>& inputs, Tensor& w) {
  std::vector<Var> xs;
  for (const Tensor& t : inputs) xs.emplace_back(t, t.dtype() == DType::F64);
  return weighted_loss(f, xs, w).tensor().cast(DType::F64).item<double>();
}

}  // namespace

std::string gradcheck(const VarFn& f, const std::vector<Tensor>& inputs,
                      const GradcheckOptions& opts) {
  std::vector<Var> xs;
  for (const Tensor& t : inputs) xs.emplace_back(t, t.dtype() == DType::F64);
  Tensor w;
  const Var loss = weighted_loss(f, xs, w);
  // An output that does not depend on the inputs has zero gradient (e.g. the gradient of
  // a linear op, differentiated again); the numeric side must then be zero too.
  const Gradients g = loss.requires_grad() ? backward(loss) : Gradients();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != DType::F64) continue;
    std::vector<double> base = inputs[i].contiguous().to_vector<double>();
    const std::vector<double> analytic = g.contains(xs[i])
                                             ? g[xs[i]].contiguous().to_vector<double>()
                                             : std::vector<double>(base.size(), 0.0);
    for (size_t j = 0; j < base.size(); ++j) {
      std::vector<Tensor> moved = inputs;
      std::vector<double> v = base;
      v[j] = base[j] + opts.eps;
      moved[i] = Tensor::from_vector(v, inputs[i].shape(), inputs[i].device());
      const double lp = eval(f, moved, w);
      v[j] = base[j] - opts.eps;
      moved[i] = Tensor::from_vector(v, inputs[i].shape(), inputs[i].device());
      const double lm = eval(f, moved, w);
      const double numeric = (lp - lm) / (2 * opts.eps);
      const double a = analytic[j];
      if (!(std::fabs(a - numeric) <= opts.atol + opts.rtol * std::fabs(numeric))) {
        std::ostringstream os;
        os << "input " << i << " element " << j << ": analytic " << a << ", numeric " << numeric;
        return os.str();
      }
    }
  }
  return "";
}

namespace {

// The analytic gradients of sum(f(x) * w) with respect to every F64 input (zeros where
// the loss does not depend on one), as CPU tensors.
std::vector<Tensor> analytic_gradients(const VarFn& f, const std::vector<Tensor>& inputs, Tensor& w,
                                       DType grad_dtype = DType::F64) {
  std::vector<Var> xs;
  for (const Tensor& t : inputs) xs.emplace_back(t, t.dtype() == grad_dtype);
  const Var loss = weighted_loss(f, xs, w);
  const Gradients g = loss.requires_grad() ? backward(loss) : Gradients();
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != grad_dtype) continue;
    out.push_back(g.contains(xs[i]) ? g[xs[i]].to(Device::cpu()).cast(DType::F64)
                                    : zeros(inputs[i].shape(), DType::F64, Device::cpu()));
  }
  return out;
}

// The second-order functional of gradgradcheck: Σ_i sum(∂L/∂x_i * v_i).
VarFn second_order(const VarFn& f, Tensor& w, const std::vector<Tensor>& vs) {
  return [&f, &w, vs](const std::vector<Var>& xs) -> Var {
    const Var loss = weighted_loss(f, xs, w);
    if (!loss.requires_grad()) return sum(xs[0]) * 0.0;
    const VarGradients g = backward(loss, {.create_graph = true});
    Var acc;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!g.contains(xs[i])) continue;
      const Var term = sum(g[xs[i]] * Var(vs[i].cast(xs[i].dtype()).to(xs[i].device())));
      acc = acc.defined() ? acc + term : term;
    }
    return acc.defined() ? acc : sum(xs[0]) * 0.0;
  };
}

// The inputs on dev, F64 ones as `real` (F32 where the device has no F64).
std::vector<Tensor> on_device(const std::vector<Tensor>& ts, Device dev, DType real) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back((t.dtype() == DType::F64 ? t.cast(real) : t).to(dev));
  return out;
}

// First- and second-order gradients computed on `dev` must equal the CPU's: both are
// F64, and they differ only by the rounding of differently ordered sums and of the
// device's own math functions (a few ulp each), so the bound is far tighter than the
// central-difference one.
// A device without F64 (WebGPU) computes them in F32, and so does the CPU it is compared
// with (an F32 gradient can be far from the F64 one where the op is ill-conditioned, e.g.
// cdist's second order at p = 0.5); the bound is F32's: a chain of up to some tens of f32
// roundings (6e-8 relative each), summed in different orders.
std::string compare_on_device(const VarFn& f, const std::vector<Tensor>& inputs, Device dev) {
  const bool f64 = backend_for(dev).supports_dtype(DType::F64);
  const DType real = f64 ? DType::F64 : DType::F32;
  const double kAtol = f64 ? 1e-11 : 1e-5, kRtol = f64 ? 1e-9 : 1e-4;
  std::vector<Tensor> vs;
  for (size_t i = 0; i < inputs.size(); ++i) vs.push_back(random_like(inputs[i], 1000 + i));
  for (int order = 1; order <= 2; ++order) {
    Tensor w_cpu, w_dev;
    const VarFn g_cpu = order == 1 ? f : second_order(f, w_cpu, vs);
    Tensor w2_cpu, w2_dev;
    const std::vector<Tensor> want =
        analytic_gradients(g_cpu, on_device(inputs, Device::cpu(), real), w2_cpu, real);
    w_dev = w_cpu.defined() ? w_cpu.cast(real).to(dev) : Tensor();
    w2_dev = w2_cpu.cast(real).to(dev);
    const VarFn g_dev = order == 1 ? f : second_order(f, w_dev, vs);
    const std::vector<Tensor> got =
        analytic_gradients(g_dev, on_device(inputs, dev, real), w2_dev, real);
    for (size_t i = 0; i < want.size(); ++i) {
      const std::vector<double> a = got[i].contiguous().to_vector<double>();
      const std::vector<double> b = want[i].contiguous().to_vector<double>();
      for (size_t j = 0; j < a.size(); ++j) {
        const bool both_nan = std::isnan(a[j]) && std::isnan(b[j]);
        if (!both_nan && !(std::fabs(a[j] - b[j]) <= kAtol + kRtol * std::fabs(b[j]))) {
          std::ostringstream os;
          os << "order " << order << ", gradient " << i << " element " << j << ": " << dev
             << " gives " << a[j] << ", cpu " << b[j];
          return os.str();
        }
      }
    }
  }
  return "";
}

std::mutex g_mu;
std::map<std::pair<OpId, int>, bool>& results() {
  static std::map<std::pair<OpId, int>, bool> r;
  return r;
}
// Per op and non-CPU backend: did its gradients match the CPU's.
std::map<std::pair<OpId, std::string>, bool>& device_results() {
  static std::map<std::pair<OpId, std::string>, bool> r;
  return r;
}
// Per op and non-CPU backend: a check it could not run for a dtype it lacks (an F64
// operand on WebGPU). Reported apart: neither matched nor failed.
std::set<std::pair<OpId, std::string>>& device_skipped() {
  static std::set<std::pair<OpId, std::string>> r;
  return r;
}
}  // namespace

std::string gradgradcheck(const VarFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& opts) {
  Tensor w;
  std::vector<Tensor> vs;
  for (size_t i = 0; i < inputs.size(); ++i) vs.push_back(random_like(inputs[i], 1000 + i));
  return gradcheck(second_order(f, w, vs), inputs, opts);
}

void record_gradcheck(OpId op, int order, bool passed) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto [it, inserted] = results().try_emplace({op, order}, passed);
  if (!inserted) it->second = it->second && passed;
}

void check_gradients(OpId op, const std::string& what, const VarFn& f,
                     const std::vector<Tensor>& inputs, const GradcheckOptions& opts) {
  std::string first, second;
  try {
    first = gradcheck(f, inputs, opts);
  } catch (const std::exception& e) {
    first = std::string("threw: ") + e.what();
  }
  try {
    second = gradgradcheck(f, inputs, opts);
  } catch (const std::exception& e) {
    second = std::string("threw: ") + e.what();
  }
  record_gradcheck(op, 1, first.empty());
  record_gradcheck(op, 2, second.empty());
  if (!first.empty())
    ADD_FAILURE() << "[" << op_name(op) << "] " << what << ", first order: " << first;
  if (!second.empty())
    ADD_FAILURE() << "[" << op_name(op) << "] " << what << ", second order: " << second;
  for (const TestDevice& td : test_devices()) {
    if (td.device.is_cpu() || !td.available) continue;
    std::string msg;
    try {
      msg = compare_on_device(f, inputs, td.device);
    } catch (const std::exception& e) {
      // A dtype the device cannot hold (F64 on WebGPU): skipped, not matched.
      if (refused_dtype(e, td.device)) {
        std::lock_guard<std::mutex> lock(g_mu);
        device_skipped().insert({op, td.device.str()});
        continue;
      }
      msg = std::string("threw: ") + e.what();
    }
    {
      std::lock_guard<std::mutex> lock(g_mu);
      auto [it, inserted] = device_results().try_emplace({op, td.device.str()}, msg.empty());
      if (!inserted) it->second = it->second && msg.empty();
    }
    if (!msg.empty()) ADD_FAILURE() << "[" << op_name(op) << "] " << what << ", " << msg;
  }
}

namespace {
class GradcheckReport : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(g_mu);
    int diff = 0, both = 0;
    std::string missing;
    for (const OpInfo& info : all_ops()) {
      if (!info.differentiable) continue;
      ++diff;
      const auto a = results().find({info.id, 1}), b = results().find({info.id, 2});
      const bool ok = a != results().end() && a->second && b != results().end() && b->second;
      if (ok)
        ++both;
      else {
        missing += ' ';
        missing += info.name;
      }
    }
    std::cout << "Gradient checks (float64, first and second order): " << both << "/" << diff
              << " differentiable ops pass both\n";
    if (!missing.empty()) std::cout << "  without a passing check:" << missing << "\n";
    if (coverage_enforced() && !missing.empty())
      ADD_FAILURE() << "differentiable ops without passing gradient checks:" << missing;
    for (const TestDevice& td : test_devices()) {
      if (td.device.is_cpu()) continue;
      if (!td.available) {
        std::cout << "Gradients on " << td.device << ": skipped (" << td.reason << ")\n";
        continue;
      }
      int same = 0;
      std::string differ, skipped;
      for (const OpInfo& info : all_ops()) {
        if (!info.differentiable) continue;
        const auto it = device_results().find({info.id, td.device.str()});
        if (it != device_results().end() && it->second) {
          ++same;
        } else if (it == device_results().end() &&
                   device_skipped().count({info.id, td.device.str()})) {
          skipped += ' ';
          skipped += info.name;
        } else {
          differ += ' ';
          differ += info.name;
        }
      }
      std::cout << "Gradients on " << td.device
                << " equal to the CPU's (first and second order): " << same << "/" << diff
                << " differentiable ops\n";
      if (!differ.empty()) std::cout << "  without a match:" << differ << "\n";
      if (!skipped.empty())
        std::cout << "  skipped (a dtype " << td.device << " lacks):" << skipped << "\n";
      if (coverage_enforced() && !differ.empty())
        ADD_FAILURE() << "differentiable ops whose gradients on " << td.device
                      << " were not shown equal to the CPU's:" << differ;
    }
  }
};
}  // namespace

::testing::Environment* gradcheck_report() { return new GradcheckReport; }

}  // namespace numr::test
