// Two small computations a scientist would run, in float64 on the CPU or a GPU:
//
// 1. The Kuramoto-Sivashinsky equation u_t = -u u_x - u_xx - u_xxxx on a periodic domain of
//    length 32 pi, solved by a Fourier pseudo-spectral method with fourth-order exponential
//    time differencing (ETDRK4, coefficients by contour integrals). It starts smooth and
//    turns chaotic; the run prints the energy as it goes, writes u(x, t) to ks.csv, and
//    checks the solver on the linear part alone against its exact solution.
// 2. Estimating a diffusion coefficient from noisy measurements of the heat equation: the
//    Fourier amplitudes of the measured field decay as exp(-nu k^2 t), so log-amplitudes are
//    linear in the unknowns (one intercept per mode and nu). A least-squares fit gives nu,
//    its standard error from the residual and the normal matrix, and the design's condition
//    number; the fit is written to fit.csv.
//
//   numr_science [--device cpu|cuda:0] [--out DIR] [--steps N]
// Exits 0 when the checks pass: the linear solver within 1e-9 of the exact solution, the
// run stays finite and bounded, and nu is recovered within four standard errors.
#include <numr/numr.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

using namespace numr;
using cd = std::complex<double>;

namespace {

struct Options {
  Device device = Device::cpu();
  std::string out = "science_out";
  int steps = 600;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--device")
      o.device = parse_device(v);
    else if (k == "--out")
      o.out = v;
    else if (k == "--steps")
      o.steps = std::stoi(v);
    else
      throw std::invalid_argument("unknown option " + k);
  }
  return o;
}

Tensor upload(const std::vector<double>& v, Device d) {
  return Tensor::from_vector(v, Shape{int64_t(v.size())}).to(d);
}

Tensor upload_complex(const std::vector<cd>& v, Device d) {
  return Tensor::from_vector(v, Shape{int64_t(v.size())}).to(d);
}

// The ETDRK4 coefficients of the linear operator lin (one value per Fourier mode) for step
// h, each the mean of its formula over M points on a circle around h lin (Kassam and
// Trefethen's contour integral, which avoids the cancellation near 0).
struct Etdrk4 {
  std::vector<cd> e, e2, q, f1, f2, f3;
};

Etdrk4 etdrk4_coefficients(const std::vector<double>& lin, double h) {
  constexpr int M = 32;
  Etdrk4 c;
  for (double l : lin) {
    cd q = 0, f1 = 0, f2 = 0, f3 = 0;
    for (int j = 1; j <= M; ++j) {
      const cd r = std::exp(cd(0, std::numbers::pi * (j - 0.5) / M));
      const cd z = h * l + r, ez = std::exp(z), z3 = z * z * z;
      q += (std::exp(z / 2.0) - 1.0) / z;
      f1 += (-4.0 - z + ez * (4.0 - 3.0 * z + z * z)) / z3;
      f2 += (2.0 + z + ez * (z - 2.0)) / z3;
      f3 += (-4.0 - 3.0 * z - z * z + ez * (4.0 - z)) / z3;
    }
    c.e.push_back(std::exp(h * l));
    c.e2.push_back(std::exp(h * l / 2));
    c.q.push_back(h * (q / double(M)).real());
    c.f1.push_back(h * (f1 / double(M)).real());
    c.f2.push_back(h * (f2 / double(M)).real());
    c.f3.push_back(h * (f3 / double(M)).real());
  }
  return c;
}

struct Spectral {
  Tensor e, e2, q, f1, f2, f3, g;  // Complex128 [n/2 + 1]
  int64_t n = 0;
  bool nonlinear = true;

  // -u u_x = -(u^2 / 2)_x in Fourier space, from the spectrum v.
  Tensor rhs(const Tensor& v) const {
    if (!nonlinear) return zeros_like(v);
    const Tensor u = fft::irfft(v, n);
    return g * fft::rfft(u * u);
  }

