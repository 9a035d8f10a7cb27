/* A random paged decode problem: queries, a paged cache in any layout with
 * blocks scattered over a larger pool (unused slots NaN), and the same K/V
 * kept contiguously per sequence as floats, so a test can compute plain
 * attention without any paging and compare. */
#ifndef PA_DECODE_PROBLEM_H
#define PA_DECODE_PROBLEM_H

#include "testutil.h"

typedef struct pa_decode_problem {
    pa_decode_params p;  /* host pointers */
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
} pa_decode_problem_cfg;

pa_decode_problem *pa_decode_problem_make(const pa_decode_problem_cfg *cfg);
void pa_decode_problem_free(pa_decode_problem *pr);

/* Plain attention over the contiguous copies (double), for every (seq, head):
 * ref[(s*num_heads + h)*head + d]. Honours scale, soft cap, alibi, window. */
void pa_decode_problem_plain(const pa_decode_problem *pr, float *ref);

#endif
