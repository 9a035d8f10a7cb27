/* Placeholder until the op lands. */
#include <criterion/criterion.h>

Test(placeholder, builds) { cr_assert(1); }
