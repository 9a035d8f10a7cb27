/* ragged: validation and host helpers shared by the CPU reference and the kernels. */
#include "internal.h"
