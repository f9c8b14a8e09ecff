#include "backends/webgpu/shader.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/dim_merge.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

bool dtype_supported(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I32 ||
         t == DType::I64 || t == DType::U8 || t == DType::Bool;
}

void require_dtype(DType t, const char* what) {
  if (!dtype_supported(t))
    fail<UnsupportedDType>(current_op(what), "the webgpu backend does not support ", dtype_name(t),
                           " (it has F32, F16, BF16, I32, I64 as pairs of 32-bit words, U8 "
                           "and Bool; WGSL has no 64-bit floats)");
}

Type compute_type(DType t) {
  if (t == DType::I64) return Type::i64;
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ? Type::f32 : Type::i32;
}

namespace {
bool half(DType t) { return t == DType::F16 || t == DType::BF16; }
// Elements narrower than a word share it: stored through atomics, as they are bit fields.
bool packed(DType t) { return t == DType::U8 || t == DType::Bool || half(t); }

// F16 and BF16 are computed in f32 and stored as 16-bit fields of u32 words, converted with
// integer arithmetic: WGSL leaves pack2x16float's rounding and overflow to the
// implementation, and f16 arithmetic to an optional feature. A NaN is quieted keeping its
// sign and the high bits of its payload, as on the CPU.
constexpr const char* kHalfFunctions = R"(fn numr_f16_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) {
    let mag = f32(m) * 5.9604644775390625e-8;
    return select(mag, -mag, sign != 0u);
  }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}
fn numr_f32_to_f16(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  let sign = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return sign | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return sign | 0x7c00u; }
  if (a >= 0x38800000u) {
    let r = a + 0xfffu + ((a >> 13u) & 1u);
    return sign | ((r - 0x38000000u) >> 13u);
  }
  if (a <= 0x33000000u) { return sign; }
  let shift = 126u - (a >> 23u);
  let m = (a & 0x7fffffu) | 0x800000u;
  var q = m >> shift;
  let rem = m & ((1u << shift) - 1u);
  let halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u) == 1u)) { q = q + 1u; }
  return sign | q;
}
fn numr_bf16_to_f32(h: u32) -> f32 { return bitcast<f32>(h << 16u); }
fn numr_f32_to_bf16(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}
)";
}  // namespace

std::string Shader::buffer(DType t, bool writable) {
  const std::string name = "b" + std::to_string(next_binding_);
  std::string elem = t == DType::F32   ? "f32"
                     : t == DType::I32 ? "i32"
                     : t == DType::I64 ? "vec2<u32>"
                                       : "u32";
  if (packed(t) && writable) elem = "atomic<u32>";
  decls_ += "@group(0) @binding(" + std::to_string(next_binding_++) + ") var<storage, " +
            (writable ? "read_write" : "read") + "> " + name + ": array<" + elem + ">;\n";
  return name;
}

std::string Shader::words(bool writable) { return array("u32", writable); }

std::string Shader::array(const std::string& elem, bool writable) {
  const std::string name = "b" + std::to_string(next_binding_);
  decls_ += "@group(0) @binding(" + std::to_string(next_binding_++) + ") var<storage, " +
            (writable ? "read_write" : "read") + "> " + name + ": array<" + elem + ">;\n";
  return name;
}

void Shader::shared(const std::string& name, Type t, uint32_t n) {
  decls_ += "var<workgroup> " + name + ": array<" + wgsl::type_name(t) + ", " + std::to_string(n) +
            ">;\n";
}

void Shader::decl(const std::string& wgsl) { decls_ += wgsl; }

Value Shader::param_u32(const std::string& idx) { return Value::let(Type::u32, "P[" + idx + "]"); }
Value Shader::param_i32(const std::string& idx) {
  return Value::let(Type::i32, "bitcast<i32>(P[" + idx + "])");
}
Value Shader::param_f32(const std::string& idx) {
  return Value::let(Type::f32, "bitcast<f32>(P[" + idx + "])");
}
Value Shader::param_i64(const std::string& idx) {
  return Value::let(Type::i64, "vec2<u32>(P[" + idx + "], P[" + idx + " + 1u])");
}
Value Shader::param(Type t, const std::string& idx) {
  switch (t) {
    case Type::f32: return param_f32(idx);
    case Type::i64: return param_i64(idx);
    case Type::u32: return param_u32(idx);
    default: return param_i32(idx);
  }
}

