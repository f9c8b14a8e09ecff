// safetensors: round trips, files written by another writer, numr's files read by NumPy,
// and a table of malformed files that must raise IoError/UnsupportedDType, never crash.
#include <algorithm>
#include <cmath>
#include <limits>

#include "io/json.h"
#include "io_test_util.h"

namespace numr {
namespace {

using namespace io_test;

constexpr const char* kLoad = "load_safetensors";

// Floats with NaN, signed zero and infinities, so that the round trip is checked by bits.
Tensor specials(DType dtype, const Shape& shape) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> pool = {std::nan(""), -0.0, inf, -inf, 1.5, -2.25, 7.0, 0.125};
  std::vector<double> v(size_t(shape_numel(shape)));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = is_floating(dtype) ? pool[k % pool.size()] : double(k * 3 % 7);
  return Tensor::from_vector(v, shape).cast(dtype);
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_TRUE(got.is_contiguous());
  EXPECT_EQ(bytes_of(got), bytes_of(want));
}

TEST(IoSafetensors, RoundTripEveryDType) {
  ScratchDir dir;
  std::map<std::string, Tensor> in;
  for (const DType t : kAllDTypes) in["t_" + std::string(dtype_name(t))] = specials(t, {2, 5});
  save_safetensors(dir.file("a.safetensors"), in);
  const auto out = load_safetensors(dir.file("a.safetensors"));
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) expect_same(out.at(name), t, name);
}

TEST(IoSafetensors, ZeroDimEmptyAndViews) {
  ScratchDir dir;
  const Tensor base = specials(DType::F32, {4, 6});
  const std::map<std::string, Tensor> in = {
      {"scalar", full({}, 2.5, DType::F64)},
      {"empty", zeros({0}, DType::I32)},
      {"empty3d", zeros({2, 0, 3}, DType::BF16)},
      {"transposed", base.transpose(0, 1)},
      {"narrowed", base.narrow(1, 1, 3)},
      {"flipped", base.flip({0})},
      {"broadcast", Tensor::from_vector<int64_t>({7, -9}, {2, 1}).broadcast_to({2, 5})},
      {"bool_view", specials(DType::Bool, {3, 4}).transpose(0, 1)},
  };
  save_safetensors(dir.file("v.safetensors"), in);
  const auto out = load_safetensors(dir.file("v.safetensors"));
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) expect_same(out.at(name), t.contiguous(), name);
}

TEST(IoSafetensors, ManyTensorsAndMetadata) {
  ScratchDir dir;
  std::map<std::string, Tensor> in;
  for (int i = 0; i < 150; ++i) {
    const DType t = kAllDTypes[size_t(i) % std::size(kAllDTypes)];
    in["layer." + std::to_string(i) + ".weight"] = specials(t, {i % 4, i % 7 + 1});
  }
  const std::map<std::string, std::string> meta = {{"format", "pt"},
                                                   {"quote\"and\\slash", "line\nbreak\ttab\x01"},
                                                   {"caf\xC3\xA9", "\xE2\x9C\x93"},
                                                   {"", ""}};
  save_safetensors(dir.file("m.safetensors"), in, meta);
  const auto out = load_safetensors(dir.file("m.safetensors"));
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) expect_same(out.at(name), t, name);
  EXPECT_EQ(load_safetensors_metadata(dir.file("m.safetensors")), meta);

  save_safetensors(dir.file("n.safetensors"), {{"x", full({2}, 1.0)}});
  EXPECT_TRUE(load_safetensors_metadata(dir.file("n.safetensors")).empty());
  // No metadata: no "__metadata__" key at all.
  const auto bytes = read_bytes(dir.file("n.safetensors"));
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()).find("__metadata__"), std::string::npos);
}

