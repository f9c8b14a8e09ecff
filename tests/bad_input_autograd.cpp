// Bad input to Vars, backward, checkpoint, the optimizers and the device functions.
#include <climits>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;

Var leaf(const Shape& shape) { return Var(f32(shape), true); }

std::vector<Case> autograd_cases() {
  return {
      {"var_undefined_tensor", [] { Var(Tensor(), false); }, NUMR_THROWS(InvalidArgument, "Var")},
      {"var_int_requires_grad", [] { Var(t_of(D::I32, {2}), true); },
       NUMR_THROWS(UnsupportedDType, "Var")},
      {"var_add_broadcast", [] { add(leaf({2}), leaf({3})); }, NUMR_THROWS(BroadcastError, "add")},
      {"var_mul_dtype", [] { leaf({2}) * Var(t_of(D::F64, {2})); },
       NUMR_THROWS(DTypeMismatch, "mul")},
      {"var_sum_dim", [] { sum(leaf({2}), {1}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"var_softmax_dim", [] { softmax(leaf({2}), 3); }, NUMR_THROWS(InvalidDimension, "softmax")},
      {"var_matmul_inner", [] { matmul(leaf({2, 3}), leaf({2, 3})); },
       NUMR_THROWS(ShapeMismatch, "matmul")},
      {"var_mba_bias", [] {
         matmul_bias_activation(leaf({2, 3}), leaf({3, 4}), leaf({3}), Activation::Gelu);
       },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation")},
      {"var_cat_empty", [] { cat(std::vector<Var>{}, 0); }, NUMR_THROWS(InvalidArgument, "cat")},
      {"var_stack_shape", [] { stack({leaf({2}), leaf({3})}, 0); },
       NUMR_THROWS(ShapeMismatch, "stack")},
      {"var_narrow_range", [] { narrow(leaf({2}), 0, 1, 2); },
       NUMR_THROWS(IndexOutOfBounds, "narrow")},
      {"var_reshape_count", [] { reshape(leaf({2}), {3}); }, NUMR_THROWS(ShapeMismatch, "reshape")},
      {"var_clamp_order", [] { clamp(leaf({2}), 1.0, 0.0); }, NUMR_THROWS(InvalidArgument, "clamp")},
      {"var_add_scalar_fraction_i32", [] { add_scalar(Var(t_of(D::I32, {2})), 0.5); },
       NUMR_THROWS(InvalidArgument, "add_scalar")},
      {"var_split_zero", [] { split(leaf({2}), 0, 0); }, NUMR_THROWS(InvalidArgument, "split")},
      {"var_pad_negative", [] { pad(leaf({2}), {-1, 0}); }, NUMR_THROWS(InvalidArgument, "pad")},
      {"backward_undefined", [] { backward(Var()); }, NUMR_THROWS(InvalidArgument, "backward")},
      {"backward_not_scalar", [] { backward(leaf({2}) * 2.0); },
       NUMR_THROWS(InvalidArgument, "backward")},
      {"backward_empty_loss", [] { backward(leaf({0}) * 2.0); },
       NUMR_THROWS(InvalidArgument, "backward")},
      {"backward_no_grad", [] { backward(sum(Var(f32({2})))); },
       NUMR_THROWS(MissingGradient, "backward")},
      {"backward_under_no_grad", [] {
         const Var x = leaf({2});
         Var loss;
         {
           NoGradGuard guard;
           loss = sum(x);
         }
         backward(loss);
       },
       NUMR_THROWS(MissingGradient, "backward")},
      {"gradients_missing", [] {
         const Var x = leaf({2}), y = leaf({2});
         const Gradients g = backward(sum(x));
         (void)g[y];
       },
       NUMR_THROWS(MissingGradient, "gradients")},
      {"var_gradients_missing", [] {
         const Var x = leaf({2}), y = leaf({2});
         const VarGradients g = backward(sum(x), {.create_graph = true});
         (void)g[y];
       },
       NUMR_THROWS(MissingGradient, "gradients")},
      {"assign_shape", [] { leaf({2}).assign(f32({3})); }, NUMR_THROWS(InvalidArgument, "assign")},
      {"assign_dtype", [] { leaf({2}).assign(t_of(D::F64, {2})); },
       NUMR_THROWS(InvalidArgument, "assign")},
      {"assign_undefined_value", [] { leaf({2}).assign(Tensor()); },
       NUMR_THROWS(InvalidArgument, "assign")},
      {"assign_undefined_var", [] { Var().assign(f32({2})); }, NUMR_THROWS(InvalidArgument, "assign")},
      {"assign_non_leaf", [] { (leaf({2}) * 2.0).assign(f32({2})); },
       NUMR_THROWS(InvalidArgument, "assign")},
      {"hook_non_leaf", [] { (leaf({2}) + 1.0).register_hook([](const Tensor&) {}); },
       NUMR_THROWS(InvalidArgument, "register_hook")},
      {"hook_undefined", [] { Var().register_hook([](const Tensor&) {}); },
       NUMR_THROWS(InvalidArgument, "register_hook")},
      {"checkpoint_captured", [] {
         const Var w = leaf({2});
         const Var x = leaf({2});
         const auto out = checkpoint([w](const std::vector<Var>& in) { return std::vector<Var>{in[0] * w}; },
                                     {x});
         backward(sum(out[0]));
       },
       NUMR_THROWS(InvalidArgument, "checkpoint")},
      // Valid edge cases.
      {"backward_0d_ok", [] { backward(leaf({}) * 3.0); }, NUMR_OK},
      {"backward_empty_input_ok", [] { backward(sum(leaf({0, 3}))); }, NUMR_OK},
      {"backward_one_element_ok", [] { backward(leaf({1, 1})); }, NUMR_OK},
      {"var_int_no_grad_ok", [] { sum(Var(t_of(D::I32, {0}))); }, NUMR_OK},
      {"var_view_chain_ok", [] {
         const Var x = leaf({3, 4});
         backward(sum(flip(transpose(narrow(x, 1, 1, 2), 0, 1), {0})));
       },
       NUMR_OK},
  };
}

std::vector<Case> optim_device_cases() {
  return {
      {"sgd_no_grad_param", [] { Sgd({Var(f32({2}), false)}, {}); },
       NUMR_THROWS(InvalidArgument, "optimizer")},
      {"sgd_duplicate_param", [] {
         const Var p = leaf({2});
         Sgd({p, p}, {});
       },
       NUMR_THROWS(InvalidArgument, "optimizer")},
      {"sgd_undefined_param", [] { Sgd({Var()}, {}); }, NUMR_THROWS(InvalidArgument, "optimizer")},
      {"sgd_non_leaf_param", [] { Sgd({leaf({2}) * 2.0}, {}); },
       NUMR_THROWS(InvalidArgument, "optimizer")},
      {"sgd_zero_lr", [] { Sgd({leaf({2})}, {.lr = 0.0}); }, NUMR_OK},
      {"sgd_negative_momentum", [] { Sgd({leaf({2})}, {.momentum = -0.5}); },
       NUMR_THROWS(InvalidArgument, "Sgd")},
      {"sgd_negative_weight_decay", [] { Sgd({leaf({2})}, {.weight_decay = -1.0}); },
       NUMR_THROWS(InvalidArgument, "Sgd")},
      {"adamw_beta1_one", [] { AdamW({leaf({2})}, {.beta1 = 1.0}); },
       NUMR_THROWS(InvalidArgument, "AdamW")},
      {"adamw_zero_eps", [] { AdamW({leaf({2})}, {.eps = 0.0}); },
       NUMR_THROWS(InvalidArgument, "AdamW")},
      {"adamw_negative_lr", [] { AdamW({leaf({2})}, {.lr = -1e-3}); },
       NUMR_THROWS(InvalidArgument, "AdamW")},
      {"sgd_grad_shape", [] {
         const Var p = leaf({2});
         Sgd opt({p}, {});
         Gradients g;
         g.map()[p.id()] = f32({3});
         opt.step(g);
       },
       NUMR_THROWS(ShapeMismatch, "Sgd")},
      {"sgd_grad_dtype", [] {
         const Var p = leaf({2});
         Sgd opt({p}, {});
         Gradients g;
         g.map()[p.id()] = t_of(D::F64, {2});
         opt.step(g);
       },
       NUMR_THROWS(DTypeMismatch, "Sgd")},
      {"sgd_grad_broadcastable", [] {
         const Var p = leaf({2});
         Sgd opt({p}, {});
         Gradients g;
         g.map()[p.id()] = f32({1});
         opt.step(g);
       },
       NUMR_THROWS(ShapeMismatch, "Sgd")},
      {"sgd_grad_undefined", [] {
         const Var p = leaf({2});
         Sgd opt({p}, {});
         Gradients g;
         g.map()[p.id()] = Tensor();
         opt.step(g);
       },
       NUMR_THROWS(InvalidArgument, "Sgd")},
      {"optim_empty_ok", [] {
         AdamW opt({}, {});
         opt.step(Gradients());
       },
       NUMR_OK},
      {"sgd_empty_param_ok", [] {
         const Var p = leaf({0});
         Sgd opt({p}, {.momentum = 0.9, .nesterov = true});
         opt.step(backward(sum(p) + sum(leaf({}))));
       },
       NUMR_OK},
      // Devices.
      {"parse_device_unknown", [] { parse_device("gpu"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_empty", [] { parse_device(""); }, NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_no_index", [] { parse_device("cuda:"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_negative", [] { parse_device("cuda:-1"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_overflow", [] { parse_device("cuda:99999999999999999999"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_trailing", [] { parse_device("cuda:1x"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_cpu1", [] { parse_device("cpu:1"); },
       NUMR_THROWS(InvalidArgument, "parse_device")},
      {"parse_device_ok", [] { parse_device("cpu:0"); }, NUMR_OK},
      {"set_num_threads_zero", [] { set_num_threads(0); },
       NUMR_THROWS(InvalidArgument, "set_num_threads")},
      {"set_num_threads_int_min", [] { set_num_threads(INT_MIN); },
       NUMR_THROWS(InvalidArgument, "set_num_threads")},
      {"synchronize_cpu_ok", [] { synchronize(Device::cpu()); }, NUMR_OK},
      {"available_devices_ok", [] { (void)available_devices(); }, NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputAutograd, BadInput, ::testing::ValuesIn(autograd_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(BadInputOptimDevice, BadInput, ::testing::ValuesIn(optim_device_cases()),
                         case_name);

}  // namespace
}  // namespace numr::bad_input
