// The PTX builder: the text it writes, the errors it reports, and, with ptxas, that
// representative kernels assemble for sm_80 and sm_90.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "codegen/ptx/builder.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value.h"
#include "math/elementwise.h"
#include "numr/error.h"
#include "support/ptxas.h"

namespace numr::ptx {
namespace {

constexpr Target kSm80{80, 8, 0};
constexpr Target kSm90{90, 8, 0};

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// Builds the kernel for each target and assembles it there. Without ptxas the kernels are
// still built (the builder runs under the sanitizers) and the test is reported skipped.
void expect_assembles(const std::function<void(KernelBuilder&)>& make,
                      std::vector<Target> targets = {kSm80, kSm90}) {
  const bool have_ptxas = numr::test::find_ptxas().has_value();
  for (const Target& t : targets) {
    KernelBuilder b("k", t);
    make(b);
    const std::string ptx = b.finish();
    EXPECT_TRUE(contains(ptx, ".target sm_" + std::to_string(t.sm))) << ptx;
    if (!have_ptxas) continue;
    const numr::test::PtxasResult r = numr::test::assemble(ptx, t.sm);
    EXPECT_TRUE(r.ok()) << "sm_" << t.sm << " ptxas exit " << r.exit_status << ":\n"
                        << r.output << "\n"
                        << ptx;
  }
  if (!have_ptxas) GTEST_SKIP() << numr::test::no_ptxas_reason();
}

// ---------------------------------------------------------------- text and errors

TEST(PtxBuilder, ModuleHeaderParamsAndEntry) {
  KernelBuilder b("scale", kSm80);
  const Reg x = b.param_ptr("x");
  const Reg n = b.param(PtxType::u32, "n");
  const ParamArray shape = b.param_array(PtxType::s64, 4, "shape");
  const Reg i = b.global_index_x();
  b.if_then(b.setp(Cmp::lt, i, n), [&] {
    const Reg a = b.add(x, b.cvt(b.mul(i, 4), PtxType::u64));
    b.st_global(a, b.mul(b.ld_global(PtxType::f32, a), 2.0));
  });
  (void)b.load_param(shape, 3);
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, ".version 8.0\n.target sm_80\n.address_size 64\n")) << ptx;
  EXPECT_TRUE(contains(ptx, ".visible .entry scale(")) << ptx;
  EXPECT_TRUE(contains(ptx, ".param .u64 x,")) << ptx;
  EXPECT_TRUE(contains(ptx, ".param .align 8 .b8 shape[32]")) << ptx;
  EXPECT_TRUE(contains(ptx, "ld.param.s64 %sd0, [shape+24];")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvta.to.global.u64")) << ptx;
  EXPECT_TRUE(contains(ptx, "mul.rn.f32 %f1, %f0, 0f40000000;")) << ptx;
  EXPECT_TRUE(contains(ptx, "\tret;\n}\n")) << ptx;
  ASSERT_EQ(b.params().size(), 3u);
  EXPECT_EQ(b.params()[2].size(), 32);
  EXPECT_TRUE(b.params()[2].array);
  EXPECT_EQ(b.params()[1].type, PtxType::u32);
}

TEST(PtxBuilder, EachRegisterTypeHasItsOwnNames) {
  KernelBuilder b("k", kSm80);
  const Reg u = b.mov(PtxType::u32, 1), s = b.mov(PtxType::s32, 1);
  const Reg h = b.cvt(b.mov(PtxType::f32, 1.0), PtxType::f16);
  (void)b.add(u, u);
  (void)b.add(s, s);
  (void)h;
  const std::string ptx = b.finish();
  EXPECT_NE(reg_name(u), reg_name(s));
  EXPECT_TRUE(contains(ptx, ".reg .u32 %u<2>;")) << ptx;
  EXPECT_TRUE(contains(ptx, ".reg .s32 %s<2>;")) << ptx;
  EXPECT_TRUE(contains(ptx, ".reg .b16 %hf<1>;")) << ptx;  // halves live in b16 registers
  EXPECT_TRUE(contains(ptx, "add.u32 %u1, %u0, %u0;")) << ptx;
  EXPECT_TRUE(contains(ptx, "add.s32 %s1, %s0, %s0;")) << ptx;
}

TEST(PtxBuilder, FloatArithmeticRoundsExplicitly) {
  KernelBuilder b("k", kSm80);
  const Reg f = b.mov(PtxType::f32, 1.5), d = b.mov(PtxType::f64, 0.5);
  (void)b.add(f, f);
  (void)b.sub(d, d);
  (void)b.mul(f, f);
  (void)b.div(d, d);
  (void)b.fma(f, f, f);
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, "add.rn.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "sub.rn.f64")) << ptx;
  EXPECT_TRUE(contains(ptx, "mul.rn.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "div.rn.f64")) << ptx;
  EXPECT_TRUE(contains(ptx, "fma.rn.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "mov.f64 %fd0, 0d3FE0000000000000;")) << ptx;
  EXPECT_TRUE(contains(ptx, "mov.f32 %f0, 0f3FC00000;")) << ptx;
}

TEST(PtxBuilder, HalfValuesMoveAsB16) {
  KernelBuilder b("k", kSm80);
  const Reg p = b.param_ptr("p");
  const Reg h = b.ld_global(PtxType::f16, p);
  const Reg bf = b.cvt(b.cvt(h, PtxType::f32), PtxType::bf16);
  b.st_global(p, h, 2);
  b.st_global(p, bf, 4);
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, "ld.global.b16")) << ptx;
  EXPECT_TRUE(contains(ptx, "st.global.b16")) << ptx;
  EXPECT_FALSE(contains(ptx, "st.global.f16")) << ptx;
  EXPECT_FALSE(contains(ptx, "st.global.bf16")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rn.bf16.f32")) << ptx;
}

TEST(PtxBuilder, Bf16ConversionsPerTarget) {
  for (const Target& t : {kSm80, kSm90}) {
    KernelBuilder b("k", t);
    const Reg d = b.mov(PtxType::f64, 1.0);
    const Reg h = b.cvt(d, PtxType::bf16);
    (void)b.cvt(h, PtxType::f32);
    const std::string ptx = b.finish();
    // bf16 -> f32 is a shift everywhere; f64 -> bf16 is direct only from sm_90.
    EXPECT_FALSE(contains(ptx, "cvt.f32.bf16")) << ptx;
    EXPECT_TRUE(contains(ptx, "shl.b32")) << ptx;
    EXPECT_EQ(contains(ptx, "cvt.rn.bf16.f64"), t.sm >= 90) << ptx;
    EXPECT_EQ(contains(ptx, "cvt.rz.f32.f64"), t.sm < 90) << ptx;
  }
}

TEST(PtxBuilder, ConversionRoundingModifiers) {
  KernelBuilder b("k", kSm80);
  const Reg f = b.mov(PtxType::f32, 2.5);
  const Reg d = b.cvt(f, PtxType::f64);
  const Reg back = b.cvt(d, PtxType::f32);
  const Reg i = b.cvt(back, PtxType::s32);
  const Reg l = b.cvt(i, PtxType::s64);
  (void)b.cvt(l, PtxType::f32);
  (void)b.cvt(f, PtxType::s32, Round::nearest);
  (void)b.cvt(l, PtxType::u32);
  (void)b.rint(f);
  (void)b.floor(d);
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, "cvt.f64.f32 ")) << ptx;  // exact: no modifier allowed
  EXPECT_TRUE(contains(ptx, "cvt.rn.f32.f64")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rzi.s32.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "setp.nan.f32")) << ptx;  // NaN -> 0 made explicit
  EXPECT_TRUE(contains(ptx, "cvt.s64.s32")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rn.f32.s64")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rni.s32.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.u32.s64")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rni.f32.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "cvt.rmi.f64.f64")) << ptx;
}

