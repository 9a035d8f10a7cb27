/* Paged decode problems whose KV cache is written from the layouts' written
 * definition, the shapes in include/pagedattn/kv_cache.h, and nothing else:
 *
 *   PA_LAYOUT_VLLM       key   [num_blocks, kv_heads, head/x, block, x]   x = 16 / sizeof(elt)
 *                        value [num_blocks, kv_heads, head, block]
 *   PA_LAYOUT_FLASH_NHD  key, value [num_blocks, block, kv_heads, head]
 *   PA_LAYOUT_FLASH_HND  key, value [num_blocks, kv_heads, block, head]
 *
 * Row-major index arithmetic over those shapes is spelled out below; it does
 * not include or call csrc/shared/kv_index.h (which the kernels and the CPU reference
 * index with), so a wrong offset function there shows up as a mismatch here.
 * The expected output is plain softmax attention in double over the logical
 * keys and values (as stored, i.e. rounded to the cache dtype), computed here
 * too: no library attention code is involved. Contiguous caches (strides 0),
 * f32 / f16 / bf16 caches equal to the query dtype. Header-only. */
#ifndef PA_TEST_LAYOUT_CACHE_H
#define PA_TEST_LAYOUT_CACHE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"
#include "problems.h" /* pa_rng, the tests' one RNG */

/* Element index of key (block b, kv head h, token t in the block, dim d). */
static inline int64_t pa_lc_key_index(pa_kv_layout l, int64_t x, int64_t bs, int64_t kvh, int64_t hs, int64_t b,
                                      int64_t h, int64_t t, int64_t d) {
    switch (l) {
    case PA_LAYOUT_VLLM: /* [nb, kvh, hs/x, bs, x] */ return (((b * kvh + h) * (hs / x) + d / x) * bs + t) * x + d % x;
    case PA_LAYOUT_FLASH_NHD: /* [nb, bs, kvh, hs] */ return ((b * bs + t) * kvh + h) * hs + d;
    default: /* PA_LAYOUT_FLASH_HND: [nb, kvh, bs, hs] */ return ((b * kvh + h) * bs + t) * hs + d;
    }
}

/* Element index of value (block b, kv head h, token t, dim d). */
static inline int64_t pa_lc_value_index(pa_kv_layout l, int64_t bs, int64_t kvh, int64_t hs, int64_t b, int64_t h,
                                        int64_t t, int64_t d) {
    switch (l) {
    case PA_LAYOUT_VLLM: /* [nb, kvh, hs, bs] */ return ((b * kvh + h) * hs + d) * bs + t;
    case PA_LAYOUT_FLASH_NHD: return ((b * bs + t) * kvh + h) * hs + d;
    default: return ((b * kvh + h) * bs + t) * hs + d;
    }
}

static inline float pa_lc_round(pa_dtype t, float v) {
    switch (t) {
    case PA_DTYPE_F16: return pa_half_to_float(pa_float_to_half(v));
    case PA_DTYPE_BF16: return pa_bf16_to_float(pa_float_to_bf16(v));
    default: return v;
    }
}

static inline void pa_lc_store(pa_dtype t, void *buf, int64_t i, float v) {
    switch (t) {
    case PA_DTYPE_F16: ((uint16_t *)buf)[i] = pa_float_to_half(v); break;
    case PA_DTYPE_BF16: ((uint16_t *)buf)[i] = pa_float_to_bf16(v); break;
    default: ((float *)buf)[i] = v; break;
    }
}

static inline void pa_lc_store_nan(pa_dtype t, void *buf, int64_t i) {
    switch (t) {
    case PA_DTYPE_F16:
    case PA_DTYPE_BF16: ((uint16_t *)buf)[i] = 0x7FFF; break;
    default: ((float *)buf)[i] = NAN; break;
    }
}

typedef struct pa_lc_problem {
    pa_decode_params p;  /* host pointers */
    float *expected;     /* [num_seqs, num_heads, head_size]: plain attention, double, rounded to float */
    int64_t cache_elems; /* elements of each cache buffer */
    void *key, *value, *query, *out;
    int32_t *block_tables, *seq_lens;
} pa_lc_problem;

/* A decode problem: num_seqs sequences of lengths lens[], blocks scattered over
 * a pool twice as large as needed (unused slots NaN), q dtype = cache dtype. */
