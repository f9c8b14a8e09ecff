// Runs NVIDIA's ptxas on generated PTX, so tests can prove the text assembles for a real
// target. ptxas is found through NUMR_PTXAS, then PATH, then /usr/local/cuda/bin/ptxas;
// tests skip (GTEST_SKIP) with the reason when it is absent.
#pragma once

#include <optional>
#include <string>

namespace numr::test {

// The ptxas executable, or nullopt when none is found.
std::optional<std::string> find_ptxas();

struct PtxasResult {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
  // Assembled with no error and no warning.
  bool ok() const;
};

// Assembles ptx for sm_<sm> (`ptxas -arch=sm_XX`) from a temporary file; warnings count
// as failures (see ok()). Needs find_ptxas() to have found one.
PtxasResult assemble(const std::string& ptx, int sm);
// The same for -arch=<arch> (e.g. "sm_90a"), with extra command-line flags (e.g. "-v").
PtxasResult assemble(const std::string& ptx, const std::string& arch, const std::string& flags);

}  // namespace numr::test
