// Metadata of every op, generated from op_table.def.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "numr/dtype.h"

namespace numr {

enum class OpId : uint16_t {
#define NUMR_OP(name, family, dtypes, grad) name,
#include "numr/op_table.def"
};

enum class OpFamily : uint8_t {
  Unary,
  UnaryPred,
  Activation,
  Binary,
  Ternary,
  Scalar,
  Compare,
  Logical,
  Select,
  Clamp,
  Reduce,
  Scan,
  Softmax,
  Matmul,
  Shape,
  View,
  Copy,
  Factory,
  ActMul,
  ActBwd,
  ActMulBwd,
  Epilogue,
  Norm,
  Attention,
  Misc,
  Sort,
  Index,
  Conv
};

struct OpInfo {
  OpId id;
  std::string_view name;
  OpFamily family;
  uint32_t dtype_mask;  // bit i set: DType i is accepted (room for 32 dtypes)
  bool differentiable;
  // The front end can build the op from other ops (its composition) when a backend has no
  // kernel for it (Backend::supports); every other op is in each backend's required core.
  bool composed;
};

std::span<const OpInfo> all_ops();
const OpInfo& op_info(OpId id);
std::string_view op_name(OpId id);
std::string_view family_name(OpFamily f);
bool op_accepts(OpId id, DType t);

}  // namespace numr