  Tensor step(const Tensor& v) const {
    const Tensor nv = rhs(v);
    const Tensor a = e2 * v + q * nv;
    const Tensor na = rhs(a);
    const Tensor b = e2 * v + q * na;
    const Tensor nb = rhs(b);
    const Tensor c = e2 * a + q * (nb * 2.0 - nv);
    const Tensor nc = rhs(c);
    return e * v + nv * f1 + (na + nb) * f2 * 2.0 + nc * f3;
  }
};

Spectral make_solver(int64_t n, double length, double h, bool nonlinear, Device d) {
  std::vector<double> lin;
  std::vector<cd> g;
  for (int64_t j = 0; j <= n / 2; ++j) {
    const double k = 2 * std::numbers::pi * double(j) / length;
    lin.push_back(k * k - k * k * k * k);
    g.push_back(j == n / 2 ? cd(0) : cd(0, -0.5 * k));  // no derivative of the Nyquist mode
  }
  const Etdrk4 c = etdrk4_coefficients(lin, h);
  Spectral s;
  s.e = upload_complex(c.e, d);
  s.e2 = upload_complex(c.e2, d);
  s.q = upload_complex(c.q, d);
  s.f1 = upload_complex(c.f1, d);
  s.f2 = upload_complex(c.f2, d);
  s.f3 = upload_complex(c.f3, d);
  s.g = upload_complex(g, d);
  s.n = n;
  s.nonlinear = nonlinear;
  return s;
}

double energy(const Tensor& u) { return mean(u * u).item<double>(); }

// Part 1. Returns false when a check fails.
bool kuramoto_sivashinsky(const Options& o) {
  constexpr int64_t n = 128;
  const double length = 32 * std::numbers::pi, h = 0.25;
  std::vector<double> x(n), u0(n);
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = length * double(i) / double(n);
    u0[size_t(i)] = std::cos(x[size_t(i)] / 16) * (1 + std::sin(x[size_t(i)] / 16));
  }
  const Tensor u_init = upload(u0, o.device);
  bool ok = true;

  // The linear part alone has the exact solution exp(t lin) in Fourier space.
  {
    const Spectral linear = make_solver(n, length, h, false, o.device);
    Tensor v = fft::rfft(u_init);
    const Tensor v0 = v;
    for (int s = 0; s < 40; ++s) v = linear.step(v);
    std::vector<cd> exact;
    for (int64_t j = 0; j <= n / 2; ++j) {
      const double k = 2 * std::numbers::pi * double(j) / length;
      exact.push_back(std::exp(cd(40 * h * (k * k - k * k * k * k))));
    }
    const Tensor want = fft::irfft(v0 * upload_complex(exact, o.device), n);
    const double err = max(abs(fft::irfft(v, n) - want)).item<double>();
    std::printf("linear check: max |u - exact| after t = %.1f: %.2e\n", 40 * h, err);
    ok = ok && err < 1e-9;
  }

  const Spectral ks = make_solver(n, length, h, true, o.device);
  std::ofstream csv(o.out + "/ks.csv");
  csv << "t,x,u\n";
  Tensor v = fft::rfft(u_init);
  for (int s = 0; s <= o.steps; ++s) {
    if (s % 10 == 0) {
      const Tensor u = fft::irfft(v, n);
      const std::vector<double> uh = u.to(Device::cpu()).to_vector<double>();
      for (int64_t i = 0; i < n; ++i)
        csv << s * h << ',' << x[size_t(i)] << ',' << uh[size_t(i)] << '\n';
      if (s % 100 == 0) {
        const double en = energy(u), peak = max(abs(u)).item<double>();
        std::printf("t = %6.1f  energy %.4f  max|u| %.3f\n", s * h, en, peak);
        ok = ok && std::isfinite(en) && peak < 10;
      }
    }
    if (s < o.steps) v = ks.step(v);
  }
  std::printf("wrote %s/ks.csv\n", o.out.c_str());
  return ok;
}