TEST(PtxBuilder, LoopCounterIsUpdatedInPlace) {
  KernelBuilder b("k", kSm80);
  const Reg n = b.param(PtxType::u32, "n");
  Reg counter;
  b.for_range(0u, n, 1u, PtxType::u32, [&](Reg i) { counter = i; });
  const std::string ptx = b.finish();
  // The increment is moved back into the counter the loop head tests.
  const std::string c = reg_name(counter);
  EXPECT_TRUE(contains(ptx, "setp.hs.u32 %p0, " + c + ", " + reg_name(n))) << ptx;
  EXPECT_TRUE(contains(ptx, "mov.u32 " + c + ", %u2;")) << ptx;
  EXPECT_TRUE(contains(ptx, "bra $L0_loop;")) << ptx;
  EXPECT_TRUE(contains(ptx, "@%p0 bra $L1_loop_end;")) << ptx;
}

TEST(PtxBuilder, ComparisonsSpellUnsignedAndUnordered) {
  KernelBuilder b("k", kSm80);
  const Reg u = b.mov(PtxType::u64, 3), s = b.mov(PtxType::s32, 3), f = b.mov(PtxType::f32, 1.0);
  (void)b.setp(Cmp::lt, u, u);
  (void)b.setp(Cmp::ge, s, 0);
  (void)b.setp(Cmp::neu, f, f);
  (void)b.setp(Cmp::nan, f, f);
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, "setp.lo.u64")) << ptx;
  EXPECT_TRUE(contains(ptx, "setp.ge.s32")) << ptx;
  EXPECT_TRUE(contains(ptx, "setp.neu.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "setp.nan.f32")) << ptx;
  EXPECT_THROW((void)b.setp(Cmp::neu, s, s), BackendError);
}

TEST(PtxBuilder, MisuseIsReported) {
  {
    KernelBuilder b("k", kSm80);
    const Reg f = b.mov(PtxType::f32, 1.0), d = b.mov(PtxType::f64, 1.0);
    EXPECT_THROW((void)b.add(f, d), BackendError);
    EXPECT_THROW((void)b.abs(b.mov(PtxType::u32, 1)), BackendError);
    EXPECT_THROW((void)b.ex2_approx(d), BackendError);
    EXPECT_THROW((void)b.ld_global_v(PtxType::f64, 4, b.mov(PtxType::u64, 0)), BackendError);
    EXPECT_THROW((void)b.ld_global(PtxType::f32, b.mov(PtxType::u32, 0)), BackendError);
    EXPECT_THROW((void)b.param(PtxType::u32, "bad name"), BackendError);
    (void)b.param(PtxType::u32, "n");
    EXPECT_THROW((void)b.param(PtxType::u32, "n"), BackendError);
  }
  {
    KernelBuilder b("k", kSm80);
    b.bra(b.label("nowhere"));
    EXPECT_THROW((void)b.finish(), BackendError);
  }
  {
    KernelBuilder b("k", kSm80);
    const Label l = b.label();
    b.place(l);
    EXPECT_THROW(b.place(l), BackendError);
  }
  {
    KernelBuilder b("k", kSm80);
    const Reg never = b.reg(PtxType::f32);
    (void)b.add(never, 1.0);
    try {
      (void)b.finish();
      FAIL() << "a register read but never written was accepted";
    } catch (const BackendError& e) {
      EXPECT_TRUE(contains(e.what(), "[ptx] kernel 'k'")) << e.what();
      EXPECT_TRUE(contains(e.what(), "%f0")) << e.what();
    }
  }
  EXPECT_THROW(KernelBuilder("1k"), BackendError);
}

TEST(PtxValue, FormulasEmitIntoTheScopedBuilder) {
  KernelBuilder b("k", kSm80);
  const Reg p = b.param_ptr("p");
  {
    FormulaScope scope(b, PtxType::f32);
    const Value x(b.ld_global(PtxType::f32, p));
    const Value y = math::relu(x) + math::isnan(x) * Value(2);
    b.st_global(p, y.reg());
    EXPECT_EQ(y.type(), PtxType::f32);
    EXPECT_EQ(Value(1).type(), PtxType::f32);
    {
      FormulaScope inner(b, PtxType::s64);
      EXPECT_EQ(Value(1).type(), PtxType::s64);
    }
    EXPECT_EQ(Value(1).type(), PtxType::f32);
    EXPECT_THROW((void)(x + Value::constant(PtxType::f64, 1.0)), BackendError);
  }
  EXPECT_THROW((void)Value(1.0), BackendError);  // no scope
  const std::string ptx = b.finish();
  EXPECT_TRUE(contains(ptx, "setp.lt.f32")) << ptx;   // relu: x < 0
  EXPECT_TRUE(contains(ptx, "setp.neu.f32")) << ptx;  // isnan: x != x
  EXPECT_TRUE(contains(ptx, "selp.f32")) << ptx;
}

// ---------------------------------------------------------------- ptxas

TEST(PtxAssemble, HarnessReportsErrors) {
  NUMR_REQUIRE_PTXAS();
  const std::string bad =
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n"
      "{\n.reg .b16 %h<1>;\n.reg .u64 %ud<1>;\nld.param.u64 %ud0, [p];\n"
      "mov.b16 %h0, 0x3C00;\nst.global.f16 [%ud0], %h0;\nret;\n}\n";
  const numr::test::PtxasResult r = numr::test::assemble(bad, 80);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.exit_status, 0);
  EXPECT_FALSE(r.output.empty());
}

