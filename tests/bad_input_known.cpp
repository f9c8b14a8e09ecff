// Bad input that the library did not yet handle as documented when these cases were
// written (crashes, std:: exceptions, wrong error types or prefixes). Each case runs in a
// child process, so a crash fails only that case.
#include <cfloat>
#include <climits>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

Var leaf(const Shape& shape) { return Var(f32(shape), true); }
// A view of n elements over one: no memory behind it.
Tensor huge_view(int64_t n) { return f32({1}).broadcast_to({n}); }

std::vector<Case> known_cases() {
  return {
      {"long_graph_destruction",
       [] {
         Var y = leaf({});
         for (int i = 0; i < 500000; ++i) y = y + 1.0;
       },
       NUMR_OK},
      {"set_num_threads_int_max",
       [] {
         const int before = num_threads();
         try {
           set_num_threads(INT_MAX);
         } catch (...) {
           set_num_threads(before);
           throw;
         }
         set_num_threads(before);
       },
       NUMR_OK_OR_THROWS(InvalidArgument, "set_num_threads")},
      {"from_host_nullptr", [] { Tensor::from_host(nullptr, 4, D::F32, {4}, Device::cpu()); },
       NUMR_THROWS(InvalidArgument, "from_host")},
      {"tensor_ctor_outside_storage",
       [] {
         const Tensor small = f32({4});
         Tensor(small.storage(), {100}, {1}, 0, D::F32);
       },
       NUMR_THROWS(Error, "Tensor")},
      {"tensor_ctor_negative_offset",
       [] {
         const Tensor small = f32({4});
         Tensor(small.storage(), {2}, {1}, -1, D::F32);
       },
       NUMR_THROWS(Error, "Tensor")},
      {"tensor_ctor_rank_mismatch",
       [] {
         const Tensor small = f32({4});
         Tensor(small.storage(), {2, 2}, {1}, 0, D::F32);
       },
       NUMR_THROWS(Error, "Tensor")},
      {"var_correction_i64_min", [] { var(f32({3}), {}, kI64Min); },
       NUMR_OK_OR_THROWS(InvalidArgument, "var")},
      {"std_correction_i64_min", [] { std(f32({3}), {}, kI64Min); },
       NUMR_OK_OR_THROWS(InvalidArgument, "std")},
      {"chunk_i64_max", [] { chunk(f32({4}), kI64Max, 0); }, NUMR_OK},
      {"cat_huge_views",
       [] {
         const Tensor v = huge_view(int64_t(1) << 59);
         cat({v, v, v}, 0);
       },
       NUMR_THROWS(InvalidArgument, "cat")},
      {"stack_huge_views",
       [] {
         const Tensor v = huge_view(int64_t(1) << 59);
         stack({v, v, v}, 0);
       },
       NUMR_THROWS(InvalidArgument, "stack")},
      {"shape_numel_negative",
       [] {
         shape_numel({-2, 3});
       },
       NUMR_THROWS(InvalidArgument, "shape_numel")},
      {"broadcast_shapes_negative", [] { broadcast_shapes("probe", {-1}, {1}); },
       NUMR_THROWS(Error, "probe")},
      {"cast_bad_dtype", [] { cast(f32({2}), static_cast<DType>(99)); },
       NUMR_THROWS(Error, "cast")},
      {"zeros_bad_dtype", [] { zeros({2}, static_cast<DType>(99)); }, NUMR_THROWS(Error, "zeros")},
      {"op_info_bad_id", [] { op_info(static_cast<OpId>(9999)); }, NUMR_THROWS(Error, "op_info")},
      {"op_name_bad_id", [] { op_name(static_cast<OpId>(9999)); }, NUMR_THROWS(Error, "op_name")},
      {"family_name_bad", [] { family_name(static_cast<OpFamily>(99)); },
       NUMR_THROWS(Error, "family_name")},
      {"to_vector_huge_view", [] { huge_view(int64_t(1) << 40).to_vector<float>(); },
       NUMR_THROWS(OutOfMemory, "to_vector")},
      {"sgd_nan_momentum", [] { Sgd({leaf({2})}, {.momentum = std::nan("")}); },
       NUMR_THROWS(InvalidArgument, "Sgd")},
      {"sgd_nan_weight_decay", [] { Sgd({leaf({2})}, {.weight_decay = std::nan("")}); },
       NUMR_THROWS(InvalidArgument, "Sgd")},
      {"sgd_inf_lr", [] { Sgd({leaf({2})}, {.lr = kInf}); }, NUMR_THROWS(InvalidArgument, "Sgd")},
      {"adamw_nan_weight_decay", [] { AdamW({leaf({2})}, {.weight_decay = std::nan("")}); },
       NUMR_THROWS(InvalidArgument, "AdamW")},
      {"adamw_inf_lr", [] { AdamW({leaf({2})}, {.lr = kInf}); },
       NUMR_THROWS(InvalidArgument, "AdamW")},
      {"adamw_step_atomic",
       [] {
         const Var p1 = leaf({2}), p2 = leaf({2});
         AdamW opt({p1, p2}, {});
         Gradients g;
         g.map()[p1.id()] = ones({2});
         g.map()[p2.id()] = ones({3});
         try {
           opt.step(g);
         } catch (const Error&) {
           if (p1.tensor().to_vector<float>() != std::vector<float>{0.f, 0.f} || opt.steps() != 0)
             throw std::logic_error("a failed step changed the optimizer's state");
           throw;
         }
       },
       NUMR_THROWS(ShapeMismatch, "AdamW")},
      {"linspace_inf_end", [] { linspace(0, kInf, 3); }, NUMR_OK},
      {"linspace_nan_start", [] { linspace(kNaN, 1, 3); },
       NUMR_THROWS(InvalidArgument, "linspace")},
      {"linspace_huge_endpoints",
       [] {
         const auto v = linspace(-DBL_MAX, DBL_MAX, 3, D::F64).to_vector<double>();
         if (v != std::vector<double>{-DBL_MAX, 0.0, DBL_MAX})
           throw std::logic_error("linspace(-DBL_MAX, DBL_MAX, 3) is not {-max, 0, max}");
       },
       NUMR_OK},
      {"parse_device_space", [] { parse_device("cuda: 1"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      // Wrong prefixes: the error must name the op that was called.
      {"oom_prefix_zeros", [] { zeros({int64_t(1) << 58}); }, NUMR_THROWS(OutOfMemory, "zeros")},
      {"oom_prefix_clone", [] { huge_view(int64_t(1) << 58).clone(); },
       NUMR_THROWS(OutOfMemory, "clone")},
      {"empty_prefix_add",
       [] {
         const Tensor a = f32({1, 1}).broadcast_to({int64_t(1) << 40, 1});
         add(a, a.transpose(0, 1));
       },
       NUMR_THROWS(InvalidArgument, "add")},
      {"empty_prefix_matmul",
       [] {
         const Tensor a = f32({1, 1}).broadcast_to({int64_t(1) << 40, 1});
         matmul(a, a.transpose(0, 1));
       },
       NUMR_THROWS(InvalidArgument, "matmul")},
      {"cuda_prefix_zeros", [] { zeros({2}, D::F32, Device::cuda(99)); },
       NUMR_THROWS(BackendUnavailable, "zeros")},
      {"cuda_prefix_to_device", [] { f32({2}).to(Device::cuda(99)); },
       NUMR_THROWS(BackendUnavailable, "to_device")},
      {"cuda_prefix_synchronize", [] { synchronize(Device::cuda(99)); },
       NUMR_THROWS(BackendUnavailable, "synchronize")},
      {"cpu1_prefix_ones",
       [] {
         ones({2}, D::F32, Device{DeviceType::Cpu, 1});
       },
       NUMR_THROWS(BackendUnavailable, "ones")},
      {"webgpu_prefix_full", [] { full({2}, 1.0, D::F32, Device::webgpu(99)); },
       NUMR_THROWS(BackendUnavailable, "full")},
      {"var_prefix_add", [] { add(Var(), leaf({2})); }, NUMR_THROWS(InvalidArgument, "add")},
      {"var_prefix_sum", [] { sum(Var()); }, NUMR_THROWS(InvalidArgument, "sum")},
      {"var_prefix_matmul",
       [] {
         matmul(leaf({2, 2}), Var());
       },
       NUMR_THROWS(InvalidArgument, "matmul")},
      {"var_prefix_detach", [] { detach(Var()); }, NUMR_THROWS(InvalidArgument, "detach")},
      {"var_prefix_cat",
       [] {
         cat({leaf({2}), Var()}, 0);
       },
       NUMR_THROWS(InvalidArgument, "cat")},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputKnown, BadInputIsolated, ::testing::ValuesIn(known_cases()),
                         case_name);

}  // namespace
}  // namespace numr::bad_input