// Header padded to 8 bytes, keys in name order, every tensor at a multiple of its element
// size, offsets tiling the buffer.
TEST(IoSafetensors, WriterLayout) {
  ScratchDir dir;
  const std::map<std::string, Tensor> in = {{"a_u8", specials(DType::U8, {3})},
                                            {"b_f64", specials(DType::F64, {2})},
                                            {"c_f16", specials(DType::F16, {3})},
                                            {"d_i32", specials(DType::I32, {1})}};
  save_safetensors(dir.file("l.safetensors"), in, {{"k", "v"}});
  const auto bytes = read_bytes(dir.file("l.safetensors"));
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | bytes[size_t(k)];
  EXPECT_EQ((8 + n) % 8, 0u);
  const std::string text(bytes.begin() + 8, bytes.begin() + 8 + int64_t(n));
  const io::JsonValue root = io::parse_json("test", text);
  ASSERT_EQ(root.members.size(), 5u);
  EXPECT_EQ(root.members[0].key, "__metadata__");
  uint64_t covered = 0;
  for (size_t i = 1; i < root.members.size(); ++i) {
    const auto& m = root.members[i];
    if (i > 1) {
      EXPECT_LT(root.members[i - 1].key, m.key);
    }
    const Tensor& t = in.at(m.key);
    const auto& offsets = m.value.members[2].value.ints;
    EXPECT_EQ(m.value.members[2].key, "data_offsets");
    EXPECT_EQ(offsets[0] % int64_t(dtype_size(t.dtype())), 0) << m.key;
    covered += uint64_t(offsets[1] - offsets[0]);
  }
  EXPECT_EQ(covered, bytes.size() - 8 - n);
}