TEST(PtxAssemble, DefaultTargetIsa87OnSm90) {
  expect_assembles([](KernelBuilder& b) { b.st_global(b.param_ptr("p"), b.tid_x()); }, {Target{}});
}

// out[i] = relu(a[i]) * b[i] over n floats: 4 per thread with 16-byte loads, and a scalar
// tail, in a grid-stride loop.
void elementwise_kernel(KernelBuilder& b, DType dtype) {
  const Reg a = b.param_ptr("a"), bb = b.param_ptr("b"), out = b.param_ptr("out");
  const Reg n = b.param(PtxType::u64, "n");
  const Reg stride = b.cvt(b.mul(b.ntid_x(), b.nctaid_x()), PtxType::u64);
  const Reg n4 = b.shr(n, 2);
  FormulaScope scope(b, PtxType::f32);
  b.for_range(b.cvt(b.global_index_x(), PtxType::u64), n4, stride, PtxType::u64, [&](Reg i) {
    const Reg off = b.mul(i, 16);
    const std::vector<Reg> va = b.ld_global_nc_v(PtxType::f32, 4, b.add(a, off));
    const std::vector<Reg> vb = b.ld_global_nc_v(PtxType::f32, 4, b.add(bb, off));
    std::vector<Reg> r;
    for (int k = 0; k < 4; ++k) r.push_back(math::relu_mul(Value(va[k]), Value(vb[k])).reg());
    b.st_global_v(b.add(out, off), r);
  });
  // Tail in the storage dtype.
  const Reg tail = b.add(b.shl(n4, 2), b.cvt(b.global_index_x(), PtxType::u64));
  b.if_then(b.setp(Cmp::lt, tail, n), [&] {
    const Value x = load_element(b, dtype, element_address(b, a, tail, dtype), PtxType::f32);
    const Value y = load_element(b, dtype, element_address(b, bb, tail, dtype), PtxType::f32);
    store_element(b, dtype, element_address(b, out, tail, dtype), math::relu_mul(x, y));
  });
}

