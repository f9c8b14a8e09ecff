// The sm_90a GEMM prototype (backends/cuda/sm90_gemm.h) assembles with ptxas for sm_90a
// with no error and no warning (a warning would also be ptxas ignoring setmaxnreg or
// serialising the wgmma pipeline), and without local memory: no stack frame, no spills.
// Needs no GPU: only ptxas (skipped without).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <tuple>

#include "backends/cuda/sm90_gemm.h"
#include "numr/error.h"
#include "support/ptxas.h"

namespace numr::cuda {
namespace {

struct Assembled {
  int exit_status = -1;
  std::string output;
};

// `ptxas -arch=sm_90a -v` on ptx, stdout and stderr together.
Assembled assemble_sm90a(const std::string& ptx) {
  char name[] = "/tmp/numr_sm90_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file");
  close(fd);
  const std::string ptx_path = std::string(name) + ".ptx", out_path = std::string(name) + ".cubin";
  std::rename(name, ptx_path.c_str());
  std::ofstream(ptx_path) << ptx;
  const std::string cmd = "'" + *numr::test::find_ptxas() + "' -arch=sm_90a -v '" + ptx_path +
                          "' -o '" + out_path + "' 2>&1";
  Assembled r;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.output.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::remove(ptx_path.c_str());
  std::remove(out_path.c_str());
  return r;
}

long number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return -1;
  return std::stol(m[1].str());
}

void expect_assembles(Sm90GemmConfig config) {
  if (!numr::test::find_ptxas())
    GTEST_SKIP() << "ptxas not found (set NUMR_PTXAS, put it on PATH, or install it in "
                    "/usr/local/cuda/bin)";
  const int ptx_major = config.ptx_major, ptx_minor = config.ptx_minor;
  const std::string ptx = sm90_gemm_ptx(config);
  EXPECT_NE(ptx.find(".target sm_90a\n"), std::string::npos);
  EXPECT_NE(
      ptx.find(".version " + std::to_string(ptx_major) + "." + std::to_string(ptx_minor) + "\n"),
      std::string::npos);
  EXPECT_NE(ptx.find(".visible .entry " + config.name() + "("), std::string::npos);

  const Assembled r = assemble_sm90a(ptx);
  const std::string what = config.name() + " (PTX ISA " + std::to_string(ptx_major) + "." +
                           std::to_string(ptx_minor) + ")";
  ASSERT_EQ(r.exit_status, 0) << what << ":\n" << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << what << ":\n" << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << what << ":\n" << r.output;
  const long stack = number_after(r.output, R"((\d+) bytes stack frame)");
  const long spill_st = number_after(r.output, R"((\d+) bytes spill stores)");
  const long spill_ld = number_after(r.output, R"((\d+) bytes spill loads)");
  const long regs = number_after(r.output, R"(Used (\d+) registers)");
  EXPECT_EQ(stack, 0) << what << ":\n" << r.output;
  EXPECT_EQ(spill_st, 0) << what << ":\n" << r.output;
  EXPECT_EQ(spill_ld, 0) << what << ":\n" << r.output;
  // 384 threads, one CTA per SM: at most 65536 / 384 rounded down to a multiple of 8 at
  // entry, which setmaxnreg then moves between the warpgroups.
  EXPECT_GT(regs, 0) << what << ":\n" << r.output;
  EXPECT_LE(regs, 168) << what << ":\n" << r.output;
  std::printf("[ Sm90Gemm ] %s: %ld registers, %ld bytes stack, %ld/%ld bytes spilled\n",
              what.c_str(), regs, stack, spill_st, spill_ld);
}

TEST(Sm90GemmPtx, AssemblesForSm90aWithoutSpills) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    for (int cluster : {1, 2})
      for (const auto& [isa_minor, schedule, stages, group] :
           {std::tuple{0, Sm90Schedule::PingPong, 0, 16},
            std::tuple{7, Sm90Schedule::PingPong, 7, 0},
            std::tuple{7, Sm90Schedule::Cooperative, 0, 8},
            std::tuple{0, Sm90Schedule::Cooperative, 0, 0}})
        expect_assembles(Sm90GemmConfig{.act = act,
                                        .cluster = cluster,
                                        .ptx_major = 8,
                                        .ptx_minor = isa_minor,
                                        .schedule = schedule,
                                        .stages = stages,
                                        .group_rows = group});
}

TEST(Sm90GemmPtx, NamesAndRefusals) {
  EXPECT_EQ(Sm90GemmConfig{.act = Activation::Gelu}.name(),
            "sm90_gemm_bf16_gelu_pp128x128x64_s6_g16");
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Silu, .cluster = 2}.name()),
            "sm90_gemm_bf16_silu_pp128x128x64_s6_g16_c2");
  EXPECT_EQ((Sm90GemmConfig{
                .act = Activation::Relu, .schedule = Sm90Schedule::Cooperative, .group_rows = 0}
                 .name()),
            "sm90_gemm_bf16_relu_128x256x64_s4");
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.group_rows = -1}), BackendError);
  EXPECT_EQ(sm90_gemm_layout(Sm90GemmConfig{}).shared_bytes, 6 * 32768 + 2 * 6 * 8 + 1024);
  EXPECT_EQ(sm90_gemm_layout(Sm90GemmConfig{.schedule = Sm90Schedule::Cooperative}).stage_bytes,
            49152);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.stages = 8}), BackendError);
  EXPECT_NE(sm90_gemm_ptx(Sm90GemmConfig{.cluster = 2}).find(".reqnctapercluster 2, 1, 1"),
            std::string::npos);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.cluster = 4}), BackendError);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 512, .n = 256, .k = 64}), 2);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 384, .n = 256, .k = 64}), 1);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 512, .n = 256, .k = 64, .cluster = 1}), 1);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.act = Activation::Tanh}), BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.ptx_major = 7, .ptx_minor = 8}), BackendError);
  EXPECT_TRUE(sm90_gemm_shape_ok(8192, 4096, 4096));
  EXPECT_TRUE(sm90_gemm_shape_ok(128, 256, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(100, 256, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(128, 128, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(128, 256, 32));
  EXPECT_FALSE(sm90_gemm_shape_ok(0, 256, 64));
}

}  // namespace
}  // namespace numr::cuda
