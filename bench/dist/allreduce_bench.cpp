// All-reduce bandwidth of numr's communicator, as nccl-tests measure it: for each size, the
// mean time of back-to-back in-place sums (F32) after a warm-up, the slowest rank's time,
// algbw = bytes / time and busbw = algbw * 2 (n - 1) / n. Rank 0 prints CSV:
//   bytes,time_us,algbw_gbs,busbw_gbs
// Run one process per GPU: scripts/launch-dp.sh -n 2 numr_dist_bench [--device cuda]
// (or --cpu for MPI ranks with --device cpu). bench/dist/run.sh pairs it with PyTorch.
//   numr_dist_bench [--device cuda|cpu] [--min-bytes N] [--max-bytes N]
#include <numr/distributed.h>
#include <numr/numr.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace numr;

int main(int argc, char** argv) {
  Device dev = Device::cuda(0);
  int64_t min_bytes = 1024, max_bytes = int64_t(1) << 30;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      dev = parse_device(argv[++i]);
    } else if (arg == "--min-bytes" && i + 1 < argc) {
      min_bytes = std::atoll(argv[++i]);
    } else if (arg == "--max-bytes" && i + 1 < argc) {
      max_bytes = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--device cuda|cpu] [--min-bytes N] [--max-bytes N]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    auto comm = dist::init_from_env(dev);
    dev = comm->device();
    const int n = comm->world_size();
    // The sum is right before anything is timed.
    Tensor check = full({1000}, double(comm->rank() + 1), DType::F32, dev);
    comm->all_reduce(check);
    const std::vector<float> got = check.to(Device::cpu()).to_vector<float>();
    if (got.front() != float(n * (n + 1) / 2) || got.back() != got.front()) {
      std::fprintf(stderr, "numr_dist_bench: wrong all-reduce result %g\n", double(got.front()));
      return 1;
    }
    if (comm->rank() == 0) {
      std::printf("# numr %s, %d ranks on %s\n", comm->backend().c_str(), n, dev.str().c_str());
      std::printf("bytes,time_us,algbw_gbs,busbw_gbs\n");
    }
    for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      const int iters = bytes <= (int64_t(1) << 20) ? 200 : bytes <= (int64_t(64) << 20) ? 50 : 10;
      Tensor x = zeros({bytes / 4}, DType::F32, dev);
      for (int i = 0; i < 5; ++i) comm->all_reduce(x);
      comm->barrier();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) comm->all_reduce(x);
      synchronize(dev);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
      Tensor slowest = full({1}, secs, DType::F64, dev);
      comm->all_reduce(slowest, dist::ReduceOp::Max);
      const double t = slowest.item_double();
      const double algbw = double(bytes) / t / 1e9;
      if (comm->rank() == 0)
        std::printf("%lld,%.2f,%.3f,%.3f\n", (long long)bytes, t * 1e6, algbw,
                    algbw * 2.0 * (n - 1) / n);
      std::fflush(stdout);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