// A file assembled by scripts/io_fixtures.py from the format's description.
TEST(IoSafetensors, ReadsIndependentlyWrittenFile) {
  const std::string path = fixture("all_dtypes.safetensors");
  const auto t = load_safetensors(path);
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(bytes_of(t.at("w_f64")), bytes_of(fx_tensor(DType::F64, {2, 3})));
  EXPECT_EQ(bytes_of(t.at("w_f32")), bytes_of(fx_tensor(DType::F32, {2, 3})));
  EXPECT_EQ(bytes_of(t.at("w_f16")), bytes_of(fx_tensor(DType::F16, {3, 2})));
  EXPECT_EQ(bytes_of(t.at("w_bf16")), bytes_of(fx_tensor(DType::BF16, {6})));
  EXPECT_EQ(bytes_of(t.at("ids_i64")), bytes_of(fx_tensor(DType::I64, {2, 3})));
  EXPECT_EQ(bytes_of(t.at("ids_i32")), bytes_of(fx_tensor(DType::I32, {1, 2, 3})));
  EXPECT_EQ(bytes_of(t.at("bytes_u8")), bytes_of(fx_tensor(DType::U8, {6})));
  EXPECT_EQ(bytes_of(t.at("flag")), bytes_of(fx_tensor(DType::Bool, {2, 3})));
  // Values spelled out once, independently of the helper.
  EXPECT_EQ(t.at("w_f32").to_vector<float>(), (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
  EXPECT_EQ(t.at("ids_i64").to_vector<int64_t>()[5], 5'000'000'030);
  EXPECT_EQ(t.at("flag").to_vector<bool>(), (std::vector<bool>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(t.at("w_f16").shape(), (Shape{3, 2}));
  EXPECT_EQ(t.at("ids_i32").shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(t.at("scalar").dim(), 0);
  EXPECT_EQ(t.at("scalar").item<float>(), 2.25f);
  EXPECT_EQ(t.at("nothing").shape(), (Shape{0, 4}));
  const std::map<std::string, std::string> meta = {{"format", "pt"},
                                                   {"note", "caf\xC3\xA9 \"quoted\"\n"}};
  EXPECT_EQ(load_safetensors_metadata(path), meta);
}

TEST(IoSafetensors, UnsupportedFileDTypeNamesTensorAndDType) {
  expect_error<UnsupportedDType>(
      kLoad, [] { load_safetensors(fixture("i8.safetensors")); }, "tensor 'q' has dtype I8");
}

TEST(IoSafetensors, WriterRefusals) {
  ScratchDir dir;
  const std::string p = dir.file("w.safetensors");
  expect_error<InvalidArgument>(
      "save_safetensors",
      [&] {
        save_safetensors(p, {{"__metadata__", full({1}, 1.0)}});
      },
      "reserved");
  expect_error<InvalidArgument>(
      "save_safetensors",
      [&] {
        save_safetensors(p, {{"x", Tensor()}});
      },
      "'x'");
  expect_error<InvalidArgument>(
      "save_safetensors",
      [&] {
        save_safetensors(p, {{"bad\xFF", full({1}, 1.0)}});
      },
      "UTF-8");
  expect_error<InvalidArgument>(
      "save_safetensors",
      [&] {
        save_safetensors(p, {}, {{"k", "\xC0\x80"}});
      },
      "UTF-8");
  const std::string missing_dir = dir.file("no/such/dir/x.safetensors");
  expect_error<IoError>(
      "save_safetensors", [&] { save_safetensors(missing_dir, {}); }, missing_dir);
  expect_error<IoError>(
      kLoad, [&] { load_safetensors(dir.file("absent")); }, dir.file("absent"));
  expect_error<IoError>(
      kLoad, [&] { load_safetensors(dir.file("")); }, "not a regular file");
  expect_error<IoError>(
      "load_safetensors_metadata", [&] { load_safetensors_metadata(dir.file("absent")); },
      dir.file("absent"));
}

// The README's two lines, with the file in a scratch directory.
TEST(IoSafetensors, ReadmeLines) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  Device dev = Device::cpu();
  Generator gen(42);
  Tensor w = randn({512, 1024}, DType::BF16, dev, gen);
  Tensor bias = zeros({1024}, DType::BF16, dev);
  save_safetensors(path, {{"w", w}, {"bias", bias}});
  std::map<std::string, Tensor> weights = load_safetensors(path, dev);
  EXPECT_EQ(bytes_of(weights.at("w")), bytes_of(w));
  EXPECT_EQ(bytes_of(weights.at("bias")), bytes_of(bias));
}

// Loading onto a device without a backend fails before reading, naming the loader.
TEST(IoSafetensors, UnusableDeviceNamesTheLoader) {
  if (available_devices().size() > 1) GTEST_SKIP() << "a GPU is present";
  ScratchDir dir;
  save_safetensors(dir.file("d.safetensors"), {{"x", full({2}, 1.0)}});
  save_npy(dir.file("d.npy"), full({2}, 1.0));
  expect_error<BackendUnavailable>(
      kLoad, [&] { load_safetensors(dir.file("d.safetensors"), Device::cuda()); });
  expect_error<BackendUnavailable>("load_npy",
                                   [&] { load_npy(dir.file("d.npy"), Device::cuda()); });
}

TEST(IoSafetensors, EmptyMapRoundTrips) {
  ScratchDir dir;
  save_safetensors(dir.file("e.safetensors"), {});
  EXPECT_TRUE(load_safetensors(dir.file("e.safetensors")).empty());
}

TEST(IoSafetensors, NumpyReadsNumrFiles) {
  const auto python = python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  ScratchDir dir;
  const std::string path = dir.file("np.safetensors");
  save_safetensors(path,
                   {{"f64", fx_tensor(DType::F64, {2, 3})},
                    {"f16", fx_tensor(DType::F16, {3, 2}).transpose(0, 1)},
                    {"i64", fx_tensor(DType::I64, {6})},
                    {"i32", fx_tensor(DType::I32, {2, 3})},
                    {"u8", fx_tensor(DType::U8, {6})},
                    {"b", fx_tensor(DType::Bool, {6})}},
                   {{"who", "numr"}});
  // The reader below follows the format's description with struct + json only.
  const std::string script = R"(
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
assert (8 + n) % 8 == 0
h = json.loads(raw[8:8 + n].decode("utf-8"))
assert h.pop("__metadata__") == {"who": "numr"}
buf = raw[8 + n:]
types = {"F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4", "U8": "|u1", "BOOL": "|b1"}
k = np.arange(6)
want = {"f64": (k * 0.5 - 1).reshape(2, 3), "f16": (k * 0.5 - 1).reshape(3, 2).T,
        "i64": k * 1000000007 - 5, "i32": (k * -7 + 3).reshape(2, 3), "u8": k * 40, "b": k % 3 == 0}
for name, info in h.items():
    b, e = info["data_offsets"]
    a = np.frombuffer(buf[b:e], dtype=types[info["dtype"]]).reshape(info["shape"])
    assert a.shape == want[name].shape, name
    assert (a == want[name]).all(), name
print("ok", len(h))
)";
  EXPECT_EQ(run_python(*python, script, path), "ok 6\n");
}

// ---- malformed files ----

// The 8-byte length n, then `text`, then `zeros` zero bytes. (Built by push_back: GCC 12
// warns falsely on inserting into a vector this small.)
std::vector<uint8_t> raw_file(uint64_t n, const std::string& text, size_t zeros) {
  std::vector<uint8_t> f;
  f.reserve(8 + text.size() + zeros);
  for (int k = 0; k < 8; ++k) f.push_back(uint8_t(n >> (8 * k)));
  for (const char c : text) f.push_back(uint8_t(c));
  for (size_t k = 0; k < zeros; ++k) f.push_back(0);
  return f;
}

// A file of the given header text (unpadded) followed by `data_bytes` zero bytes.
std::vector<uint8_t> file_with(const std::string& header, size_t data_bytes) {
  return raw_file(header.size(), header, data_bytes);
}

enum class Want { Io, DType };

struct BadFile {
  std::string name;
  std::vector<uint8_t> bytes;
  Want want;
  std::string needle;
};

std::vector<BadFile> bad_files() {
  const auto h = [](const std::string& header, size_t data, Want w = Want::Io,
                    const std::string& needle = "") {
    return std::pair{file_with(header, data), std::pair{w, needle}};
  };
  std::vector<std::pair<std::string, std::pair<std::vector<uint8_t>, std::pair<Want, std::string>>>> rows = {
      {"header_len_past_end",
       {raw_file(100, "{" + std::string(31, ' '), 0), {Want::Io, "reaches past the end"}}},
      {"header_len_huge",
       {raw_file(uint64_t(1) << 63, "{}", 54), {Want::Io, "reaches past the end"}}},
      {"header_len_zero", h("", 0, Want::Io, "does not start with '{'")},
      {"not_an_object", h("[1, 2]", 0, Want::Io, "does not start with '{'")},
      {"unterminated", h("{\"a\": {", 0, Want::Io, "malformed header JSON")},
      {"trailing_text", h("{} x", 0, Want::Io, "after the top-level value")},
      {"missing_value", h("{\"a\": }", 0, Want::Io, "malformed header JSON")},
      {"trailing_comma", h("{\"a\": {},}", 0, Want::Io, "string key")},
      {"true_value", h("{\"__metadata__\": true}", 0, Want::Io, "malformed header JSON")},
      {"null_value", h("{\"a\": null}", 0, Want::Io, "malformed header JSON")},
      {"float_in_shape", h(R"({"a": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}})", 4,
                           Want::Io, "only integers")},
      {"exponent_in_offsets",
       h(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4e0]}})", 4, Want::Io,
         "only integers")},
      {"nested_array", h(R"({"a": {"dtype": "F32", "shape": [[1]], "data_offsets": [0, 4]}})", 4,
                         Want::Io, "expected an integer")},
      {"leading_zero", h(R"({"a": {"dtype": "F32", "shape": [01], "data_offsets": [0, 4]}})", 4,
                         Want::Io, "leading zero")},
      {"int_overflow",
       h(R"({"a": {"dtype": "F32", "shape": [99999999999999999999], "data_offsets": [0, 4]}})", 4,
         Want::Io, "64-bit range")},
      {"duplicate_key",
       h(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})",
         2, Want::Io, "duplicate key")},
      {"bad_escape", h(R"({"a\q": {}})", 0, Want::Io, "bad escape")},
      {"lone_surrogate", h(R"({"a\udc00": {}})", 0, Want::Io, "surrogate")},
      {"half_surrogate", h(R"({"a\ud800x": {}})", 0, Want::Io, "surrogate")},
      {"bad_hex", h(R"({"a\u12g4": {}})", 0, Want::Io, "\\u escape")},
      {"control_char", h("{\"a\tb\": {}}", 0, Want::Io, "control character")},
      {"invalid_utf8", h("{\"a\xFF\": {}}", 0, Want::Io, "UTF-8")},
      {"overlong_utf8", h("{\"a\xC0\xAF\": {}}", 0, Want::Io, "UTF-8")},
      {"deep_nesting", h(
                           [] {
                             std::string s;
                             for (int i = 0; i < 20; ++i) s += "{\"a\":";
                             return s + "{}" + std::string(20, '}');
                           }(),
                           0, Want::Io, "nested too deeply")},
      {"entry_not_object", h(R"({"a": "F32"})", 0, Want::Io, "expected an object")},
      {"missing_dtype",
       h(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4, Want::Io, "\"dtype\" missing")},
      {"missing_shape",
       h(R"({"a": {"dtype": "F32", "data_offsets": [0, 4]}})", 4, Want::Io, "\"shape\" missing")},
      {"missing_offsets",
       h(R"({"a": {"dtype": "F32", "shape": [1]}})", 4, Want::Io, "\"data_offsets\" missing")},
      {"extra_key", h(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": "y"}})",
                      4, Want::Io, "unexpected key")},
      {"dtype_not_string", h(R"({"a": {"dtype": [1], "shape": [1], "data_offsets": [0, 4]}})", 4,
                             Want::Io, "\"dtype\" missing or not a string")},
      {"three_offsets", h(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", 8,
                          Want::Io, "two integers")},
      {"shape_is_string", h(R"({"a": {"dtype": "F32", "shape": "1", "data_offsets": [0, 4]}})", 4,
                            Want::Io, "\"shape\" missing")},
      {"unknown_dtype", h(R"({"a": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16,
                          Want::DType, "'a' has dtype F128")},
      {"f8_dtype", h(R"({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}})", 2,
                     Want::DType, "'w' has dtype F8_E4M3")},
      {"lowercase_dtype", h(R"({"a": {"dtype": "f32", "shape": [1], "data_offsets": [0, 4]}})", 4,
                            Want::DType, "f32")},
      {"negative_extent", h(R"({"a": {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 0]}})",
                            0, Want::Io, "negative extent")},
      {"shape_overflow",
       h(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 4]}})",
         4, Want::Io, "too many elements")},
      {"shape_past_limit",
       h(R"({"a": {"dtype": "F64", "shape": [2305843009213693952], "data_offsets": [0, 8]}})", 8,
         Want::Io, "too many elements")},
      {"huge_shape_small_file",
       h(R"({"a": {"dtype": "F32", "shape": [1000000000, 1000], "data_offsets": [0, 4000000000000]}})",
         16, Want::Io, "reach past")},
      {"size_mismatch", h(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8,
                          Want::Io, "needs 12")},
      {"offsets_reversed", h(R"({"a": {"dtype": "U8", "shape": [0], "data_offsets": [4, 0]}})", 4,
                             Want::Io, "not a range")},
      {"negative_offset", h(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [-4, 0]}})", 4,
                            Want::Io, "not a range")},
      {"offsets_past_buffer", h(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})",
                                6, Want::Io, "reach past")},
      {"overlap",
       h(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}, "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})",
         6, Want::Io, "overlaps")},
      {"same_range_twice",
       h(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}, "b": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
         4, Want::Io, "overlaps")},
      {"gap",
       h(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}, "b": {"dtype": "U8", "shape": [2], "data_offsets": [4, 6]}})",
         6, Want::Io, "belong to no tensor")},
      {"gap_at_start", h(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})", 4,
                         Want::Io, "belong to no tensor")},
      {"trailing_data", h(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})", 5,
                          Want::Io, "cover 2")},
      {"metadata_not_object", h(R"({"__metadata__": "x"})", 0, Want::Io, "not an object")},
      {"metadata_value_array", h(R"({"__metadata__": {"k": [1]}})", 0, Want::Io, "not a string")},
      {"metadata_nested", h(R"({"__metadata__": {"k": {}}})", 0, Want::Io, "not a string")},
  };
  std::vector<BadFile> out;
  for (auto& [name, row] : rows)
    out.push_back({name, row.first, row.second.first, row.second.second});
  return out;
}