TEST(PtxAssemble, ElementwiseWithVectorLoads) {
  for (DType d : {DType::F32, DType::F16, DType::BF16})
    expect_assembles([d](KernelBuilder& b) { elementwise_kernel(b, d); });
}

// Sum of n floats per block: grid-stride accumulation, a warp shuffle reduction, then a
// shared-memory tree over the warps in a uniform loop with barriers, and one atomic add.
void block_reduce_kernel(KernelBuilder& b) {
  const Reg x = b.param_ptr("x"), out = b.param_ptr("out");
  const Reg n = b.param(PtxType::u32, "n");
  const SharedArray partial = b.shared_array(PtxType::f32, 32, "partial");
  const Reg tid = b.tid_x(), lane = b.laneid();
  const Reg acc = b.mov(PtxType::f32, 0.0);
  const Reg stride = b.mul(b.ntid_x(), b.nctaid_x());
  b.for_range(b.global_index_x(), n, stride, PtxType::u32, [&](Reg i) {
    const Reg v = b.ld_global(PtxType::f32, element_address(b, x, i, DType::F32));
    b.assign(acc, b.add(acc, v));
  });
  for (int m = 16; m >= 1; m /= 2) b.assign(acc, b.add(acc, b.shfl(ShflMode::bfly, acc, m)));
  const Reg warp = b.shr(tid, 5);
  const Reg base = b.address_of(partial);
  b.if_then(b.setp(Cmp::eq, lane, 0), [&] { b.st_shared(b.mad(warp, 4, base), acc); });
  b.bar_sync();
  // Tree over the warp sums: for (s = ntid/64; s > 0; s /= 2), uniform bounds.
  const Reg s = b.shr(b.ntid_x(), 6);
  b.while_loop([&] { return b.setp(Cmp::gt, s, 0); },
               [&] {
                 b.if_then(b.setp(Cmp::lt, tid, s), [&] {
                   const Reg mine = b.mad(tid, 4, base);
                   const Reg other = b.ld_shared(PtxType::f32, b.mad(b.add(tid, s), 4, base));
                   b.st_shared(mine, b.add(b.ld_shared(PtxType::f32, mine), other));
                 });
                 b.bar_sync();
                 b.assign(s, b.shr(s, 1));
               });
  b.if_then(b.setp(Cmp::eq, tid, 0), [&] {
    b.red(Space::global, AtomOp::add, PtxType::f32, out, b.ld_shared(PtxType::f32, base));
  });
}

