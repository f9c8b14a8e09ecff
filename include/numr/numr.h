// numr: tensors over CPU, CUDA and WebGPU with one API.
#pragma once

#include "numr/autograd.h"
#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/error.h"
#include "numr/half.h"
#include "numr/op_info.h"
#include "numr/ops.h"
#include "numr/optim.h"
#include "numr/random.h"
#include "numr/shape.h"
#include "numr/tensor.h"
