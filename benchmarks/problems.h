/* Random problems for the tests and the `pagedattn` CLI. Here: the one RNG,
 * the one page-pool builder and the one plain attention that every generator
 * uses (this decode problem, prefill_problems.h, ragged_problem.h), and the
 * decode problem: queries, a paged cache in any layout with blocks scattered
 * over a larger pool (unused slots NaN), and the same K/V kept contiguously
 * per sequence as floats, so a test can compute plain attention without any
 * paging and compare. */
#ifndef PA_PROBLEMS_H
#define PA_PROBLEMS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pagedattn/pagedattn.h"

/* Deterministic random numbers (splitmix64): same data on every machine.
 * splitmix64's state only ever grows by its increment, so a state taken
 * straight from the seed (seed x increment) made seed s + 1's stream seed s's
 * shifted by one number: tests seeded base + i, and the random-configuration
 * tests' draws i and i + 1, got overlapping numbers. The seed goes through
 * the output mix (a bijection) first, so nearby seeds start far apart. */
typedef struct pa_rng {
    uint64_t s;
} pa_rng;

static inline pa_rng pa_rng_make(uint64_t seed) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    pa_rng r = {z ^ (z >> 31)};
    return r;
}
uint64_t pa_rng_next(pa_rng *r);
/* The stream n draws on (as n calls of pa_rng_next would leave it). */
pa_rng pa_rng_skip(pa_rng r, uint64_t n);
float pa_rng_uniform(pa_rng *r, float lo, float hi); /* uniform in [lo, hi) */
int pa_rng_int(pa_rng *r, int lo, int hi);           /* uniform integer in [lo, hi] */

/* malloc that ends the program with one line when host memory runs out (the
 * CLI bounds problem sizes before it gets here); never NULL, 0 bytes allowed. */
void *pa_xmalloc(size_t n);

/* n elements of dtype t, uniform in [lo, hi) rounded to t. */
void *pa_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi);
/* Fills n elements of dtype t with NaN. */
void pa_fill_nan(pa_dtype t, void *buf, size_t n);

/* ALiBi slope of head h of num_heads: 2^(-8 (h + 1) / num_heads). */
static inline float pa_alibi_slope(int h, int num_heads) { return exp2f(-8.0f * (float)(h + 1) / (float)num_heads); }

/* ---- the page pool every generator scatters its sequences over --------------
 *
 * A pool for num_seqs sequences of lens[s] tokens in blocks of block_size holds
 * pa_page_pool_blocks() physical blocks: the blocks the sequences need, plus
 * extra_blocks unused ones, plus one spare. pa_page_pool_deal() shuffles the
 * pool (Fisher-Yates, drawn from rng) and deals it out: sequence s gets the
 * next ceil(lens[s] / block_size) blocks of the shuffle, in table[s * stride +
 * 0, 1, ...]; every other column of its row gets unused_col, or the spare block
 * (the last of the shuffle, which no sequence gets) when unused_col < 0. It
 * returns the spare block. The caller fills the whole pool with NaN first and
 * then writes the sequences' tokens, so every block no sequence owns, and every
 * slot past a sequence's length, stays NaN. */
int pa_page_pool_blocks(int num_seqs, const int *lens, int block_size, int extra_blocks);
int pa_page_pool_deal(pa_rng *rng, int num_blocks, int num_seqs, const int *lens, int block_size, int32_t *table,
                      int64_t stride, int32_t unused_col);

/* ---- plain attention: the expected values every generator's tests compare to ----
 *
 * One query row over n_keys contiguous keys and values of one KV head (key j at
 * k + j * kv_stride, head_size floats; values likewise), in double, written
 * independently of the library: the score of key j is scale * q.k_j, then soft
 * capped, then minus alibi_slope * |q_pos - j|; a key is masked when causal and
 * j > q_pos, or when window > 0 and q_pos - j >= window, or when not causal,
 * window > 0 and j - q_pos >= window (a window either side). Masked keys either get
 * weight 0 or, with additive_mask, have mask_value added to their score (the
 * ragged op's convention). out[d] = sum_j p_j v_j[d] (or sum_j p_j |v_j[d]| with
 * abs_v) with p the softmax of the scores, rounded to float once. A row with
 * no weight at all (no keys, or all masked) is 0 with empty_is_zero, else
 * 0/0 = NaN. With has_sink, the softmax runs over the scores and one more
 * entry, sink, whose value is zero (gpt-oss's attention sink: the scores with
 * the sink appended, softmaxed, the sink's column dropped); a row with no
 * visible key is still 0 / NaN as above. With lse, *lse gets the natural log
 * of the softmax's denominator over the same entries, sum_j e^score_j (plus
 * e^sink with has_sink, even where no key is visible; -inf with nothing). A
 * zeroed struct is scale 0: set scale. */
typedef struct pa_plain_opts {
    double scale;
    double soft_cap;    /* > 0: score = soft_cap * tanh(score / soft_cap) */
    double alibi_slope; /* 0: no ALiBi */
    int causal;
    int window; /* > 0: sliding window */
    int additive_mask;
    double mask_value; /* with additive_mask */
    int empty_is_zero;
    int abs_v;
    int has_sink;
    double sink; /* with has_sink: finite, or -inf for no weight */
    double *lse; /* NULL, or where the row's log-sum-exp goes */
} pa_plain_opts;

