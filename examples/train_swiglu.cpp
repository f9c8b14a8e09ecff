// numr's main example: a small network of SwiGLU blocks, built from the fused ops
// (matmul_bias_activation, silu_mul, matmul_bias_residual), trained with AdamW to classify
// three interleaved spirals that it generates. Prints one line per epoch and exits 0 once
// the held-out accuracy reaches the target.
//   numr_demo [--device cpu] [--epochs N] [--threads N] [--dtype f32|bf16] [--distributed]
// --distributed trains data-parallel in the world a launcher started
// (scripts/launch-dp.sh -n 2 numr_demo --device cuda --distributed, or --cpu for MPI ranks):
// each rank takes its share of every batch and the gradients are averaged over ranks.
#include <numr/distributed.h>
#include <numr/numr.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

using namespace numr;

namespace {

constexpr int kClasses = 3;
constexpr double kTargetAccuracy = 0.97;

struct Dataset {
  Tensor x;       // [n, 2]
  Tensor onehot;  // [n, classes]
  std::vector<int64_t> labels;
};

// Three spirals of `per_class` points each, with Gaussian noise; reproducible from seed.
Dataset make_spirals(int64_t per_class, uint64_t seed, DType dtype, Device dev) {
  Generator gen(seed);
  const int64_t n = per_class * kClasses;
  const std::vector<double> t = rand({n}, DType::F64, Device::cpu(), gen).to_vector<double>();
  const std::vector<double> noise =
      randn({n, 2}, DType::F64, Device::cpu(), gen).to_vector<double>();
  std::vector<double> x(size_t(n) * 2), onehot(size_t(n) * kClasses, 0.0);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % kClasses;
    const double r = t[size_t(i)];
    const double angle = 2 * std::numbers::pi * double(c) / kClasses + 4.0 * r;
    x[size_t(2 * i)] = r * std::sin(angle) + 0.04 * noise[size_t(2 * i)];
    x[size_t(2 * i + 1)] = r * std::cos(angle) + 0.04 * noise[size_t(2 * i + 1)];
    onehot[size_t(i * kClasses + c)] = 1.0;
    labels[size_t(i)] = c;
  }
  return {Tensor::from_vector(x, {n, 2}).cast(dtype).to(dev),
          Tensor::from_vector(onehot, {n, kClasses}).cast(dtype).to(dev), labels};
}

struct Model {
  int64_t width = 64, hidden = 128;
  int blocks = 2;
  Var w_in, b_in, w_out, b_out;
  std::vector<Var> w13, b13, w2, b2;  // per block: gate and up projections fused, down

  Model(DType dtype, Device dev, Generator& gen) {
    auto param = [&](const Shape& shape, double scale) {
      return Var((randn(shape, DType::F32, Device::cpu(), gen) * scale).cast(dtype).to(dev), true);
    };
    auto zero = [&](const Shape& shape) { return Var(zeros(shape, dtype, dev), true); };
    w_in = param({2, width}, 1.5);
    b_in = zero({width});
    for (int i = 0; i < blocks; ++i) {
      w13.push_back(param({width, 2 * hidden}, 1.0 / std::sqrt(double(width))));
      b13.push_back(zero({2 * hidden}));
      w2.push_back(param({hidden, width}, 0.5 / std::sqrt(double(hidden))));
      b2.push_back(zero({width}));
    }
    w_out = param({width, kClasses}, 1.0 / std::sqrt(double(width)));
    b_out = zero({kClasses});
  }

  std::vector<Var> params() const {
    std::vector<Var> p = {w_in, b_in, w_out, b_out};
    for (int i = 0; i < blocks; ++i)
      p.insert(p.end(), {w13[size_t(i)], b13[size_t(i)], w2[size_t(i)], b2[size_t(i)]});
    return p;
  }

  // logits [n, classes]
  Var forward(const Var& x) const {
    Var h = matmul_bias_activation(x, w_in, b_in, Activation::Gelu);
    for (int i = 0; i < blocks; ++i) {
      const Var gate_up =
          matmul_bias_activation(h, w13[size_t(i)], b13[size_t(i)], Activation::None);
      const std::vector<Var> parts = chunk(gate_up, 2, -1);
      const Var a = silu_mul(parts[0], parts[1]);                    // SwiGLU
      h = matmul_bias_residual(a, w2[size_t(i)], b2[size_t(i)], h);  // down projection + skip
    }
    return matmul_bias_activation(h, w_out, b_out, Activation::None);
  }
};