TEST(PtxAssemble, SharedMemoryBlockReduction) {
  expect_assembles(block_reduce_kernel);
}

TEST(PtxAssemble, EveryStorageDTypeToEveryComputeType) {
  expect_assembles([](KernelBuilder& b) {
    const Reg in = b.param_ptr("in"), out = b.param_ptr("out");
    int64_t off = 0;
    for (DType src : kAllDTypes)
      for (PtxType compute : {PtxType::f32, PtxType::f64, PtxType::s32, PtxType::s64}) {
        FormulaScope scope(b, compute);
        const Value v = load_element(b, src, in, compute, off);
        for (DType dst : kAllDTypes) store_element(b, dst, out, v, off += 8);
      }
  });
}

TEST(PtxAssemble, HalfAndBf16Conversions) {
  expect_assembles([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    const Reg h = b.ld_global(PtxType::f16, p), bf = b.ld_global(PtxType::bf16, p, 2);
    const std::vector<PtxType> all = {PtxType::f16, PtxType::bf16, PtxType::f32, PtxType::f64,
                                      PtxType::s32, PtxType::s64,  PtxType::u32, PtxType::u64,
                                      PtxType::s16, PtxType::u16};
    int64_t off = 0;
    for (Reg src : {h, bf})
      for (PtxType to : all) {
        const Reg c = b.cvt(src, to);
        const Reg back = b.cvt(c, src.type);
        b.st_global(p, back, off += 2);
      }
    // Packing two halves and splitting them again; 16-byte loads of halves as b32.
    const Reg packed = b.pack(h, bf);
    const auto [lo, hi] = b.unpack(packed);
    b.st_global(p, lo, 64);
    b.st_global(p, hi, 66);
    const std::vector<Reg> v = b.ld_global_v(PtxType::b32, 4, p, 128);
    const auto [h0, h1] = b.unpack(v[3]);
    b.st_global(p, b.bitcast(h0, PtxType::f16), 68);
    b.st_global(p, b.bitcast(h1, PtxType::bf16), 70);
    const std::vector<Reg> hv = b.ld_global_v(PtxType::f16, 4, p, 256);
    b.st_global_v(p, hv, 512);
  });
}