// Part 2. Returns false when nu is not recovered.
bool estimate_diffusion(const Options& o) {
  constexpr int64_t n = 256, modes = 8, times = 11;
  constexpr double nu = 0.02, noise = 2e-2;
  Generator gen(2026);
  // A random smooth initial field: modes 1..8 with random amplitudes and phases.
  const Tensor amp = add_scalar(rand({modes}, DType::F64, o.device, gen), 0.5);
  const Tensor phase = mul_scalar(rand({modes}, DType::F64, o.device, gen), 2 * std::numbers::pi);
  const Tensor spec0 = pad(polar(amp, phase) * double(n) / 2.0, {1, n / 2 - modes});
  std::vector<double> k2, t(times);
  for (int64_t j = 1; j <= modes; ++j) k2.push_back(double(j * j));
  for (int64_t i = 0; i < times; ++i) t[size_t(i)] = 0.2 * double(i);

  // Measurements: the exact solution at each time plus Gaussian noise; then the observed
  // log-amplitudes of modes 1..8.
  std::vector<Tensor> logs;
  for (int64_t i = 0; i < times; ++i) {
    std::vector<double> decay(n / 2 + 1);
    for (int64_t j = 0; j <= n / 2; ++j)
      decay[size_t(j)] = std::exp(-nu * double(j * j) * t[size_t(i)]);
    const Tensor u = fft::irfft(spec0 * upload(decay, o.device).cast(DType::Complex128), n);
    const Tensor measured = u + randn({n}, DType::F64, o.device, gen) * noise;
    logs.push_back(log(abs(fft::rfft(measured)).narrow(0, 1, modes)));
  }
  const Tensor y = stack(logs, 0).reshape({times * modes, 1});

  // Design: row (time i, mode j) = [one-hot(j), -k_j^2 t_i]; unknowns [c_1..c_8, nu].
  std::vector<double> design(size_t(times * modes * (modes + 1)), 0.0);
  for (int64_t i = 0; i < times; ++i)
    for (int64_t j = 0; j < modes; ++j) {
      double* row = design.data() + (i * modes + j) * (modes + 1);
      row[j] = 1;
      row[modes] = -k2[size_t(j)] * t[size_t(i)];
    }
  const Tensor a = Tensor::from_vector(design, Shape{times * modes, modes + 1}).to(o.device);
  const Tensor theta = linalg::lstsq(a, y);
  const Tensor resid = y - matmul(a, theta);
  const double dof = double(times * modes - (modes + 1));
  const double sigma2 = sum(resid * resid).item<double>() / dof;
  const Tensor normal = matmul(a.transpose(0, 1), a);
  const Tensor cov = linalg::inv(normal) * sigma2;
  const double nu_hat = theta.narrow(0, modes, 1).item<double>();
  const double se = std::sqrt(cov.narrow(0, modes, 1).narrow(1, modes, 1).item<double>());
  const Tensor ev = linalg::eigvalsh(normal);
  std::printf(
      "diffusion fit: nu = %.6e +- %.1e (true %.6e), residual rms %.2e, cond(A) %.1f, "
      "normal-matrix eigenvalues %.3g .. %.3g\n",
      nu_hat, se, nu, std::sqrt(sigma2), linalg::cond(a).item<double>(), min(ev).item<double>(),
      max(ev).item<double>());
  std::ofstream csv(o.out + "/fit.csv");
  csv << "t,k,log_amplitude,fitted\n";
  const std::vector<double> yh = y.to(Device::cpu()).to_vector<double>();
  const std::vector<double> fh = matmul(a, theta).to(Device::cpu()).to_vector<double>();
  for (int64_t i = 0; i < times; ++i)
    for (int64_t j = 0; j < modes; ++j)
      csv << t[size_t(i)] << ',' << j + 1 << ',' << yh[size_t(i * modes + j)] << ','
          << fh[size_t(i * modes + j)] << '\n';
  std::printf("wrote %s/fit.csv\n", o.out.c_str());
  return std::abs(nu_hat - nu) < 4 * se && se < 1e-3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    std::filesystem::create_directories(o.out);
    std::printf("numr_science on %s\n", o.device.str().c_str());
    const bool ks_ok = kuramoto_sivashinsky(o);
    const bool fit_ok = estimate_diffusion(o);
    std::printf("%s\n", ks_ok && fit_ok ? "checks passed" : "CHECKS FAILED");
    return ks_ok && fit_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numr_science: %s\n", e.what());
    return 2;
  }
}
