#include "backends/cuda/copy_kernels.h"

#include <cctype>
#include <memory>

#include "backends/cuda/elementwise_kernels.h"
#include "codegen/ptx/element_io.h"

namespace numr::cuda {

using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

}  // namespace

std::string copy_key(const CopyConfig& c) {
  return "copy_" + lower(dtype_name(c.dst)) + "_of_" + lower(dtype_name(c.src)) + "_" +
         c.shape.key();
}

GeneratedKernel generate_copy(const CopyConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = copy_key(c);
  spec.outs = {c.dst};
  spec.ins = {c.src};
  spec.shape = c.shape;
  spec.body = [c](KernelBuilder& b, std::span<const Reg> raw, Reg) -> std::vector<Reg> {
    if (c.src == c.dst) return {raw[0]};  // the bits as they are (NaN payloads, Bool bytes)
    const PtxType compute = elementwise_compute_type(c.src);
    ptx::FormulaScope scope(b, compute);
    return {ptx::to_storage(b, ptx::from_storage(b, raw[0], c.src, compute), c.dst)};
  };
  return generate_map(spec, target);
}

std::string fill_key(const FillConfig& c) {
  return "fill_" + lower(dtype_name(c.dst)) + "_" + c.shape.key();
}

GeneratedKernel generate_fill(const FillConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = fill_key(c);
  spec.outs = {c.dst};
  spec.shape = c.shape;
  auto value = std::make_shared<Reg>();
  spec.setup = [c, value](KernelBuilder& b) {
    const Reg v = b.param(PtxType::f64, "value");
    ptx::FormulaScope scope(b, PtxType::f64);
    *value = ptx::to_storage(b, ptx::Value(v), c.dst);
  };
  spec.body = [value](KernelBuilder&, std::span<const Reg>, Reg) -> std::vector<Reg> {
    return {*value};
  };
  return generate_map(spec, target);
}

}  // namespace numr::cuda