TEST(PtxAssemble, Atomics) {
  expect_assembles([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    Reg acc = b.atom_global(AtomOp::add, PtxType::f32, p, 1.0);
    Reg accd = b.atom_global(AtomOp::add, PtxType::f64, p, 8, 8);
    const Reg u = b.atom_global(AtomOp::add, PtxType::u32, p, 1, 16);
    const Reg ud = b.atom_global(AtomOp::add, PtxType::u64, p, b.cvt(u, PtxType::u64), 24);
    const Reg sm = b.atom_global(AtomOp::max, PtxType::s32, p, -3, 32);
    const Reg sl = b.atom_global(AtomOp::min, PtxType::s64, p, b.cvt(sm, PtxType::s64), 40);
    const Reg um = b.atom_global(AtomOp::max, PtxType::u64, p, ud, 48);
    const Reg cas = b.atom_cas(Space::global, PtxType::u32, p, u, 7, 56);
    const Reg casd = b.atom_cas(Space::global, PtxType::f64, p, accd, 2.0, 64);
    const Reg ex = b.atom_global(AtomOp::exch, PtxType::f32, p, acc, 72);
    const Reg orr = b.atom_global(AtomOp::or_, PtxType::u32, p, 0x10, 76);
    b.red(Space::global, AtomOp::add, PtxType::f64, p, casd, 80);
    b.red(Space::global, AtomOp::add, PtxType::s64, p, sl, 88);
    const SharedArray s = b.shared_array(PtxType::u32, 64, "counts");
    const Reg sa = b.address_of(s);
    const Reg c = b.atom(Space::shared, AtomOp::add, PtxType::u32, sa, 1);
    b.st_global(p, b.add(b.add(c, cas), orr), 96);
    b.st_global(p, um, 104);
    b.st_global(p, ex, 112);
  });
}

// Formulas of src/math instantiated with Value in f64 and f32, and the primitives the
// device math library builds on.
void formula_kernel(KernelBuilder& b, PtxType t) {
  const Reg p = b.param_ptr("p");
  FormulaScope scope(b, t);
  const int size = type_size(t);
  const DType d = t == PtxType::f64 ? DType::F64 : DType::F32;
  const Value x = load_element(b, d, p, t), y = load_element(b, d, p, t, size);
  int64_t off = 2 * size;
  auto out = [&](const Value& v) { store_element(b, d, p, v, off += size); };
  out(math::sign(x));
  out(math::square(x));
  out(math::recip(x));
  out(math::rsqrt(x));
  out(math::round(x));
  out(math::isnan(x));
  out(math::isinf(x));
  out(math::logical_not(x));
  out(math::relu_bwd(y, x));
  out(math::leaky_relu(x, y));
  out(math::maximum(x, y));
  out(math::minimum(x, y));
  out(math::clamp(x, y, Value(3.0), true, true));
  out(math::logical_xor(x, y));
  out(math::where_cond(x, y, -y));
  out(math::fused_add_mul(x, y, x));
  out(math::div_scalar(x, y));
  out(fma(x, y, x) + floor(x) - ceil(y) * trunc(x) + sqrt(fabs(y)) + fmin(x, y) + fmax(x, y));
  out(pow2i(rint(x)) * ilogb_normal(y));
  out(x * 2 + 0.5 - 1 / x);
  out(convert(convert(x, PtxType::s64), t));
}

TEST(PtxAssemble, FormulasOverValueF64AndF32) {
  expect_assembles([](KernelBuilder& b) { formula_kernel(b, PtxType::f64); });
  expect_assembles([](KernelBuilder& b) { formula_kernel(b, PtxType::f32); });
}

TEST(PtxAssemble, IntegerValues) {
  for (DType d : {DType::I32, DType::I64})
    expect_assembles([d](KernelBuilder& b) {
      const Reg p = b.param_ptr("p");
      const PtxType t = d == DType::I32 ? PtxType::s32 : PtxType::s64;
      FormulaScope scope(b, t);
      const Value x = load_element(b, d, p, t), y = load_element(b, d, p, t, 8);
      const Value r = math::maximum(x, y) * Value(3) - abs(x) + select(x < y, -x, x / y) +
                      math::eq(x, y) + math::logical_and(x, y);
      store_element(b, d, p, r, 16);
      store_element(b, DType::U8, p, r, 24);
    });
}

