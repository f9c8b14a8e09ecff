// numr's sm_90a GEMM (backends/cuda/sm90_gemm.h) assembles with ptxas for sm_90a
// with no error, no warning (a warning would be ptxas ignoring setmaxnreg) and no report of
// a serialised wgmma pipeline, and without local memory: no stack frame, no spills.
// Needs no GPU: only ptxas (skipped without).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <tuple>

#include "backends/cuda/sm90_gemm.h"
#include "numr/error.h"
#include "support/ptxas.h"

namespace numr::cuda {
namespace {

// The number just before `suffix` (" bytes stack frame") or just after `prefix` ("Used ")
// in ptxas's report; -1 when absent. (No std::regex: GCC 12 warns inside it under the
// sanitizer build.)
long number_before(const std::string& text, const std::string& suffix) {
  const size_t at = text.find(suffix);
  if (at == std::string::npos) return -1;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
  return begin == at ? -1 : std::stol(text.substr(begin, at - begin));
}
long number_after(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return -1;
  const size_t begin = at + prefix.size();
  size_t end = begin;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end == begin ? -1 : std::stol(text.substr(begin, end - begin));
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

  const numr::test::PtxasResult r = numr::test::assemble(ptx, "sm_90a", "-v");
  const std::string what = config.name() + " (PTX ISA " + std::to_string(ptx_major) + "." +
                           std::to_string(ptx_minor) + ")";
  ASSERT_EQ(r.exit_status, 0) << what << ":\n" << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << what << ":\n" << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << what << ":\n" << r.output;
  // ptxas reports a serialised wgmma pipeline (C7513 and the like) as info, not warning.
  EXPECT_EQ(r.output.find("Performance Loss"), std::string::npos) << what << ":\n" << r.output;
  const long stack = number_before(r.output, " bytes stack frame");
  const long spill_st = number_before(r.output, " bytes spill stores");
  const long spill_ld = number_before(r.output, " bytes spill loads");
  const long regs = number_after(r.output, "Used ");
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
      for (const auto& [isa_minor, schedule, stages, group, width, split] :
           {std::tuple{0, Sm90Schedule::PingPong, 0, 16, 8, true},
            std::tuple{7, Sm90Schedule::PingPong, 7, 0, 16, true},
            std::tuple{7, Sm90Schedule::PingPong, 0, 8, 16, false},
            std::tuple{0, Sm90Schedule::PingPong, 5, 16, 8, false},
            std::tuple{7, Sm90Schedule::Cooperative, 0, 8, 16, true},
            std::tuple{0, Sm90Schedule::Cooperative, 0, 0, 8, false}})
        expect_assembles(Sm90GemmConfig{.act = act,
                                        .cluster = cluster,
                                        .ptx_major = 8,
                                        .ptx_minor = isa_minor,
                                        .schedule = schedule,
                                        .stages = stages,
                                        .group_rows = group,
                                        .store_width = width,
                                        .split_division = split});
}

// The cooperative BF16 kernel with part of its epilogue deferred into the next tile's main
// loop (Sm90GemmConfig::deferred_groups): the deferred values must fit beside the
// accumulators with no spills and leave the wgmma pipeline unserialised.
TEST(Sm90GemmPtx, DeferredEpilogueAssemblesWithoutSpills) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    for (int cluster : {1, 2})
      for (const auto& [stages, deferred] :
           {std::pair{0, 1}, std::pair{0, 4}, std::pair{0, 5}, std::pair{3, 5}}) {
        Sm90GemmConfig config = sm90_gemm_default_config(act, cluster, DType::BF16);
        config.stages = stages;
        config.deferred_groups = deferred;
        expect_assembles(config);
      }
}

// The cooperative BF16 kernel that splits a last, partly filled wave along K
// (Sm90GemmConfig::split_tail), with its deferred epilogue and without, both bias dtypes.
TEST(Sm90GemmPtx, SplitTailAssemblesWithoutSpills) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    for (int deferred : {0, 5})
      for (DType bias : {DType::F32, DType::BF16}) {
        Sm90GemmConfig config = sm90_gemm_default_config(act, 1, DType::BF16);
        config.deferred_groups = deferred;
        config.bias_dtype = bias;
        config.split_tail = true;
        expect_assembles(config);
      }
}

// Split tail is for the cooperative BF16 kernel with clusters of 1 only.
TEST(Sm90GemmPtx, SplitTailRejectsOtherKernels) {
  Sm90GemmConfig pingpong{.act = Activation::Gelu, .split_tail = true};
  EXPECT_THROW((void)sm90_gemm_ptx(pingpong), numr::BackendError);
  Sm90GemmConfig clusters = sm90_gemm_default_config(Activation::Gelu, 2, DType::BF16);
  clusters.split_tail = true;
  EXPECT_THROW((void)sm90_gemm_ptx(clusters), numr::BackendError);
  Sm90GemmConfig tf32 = sm90_gemm_default_config(Activation::Gelu, 1, DType::F32);
  tf32.split_tail = true;
  EXPECT_THROW((void)sm90_gemm_ptx(tf32), numr::BackendError);
}

