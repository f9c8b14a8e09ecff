// Exceptions thrown by numr. Every message starts with the op's name in brackets:
//   [silu_mul] shape mismatch: [3] vs [4]
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace numr {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#define NUMR_DECLARE_ERROR(Name) \
  class Name : public Error {    \
   public:                       \
    using Error::Error;          \
  };
NUMR_DECLARE_ERROR(ShapeMismatch)
NUMR_DECLARE_ERROR(BroadcastError)
NUMR_DECLARE_ERROR(InvalidDimension)
NUMR_DECLARE_ERROR(DTypeMismatch)
NUMR_DECLARE_ERROR(UnsupportedDType)
NUMR_DECLARE_ERROR(DeviceMismatch)
NUMR_DECLARE_ERROR(OutOfMemory)
NUMR_DECLARE_ERROR(IndexOutOfBounds)
NUMR_DECLARE_ERROR(InvalidArgument)
NUMR_DECLARE_ERROR(NotContiguous)
NUMR_DECLARE_ERROR(MissingGradient)
NUMR_DECLARE_ERROR(BackendUnavailable)
NUMR_DECLARE_ERROR(BackendLimitation)
NUMR_DECLARE_ERROR(BackendError)
// A file cannot be opened, read or written, or is not a valid file of its format.
NUMR_DECLARE_ERROR(IoError)
#undef NUMR_DECLARE_ERROR

namespace detail {
template <class... Args>
std::string message(std::string_view op, const Args&... args) {
  std::ostringstream os;
  os << '[' << op << "] ";
  (os << ... << args);
  return os.str();
}
}  // namespace detail

// Throws E with "[op] " followed by the streamed arguments.
template <class E, class... Args>
[[noreturn]] void fail(std::string_view op, const Args&... args) {
  throw E(detail::message(op, args...));
}

}  // namespace numr
