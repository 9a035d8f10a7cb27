/* prefill: public GPU entries (validate, pick the kernel, NVTX range, launch). */
#include "internal.h"