static inline pa_lc_problem *pa_lc_problem_make(pa_kv_layout layout, pa_dtype dt, int num_seqs, const int *lens,
                                                int num_heads, int kvh, int hs, int bs, uint64_t seed) {
    pa_rng rng = pa_rng_make(seed);
    pa_lc_problem *pr = (pa_lc_problem *)calloc(1, sizeof *pr);
    const int64_t esz = (int64_t)pa_dtype_size(dt), x = 16 / esz;
    int max_len = 1, used = 0;
    for (int s = 0; s < num_seqs; s++) {
        max_len = lens[s] > max_len ? lens[s] : max_len;
        used += (lens[s] + bs - 1) / bs;
    }
    const int stride = (max_len + bs - 1) / bs, nb = 2 * used + 1;
    pr->cache_elems = (int64_t)nb * bs * kvh * hs;
    pr->key = malloc((size_t)(pr->cache_elems * esz));
    pr->value = malloc((size_t)(pr->cache_elems * esz));
    for (int64_t i = 0; i < pr->cache_elems; i++) {
        pa_lc_store_nan(dt, pr->key, i);
        pa_lc_store_nan(dt, pr->value, i);
    }
    /* a random permutation of the pool; sequence s takes the next blocks */
    int *perm = (int *)malloc(sizeof(int) * (size_t)nb);
    for (int i = 0; i < nb; i++)
        perm[i] = i;
    for (int i = nb - 1; i > 0; i--) {
        const int j = (int)(pa_rng_next(&rng) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    pr->block_tables = (int32_t *)calloc((size_t)num_seqs * (size_t)stride, sizeof(int32_t));
    pr->seq_lens = (int32_t *)malloc(sizeof(int32_t) * (size_t)num_seqs);
    const int64_t row = (int64_t)num_heads * hs;
    pr->query = malloc((size_t)(num_seqs * row * esz));
    pr->out = malloc((size_t)(num_seqs * row * esz));
    pr->expected = (float *)malloc(sizeof(float) * (size_t)(num_seqs * row));
    float *k = (float *)malloc(sizeof(float) * (size_t)max_len * (size_t)kvh * (size_t)hs);
    float *v = (float *)malloc(sizeof(float) * (size_t)max_len * (size_t)kvh * (size_t)hs);
    double *logit = (double *)malloc(sizeof(double) * (size_t)max_len);
    const float scale = 1.0f / sqrtf((float)hs);
    int next = 0;
    for (int s = 0; s < num_seqs; s++) {
        const int L = lens[s];
        pr->seq_lens[s] = L;
        for (int j = 0; j < (L + bs - 1) / bs; j++)
            pr->block_tables[(int64_t)s * stride + j] = perm[next++];
        /* logical K/V of the sequence, written where kv_cache.h's shapes put them */
        for (int t = 0; t < L; t++) {
            const int64_t b = pr->block_tables[(int64_t)s * stride + t / bs];
            for (int h = 0; h < kvh; h++)
                for (int d = 0; d < hs; d++) {
                    const float kv_k = pa_lc_round(dt, pa_rng_uniform(&rng, -1.0f, 1.0f));
                    const float kv_v = pa_lc_round(dt, pa_rng_uniform(&rng, -1.0f, 1.0f));
                    k[((int64_t)t * kvh + h) * hs + d] = kv_k;
                    v[((int64_t)t * kvh + h) * hs + d] = kv_v;
                    pa_lc_store(dt, pr->key, pa_lc_key_index(layout, x, bs, kvh, hs, b, h, t % bs, d), kv_k);
                    pa_lc_store(dt, pr->value, pa_lc_value_index(layout, bs, kvh, hs, b, h, t % bs, d), kv_v);
                }
        }
        for (int h = 0; h < num_heads; h++) {
            const int hk = h / (num_heads / kvh);
            float q[512];
            for (int d = 0; d < hs; d++) {
                q[d] = pa_lc_round(dt, pa_rng_uniform(&rng, -1.0f, 1.0f));
                pa_lc_store(dt, pr->query, s * row + (int64_t)h * hs + d, q[d]);
            }
            double mx = -INFINITY, sum = 0.0;
            for (int t = 0; t < L; t++) {
                double dot = 0.0;
                for (int d = 0; d < hs; d++)
                    dot += (double)q[d] * k[((int64_t)t * kvh + hk) * hs + d];
                logit[t] = dot * scale;
                mx = logit[t] > mx ? logit[t] : mx;
            }
            for (int t = 0; t < L; t++)
                sum += (logit[t] = exp(logit[t] - mx));
            for (int d = 0; d < hs; d++) {
                double acc = 0.0;
                for (int t = 0; t < L; t++)
                    acc += logit[t] * v[((int64_t)t * kvh + hk) * hs + d];
                pr->expected[s * row + (int64_t)h * hs + d] = (float)(acc / sum);
            }
        }
    }
    free(k);
    free(v);
    free(logit);
    free(perm);
    pa_decode_params *p = &pr->p;
    memset(p, 0, sizeof *p);
    p->out = pr->out;
    p->query = pr->query;
    p->q_dtype = dt;
    p->kv.layout = layout;
    p->kv.dtype = dt;
    p->kv.key = pr->key;
    p->kv.value = pr->value;
    p->kv.num_blocks = nb;
    p->kv.block_size = bs;
    p->kv.num_kv_heads = kvh;
    p->kv.head_size = hs;
    p->block_tables = pr->block_tables;
    p->block_table_stride = stride;
    p->seq_lens = pr->seq_lens;
    p->num_seqs = num_seqs;
    p->num_heads = num_heads;
    p->max_seq_len = max_len;
    p->scale = scale;
    return pr;
}

static inline void pa_lc_problem_free(pa_lc_problem *pr) {
    if (!pr)
        return;
    free(pr->expected);
    free(pr->key);
    free(pr->value);
    free(pr->query);
    free(pr->out);
    free(pr->block_tables);
    free(pr->seq_lens);
    free(pr);
}

#endif /* PA_TEST_LAYOUT_CACHE_H */