Value Shader::load(const std::string& name, DType t, const Value& idx, Type to) {
  switch (t) {
    case DType::F32: return wgsl::convert(Value::let(Type::f32, name + "[" + idx.str() + "]"), to);
    case DType::I32: return wgsl::convert(Value::let(Type::i32, name + "[" + idx.str() + "]"), to);
    case DType::F16:
    case DType::BF16: return unpack(t, load_half_bits(name, idx), to);
    case DType::I64: return wgsl::convert(Value::let(Type::i64, name + "[" + idx.str() + "]"), to);
    case DType::U8:
    case DType::Bool:
      return unpack(t,
                    Value::let(Type::u32, "((" + name + "[" + idx.str() + " >> 2u] >> ((" +
                                              idx.str() + " & 3u) * 8u)) & 0xffu)"),
                    to);
    default: require_dtype(t, "webgpu");
  }
  return Value::constant(to, 0);
}

Value Shader::unpack(DType t, const Value& field, Type to) {
  Value raw = Value::constant(Type::i32, 0);
  switch (t) {
    case DType::F16:
    case DType::BF16:
      half_ = true;
      raw = Value::let(Type::f32,
                       std::string(t == DType::F16 ? "numr_f16_to_f32" : "numr_bf16_to_f32") + "(" +
                           field.str() + ")");
      break;
    case DType::U8:
    case DType::Bool:
      raw = Value::let(Type::i32, "i32(" + field.str() + ")");
      if (t == DType::Bool)
        raw = select(raw != Value::constant(Type::i32, 0), Value::constant(Type::i32, 1),
                     Value::constant(Type::i32, 0));
      break;
    default: require_dtype(t, "webgpu");
  }
  return wgsl::convert(raw, to);
}

Value Shader::pack(DType t, const Value& v) {
  switch (t) {
    case DType::F16:
    case DType::BF16: {
      half_ = true;
      // An I64 reaches f32 rounded to odd, so that its rounding to 16 bits is single (as
      // the CPU's, through a sticky double).
      const Value f = v.type() == Type::i64
                          ? Value::let(Type::f32, "numr_i64_to_f32_odd(" + v.str() + ")")
                          : wgsl::convert(v, Type::f32);
      return Value::let(
          Type::u32, std::string(t == DType::F16 ? "numr_f32_to_f16" : "numr_f32_to_bf16") + "(" +
                         f.str() + ")");
    }
    case DType::U8:
    case DType::Bool: {
      if (t == DType::Bool) {
        const Value zero = Value::constant(v.type(), 0);
        return select(!(v == zero), Value::constant(Type::u32, 1), Value::constant(Type::u32, 0));
      }
      if (v.type() == Type::f32) {
        // Saturate through i32 (NaN -> 0), then clamp to [0, 255], as the CPU does.
        const Value i = wgsl::convert(v, Type::i32);
        return Value::let(Type::u32, "u32(clamp(" + i.str() + ", 0i, 255i))");
      }
      return Value::let(Type::u32,
                        "bitcast<u32>(" + wgsl::convert(v, Type::i32).str() + ") & 0xffu");
    }
    default: require_dtype(t, "webgpu");
  }
  return Value::constant(Type::u32, 0);
}

Value Shader::load_half_bits(const std::string& name, const Value& idx) {
  half_ = true;
  return Value::let(Type::u32, "((" + name + "[" + idx.str() + " >> 1u] >> ((" + idx.str() +
                                   " & 1u) * 16u)) & 0xffffu)");
}

void Shader::store_half_bits(const std::string& name, const Value& idx, const Value& bits) {
  half_ = true;
  const std::string w = "&" + name + "[" + idx.str() + " >> 1u]";
  const std::string sh = "((" + idx.str() + " & 1u) * 16u)";
  body_.line("atomicAnd(" + w + ", ~(0xffffu << " + sh + "));");
  body_.line("atomicOr(" + w + ", " + bits.str() + " << " + sh + ");");
}

int per_vec4(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16: return 8;
    case DType::U8:
    case DType::Bool: return 16;
    case DType::I64: return 2;
    default: return 0;
  }
}

const char* vec4_type(DType t) {
  return t == DType::F32 ? "vec4<f32>" : t == DType::I32 ? "vec4<i32>" : "vec4<u32>";
}

int vector_width(const std::vector<const TensorRef*>& operands) {
  int e = 0;
  for (const TensorRef* r : operands) {
    const int w = per_vec4(r->dtype);
    if (w == 0 || r->offset % w != 0) return 0;
    e = std::max(e, w);
  }
  return e;
}

