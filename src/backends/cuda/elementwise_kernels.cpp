#include "backends/cuda/elementwise_kernels.h"

#include <cctype>
#include <memory>
#include <stdexcept>
#include <utility>

#include "backends/cuda/fast_math.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "math/complex.h"
#include "math/formula.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::FormulaScope;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

// The op's formula on Values of the compute type (math/formula.h). Its unqualified calls
// find the templates of math/elementwise.h and, by argument-dependent lookup, Value's own
// functions (value.h, value_math.h), which win over the double overloads of
// math/scalar_double.h.
Value apply(const ElementwiseConfig& c, const std::vector<Value>& x, const Value& s0,
            const Value& s1, int output) {
  if (c.op == OpId::clamp && !ptx::is_float(x[0].type())) {
    // The CPU's integer rule: the lower bound is tested first.
    const Value hi = c.has_hi ? select(x[0] > s1, s1, x[0]) : x[0];
    return c.has_lo ? select(x[0] < s0, s0, hi) : hi;
  }
  return math::formula<Value>(c.op, x.data(), s0, s1, c.has_lo, c.has_hi, output);
}

// The inputs and outputs of an elementwise op; {-1, -1} for any other op.
std::pair<int, int> arity(OpId op) {
  try {
    return math::visit_formula(op, [](auto f) { return std::pair{f.inputs, f.outputs}; });
  } catch (const std::invalid_argument&) {
    return {-1, -1};
  }
}

// The approximations the op's f32 formula may use (fast_math.h).
ptx::FastMath fast_math_for(OpId op, DType src) {
  switch (op_info(op).family) {
    case OpFamily::Activation:
    case OpFamily::ActMul:
    case OpFamily::ActBwd:
    case OpFamily::ActMulBwd: return formula_fast_math(src, true);
    default: return formula_fast_math(src, false);
  }
}

// Complex64 mul, div and abs (complex_elementwise_op): each element moves as one 64-bit
// word, split into its f32 parts for the formulas of math/complex.h and joined again.
GeneratedKernel generate_complex(const ElementwiseConfig& c, const ptx::Target& target) {
  const size_t n_in = c.op == OpId::abs ? 1 : 2;
  const DType out = c.op == OpId::abs ? DType::F32 : DType::Complex64;
  if (!complex_elementwise_op(c.op) || c.ins.size() != n_in || c.outs.size() != 1 ||
      c.outs[0] != out)
    fail<BackendError>("cuda", "complex elementwise kernel for ", op_name(c.op));
  for (DType d : c.ins)
    if (d != DType::Complex64)
      fail<BackendError>("cuda", "complex elementwise kernel for ", op_name(c.op), " at ", d);
  MapSpec spec;
  spec.name = elementwise_key(c);
  spec.outs = {out == DType::F32 ? DType::F32 : DType::F64};
  spec.ins = std::vector<DType>(n_in, DType::F64);  // the (re, im) pair as one word
  spec.shape = c.shape;
  const OpId op = c.op;
  spec.body = [op](KernelBuilder& b, std::span<const Reg> raw, Reg) {
    FormulaScope scope(b, PtxType::f32, formula_fast_math(DType::F32, false));
    const auto parts = [&](Reg word) {
      const auto [lo, hi] = b.unpack(word);
      return std::pair{Value(b.bitcast(lo, PtxType::f32)), Value(b.bitcast(hi, PtxType::f32))};
    };
    const auto [ar, ai] = parts(raw[0]);
    if (op == OpId::abs) return std::vector<Reg>{math::cx::abs(ar, ai).reg()};
    const auto [br, bi] = parts(raw[1]);
    Value re(0.0), im(0.0);
    if (op == OpId::mul) math::cx::mul(ar, ai, br, bi, re, im);
    else math::cx::div(ar, ai, br, bi, re, im);
    return std::vector<Reg>{b.bitcast(b.pack(re.reg(), im.reg()), PtxType::f64)};
  };
  return generate_map(spec, target);
}

}  // namespace