// Every escape JSON has, surrogate pairs, raw UTF-8 and whitespace between tokens.
TEST(IoSafetensors, HeaderJsonEscapesAndWhitespace) {
  ScratchDir dir;
  const std::string header =
      "{ \"__metadata__\" : { \"e\" : \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\" } ,\n"
      "\t\"caf\xC3\xA9\" : {\"data_offsets\":[ 0 , 2 ],\"shape\" : [2],\"dtype\":\"U8\"}\r\n}   ";
  const std::string p = dir.file("e.safetensors");
  std::vector<uint8_t> f = file_with(header, 0);
  f.push_back(7);
  f.push_back(200);
  write_bytes(p, f);
  EXPECT_EQ(load_safetensors_metadata(p).at("e"), "\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(load_safetensors(p).at("caf\xC3\xA9").to_vector<uint8_t>(),
            (std::vector<uint8_t>{7, 200}));
}

TEST(IoSafetensors, MalformedFilesTable) {
  ScratchDir dir;
  for (const BadFile& b : bad_files()) {
    SCOPED_TRACE(b.name);
    const std::string p = dir.file(b.name);
    write_bytes(p, b.bytes);
    if (b.want == Want::Io)
      expect_error<IoError>(
          kLoad, [&] { load_safetensors(p); }, b.needle);
    else
      expect_error<UnsupportedDType>(
          kLoad, [&] { load_safetensors(p); }, b.needle);
  }
}

