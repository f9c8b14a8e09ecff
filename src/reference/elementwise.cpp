// Reference elementwise ops (written next).
#include "reference/reference.h"
