#include "bad_input_table.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

namespace numr::bad_input {

std::string error_type_name(const Error& e) {
#define NUMR_TRY_TYPE(E) \
  if (is_a<E>(e)) return #E;
  NUMR_TRY_TYPE(ShapeMismatch)
  NUMR_TRY_TYPE(BroadcastError)
  NUMR_TRY_TYPE(InvalidDimension)
  NUMR_TRY_TYPE(DTypeMismatch)
  NUMR_TRY_TYPE(UnsupportedDType)
  NUMR_TRY_TYPE(DeviceMismatch)
  NUMR_TRY_TYPE(OutOfMemory)
  NUMR_TRY_TYPE(IndexOutOfBounds)
  NUMR_TRY_TYPE(InvalidArgument)
  NUMR_TRY_TYPE(NotContiguous)
  NUMR_TRY_TYPE(MissingGradient)
  NUMR_TRY_TYPE(BackendUnavailable)
  NUMR_TRY_TYPE(BackendLimitation)
  NUMR_TRY_TYPE(BackendError)
  NUMR_TRY_TYPE(IoError)
#undef NUMR_TRY_TYPE
  return "Error";
}

std::string run_case(const Case& c) {
  const Expect& x = c.expect;
  const std::string wanted = x.check ? std::string(x.type) + " [" + x.op + "]" : "no exception";
  try {
    c.call();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (!x.check) return "threw " + error_type_name(e) + ": " + what + "; wanted " + wanted;
    if (!x.check(e)) return "threw " + error_type_name(e) + ": " + what + "; wanted " + wanted;
    if (what.rfind("[" + x.op + "] ", 0) != 0) return "wrong prefix: " + what + "; wanted " + wanted;
    return "";
  } catch (const std::exception& e) {
    return std::string("threw std exception ") + typeid(e).name() + ": " + e.what() + "; wanted " +
           wanted;
  } catch (...) {
    return "threw a non-std exception; wanted " + wanted;
  }
  return x.check && !x.or_ok ? "returned normally; wanted " + wanted : "";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

Tensor f32(const Shape& shape) { return zeros(shape, DType::F32); }
Tensor t_of(DType t, const Shape& shape) { return zeros(shape, t); }

TEST_P(BadInput, call) {
  const std::string msg = run_case(GetParam());
  EXPECT_TRUE(msg.empty()) << GetParam().name << ": " << msg;
}

TEST_P(BadInputIsolated, call) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Case& c = GetParam();
  EXPECT_EXIT(
      {
        const std::string msg = run_case(c);
        if (!msg.empty()) std::fprintf(stderr, "%s: %s\n", c.name.c_str(), msg.c_str());
        std::fflush(stderr);
        std::_Exit(msg.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << c.name;
}

}  // namespace numr::bad_input
