/* A random paged decode problem: queries, a paged cache in any layout with
 * blocks scattered over a larger pool (unused slots NaN), and the same K/V
 * kept contiguously per sequence as floats, so a test can compute plain
 * attention without any paging and compare. */
#ifndef PA_PROBLEMS_H
#define PA_PROBLEMS_H

#include <stddef.h>
#include <stdint.h>

#include "pagedattn/pagedattn.h"

/* Deterministic random numbers (splitmix64): same data on every machine. */
typedef struct pa_rng {
    uint64_t s;
} pa_rng;

static inline pa_rng pa_rng_make(uint64_t seed) {
    pa_rng r = {seed * 0x9E3779B97F4A7C15ull + 0x1234567ull};
    return r;
}
uint64_t pa_rng_next(pa_rng *r);
float pa_rng_uniform(pa_rng *r, float lo, float hi); /* uniform in [lo, hi) */
int pa_rng_int(pa_rng *r, int lo, int hi);           /* uniform integer in [lo, hi] */

/* malloc that ends the program with one line when host memory runs out (the
 * CLI bounds problem sizes before it gets here); never NULL, 0 bytes allowed. */
void *pa_xmalloc(size_t n);

/* n elements of dtype t, uniform in [lo, hi) rounded to t. */
void *pa_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi);
/* Fills n elements of dtype t with NaN. */
void pa_fill_nan(pa_dtype t, void *buf, size_t n);

typedef struct pa_decode_problem {
    pa_decode_params p; /* host pointers */
    void *q, *out, *kc, *vc;
    int32_t *block_tables, *seq_lens;
    float *alibi;
    float k_scale, v_scale;
    size_t q_elems, out_elems, k_elems, v_elems;
    /* logical[s] is [seq_len][kv_heads][head] floats (dequantised) */
    float **k_logical, **v_logical;
} pa_decode_problem;

typedef struct pa_decode_problem_cfg {
    uint64_t seed;
    pa_kv_layout layout;
    pa_dtype q_dtype, cache_dtype;
    int num_seqs, num_heads, num_kv_heads, head_size, block_size;
    const int *seq_lens; /* num_seqs entries */
    int extra_blocks;    /* unused blocks in the pool (NaN filled) */
    int with_alibi;
    int skip_logical; /* do not keep the contiguous copies (large benchmarks) */
} pa_decode_problem_cfg;

/* NULL (with a message on stderr) if the configuration is invalid or memory
 * runs out. */
pa_decode_problem *pa_decode_problem_make(const pa_decode_problem_cfg *cfg);
void pa_decode_problem_free(pa_decode_problem *pr);

/* Plain attention over the contiguous copies (double), for every (seq, head):
 * ref[(s*num_heads + h)*head + d]. Honours scale, soft cap, alibi, window. */
void pa_decode_problem_plain(const pa_decode_problem *pr, float *ref);

#endif
