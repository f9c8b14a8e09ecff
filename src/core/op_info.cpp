#include "numr/op_info.h"

#include <array>
#include <iterator>

#include "numr/error.h"

namespace numr {
namespace {

constexpr uint32_t bit(DType t) { return uint32_t(1u) << unsigned(t); }
constexpr uint32_t kFLOAT = bit(DType::F64) | bit(DType::F32) | bit(DType::F16) | bit(DType::BF16);
constexpr uint32_t kSIGNED = kFLOAT | bit(DType::I64) | bit(DType::I32);
constexpr uint32_t kNUMERIC = kSIGNED | bit(DType::U8);
constexpr uint32_t kANY = kNUMERIC | bit(DType::Bool);
constexpr uint32_t kCOMPLEX = bit(DType::Complex64) | bit(DType::Complex128);
// Ops that also take complex tensors (through the pair view, src/ops/complex.cpp).
constexpr uint32_t kFLOATC = kFLOAT | kCOMPLEX;
constexpr uint32_t kSIGNEDC = kSIGNED | kCOMPLEX;
constexpr uint32_t kNUMERICC = kNUMERIC | kCOMPLEX;
constexpr uint32_t kANYC = kANY | kCOMPLEX;
constexpr uint32_t kPARTS = bit(DType::F32) | bit(DType::F64);
constexpr uint32_t kINDEX = bit(DType::I64) | bit(DType::I32);
constexpr bool kDIFF = true;
constexpr bool kNONDIFF = false;

// Ops with a composition (src/ops/compose): the fused and derived families, the reductions
// that are sums underneath, the GEMMs, the normalisations, attention, sorting and the
// indexing primitives.
constexpr bool has_composition(OpId id, OpFamily f) {
  switch (f) {
    case OpFamily::ActMul:
    case OpFamily::ActBwd:
    case OpFamily::ActMulBwd:
    case OpFamily::Scan:
    case OpFamily::Softmax:
    case OpFamily::Matmul:
    case OpFamily::Epilogue:
    case OpFamily::Norm:
    case OpFamily::Attention:
    case OpFamily::Sort: return true;
    case OpFamily::Index:
      return id == OpId::gather || id == OpId::scatter || id == OpId::scatter_reduce;
    default: return id == OpId::mean || id == OpId::var || id == OpId::std || id == OpId::logsumexp;
  }
}

constexpr OpInfo kOps[] = {
#define NUMR_OP(name, family, dtypes, grad) \
  {OpId::name, #name,   OpFamily::family,   \
   k##dtypes,  k##grad, has_composition(OpId::name, OpFamily::family)},
#include "numr/op_table.def"
};

}  // namespace

std::span<const OpInfo> all_ops() { return kOps; }
const OpInfo& op_info(OpId id) {
  if (size_t(id) >= std::size(kOps))
    fail<InvalidArgument>("op_info", "invalid op id ", unsigned(id));
  return kOps[size_t(id)];
}
std::string_view op_name(OpId id) {
  if (size_t(id) >= std::size(kOps))
    fail<InvalidArgument>("op_name", "invalid op id ", unsigned(id));
  return kOps[size_t(id)].name;
}
bool op_accepts(OpId id, DType t) {
  return uint8_t(t) <= uint8_t(kLastDType) && (op_info(id).dtype_mask & bit(t)) != 0;
}

std::string_view family_name(OpFamily f) {
  static constexpr std::array<std::string_view, 28> kNames = {
      "Unary",   "UnaryPred", "Activation", "Binary",   "Ternary",   "Scalar",
      "Compare", "Logical",   "Select",     "Clamp",    "Reduce",    "Scan",
      "Softmax", "Matmul",    "Shape",      "View",     "Copy",      "Factory",
      "ActMul",  "ActBwd",    "ActMulBwd",  "Epilogue", "Norm",      "Attention",
      "Misc",    "Sort",      "Index",      "Conv"};
  static_assert(kNames.size() == size_t(OpFamily::Conv) + 1);
  if (size_t(f) >= kNames.size())
    fail<InvalidArgument>("family_name", "invalid op family ", unsigned(f));
  return kNames[size_t(f)];
}

}  // namespace numr