double accuracy(const Tensor& logits, const std::vector<int64_t>& labels, int64_t offset) {
  const std::vector<int64_t> pred = argmax(logits, 1).to(Device::cpu()).to_vector<int64_t>();
  int64_t right = 0;
  for (size_t i = 0; i < pred.size(); ++i) right += pred[i] == labels[size_t(offset) + i];
  return double(right) / double(pred.size());
}

}  // namespace

int main(int argc, char** argv) {
  Device dev = Device::cpu();
  int epochs = 40;
  DType dtype = DType::F32;
  bool distributed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      dev = parse_device(argv[++i]);
    } else if (arg == "--epochs" && i + 1 < argc) {
      epochs = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      set_num_threads(std::atoi(argv[++i]));
    } else if (arg == "--dtype" && i + 1 < argc) {
      const std::string d = argv[++i];
      dtype = d == "bf16" ? DType::BF16 : DType::F32;
    } else if (arg == "--distributed") {
      distributed = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--device cpu] [--epochs N] [--threads N] [--dtype f32|bf16] "
                   "[--distributed]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    // One process is a world of one: the same code path, every collective the identity.
    std::unique_ptr<dist::Communicator> comm =
        distributed ? dist::init_from_env(dev) : dist::local_communicator(dev);
    dev = comm->device();
    const int rank = comm->rank(), world = comm->world_size();
    const bool lead = rank == 0;  // prints for the world
    const Dataset train = make_spirals(3000, 1, dtype, dev);
    const Dataset test = make_spirals(1000, 2, dtype, dev);
    Generator gen(42);
    Model model(dtype, dev, gen);
    AdamW opt(model.params(), {.lr = 3e-3, .weight_decay = 1e-4});
    // Without --distributed, plain training: no gradient buckets at all.
    std::unique_ptr<dist::DataParallel> dp;
    if (distributed) dp = std::make_unique<dist::DataParallel>(*comm, model.params());
    const int64_t n = train.x.size(0), batch = 250;
    if (lead)
      std::printf(
          "numr: SwiGLU network on %s (%s, %d threads) x %d rank%s, %lld training and %lld test "
          "points\n",
          dev.str().c_str(), std::string(dtype_name(dtype)).c_str(), num_threads(), world,
          world == 1 ? "" : "s", (long long)n, (long long)test.x.size(0));
    double test_acc = 0;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      const auto t0 = std::chrono::steady_clock::now();
      double loss_sum = 0;
      int steps = 0;
      for (int64_t start = 0; start < n; start += batch) {
        // This rank's equal share of the batch: the average of the shares' mean losses is
        // the batch's mean loss, so the averaged gradient is the whole batch's.
        const int64_t len = std::min(batch, n - start) / world;
        const int64_t first = start + rank * len;
        const Var xb(train.x.narrow(0, first, len)), yb(train.onehot.narrow(0, first, len));
        const Var logp = log_softmax(model.forward(xb), 1);
        const Var loss = -sum(logp * yb) / double(len);  // cross-entropy
        opt.step(dp ? dp->reduce(backward(loss)) : backward(loss));
        loss_sum += loss.tensor().item_double();
        ++steps;
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // F32: every backend has it (WebGPU has no F64); the mean over every rank's share.
      Tensor mean_loss = full({1}, loss_sum / steps, DType::F32, dev);
      comm->all_reduce(mean_loss, dist::ReduceOp::Avg);
      NoGradGuard no_grad;
      const double train_acc = accuracy(model.forward(Var(train.x)).tensor(), train.labels, 0);
      test_acc = accuracy(model.forward(Var(test.x)).tensor(), test.labels, 0);
      if (lead)
        std::printf("epoch %3d  loss %.4f  train acc %.3f  test acc %.3f  %8.0f samples/s\n", epoch,
                    mean_loss.item_double(), train_acc, test_acc, double(n) / secs);
      if (test_acc >= kTargetAccuracy && epoch >= 5) break;
    }
    const bool ok = test_acc >= kTargetAccuracy;
    if (lead)
      std::printf("%s: test accuracy %.3f (target %.2f)\n", ok ? "reached" : "NOT reached",
                  test_acc, kTargetAccuracy);
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