TensorRef row_after(const TensorRef& r, int64_t skip, int64_t n) {
  TensorRef t;
  t.base = r.base;
  t.dtype = r.dtype;
  t.offset = r.offset + skip;
  t.shape = Shape{n};
  t.strides = Strides{1};
  return t;
}

Value Shader::vec4_element(DType t, const std::string& vec, int r, Type to) {
  static const char* const kComp[] = {"x", "y", "z", "w"};
  switch (t) {
    case DType::F32: return wgsl::convert(Value::let(Type::f32, vec + "." + kComp[r]), to);
    case DType::I32: return wgsl::convert(Value::let(Type::i32, vec + "." + kComp[r]), to);
    case DType::I64:
      return wgsl::convert(Value::let(Type::i64, vec + (r == 0 ? ".xy" : ".zw")), to);
    case DType::F16:
    case DType::BF16:
      return unpack(t,
                    Value::let(Type::u32, "(" + vec + "." + kComp[r / 2] + " >> " +
                                              std::to_string(16 * (r % 2)) + "u) & 0xffffu"),
                    to);
    default:  // U8, Bool
      return unpack(t,
                    Value::let(Type::u32, "(" + vec + "." + kComp[r / 4] + " >> " +
                                              std::to_string(8 * (r % 4)) + "u) & 0xffu"),
                    to);
  }
}

std::string Shader::vec4_of(DType t, const std::vector<Value>& ys) {
  std::vector<std::string> parts;
  switch (t) {
    case DType::F32:
    case DType::I32:
      for (const Value& y : ys)
        parts.push_back(wgsl::convert(y, t == DType::F32 ? Type::f32 : Type::i32).str());
      break;
    case DType::I64:
      for (const Value& y : ys) parts.push_back(wgsl::convert(y, Type::i64).str());
      break;
    case DType::F16:
    case DType::BF16:
      for (size_t p = 0; p < 4; ++p) {
        const Value lo = pack(t, ys[2 * p]), hi = pack(t, ys[2 * p + 1]);
        parts.push_back("(" + lo.str() + " | (" + hi.str() + " << 16u))");
      }
      break;
    default:  // U8, Bool
      for (size_t p = 0; p < 4; ++p) {
        std::string word;
        for (size_t q = 0; q < 4; ++q) {
          const Value f = pack(t, ys[4 * p + q]);
          word += (q ? " | (" : "(") + f.str() + " << " + std::to_string(8 * q) + "u)";
        }
        parts.push_back("(" + word + ")");
      }
      break;
  }
  std::string vec = std::string(vec4_type(t)) + "(";
  for (size_t p = 0; p < parts.size(); ++p) vec += (p ? ", " : "") + parts[p];
  return vec + ")";
}

void Shader::store(const std::string& name, DType t, const Value& idx, const Value& v) {
  switch (t) {
    case DType::F32:
      body_.line(name + "[" + idx.str() + "] = " + wgsl::convert(v, Type::f32).str() + ";");
      return;
    case DType::I32:
      body_.line(name + "[" + idx.str() + "] = " + wgsl::convert(v, Type::i32).str() + ";");
      return;
    case DType::F16:
    case DType::BF16: store_half_bits(name, idx, pack(t, v)); return;
    case DType::I64:
      body_.line(name + "[" + idx.str() + "] = " + wgsl::convert(v, Type::i64).str() + ";");
      return;
    case DType::U8:
    case DType::Bool: {
      const Value byte = pack(t, v);
      const std::string w = "&" + name + "[" + idx.str() + " >> 2u]";
      const std::string sh = "((" + idx.str() + " & 3u) * 8u)";
      body_.line("atomicAnd(" + w + ", ~(0xffu << " + sh + "));");
      body_.line("atomicOr(" + w + ", " + byte.str() + " << " + sh + ");");
      return;
    }
    default: require_dtype(t, "webgpu");
  }
}

