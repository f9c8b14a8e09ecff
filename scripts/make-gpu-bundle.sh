#!/usr/bin/env bash
# Packs numr's test program (and the GPU benchmark, the sm_90 GEMM probe and the examples once
# built), the library and every shared library they load beyond glibc into one compressed
# archive, so they run on a GPU machine that has a driver but none of the build dependencies.
#   scripts/make-gpu-bundle.sh [build-dir] [archive]   (defaults: build/release, .gpu/bundle.tar.xz)
# On the GPU machine: mkdir b && tar -xJf bundle.tar.xz -C b &&
#   LD_LIBRARY_PATH=b/lib b/bin/numr_tests
# The multi-GPU tests and figures run from the bundle too: b/scripts/run-dist-tests.sh and
# b/bench/dist/run.sh (they find b/bin and b/lib themselves). The benchmark scripts come
# along in b/bench (CPU: NUMR_LIBS=b/lib b/bench/cpu/run.sh b/bin/numr_gpu_bench out).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
archive=${2:-.gpu/bundle.tar.xz}

cmake --build "$build"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for program in tests/numr_tests tests/numr_dist_tests bench/numr_gpu_bench bench/numr_dist_bench \
  bench/numr_sm90_gemm_probe bench/numr_onednn_probe examples/numr_demo examples/numr_transformer \
  examples/numr_science; do
  [[ -x "$build/$program" ]] && cp "$build/$program" "$stage/bin/"
done
# Everything the programs resolve, except glibc's own libraries (the target has its own).
for program in "$stage"/bin/*; do
  ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# The transformer example's text (numr_transformer --text-dir share/common-licenses).
mkdir -p "$stage/share"
cp -rL /usr/share/common-licenses "$stage/share/"
# The test fixtures, found by walking up from bin/numr_tests.
mkdir -p "$stage/tests"
cp -r "$(dirname "$0")/../tests/data" "$stage/tests/"
# The multi-process launcher and the multi-GPU test runner; the benchmark drivers
# (bench/gpu, bench/cpu, bench/dist: the shell scripts and their Python halves).
mkdir -p "$stage/scripts" "$stage/bench"
cp scripts/launch-dp.sh scripts/run-dist-tests.sh scripts/find-nccl.sh "$stage/scripts/"
cp -r "$(dirname "$0")/../bench/gpu" "$(dirname "$0")/../bench/cpu" "$(dirname "$0")/../bench/dist" \
  "$stage/bench/"
rm -rf "$stage"/bench/*/*.cpp "$stage"/bench/*/__pycache__
mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cJf "$archive" bin lib share tests scripts bench
ls -l "$archive"
