// The subset of JSON that a safetensors header uses: objects, strings (with escapes) and
// arrays of integers. Anything else (numbers with fractions, true/false/null, nested
// arrays) is refused, as are duplicate keys: a header never needs them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace numr::io {

struct JsonMember;

struct JsonValue {
  enum class Kind { Object, String, IntArray };
  Kind kind = Kind::Object;
  std::string str;                  // String
  std::vector<int64_t> ints;        // IntArray
  std::vector<JsonMember> members;  // Object, in file order
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

// Parses text (one value, then only whitespace); throws IoError naming op and the byte
// where the text departs from the subset.
JsonValue parse_json(std::string_view op, std::string_view text);

// Appends s as a JSON string literal (quotes and escapes added).
void append_json_string(std::string& out, std::string_view s);

}  // namespace numr::io
