// safetensors: an 8-byte little-endian header length N, N bytes of JSON describing each
// tensor (dtype, shape, data_offsets into the buffer that follows) and optional string
// metadata, then the tensors' bytes, little-endian and row-major.
#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "core/backend.h"
#include "core/op_scope.h"
#include "io/file.h"
#include "io/json.h"
#include "numr/io.h"

namespace numr {
namespace {

using io::JsonMember;
using io::JsonValue;

static_assert(std::endian::native == std::endian::little,
              "numr's file formats are little-endian and so is every host it runs on");

constexpr std::string_view kMetadataKey = "__metadata__";
// Larger headers are refused before they are read (as the reference implementation does):
// no real header comes near, and a corrupt length must not become an allocation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeName {
  std::string_view name;
  DType dtype;
};
constexpr std::array<DTypeName, 8> kDTypeNames = {{{"F64", DType::F64},
                                                   {"F32", DType::F32},
                                                   {"F16", DType::F16},
                                                   {"BF16", DType::BF16},
                                                   {"I64", DType::I64},
                                                   {"I32", DType::I32},
                                                   {"U8", DType::U8},
                                                   {"BOOL", DType::Bool}}};

std::string_view file_dtype_name(DType t) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == t) return d.name;
  return "?";
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;  // relative to the start of the data buffer
};

struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // absolute offset of the data buffer in the file
};

const JsonValue* member(const JsonValue& obj, std::string_view key) {
  for (const JsonMember& m : obj.members)
    if (m.key == key) return &m.value;
  return nullptr;
}

Entry parse_entry(std::string_view op, const std::string& name, const JsonValue& v,
                  uint64_t buffer_bytes) {
  const auto bad = [&](const auto&... what) {
    fail<IoError>(op, "tensor '", name, "': ", what...);
  };
  if (v.kind != JsonValue::Kind::Object) bad("expected an object with dtype, shape, data_offsets");
  for (const JsonMember& m : v.members)
    if (m.key != "dtype" && m.key != "shape" && m.key != "data_offsets")
      bad("unexpected key \"", m.key, "\"");
  const JsonValue* dtype = member(v, "dtype");
  const JsonValue* shape = member(v, "shape");
  const JsonValue* offsets = member(v, "data_offsets");
  if (!dtype || dtype->kind != JsonValue::Kind::String) bad("\"dtype\" missing or not a string");
  if (!shape || shape->kind != JsonValue::Kind::IntArray)
    bad("\"shape\" missing or not an array of integers");
  if (!offsets || offsets->kind != JsonValue::Kind::IntArray || offsets->ints.size() != 2)
    bad("\"data_offsets\" missing or not two integers");

  Entry e{name, DType::F32, shape->ints, 0, 0};
  const auto found = std::find_if(kDTypeNames.begin(), kDTypeNames.end(),
                                  [&](const DTypeName& d) { return d.name == dtype->str; });
  if (found == kDTypeNames.end())
    fail<UnsupportedDType>(op, "tensor '", name, "' has dtype ", dtype->str,
                           ", which numr does not have (it reads F64, F32, F16, BF16, I64, I32, "
                           "U8 and BOOL)");
  e.dtype = found->dtype;

  // The element count, checked against the buffer before anything depends on it.
  int64_t numel = 1;
  for (const int64_t d : e.shape) {
    if (d < 0) bad("negative extent in shape ", shape_str(e.shape));
    if (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxNumel)
      bad("shape ", shape_str(e.shape), " has too many elements");
  }
  const uint64_t nbytes = uint64_t(numel) * dtype_size(e.dtype);
  const int64_t b = offsets->ints[0], en = offsets->ints[1];
  if (b < 0 || en < b) bad("data_offsets [", b, ", ", en, "] are not a range");
  if (uint64_t(en) > buffer_bytes)
    bad("data_offsets [", b, ", ", en, "] reach past the ", buffer_bytes, "-byte data buffer");
  if (uint64_t(en - b) != nbytes)
    bad("data_offsets [", b, ", ", en, "] hold ", en - b, " bytes, but ", file_dtype_name(e.dtype),
        " of shape ", shape_str(e.shape), " needs ", nbytes);
  e.begin = uint64_t(b);
  e.end = uint64_t(en);
  return e;
}

