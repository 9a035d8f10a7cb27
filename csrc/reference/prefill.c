/* prefill: CPU reference. */
#include "../internal.h"