// A header length within the file but over the 100 MB limit is refused before it is read
// (the file is sparse: nothing of it is written).
TEST(IoSafetensors, HeaderOverTheLimit) {
  ScratchDir dir;
  const std::string p = dir.file("big.safetensors");
  write_bytes(p, raw_file(100'000'001, "{", 0));
  fs::resize_file(p, 8 + 100'000'001 + 16);
  expect_error<IoError>(
      kLoad, [&] { load_safetensors(p); }, "over the limit");
}

// Every proper prefix of a valid file is refused (the header length or the tiling of the
// buffer no longer fits), and none is read past its end.
TEST(IoSafetensors, EveryTruncationIsAnIoError) {
  ScratchDir dir;
  const std::string good = dir.file("good.safetensors");
  save_safetensors(good,
                   {{"a", specials(DType::F32, {3})},
                    {"b", specials(DType::U8, {5})},
                    {"c", full({}, 1.0, DType::F16)}},
                   {{"k", "v"}});
  const auto bytes = read_bytes(good);
  ASSERT_GT(bytes.size(), 60u);
  ASSERT_EQ(load_safetensors(good).size(), 3u);
  const std::string cut = dir.file("cut.safetensors");
  expect_truncations_and_flips(bytes, cut, kLoad, [&] { load_safetensors(cut); });
}

}  // namespace
}  // namespace numr
