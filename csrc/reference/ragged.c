/* ragged: CPU reference. */
#include "../internal.h"
