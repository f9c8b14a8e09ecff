// Assembly of compute shaders for the kernel generators: storage bindings per dtype (small
// types packed in u32 words, written with atomic and/or so that neighbouring elements
// written by other invocations survive), element loads and stores converting to and from
// the compute type, and the walk from a linear element index to each operand's element of
// a strided layout. I64 elements are vec2<u32> (low, high word), computed as wgsl i64
// Values. Binding 0 is always the parameter words `P` (Context::dispatch), whose
// last word is the zero `numr_zero`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/wgsl/value.h"
#include "core/backend.h"
#include "numr/dtype.h"

namespace numr::webgpu {

inline constexpr uint32_t kWorkgroupSize = 256;

// Whether the backend stores and computes dtype t (F64, F16 and BF16 are refused).
bool dtype_supported(DType t);
// Throws UnsupportedDType naming the backend when t is not supported.
void require_dtype(DType t, const char* what);
// The WGSL compute type of a dtype's elements.
wgsl::Type compute_type(DType t);

// Whole vec4s of words, for the kernels of contiguous rows that move 16 bytes at a time:
// the elements of dtype t in one vec4 (0 where t has no vector form), and its WGSL type.
int per_vec4(DType t);
const char* vec4_type(DType t);
// Elements per invocation of a vector kernel over these contiguous operands (the most that
// one vec4 of any of them holds), or 0 where one has no vector form or an offset that is not
// a whole number of vec4s.
int vector_width(const std::vector<const TensorRef*>& operands);
// A contiguous row of n elements of r starting `skip` elements in (the elements a vector
// kernel left to the one-element kernel).
TensorRef row_after(const TensorRef& r, int64_t skip, int64_t n);

class Shader {
 public:
  // Declares the next storage binding, returns its name.
  std::string buffer(DType t, bool writable);
  // An array<u32> binding (I64 outputs written as word pairs).
  std::string words(bool writable);
  // An array binding of any WGSL element type (vectors of words).
  std::string array(const std::string& elem, bool writable);
  // Workgroup memory: `var<workgroup> name: array<type, n>;`.
  void shared(const std::string& name, wgsl::Type t, uint32_t n);
  // Module-scope WGSL written as is (helper functions, workgroup arrays of vector types).
  void decl(const std::string& wgsl);
  // Enables WGSL's subgroups (the device must have them): the body then also has sg_id
  // (subgroup_invocation_id) and sg_size (subgroup_size).
  void use_subgroups() { subgroups_ = true; }

  wgsl::Body& body() { return body_; }
  // The parameter word at index expression idx as a u32 / i32 / f32 Value.
  wgsl::Value param_u32(const std::string& idx);
  wgsl::Value param_i32(const std::string& idx);
  wgsl::Value param_f32(const std::string& idx);
  // The parameter words idx (low) and idx + 1 (high) as an i64 Value.
  wgsl::Value param_i64(const std::string& idx);
  // The parameter word(s) at idx as a Value of type t (two words for i64).
  wgsl::Value param(wgsl::Type t, const std::string& idx);

  // The element of binding `name` (dtype t) at u32 index `idx`, in compute type `to`.
  wgsl::Value load(const std::string& name, DType t, const wgsl::Value& idx, wgsl::Type to);
  // Stores v (any compute type) into element idx of binding name (dtype t), converting as
  // the CPU does (saturating to U8, NaN to 0 in integers, non-zero to true, F16 and BF16
  // rounded to nearest even).
  void store(const std::string& name, DType t, const wgsl::Value& idx, const wgsl::Value& v);
  // The 16 bits of element idx of an F16/BF16 binding as a u32, and their store: copies
  // within one 16-bit dtype move bits, keeping NaN payloads that a round trip through f32
  // would not.
  wgsl::Value load_half_bits(const std::string& name, const wgsl::Value& idx);
  void store_half_bits(const std::string& name, const wgsl::Value& idx, const wgsl::Value& bits);
  // A packed element (F16, BF16, U8, Bool) from its field, the low 16 or 8 bits of the u32
  // `field`, in compute type `to`; and the field that store() writes for v. Kernels that
  // move whole words (vector loads and stores) convert through these as load and store do.
  wgsl::Value unpack(DType t, const wgsl::Value& field, wgsl::Type to);
  wgsl::Value pack(DType t, const wgsl::Value& v);
  // Element r of the vec4 `vec` of dtype t's elements, in compute type `to`; and the vec4
  // expression holding the per_vec4(t) elements ys, converted as store() converts.
  wgsl::Value vec4_element(DType t, const std::string& vec, int r, wgsl::Type to);
  std::string vec4_of(DType t, const std::vector<wgsl::Value>& ys);

  // The full module. In the body: gi (global invocation index, u32), lid (local index),
  // wid (workgroup index).
  std::string finish() const;

 private:
  std::string decls_;
  wgsl::Body body_;
  int next_binding_ = 1;
  std::vector<std::pair<std::string, DType>> packed_writable_;
  bool half_ = false;  // the module needs the F16/BF16 conversion functions
  bool subgroups_ = false;
};

// A double converted to int64 as the CPU converts it: truncated, saturating (2^63 is the
// first double past INT64_MAX), NaN -> 0.
int64_t saturate_i64(double v);

// Host side of the parameter words.
struct Params {
  std::vector<uint32_t> w;
  void u32(uint64_t v) { w.push_back(uint32_t(v)); }
  void i32(int64_t v) { w.push_back(uint32_t(int32_t(v))); }
  void f32(float v);
  void i64(int64_t v) {
    u32(uint64_t(v));
    u32(uint64_t(v) >> 32);
  }
};

// A strided layout of several operands over one shape, merged (core/dim_merge.h), as
// parameters: the dim count, the extents, then per operand its offset and strides.
// emit_offsets writes the walk into a shader: each operand's element index for the linear
// index `linear`, reading the layout from parameter word `base` on.
struct StridedLayout {
  static void push(Params& p, const Shape& shape, const std::vector<const TensorRef*>& operands);
  // Whether an operand is contiguous over shape (its element = offset + linear index).
  static bool contiguous(const TensorRef& r);
  static std::vector<wgsl::Value> emit_offsets(Shader& s, uint32_t base, int n_operands,
                                               const wgsl::Value& linear);
  // Whether the operands merge into one row of unit strides (or one element): each
  // operand's element is then its offset plus the linear index.
  static bool flat(const Shape& shape, const std::vector<const TensorRef*>& operands);
  // emit_offsets for a layout that is flat(): no walk through the extents, no division.
  static std::vector<wgsl::Value> emit_flat_offsets(Shader& s, uint32_t base, int n_operands,
                                                    const wgsl::Value& linear);
};

}  // namespace numr::webgpu