std::string Shader::finish() const {
  std::string s = subgroups_ ? "enable subgroups;\n" : "";
  s += "var<private> numr_zero: u32;\n";
  const auto uses = [&](const char* fn) {
    return body_.text().find(fn) != std::string::npos ||
           body_.functions().find(fn) != std::string::npos;
  };
  if (uses("numr_i64_")) s += wgsl::i64_functions();
  if (uses("numr_f32_div(")) s += wgsl::f32_functions();
  s += "@group(0) @binding(0) var<storage, read> P: array<u32>;\n";
  s += decls_;
  s += body_.functions();
  if (half_) s += kHalfFunctions;
  s += "@compute @workgroup_size(" + std::to_string(kWorkgroupSize) + ")\n";
  s += "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg3: "
       "vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>";
  if (subgroups_)
    s += ", @builtin(subgroup_invocation_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32";
  s += ") {\n";
  // Every binding is used, so the pipeline's automatic layout has them all.
  s += "  numr_zero = P[arrayLength(&P) - 1u];\n";
  for (int b = 1; b < next_binding_; ++b) s += "  _ = &b" + std::to_string(b) + ";\n";
  s += "  let wid = wg3.x + wg3.y * nwg.x;\n";
  s += "  let gi = wid * " + std::to_string(kWorkgroupSize) + "u + lid;\n";
  s += body_.text();
  s += "}\n";
  return s;
}

int64_t saturate_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  return int64_t(v);
}

void Params::f32(float v) { w.push_back(std::bit_cast<uint32_t>(v)); }

void StridedLayout::push(Params& p, const Shape& shape,
                         const std::vector<const TensorRef*>& operands) {
  std::vector<const Strides*> strides;
  for (const TensorRef* r : operands) strides.push_back(&r->strides);
  const MergedDims m = merge_dims(shape, strides);
  p.u32(m.extents.size());
  for (int64_t e : m.extents) p.u32(uint64_t(e));
  for (size_t k = 0; k < operands.size(); ++k) {
    p.i32(operands[k]->offset);
    for (int64_t s : m.strides[k]) p.i32(s);
  }
}

bool StridedLayout::contiguous(const TensorRef& r) {
  int64_t expect = 1;
  for (size_t d = r.shape.size(); d-- > 0;) {
    if (r.shape[d] == 1) continue;
    if (r.strides[d] != expect) return false;
    expect *= r.shape[d];
  }
  return true;
}

std::vector<Value> StridedLayout::emit_offsets(Shader& s, uint32_t base, int n_operands,
                                               const Value& linear) {
  wgsl::Body& b = s.body();
  const std::string B = std::to_string(base) + "u";
  b.line("let nd = P[" + B + "];");
  std::vector<std::string> names;
  for (int k = 0; k < n_operands; ++k) {
    const std::string n = "o" + std::to_string(k);
    const std::string blk = B + " + 1u + nd + " + std::to_string(k) + "u * (nd + 1u)";
    b.line("var " + n + ": i32 = bitcast<i32>(P[" + blk + "]);");
    names.push_back(n);
  }
  b.line("var r: u32 = " + linear.str() + ";");
  b.line("for (var d: i32 = i32(nd) - 1; d >= 0; d = d - 1) {");
  b.line("  let e = P[" + B + " + 1u + u32(d)];");
  b.line("  let c = i32(r % e);");
  b.line("  r = r / e;");
  for (int k = 0; k < n_operands; ++k) {
    const std::string blk = B + " + 1u + nd + " + std::to_string(k) + "u * (nd + 1u)";
    b.line("  " + names[k] + " = " + names[k] + " + c * bitcast<i32>(P[" + blk +
           " + 1u + u32(d)]);");
  }
  b.line("}");
  std::vector<Value> out;
  for (const std::string& n : names) out.push_back(Value::let(Type::u32, "u32(" + n + ")"));
  return out;
}

bool StridedLayout::flat(const Shape& shape, const std::vector<const TensorRef*>& operands) {
  std::vector<const Strides*> strides;
  for (const TensorRef* r : operands) strides.push_back(&r->strides);
  const MergedDims m = merge_dims(shape, strides);
  if (m.extents.size() > 1) return false;
  for (const auto& st : m.strides)
    for (int64_t x : st)
      if (x != 1) return false;
  return true;
}

std::vector<Value> StridedLayout::emit_flat_offsets(Shader& s, uint32_t base, int n_operands,
                                                    const Value& linear) {
  wgsl::Body& b = s.body();
  const std::string B = std::to_string(base) + "u";
  b.line("let nd = P[" + B + "];");
  std::vector<Value> out;
  for (int k = 0; k < n_operands; ++k) {
    const std::string blk = B + " + 1u + nd + " + std::to_string(k) + "u * (nd + 1u)";
    const std::string n = "o" + std::to_string(k);
    b.line("let " + n + ": u32 = P[" + blk + "] + " + linear.str() + ";");
    out.push_back(Value::let(Type::u32, n));
  }
  return out;
}

}  // namespace numr::webgpu