Header read_header(std::string_view op, const io::InFile& file, const std::string& path) {
  if (file.size() < 8)
    fail<IoError>(op, "'", path, "' is ", file.size(),
                  " bytes long, too short for a safetensors header length");
  uint8_t len_bytes[8];
  file.read(0, len_bytes, 8);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | len_bytes[k];
  if (n > file.size() - 8)
    fail<IoError>(op, "'", path, "': header length ", n, " reaches past the end of the ",
                  file.size(), "-byte file");
  if (n > kMaxHeaderBytes)
    fail<IoError>(op, "'", path, "': header length ", n, " is over the limit of ", kMaxHeaderBytes,
                  " bytes");
  std::string text(size_t(n), '\0');
  file.read(8, text.data(), text.size());
  if (text.empty() || text[0] != '{')
    fail<IoError>(op, "'", path, "': the header does not start with '{'");
  if (!io::valid_utf8(text)) fail<IoError>(op, "'", path, "': the header is not valid UTF-8");

  Header h;
  h.data_start = 8 + n;
  const uint64_t buffer_bytes = file.size() - h.data_start;
  const JsonValue root = io::parse_json(op, text);
  for (const JsonMember& m : root.members) {
    if (m.key == kMetadataKey) {
      if (m.value.kind != JsonValue::Kind::Object)
        fail<IoError>(op, "'", path, "': \"__metadata__\" is not an object");
      for (const JsonMember& kv : m.value.members) {
        if (kv.value.kind != JsonValue::Kind::String)
          fail<IoError>(op, "'", path, "': metadata value of \"", kv.key, "\" is not a string");
        h.metadata.emplace(kv.key, kv.value.str);
      }
      continue;
    }
    h.entries.push_back(parse_entry(op, m.key, m.value, buffer_bytes));
  }

  // The tensors must tile the buffer exactly: no overlap, no gap, nothing after the last.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : h.entries) by_offset.push_back(&e);
  // Empty tensors sort before a tensor that starts where they sit.
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  for (const Entry* e : by_offset) {
    if (e->begin < at)
      fail<IoError>(op, "'", path, "': tensor '", e->name, "' at data_offsets [", e->begin, ", ",
                    e->end, "] overlaps the tensor before it");
    if (e->begin > at)
      fail<IoError>(op, "'", path, "': bytes [", at, ", ", e->begin,
                    ") of the data buffer belong to no tensor");
    at = e->end;
  }
  if (at != buffer_bytes)
    fail<IoError>(op, "'", path, "': the data buffer has ", buffer_bytes,
                  " bytes but the tensors cover ", at);
  return h;
}

}  // namespace

std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device) {
  const OpScope scope("load_safetensors");
  constexpr std::string_view op = "load_safetensors";
  backend_for(device);  // an unusable device fails before the file is read
  const io::InFile file(op, path);
  const Header h = read_header(op, file, path);
  std::map<std::string, Tensor> out;
  for (const Entry& e : h.entries) {
    Tensor t = Tensor::empty(e.shape, e.dtype, Device::cpu());
    if (e.end > e.begin) file.read(h.data_start + e.begin, io::host_bytes(t), e.end - e.begin);
    if (e.dtype == DType::Bool) {  // numr's Bool is 0 or 1; any nonzero byte reads as true
      auto* p = reinterpret_cast<uint8_t*>(io::host_bytes(t));
      for (uint64_t k = 0; k < e.end - e.begin; ++k) p[k] = p[k] != 0;
    }
    out.emplace(e.name, device.is_cpu() ? std::move(t) : t.to(device));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  constexpr std::string_view op = "load_safetensors_metadata";
  const io::InFile file(op, path);
  return read_header(op, file, path).metadata;
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const OpScope scope("save_safetensors");
  constexpr std::string_view op = "save_safetensors";
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey)
      fail<InvalidArgument>(op, "\"__metadata__\" is reserved and cannot name a tensor");
    if (!io::valid_utf8(name)) fail<InvalidArgument>(op, "tensor name is not valid UTF-8");
    if (!t.defined()) fail<InvalidArgument>(op, "tensor '", name, "' is undefined");
    if (is_complex(t.dtype()))
      fail<UnsupportedDType>(op, "tensor '", name, "' is ", t.dtype(),
                             ", which safetensors does not name; save view_as_real of it");
  }
  for (const auto& [k, v] : metadata)
    if (!io::valid_utf8(k) || !io::valid_utf8(v))
      fail<InvalidArgument>(op, "metadata is not valid UTF-8");

  // Data order: falling element size, then name, so each tensor's offset is a multiple of
  // its element size and a reader may map the file without copying.
  std::vector<std::pair<const std::string*, const Tensor*>> order;
  for (const auto& [name, t] : tensors) order.emplace_back(&name, &t);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return dtype_size(a.second->dtype()) > dtype_size(b.second->dtype());
  });
  std::map<std::string, std::pair<uint64_t, uint64_t>> offsets;
  uint64_t at = 0;
  for (const auto& [name, t] : order) {
    const uint64_t nbytes = uint64_t(t->numel()) * dtype_size(t->dtype());
    offsets[*name] = {at, at + nbytes};
    at += nbytes;
  }

  std::string header = "{";
  if (!metadata.empty()) {
    io::append_json_string(header, kMetadataKey);
    header += ":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      io::append_json_string(header, k);
      header += ':';
      io::append_json_string(header, v);
    }
    header += '}';
  }
  for (const auto& [name, t] : tensors) {
    if (header.size() > 1) header += ',';
    io::append_json_string(header, name);
    header += ":{\"dtype\":\"";
    header += file_dtype_name(t.dtype());
    header += "\",\"shape\":[";
    for (size_t d = 0; d < t.shape().size(); ++d) {
      if (d) header += ',';
      header += std::to_string(t.shape()[d]);
    }
    const auto [b, e] = offsets.at(name);
    header += "],\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
  }
  header += '}';
  // Spaces pad the header so that the data buffer starts at a multiple of 8.
  header.append((8 - header.size() % 8) % 8, ' ');

  io::OutFile file(op, path);
  uint8_t len_bytes[8];
  for (int k = 0; k < 8; ++k) len_bytes[k] = uint8_t(uint64_t(header.size()) >> (8 * k));
  file.write(len_bytes, 8);
  file.write(header.data(), header.size());
  for (const auto& [name, t] : order) file.write_tensor(*t);
  file.commit();
}

}  // namespace numr