// Which tiles a grid splits: the last wave's, only behind two whole waves, only when it
// fills at most half of the grid, only with 4 k blocks or more.
TEST(Sm90GemmSplitTail, SplitsThePartlyFilledLastWave) {
  EXPECT_EQ(sm90_gemm_split_tiles(1072, 132, 64), 16);  // 8576 x 4096 on 132 SMs
  EXPECT_EQ(sm90_gemm_split_tiles(1120, 132, 64), 64);  // 8960 x 4096
  EXPECT_EQ(sm90_gemm_split_tiles(1024, 132, 64), 0);   // 8192 x 4096: 100 of 132
  EXPECT_EQ(sm90_gemm_split_tiles(1056, 132, 64), 0);   // no partial wave
  EXPECT_EQ(sm90_gemm_split_tiles(264 + 66, 132, 64), 66);
  EXPECT_EQ(sm90_gemm_split_tiles(264 + 67, 132, 64), 0);  // over half full
  EXPECT_EQ(sm90_gemm_split_tiles(132 + 16, 132, 64), 0);  // one whole wave only
  EXPECT_EQ(sm90_gemm_split_tiles(1072, 132, 3), 0);
  EXPECT_EQ(sm90_gemm_split_tiles(12, 5, 10), 2);
  EXPECT_EQ(sm90_gemm_split_tiles(12, 0, 10), 0);
}

// The TF32 kernel (F32 operands, B's fragments from registers, two fragment sets), both
// schedules.
TEST(Sm90GemmPtx, Tf32AssemblesForSm90aWithoutSpills) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    for (int cluster : {1, 2})
      for (const auto& [isa_minor, schedule, stages, split] :
           {std::tuple{0, Sm90Schedule::PingPong, 0, true},
            std::tuple{7, Sm90Schedule::PingPong, 5, false},
            std::tuple{7, Sm90Schedule::Cooperative, 0, true},
            std::tuple{0, Sm90Schedule::Cooperative, 3, false}})
        expect_assembles(Sm90GemmConfig{.act = act,
                                        .cluster = cluster,
                                        .ptx_major = 8,
                                        .ptx_minor = isa_minor,
                                        .schedule = schedule,
                                        .stages = stages,
                                        .split_division = split,
                                        .dtype = DType::F32});
}

// One reciprocal per group of 2 or 4 values, with and without the deferred epilogue.
TEST(Sm90GemmPtx, GroupedReciprocalsAssemble) {
  for (Activation act : {Activation::Gelu, Activation::Silu})
    for (int group : {2, 4})
      for (int deferred : {0, 5}) {
        Sm90GemmConfig config = sm90_gemm_default_config(act, 1, DType::BF16);
        config.reciprocal_group = group;
        config.deferred_groups = deferred;
        expect_assembles(config);
      }
}

// The kernels sm90_gemm_bias_act runs by default.
TEST(Sm90GemmPtx, DefaultKernelsAssemble) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    for (int cluster : {1, 2})
      for (DType dt : {DType::BF16, DType::F32}) {
        Sm90GemmConfig config = sm90_gemm_default_config(act, cluster, dt);
        expect_assembles(config);
        // matmul_bias_activation's BF16 calls pass their BF16 bias as it is.
        if (dt == DType::BF16) {
          config.bias_dtype = DType::BF16;
          expect_assembles(config);
        }
      }
  EXPECT_EQ(sm90_gemm_default_config(Activation::Relu, 2, DType::BF16).name(),
            "sm90_gemm_bf16_relu_128x256x64_s4_g16_d5_c2");
  EXPECT_EQ(sm90_gemm_default_config(Activation::Gelu, 1, DType::BF16).name(),
            "sm90_gemm_bf16_gelu_128x256x64_s4_g16_rcp_q2_d5_sk");
  EXPECT_EQ(sm90_gemm_default_config(Activation::None, 1, DType::F32).name(),
            "sm90_gemm_tf32_none_128x256x32_s4_g16");
}