PtxType elementwise_compute_type(DType src) {
  switch (compute_dtype(src)) {
    case DType::F64: return PtxType::f64;
    case DType::F32: return PtxType::f32;
    case DType::I64: return PtxType::s64;
    default: return PtxType::s32;  // I32, and U8 (also Bool's compute dtype): wrapped on store
  }
}

DType elementwise_source_dtype(OpId op, const std::vector<DType>& ins) {
  return op == OpId::where_cond ? ins.at(1) : ins.at(0);
}

int elementwise_scalar_count(OpId op) {
  if (op == OpId::clamp) return 2;
  switch (op) {
#define NUMR_ACTIVATION_P(name, p, v, d, g) case OpId::name: return 1;
#include "numr/op_table.def"
    default: return op_info(op).family == OpFamily::Scalar ? 1 : 0;
  }
}

bool elementwise_one_per_step(OpId op) {
  switch (op) {
    case OpId::gamma:
    case OpId::beta:
    case OpId::polygamma:
    case OpId::zeta:
    case OpId::gammainc:
    case OpId::gammaincc:
    case OpId::betainc:
    case OpId::bessel_j0:
    case OpId::bessel_j1:
    case OpId::bessel_y0:
    case OpId::bessel_y1:
    case OpId::bessel_i0:
    case OpId::bessel_i0e:
    case OpId::bessel_i1:
    case OpId::bessel_i1e:
    case OpId::bessel_k0:
    case OpId::bessel_k1:
    case OpId::ellipk:
    case OpId::ellipe: return true;
    default: return false;
  }
}

std::string elementwise_key(const ElementwiseConfig& c) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on chains of string +.
  std::string k = "ew_";
  k += op_name(c.op);
  for (DType d : c.outs) k.append("_").append(lower(dtype_name(d)));
  k += "_of";
  for (DType d : c.ins) k.append("_").append(lower(dtype_name(d)));
  k.append("_").append(c.shape.key());
  if (c.op == OpId::clamp) {
    if (c.has_lo) k += "_lo";
    if (c.has_hi) k += "_hi";
  }
  return k;
}

GeneratedKernel generate_elementwise(const ElementwiseConfig& c, const ptx::Target& target) {
  if (!c.ins.empty() && is_complex(c.ins[0])) return generate_complex(c, target);
  const auto [n_in, n_out] = arity(c.op);
  if (n_in < 0 || c.ins.size() != size_t(n_in) || c.outs.size() != size_t(n_out))
    fail<BackendError>("cuda", "elementwise kernel for ", op_name(c.op), " with ", c.ins.size(),
                       " inputs and ", c.outs.size(), " outputs");
  const DType source = elementwise_source_dtype(c.op, c.ins);
  const PtxType compute = elementwise_compute_type(source);
  const ptx::FastMath fast = fast_math_for(c.op, source);
  const int n_scalars = elementwise_scalar_count(c.op);

  MapSpec spec;
  spec.name = elementwise_key(c);
  spec.outs = c.outs;
  spec.ins = c.ins;
  spec.shape = c.shape;
  // Scalars arrive as parameters of the compute type, converted on the host as the CPU
  // converts them.
  auto scalars = std::make_shared<std::vector<Reg>>();
  spec.setup = [=](KernelBuilder& b) {
    static constexpr const char* kNames[] = {"s0", "s1"};
    for (int i = 0; i < n_scalars; ++i) scalars->push_back(b.param(compute, kNames[i]));
  };
  spec.body = [=](KernelBuilder& b, std::span<const Reg> raw, Reg) {
    FormulaScope scope(b, compute, fast);
    std::vector<Value> x;
    for (size_t k = 0; k < raw.size(); ++k)
      x.push_back(ptx::from_storage(b, raw[k], c.ins[k], compute));
    const Value s0 = n_scalars > 0 ? Value((*scalars)[0]) : Value(0);
    const Value s1 = n_scalars > 1 ? Value((*scalars)[1]) : Value(0);
    std::vector<Reg> out;
    for (size_t o = 0; o < c.outs.size(); ++o)
      out.push_back(ptx::to_storage(b, apply(c, x, s0, s1, int(o)), c.outs[o]));
    return out;
  };
  return generate_map(spec, target);
}

}  // namespace numr::cuda
