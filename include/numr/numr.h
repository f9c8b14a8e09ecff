// numr: tensors over CPU and CUDA with one API (WebGPU planned).
#pragma once

#include "numr/autograd.h"
#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/error.h"
#include "numr/half.h"
#include "numr/indexing.h"
#include "numr/io.h"
#include "numr/losses.h"
#include "numr/norm.h"
#include "numr/op_info.h"
#include "numr/ops.h"
#include "numr/optim.h"
#include "numr/random.h"
#include "numr/shape.h"
#include "numr/shape_like.h"
#include "numr/tensor.h"