TEST(Sm90GemmPtx, NamesAndRefusals) {
  EXPECT_EQ(Sm90GemmConfig{.act = Activation::Gelu}.name(),
            "sm90_gemm_bf16_gelu_pp128x128x64_s6_g16_w8_rcp");
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Silu, .cluster = 2}.name()),
            "sm90_gemm_bf16_silu_pp128x128x64_s6_g16_w8_rcp_c2");
  // Split division names only the activations that divide.
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Relu, .store_width = 16}.name()),
            "sm90_gemm_bf16_relu_pp128x128x64_s6_g16");
  EXPECT_EQ(
      (Sm90GemmConfig{.act = Activation::Gelu, .store_width = 16, .split_division = false}.name()),
      "sm90_gemm_bf16_gelu_pp128x128x64_s6_g16");
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Relu,
                            .schedule = Sm90Schedule::Cooperative,
                            .group_rows = 0,
                            .store_width = 16}
                 .name()),
            "sm90_gemm_bf16_relu_128x256x64_s4");
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Gelu, .dtype = DType::F32}.name()),
            "sm90_gemm_tf32_gelu_pp128x128x32_s6_g16_rcp");
  EXPECT_EQ(sm90_gemm_layout(Sm90GemmConfig{.dtype = DType::F32}).stage_bytes, 32768);
  const Sm90GemmConfig tf32_coop{
      .act = Activation::Gelu, .schedule = Sm90Schedule::Cooperative, .dtype = DType::F32};
  EXPECT_EQ(tf32_coop.name(), "sm90_gemm_tf32_gelu_128x256x32_s4_g16_rcp");
  EXPECT_EQ(sm90_gemm_layout(tf32_coop).stage_bytes, 16384 + 32768);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.dtype = DType::F16}), BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.group_rows = -1}), BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.store_width = 4}), BackendError);
  EXPECT_EQ(sm90_gemm_layout(Sm90GemmConfig{}).shared_bytes, 6 * 32768 + 2 * 6 * 8 + 1024);
  EXPECT_EQ(sm90_gemm_layout(Sm90GemmConfig{.schedule = Sm90Schedule::Cooperative}).stage_bytes,
            49152);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.stages = 8}), BackendError);
  EXPECT_NE(sm90_gemm_ptx(Sm90GemmConfig{.cluster = 2}).find(".reqnctapercluster 2, 1, 1"),
            std::string::npos);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.cluster = 4}), BackendError);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 512, .n = 256, .k = 64}), 1);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 512, .n = 256, .k = 64, .cluster = 2}), 2);
  EXPECT_EQ(sm90_gemm_cluster(Sm90GemmArgs{.m = 512, .n = 256, .k = 64, .dtype = DType::F32}), 1);
  EXPECT_EQ(sm90_gemm_cluster(
                Sm90GemmArgs{.m = 512, .n = 256, .k = 64, .cluster = 2, .dtype = DType::F32}),
            2);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.act = Activation::Tanh}), BackendError);
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Relu, .bias_dtype = DType::BF16}.name()),
            "sm90_gemm_bf16_relu_pp128x128x64_s6_g16_w8_bias16");
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.dtype = DType::F32, .bias_dtype = DType::BF16}),
               BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.bias_dtype = DType::F16}), BackendError);
  // Grouped reciprocals: 1, 2 or 4 values, BF16 with split division only; named where the
  // activation divides.
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Silu, .reciprocal_group = 4}.name()),
            "sm90_gemm_bf16_silu_pp128x128x64_s6_g16_w8_rcp_q4");
  EXPECT_EQ((Sm90GemmConfig{.act = Activation::Relu, .reciprocal_group = 2}.name()),
            "sm90_gemm_bf16_relu_pp128x128x64_s6_g16_w8");
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.reciprocal_group = 3}), BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.split_division = false, .reciprocal_group = 2}),
               BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.reciprocal_group = 2, .dtype = DType::F32}),
               BackendError);
  // A deferred epilogue: cooperative BF16 only, at most the tile's 8 column groups.
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.deferred_groups = 2}), BackendError);
  EXPECT_THROW(
      (void)sm90_gemm_ptx(Sm90GemmConfig{
          .schedule = Sm90Schedule::Cooperative, .dtype = DType::F32, .deferred_groups = 2}),
      BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(
                   Sm90GemmConfig{.schedule = Sm90Schedule::Cooperative, .deferred_groups = 9}),
               BackendError);
  EXPECT_THROW((void)sm90_gemm_ptx(Sm90GemmConfig{.ptx_major = 7, .ptx_minor = 8}), BackendError);
  EXPECT_TRUE(sm90_gemm_shape_ok(8192, 4096, 4096));
  EXPECT_TRUE(sm90_gemm_shape_ok(128, 256, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(100, 256, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(128, 128, 64));
  EXPECT_FALSE(sm90_gemm_shape_ok(128, 256, 32));
  EXPECT_FALSE(sm90_gemm_shape_ok(0, 256, 64));
  EXPECT_TRUE(sm90_gemm_shape_ok(128, 256, 32, DType::F32));
  EXPECT_FALSE(sm90_gemm_shape_ok(128, 256, 16, DType::F32));
}

}  // namespace
}  // namespace numr::cuda
