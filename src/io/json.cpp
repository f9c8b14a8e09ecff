#include "io/json.h"

#include "numr/error.h"

namespace numr::io {
namespace {

// Objects nest only two deep in a header; the limit keeps a hostile file from exhausting
// the stack.
constexpr int kMaxDepth = 8;

class Parser {
 public:
  Parser(std::string_view op, std::string_view text) : op_(op), s_(text) {}

  JsonValue document() {
    skip_ws();
    JsonValue v = value(0);
    skip_ws();
    if (i_ != s_.size()) error("unexpected text after the top-level value");
    return v;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail<IoError>(op_, "malformed header JSON at byte ", i_, ": ", what);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  void skip_ws() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (at_end() || s_[i_] != c) error(std::string("expected '") + c + "'");
    ++i_;
  }

  JsonValue value(int depth) {
    switch (peek()) {
      case '{': return object(depth + 1);
      case '"': {
        JsonValue v;
        v.kind = JsonValue::Kind::String;
        v.str = string();
        return v;
      }
      case '[': return int_array();
      case '\0':
        if (at_end()) error("unexpected end");
        [[fallthrough]];
      default: error("expected an object, a string or an array of integers");
    }
  }

  JsonValue object(int depth) {
    if (depth > kMaxDepth) error("objects nested too deeply");
    expect('{');
    JsonValue v;
    v.kind = JsonValue::Kind::Object;
    skip_ws();
    if (peek() == '}') {
      ++i_;
      return v;
    }
    for (;;) {
      skip_ws();
      if (peek() != '"') error("expected a string key");
      const size_t key_at = i_;
      std::string key = string();
      for (const JsonMember& m : v.members)
        if (m.key == key) {
          i_ = key_at;
          error("duplicate key \"" + key + "\"");
        }
      skip_ws();
      expect(':');
      skip_ws();
      JsonValue member = value(depth);
      v.members.push_back(JsonMember{std::move(key), std::move(member)});
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      return v;
    }
  }

  JsonValue int_array() {
    expect('[');
    JsonValue v;
    v.kind = JsonValue::Kind::IntArray;
    skip_ws();
    if (peek() == ']') {
      ++i_;
      return v;
    }
    for (;;) {
      skip_ws();
      v.ints.push_back(integer());
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect(']');
      return v;
    }
  }

  // -?(0|[1-9][0-9]*), in int64_t.
  int64_t integer() {
    const bool negative = peek() == '-';
    if (negative) ++i_;
    if (peek() < '0' || peek() > '9') error("expected an integer");
    if (peek() == '0' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9')
      error("integer with a leading zero");
    // Accumulated as a negative number, whose range includes INT64_MIN.
    int64_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_sub_overflow(n, peek() - '0', &n))
        error("integer out of the 64-bit range");
      ++i_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') error("only integers are allowed");
    if (!negative) {
      if (n == INT64_MIN) error("integer out of the 64-bit range");
      n = -n;
    }
    return n;
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      const char c = peek();
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= unsigned(c - 'A' + 10);
      else
        error("bad \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  // The caller has checked that the text is valid UTF-8, so raw bytes are copied as they are.
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_end()) error("unterminated string");
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return out;
      }
      if (uint8_t(c) < 0x20) error("control character in a string");
      if (c != '\\') {
        out += c;
        ++i_;
        continue;
      }
      ++i_;
      const char e = peek();
      ++i_;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) error("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (peek() != '\\' || i_ + 1 >= s_.size() || s_[i_ + 1] != 'u')
              error("high surrogate without its low half");
            i_ += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) error("high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: --i_, error("bad escape in a string");
      }
    }
  }

  std::string_view op_;
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

JsonValue parse_json(std::string_view op, std::string_view text) {
  return Parser(op, text).document();
}

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (uint8_t(c) < 0x20) {
      out += "\\u00";
      out += hex[uint8_t(c) >> 4];
      out += hex[uint8_t(c) & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace numr::io