void pa_plain_attention_row(const float *q, const float *k, const float *v, size_t kv_stride, int n_keys, int head_size,
                            int q_pos, const pa_plain_opts *o, float *out);

/* max |x| * |scale| over n elements of dtype dt (NaN skipped: the problems'
 * unused cache slots): a bound on sum_k p_k |v_k| for a comparison's
 * probability-rounding allowance (check baseline). */
double pa_abs_max(pa_dtype dt, const void *buf, size_t n, float scale);

/* Attention sinks for `heads` query heads (malloc'd; never NULL): each head's
 * differs, from -inf (none) to far above the logits of these problems (about
 * 13), so a sink taken from another head, twice or not at all moves outputs
 * past any tolerance. The tests and `pagedattn --sinks`. */
float *pa_sink_logits(int heads, uint64_t seed);

/* ---- fp8 scales per KV head (pa_kv_cache.scales_per_head) ----------------------
 *
 * With a generator's scales_per_head set over an fp8 cache, KV head h gets its
 * own k_scale and v_scale: base times pa_kv_head_scale_factor(h, salt), salt 0
 * for K and 1 for V, so K's and V's differ and every head's differs from its
 * neighbours' and from head 0's (heads 7 apart share one; the tests' per-head
 * scales, pa_test_head_scales, are the same rule) (a kernel reading another head's scale, the
 * first, or K's for V is visibly off). Head h's cache values are stored as
 * x / its scale and read back as stored * its scale; the problem's kv.k_scale
 * and kv.v_scale point at the num_kv_heads floats. Without it (or with a cache
 * that is not fp8) a generator makes the same bytes as before. */
static inline float pa_kv_head_scale_factor(int h, int salt) {
    static const float f[7] = {1.0f, 2.5f, 0.5f, 4.0f, 0.75f, 1.75f, 3.0f}; /* 1/2 to 4, neighbours apart */
    return f[((h + salt) % 7 + 7) % 7];
}
/* n scales base * pa_kv_head_scale_factor(h, salt) (malloc'd; never NULL). */
float *pa_kv_head_scales(float base, int n, int salt);
/* Bytes of a cache's k_scale (or v_scale) array: one float, or one per KV head. */
static inline size_t pa_kv_scale_bytes(const pa_kv_cache *kv) {
    return sizeof(float) * (kv->scales_per_head ? (size_t)(kv->num_kv_heads > 0 ? kv->num_kv_heads : 1) : 1u);
}
/* The largest of a cache's scales (NULL = 1.0): a bound for |stored * scale|. */
static inline float pa_kv_scale_max(const pa_kv_cache *kv, const float *scale) {
    if (!scale)
        return 1.0f;
    float m = scale[0];
    for (int h = 1; kv->scales_per_head && h < kv->num_kv_heads; h++)
        m = scale[h] > m ? scale[h] : m;
    return m;
}

typedef struct pa_decode_problem {
    pa_decode_params p; /* host pointers */
    void *q, *out, *kc, *vc;
    int32_t *block_tables, *seq_lens;
    float *alibi, *sinks;
    float k_scale, v_scale;     /* fp8 caches: the one scale, or the base of the scales per head */
    float *k_scales, *v_scales; /* scales_per_head over fp8: num_kv_heads each (kv.k_scale, kv.v_scale); else NULL */
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
    int with_sinks;      /* attention sinks: pa_sink_logits(num_heads, seed) */
    int skip_logical;    /* do not keep the contiguous copies (large benchmarks) */
    int scales_per_head; /* fp8 caches: a k_scale and v_scale per KV head (pa_kv_head_scales) */
} pa_decode_problem_cfg;

/* NULL (with a message on stderr) if the configuration is invalid or memory
 * runs out. Large caches are filled by several threads, each from the RNG
 * stream skipped ahead to its first token (pa_rng_skip): the same bytes as one
 * thread, in a fraction of the time (a GiB took 11 s on one core). */
pa_decode_problem *pa_decode_problem_make(const pa_decode_problem_cfg *cfg);
/* Threads the generators fill caches with: n (1..32), or 0 (the default)
 * for one below a million elements and the machine's cores above. */
void pa_problems_set_threads(int n);
/* A batch's tokens filled on every core: sequence s has lens[s] tokens, token
 * t (sequence s's token pos, after the tokens of the sequences before it)
 * takes `draws` numbers from the stream at base skipped t x draws on, and
 * fn(ctx, rng, s, pos) writes it (draws numbers, in the order one thread
 * would). Runs of tokens go to threads, so the bytes are one thread's. */
typedef void (*pa_token_fn)(void *ctx, pa_rng *rng, int s, int pos);
void pa_fill_tokens(const int *lens, int num_seqs, int64_t draws, pa_rng base, pa_token_fn fn, void *ctx);
void pa_decode_problem_free(pa_decode_problem *pr);

/* Plain attention over the contiguous copies (double), for every (seq, head):
 * ref[(s*num_heads + h)*head + d]. Honours scale, soft cap, alibi, window and
 * sinks (finite or -inf). */
void pa_decode_problem_plain(const pa_decode_problem *pr, float *ref);
/* The same, and each head's log-sum-exp ([num_heads, num_seqs], pa_plain_opts.lse's) in lse when not NULL. */
void pa_decode_problem_plain_lse(const pa_decode_problem *pr, float *ref, float *lse);

#endif
