// Table-driven bad-input checks: each case is a call and what it must do, either return
// normally or throw one numr::Error subclass whose message starts with "[op] ".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "numr/numr.h"

namespace numr::bad_input {

using TypeCheck = bool (*)(const Error&);
template <class E>
bool is_a(const Error& e) {
  if constexpr (std::is_same_v<E, Error>) {
    return true;  // any numr error
  } else {
    return dynamic_cast<const E*>(&e) != nullptr;
  }
}

struct Expect {
  TypeCheck check = nullptr;  // nullptr: the call must not throw
  const char* type = "no exception";
  std::string op;
  bool or_ok = false;  // returning normally is also right (either is a sound design)
};
#define NUMR_THROWS(E, op) ::numr::bad_input::Expect{&::numr::bad_input::is_a<E>, #E, op}
#define NUMR_OK ::numr::bad_input::Expect{}
#define NUMR_OK_OR_THROWS(E, op) \
  ::numr::bad_input::Expect{&::numr::bad_input::is_a<E>, #E, op, true}

struct Case {
  std::string name;  // [A-Za-z0-9_]: it names the gtest case
  std::function<void()> call;
  Expect expect;
};
inline std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

// The most derived numr error class e is, for messages.
std::string error_type_name(const Error& e);
// "" when the call did what c.expect says, else what went wrong.
std::string run_case(const Case& c);
// For INSTANTIATE_TEST_SUITE_P: names each generated test after its case.
std::string case_name(const ::testing::TestParamInfo<Case>& info);

// Small inputs shared by the tables.
Tensor f32(const Shape& shape);  // zeros
Tensor t_of(DType t, const Shape& shape);
inline constexpr double kNaN = __builtin_nan("");
inline constexpr double kInf = __builtin_inf();

class BadInput : public ::testing::TestWithParam<Case> {};
// The same, each case in a child process, so a crash fails only that case.
class BadInputIsolated : public ::testing::TestWithParam<Case> {};

}  // namespace numr::bad_input
