// The static barrier check: bar.sync reached by only part of a block is rejected at
// finish(); barriers every thread reaches, including inside uniform loops, pass.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "codegen/ptx/builder.h"
#include "numr/error.h"

namespace numr::ptx {
namespace {

constexpr Target kSm80{80, 8, 0};

void expect_accepted(const std::function<void(KernelBuilder&)>& make) {
  KernelBuilder b("accepted", kSm80);
  make(b);
  EXPECT_NO_THROW((void)b.finish());
}

// Returns the error message ("" if the kernel was accepted).
std::string rejection(const std::function<void(KernelBuilder&)>& make) {
  KernelBuilder b("rejected", kSm80);
  make(b);
  try {
    (void)b.finish();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

void expect_rejected(const std::function<void(KernelBuilder&)>& make) {
  const std::string msg = rejection(make);
  EXPECT_NE(msg.find("[ptx] kernel 'rejected'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bar.sync 0 at line"), std::string::npos) << msg;
}

// ---------------------------------------------------------------- accepted

TEST(PtxBarrier, StraightLineBarriers) {
  expect_accepted([](KernelBuilder& b) {
    b.bar_sync();
    (void)b.tid_x();
    b.bar_sync();
  });
}

TEST(PtxBarrier, BarrierAfterAThreadVaryingIfJoins) {
  expect_accepted([](KernelBuilder& b) {
    const Reg tid = b.tid_x();
    b.if_then(b.setp(Cmp::lt, tid, 16), [&] { (void)b.add(tid, 1); });
    b.bar_sync();
    b.if_then_else(
        b.setp(Cmp::eq, b.laneid(), 0), [&] { (void)b.add(tid, 2); }, [&] { (void)b.add(tid, 3); });
    b.bar_sync();
  });
}

TEST(PtxBarrier, UniformLoopWithBarriersInside) {
  expect_accepted([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    const Reg tid = b.tid_x();
    b.for_range(0u, n, 1u, PtxType::u32, [&](Reg i) {
      b.bar_sync();
      b.if_then(b.setp(Cmp::lt, tid, i), [&] { (void)b.add(tid, i); });  // varying, joins
      b.bar_sync();
    });
  });
}

TEST(PtxBarrier, WhileLoopOverBlockSizeWithBarrier) {
  expect_accepted([](KernelBuilder& b) {
    const Reg s = b.shr(b.ntid_x(), 1);
    b.while_loop([&] { return b.setp(Cmp::gt, s, 0); },
                 [&] {
                   b.bar_sync();
                   b.assign(s, b.shr(s, 1));
                 });
  });
}

TEST(PtxBarrier, UniformBranchesAndUniformEarlyExit) {
  expect_accepted([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    const Reg block = b.ctaid_x();
    b.ret_if(b.setp(Cmp::ge, b.mul(block, b.ntid_x()), n));  // whole blocks leave
    b.if_then(b.setp(Cmp::eq, b.nctaid_x(), 1), [&] { b.bar_sync(); });
    b.bar_sync();
  });
}

TEST(PtxBarrier, VaryingLoopWithoutBarrierThenBarrier) {
  // A grid-stride loop has a thread-varying trip count; the barrier after it is fine.
  expect_accepted([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    b.for_range(b.global_index_x(), n, b.ntid_x(), PtxType::u32, [&](Reg) {});
    b.bar_sync();
  });
}

// ---------------------------------------------------------------- rejected

TEST(PtxBarrier, BarrierInsideAThreadVaryingIf) {
  expect_rejected(
      [](KernelBuilder& b) { b.if_then(b.setp(Cmp::lt, b.tid_x(), 16), [&] { b.bar_sync(); }); });
  const std::string msg = rejection(
      [](KernelBuilder& b) { b.if_then(b.setp(Cmp::lt, b.tid_x(), 16), [&] { b.bar_sync(); }); });
  EXPECT_NE(msg.find("bra $L0_endif"), std::string::npos) << msg;  // names the branch
}

TEST(PtxBarrier, BarrierInEitherArmOfAVaryingIfElse) {
  expect_rejected([](KernelBuilder& b) {
    b.if_then_else(
        b.setp(Cmp::eq, b.laneid(), 0), [&] { b.bar_sync(); }, [&] { b.bar_sync(); });
  });
}

TEST(PtxBarrier, ThreadsThatReturnEarly) {
  // if (tid >= n) return; ... __syncthreads();
  expect_rejected([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    b.ret_if(b.setp(Cmp::ge, b.global_index_x(), n));
    b.bar_sync();
  });
  const std::string msg = rejection([](KernelBuilder& b) {
    b.ret_if(b.setp(Cmp::ge, b.tid_x(), 5));
    b.bar_sync();
  });
  EXPECT_NE(msg.find("leave"), std::string::npos) << msg;
  // The same with an unconditional ret inside a varying if.
  expect_rejected([](KernelBuilder& b) {
    b.if_then(b.setp(Cmp::eq, b.tid_x(), 0), [&] { b.ret(); });
    b.bar_sync();
  });
}

TEST(PtxBarrier, BarrierInALoopWithAThreadVaryingTripCount) {
  expect_rejected([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    b.for_range(b.tid_x(), n, b.ntid_x(), PtxType::u32, [&](Reg) { b.bar_sync(); });
  });
}

TEST(PtxBarrier, UniformLoopNestedInAVaryingIf) {
  expect_rejected([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    b.if_then(b.setp(Cmp::lt, b.tid_x(), 32),
              [&] { b.for_range(0u, n, 1u, PtxType::u32, [&](Reg) { b.bar_sync(); }); });
  });
}

TEST(PtxBarrier, TaintReachesTheLoopCounterThroughAssign) {
  // The counter starts uniform; one in-place update adds the thread index, so the loop's
  // exit test varies from the second iteration on.
  expect_rejected([](KernelBuilder& b) {
    const Reg n = b.param(PtxType::u32, "n");
    const Reg tid = b.tid_x();
    const Reg i = b.mov(PtxType::u32, 0);
    b.while_loop([&] { return b.setp(Cmp::lt, i, n); },
                 [&] {
                   b.bar_sync();
                   b.assign(i, b.add(b.add(i, 1), b.and_(tid, 1)));
                 });
  });
}

TEST(PtxBarrier, ValuesJoinedFromAVaryingBranchVary) {
  // x = 0; if (tid < 5) x = 1;  if (x == 1) bar.sync  -- x differs between threads.
  expect_rejected([](KernelBuilder& b) {
    const Reg x = b.mov(PtxType::u32, 0);
    b.if_then(b.setp(Cmp::lt, b.tid_x(), 5), [&] { b.assign(x, 1); });
    b.if_then(b.setp(Cmp::eq, x, 1), [&] { b.bar_sync(); });
  });
}

TEST(PtxBarrier, LoadsShufflesAndAtomicsVary) {
  expect_rejected([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    b.if_then(b.setp(Cmp::gt, b.ld_global(PtxType::f32, p), 0.0), [&] { b.bar_sync(); });
  });
  expect_rejected([](KernelBuilder& b) {
    const Reg v = b.shfl(ShflMode::idx, b.ctaid_x(), 0);
    b.if_then(b.setp(Cmp::eq, v, 0), [&] { b.bar_sync(); });
  });
  expect_rejected([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    const Reg old = b.atom_global(AtomOp::add, PtxType::u32, p, 1);
    b.if_then(b.setp(Cmp::eq, old, 0), [&] { b.bar_sync(); });
  });
  // A loop bound read from memory.
  expect_rejected([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    const Reg n = b.ld_global(PtxType::u32, p);
    b.for_range(0u, n, 1u, PtxType::u32, [&](Reg) { b.bar_sync(); });
  });
}

TEST(PtxBarrier, SelectOnAVaryingPredicateVaries) {
  // A value chosen by a thread-varying predicate is itself thread-varying.
  expect_rejected([](KernelBuilder& b) {
    const Reg x = b.mov(PtxType::u32, 0);
    const Reg p = b.setp(Cmp::eq, b.tid_x(), 0);
    const Reg y = b.selp(p, x, 1);
    b.if_then(b.setp(Cmp::eq, y, 0), [&] { b.bar_sync(); });
  });
}

TEST(PtxBarrier, UnreachableBarrierIsIgnored) {
  expect_accepted([](KernelBuilder& b) {
    b.ret();
    b.if_then(b.setp(Cmp::eq, b.tid_x(), 0), [&] { b.bar_sync(); });
  });
}

}  // namespace
}  // namespace numr::ptx