// Every remaining builder instruction once.
TEST(PtxAssemble, InstructionCoverage) {
  expect_assembles([](KernelBuilder& b) {
    const Reg p = b.param_ptr("p");
    const Reg n = b.param(PtxType::s32, "n");
    const Reg nl = b.param(PtxType::s64, "nl");
    const Reg fs = b.param(PtxType::f32, "fs");
    const Reg ds = b.param(PtxType::f64, "ds");
    const ParamArray strides = b.param_array(PtxType::s64, 8, "strides");
    const SharedArray dyn = b.dynamic_shared("dyn");
    const Reg tid = b.tid_x(), tidy = b.tid_y(), cy = b.ctaid_y();
    const Reg st = b.load_param(strides, 7);
    // integers
    const Reg si = b.cvt(tid, PtxType::s32);
    Reg a = b.add(si, n);
    a = b.sub(a, 3);
    a = b.mul(a, n);
    a = b.mul_hi(a, 7);
    a = b.mad(a, n, 1);
    a = b.div(a, 3);
    a = b.rem(a, n);
    a = b.min(a, n);
    a = b.max(a, -1);
    a = b.abs(b.neg(a));
    a = b.and_(a, 0xff);
    a = b.or_(a, n);
    a = b.xor_(a, 5);
    a = b.not_(a);
    a = b.shl(a, 2);
    a = b.shr(a, tid);
    const Reg w = b.mad_wide(a, n, nl);
    const Reg w2 =
        b.add(b.mul_wide(b.cvt(tidy, PtxType::u32), cy), b.bitcast(b.mul(w, st), PtxType::u64));
    // floats
    Reg f = b.cvt(a, PtxType::f32);
    f = b.fma(f, fs, 1.0);
    f = b.div_full(f, fs);
    f = b.ex2_approx(b.lg2_approx(f));
    f = b.add(b.sin_approx(f), b.cos_approx(f));
    f = b.tanh_approx(f);
    f = b.rcp_approx(b.rcp_rn(f));
    f = b.sqrt_approx(b.sqrt_rn(f));
    f = b.rsqrt_approx(f);
    f = b.ceil(b.trunc(f));
    f = b.max(b.min(f, fs), b.abs(b.neg(f)));
    Reg d = b.cvt(f, PtxType::f64);
    d = b.rcp_approx(b.rcp_rn(d));
    d = b.rsqrt_approx(b.sqrt_rn(d));
    d = b.mad(d, ds, d);
    // predicates and select
    const Reg p1 = b.setp(Cmp::equ, f, fs), p2 = b.setp(Cmp::num, d, ds);
    const Reg p3 = b.xor_(b.or_(p1, p2), b.and_(p1, b.not_(p2)));
    const Reg sel = b.selp(p3, d, ds);
    const Reg sel2 = b.selp(p1, 1, 2, PtxType::u64);
    // 64-bit shuffles and packing
    const Reg shd = b.shfl(ShflMode::down, sel, 1);
    const Reg shu = b.shfl(ShflMode::up, sel2, 1);
    const Reg shi = b.shfl(ShflMode::idx, f, b.laneid(), 0x0000ffffu);
    const auto [lo, hi] = b.unpack(shd);
    const Reg back = b.bitcast(b.pack(hi, lo), PtxType::f64);
    // shared memory, dynamic
    const Reg sa = b.address_of(dyn);
    b.st_shared(b.mad(tid, 4, sa), shi);
    b.bar_sync();
    const std::vector<Reg> v = b.ld_shared_v(PtxType::f32, 4, sa, 16);
    b.st_shared_v(sa, v, 32);
    b.st(Space::shared, PtxType::u8, sa, 7, 48);
    // control flow: early exit of whole blocks is uniform
    b.ret_if(b.setp(Cmp::ge, cy, 1000000));
    b.if_then_else(
        p3, [&] { b.st_global(p, back); }, [&] { b.st_global(p, b.add(w2, shu), 8); });
    b.st(Space::global, PtxType::u8, p, a, 16);
    b.st(Space::global, PtxType::s32, p, 5, 20);
    b.st_global(p, b.ld_global(PtxType::s8, p, 1), 24);
    b.raw("membar.gl", {}, {});
  });
}

}  // namespace
}  // namespace numr::ptx
