/* The batch `pagedattn plan` assembles, and the reader of its flat JSON
 * format (PLAN_HELP in cmd_plan.c): one object whose values are integers,
 * arrays of integers, or arrays of arrays of integers. In a file of its own,
 * free of the CLI's device-facing helpers, so that tests/fuzz/fuzz_plan_json.c
 * can link it alone. */
#ifndef PA_PLAN_JSON_H
#define PA_PLAN_JSON_H

#include <stddef.h>
#include <stdint.h>

#define PLAN_MAX_REQS (1 << 16)   /* requests in one planned batch */
#define PLAN_MAX_TOKENS (1 << 24) /* new tokens / padded tokens / encoder tokens */
#define PLAN_MAX_BLOCKS (1 << 24) /* block-table entries (given or allocated) */
#define PLAN_MAX_JSON_BYTES (1 << 26)

/* A batch being assembled (flags or JSON). */
typedef struct plan_in {
    long long block_size, prefills, padded, spb, chunk;
    int32_t *computed, *scheduled, *enc;
    int n_computed, n_scheduled, n_enc;
    int32_t *bt; /* [bt_rows, bt_width] */
    int bt_rows, bt_width;
    int has_prefills, has_chunk;
} plan_in;

/* Frees the arrays (the struct itself is the caller's). */
void plan_in_free(plan_in *p);

/* Reads the n bytes at s (no terminator needed) into p: each key present
 * replaces its field (arrays freed and reallocated; prefills and chunk set
 * their has_ flags), the others are left as they were. Returns 1, or 0 with a
 * message ("line L: what") in err (cap bytes); p's fields are then valid to
 * free but may hold some of the input. Sizes are capped (PLAN_MAX_*), so
 * absurd input is refused, never a crash or a giant allocation. */
int plan_json_parse(const char *s, size_t n, plan_in *p, char *err, size_t cap);

#endif
