// Runs NVIDIA's ptxas on generated PTX, so tests can prove the text assembles for a real
// target. ptxas is found through NUMR_PTXAS, then PATH, then /usr/local/cuda/bin/ptxas;
// tests skip (GTEST_SKIP) with the reason when it is absent. NUMR_TEST_PTXAS=off turns it
// off: the sanitized tier sets it, since ptxas is an external program that the sanitizers
// do not see, and the release tier already runs every assembly (docs/testing.md).
#pragma once

#include <optional>
#include <string>

namespace numr::test {

// The ptxas executable, or nullopt when none is found or NUMR_TEST_PTXAS is "off".
std::optional<std::string> find_ptxas();
// Why find_ptxas() returns nullopt, for the tests' GTEST_SKIP.
std::string no_ptxas_reason();

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

// Skips the calling test (reported as skipped) when find_ptxas() finds none.
#define NUMR_REQUIRE_PTXAS() \
  if (!numr::test::find_ptxas()) GTEST_SKIP() << numr::test::no_ptxas_reason()
