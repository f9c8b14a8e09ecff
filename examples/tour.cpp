// A tour of numr: creation, views, elementwise ops with broadcasting, reductions,
// softmax, matmul, printing, Vars mixed with Tensors and a loss, then a least-squares fit
// checked against the weights that generated its data.
//   numr_tour [--device cpu|cuda:N] [--threads N]
#include <numr/numr.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

using namespace numr;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Least squares by gradient descent on a linear model, written with numr ops only.
int fit_linear_model(Device dev) {
  Generator gen(7);
  const int64_t n = 4096, d = 16;
  const Tensor x = randn({n, d}, DType::F32, dev, gen);
  const Tensor true_w = randn({d, 1}, DType::F32, dev, gen);
  const Tensor y = matmul(x, true_w) + 0.5;
  Tensor w = zeros({d, 1}, DType::F32, dev);
  Tensor b = zeros({1}, DType::F32, dev);
  const double lr = 0.1;
  const auto t0 = std::chrono::steady_clock::now();
  double loss = 0.0;
  for (int epoch = 1; epoch <= 60; ++epoch) {
    const Tensor err = matmul(x, w) + b - y;           // [n, 1]
    loss = mean(square(err)).item<float>();
    const Tensor grad_w = matmul(x.transpose(0, 1), err) * (2.0 / double(n));
    const Tensor grad_b = sum(err) * (2.0 / double(n));
    w = w - grad_w * lr;
    b = b - grad_b * lr;
    if (epoch % 10 == 0)
      std::printf("epoch %2d  mse %.6f  %.0f samples/s\n", epoch, loss,
                  double(n) * epoch / seconds_since(t0));
  }
  const double w_err = max(abs(w - true_w)).item<float>();
  std::printf("max |w - w_true| = %.2e, bias = %.4f (true 0.5)\n", w_err, double(b.item<float>()));
  const bool ok = loss < 1e-6 && w_err < 1e-3 && std::fabs(b.item<float>() - 0.5f) < 1e-3f;
  std::printf("%s: the fit recovers the generating weights\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Device dev = Device::cpu();
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device") && i + 1 < argc) dev = parse_device(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) set_num_threads(std::atoi(argv[++i]));
  }
  try {
    std::printf("numr on %s, %d threads\n", dev.str().c_str(), num_threads());
    const Tensor a = Tensor::from_vector({0.f, 1.f, -1.f}, {3}, dev);
    const Tensor b = full({3}, 2.0, DType::F32, dev);
    std::cout << "silu(a) * b = " << silu(a) * b << "\n";
    const Tensor m = arange(0, 6, 1, DType::F32, dev).reshape({2, 3});
    std::cout << "m =\n" << m << "\n";
    std::cout << "m.T (a view) =\n" << m.transpose(0, 1) << "\n";
    std::cout << "softmax(m, -1) =\n" << m.softmax(-1) << "\n";
    std::cout << "m.sum({0}) = " << m.sum({0}) << "\n";
    std::cout << "stddev(m, {1}) = " << stddev(m, {1}) << "\n";
    std::cout << "1 / (m + 1) =\n" << 1 / (m + 1) << "\n";
    std::cout << "tril(m @ m.T) =\n" << tril(m.matmul(m.transpose(0, 1))) << "\n";
    std::cout << "cast(m, BF16) + 0.5 =\n" << m.cast(DType::BF16) + 0.5 << "\n";
    std::cout << "arange(5000) = " << arange(0, 5000, 1, DType::I64, dev) << "\n";
    // A Var times a Tensor (a constant), and a loss with its gradient.
    const Var logits(m, true);
    const Tensor target = Tensor::from_vector<int64_t>({2, 0}, {2}, dev);
    const Var ce = cross_entropy(logits * full({1, 3}, 2.0, DType::F32, dev), target);
    std::cout << "cross_entropy = " << ce << "\n";
    std::cout << "d ce / d logits =\n" << backward(ce)[logits] << "\n";
    return fit_linear_model(dev);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
