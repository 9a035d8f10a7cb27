/* Random problems shared by the tests and the `pagedattn` CLI. */
#include "problems.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_index.h"

uint64_t pa_rng_next(pa_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float pa_rng_uniform(pa_rng *r, float lo, float hi) {
    double u = (double)(pa_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

int pa_rng_int(pa_rng *r, int lo, int hi) {
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return (int)(lo + (int64_t)(pa_rng_next(r) % span));
}

/* Problem buffers: running out of host memory ends the program with one line
 * (the CLI bounds sizes before it gets here). */
void *pa_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of host memory allocating %zu bytes\n", n);
        exit(1);
    }
    return p;
}

void *pa_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi) {
    void *b = pa_xmalloc(n * pa_dtype_size(t) + 16);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++)
        pa_store_from_float(t, b, i, pa_rng_uniform(r, lo, hi));
    return b;
}

void pa_fill_nan(pa_dtype t, void *buf, size_t n) {
    for (size_t i = 0; i < n; i++)
        pa_store_from_float(t, buf, i, NAN);
}

pa_decode_problem *pa_decode_problem_make(const pa_decode_problem_cfg *c) {
    pa_rng rng = pa_rng_make(c->seed);
    pa_decode_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    int max_len = 1, total_blocks = 0, bs = c->block_size;
    for (int s = 0; s < c->num_seqs; s++) {
        if (c->seq_lens[s] > max_len)
            max_len = c->seq_lens[s];
        total_blocks += (c->seq_lens[s] + bs - 1) / bs;
    }
    const int max_blocks = (max_len + bs - 1) / bs;
    const int num_blocks = total_blocks + c->extra_blocks + 1;

    pa_decode_params *p = &pr->p;
    p->q_dtype = c->q_dtype;
    p->num_seqs = c->num_seqs;
    p->num_heads = c->num_heads;
    p->max_seq_len = max_len;
    p->block_table_stride = max_blocks;
    p->scale = 1.0f / sqrtf((float)c->head_size);
    p->kv.layout = c->layout;
    p->kv.dtype = c->cache_dtype;
    p->kv.num_blocks = num_blocks;
    p->kv.block_size = bs;
    p->kv.num_kv_heads = c->num_kv_heads;
    p->kv.head_size = c->head_size;

    pr->q_elems = (size_t)c->num_seqs * c->num_heads * c->head_size;
    pr->out_elems = pr->q_elems;
    pr->q = pa_random_buffer(&rng, c->q_dtype, pr->q_elems, -1.0f, 1.0f);
    pr->out = pa_xmalloc(pr->out_elems * pa_dtype_size(c->q_dtype) + 16);
    pa_fill_nan(c->q_dtype, pr->out, pr->out_elems);

    /* fp8 caches get scales != 1 so a missing scale shows. */
    pr->k_scale = pa_dtype_is_fp8(c->cache_dtype) ? 0.05f : 1.0f;
    pr->v_scale = pa_dtype_is_fp8(c->cache_dtype) ? 0.03f : 1.0f;
    p->kv.k_scale = &pr->k_scale;
    p->kv.v_scale = &pr->v_scale;

    p->kv.key = (void *)1; /* placeholders for the size query */
    p->kv.value = c->layout == PA_LAYOUT_COMBINED ? NULL : (void *)1;
    int64_t ke, ve;
    if (pa_kv_cache_elements(&p->kv, &ke, &ve) != PA_SUCCESS) {
        fprintf(stderr, "decode problem: %s\n", pa_last_error());
        free(pr->q);
        free(pr->out);
        free(pr);
        return NULL;
    }
    pr->k_elems = (size_t)ke;
    pr->v_elems = (size_t)ve;
    size_t esz = pa_dtype_size(c->cache_dtype);
    pr->kc = pa_xmalloc(pr->k_elems * esz + 16);
    pr->vc = c->layout == PA_LAYOUT_COMBINED ? NULL : pa_xmalloc(pr->v_elems * esz + 16);
    pa_fill_nan(c->cache_dtype, pr->kc, pr->k_elems);
    if (pr->vc)
        pa_fill_nan(c->cache_dtype, pr->vc, pr->v_elems);
    p->kv.key = pr->kc;
    p->kv.value = pr->vc;

    /* Scatter blocks: a random permutation of the pool. */
    int *perm = pa_xmalloc(sizeof(int) * (size_t)num_blocks);
    for (int i = 0; i < num_blocks; i++)
        perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = pa_rng_int(&rng, 0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    pr->block_tables = pa_xmalloc(sizeof(int32_t) * (size_t)c->num_seqs * max_blocks + 4);
    pr->seq_lens = pa_xmalloc(sizeof(int32_t) * (size_t)c->num_seqs + 4);
    pr->k_logical = calloc((size_t)c->num_seqs + 1, sizeof(float *));
    pr->v_logical = calloc((size_t)c->num_seqs + 1, sizeof(float *));
    if (!pr->k_logical || !pr->v_logical) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    pa_kv_geom g = pa_kv_geom_make(c->layout, (int)esz, bs, c->num_kv_heads, c->head_size, 0, 0, 0);
    void *vbuf = c->layout == PA_LAYOUT_COMBINED ? pr->kc : pr->vc;
    int next = 0;
    for (int s = 0; s < c->num_seqs; s++) {
        int L = c->seq_lens[s];
        pr->seq_lens[s] = L;
        int nblk = (L + bs - 1) / bs;
        for (int b = 0; b < max_blocks; b++) /* unused columns point at the last pool block */
            pr->block_tables[(size_t)s * max_blocks + b] = b < nblk ? perm[next++] : perm[num_blocks - 1];
        size_t n = (size_t)L * c->num_kv_heads * c->head_size;
        if (!c->skip_logical) {
            pr->k_logical[s] = pa_xmalloc(n * sizeof(float) + 4);
            pr->v_logical[s] = pa_xmalloc(n * sizeof(float) + 4);
        }
        for (int pos = 0; pos < L; pos++) {
            int64_t blk = pr->block_tables[(size_t)s * max_blocks + pos / bs];
            for (int h = 0; h < c->num_kv_heads; h++)
                for (int d = 0; d < c->head_size; d++) {
                    size_t li = ((size_t)pos * c->num_kv_heads + h) * c->head_size + d;
                    int64_t ko = pa_kv_key_offset(&g, blk, h, pos % bs, d);
                    int64_t vo = pa_kv_value_offset(&g, blk, h, pos % bs, d);
                    float kx = pa_rng_uniform(&rng, -1.0f, 1.0f), vx = pa_rng_uniform(&rng, -1.0f, 1.0f);
                    pa_store_from_float(c->cache_dtype, pr->kc, (size_t)ko, kx / pr->k_scale);
                    pa_store_from_float(c->cache_dtype, vbuf, (size_t)vo, vx / pr->v_scale);
                    if (c->skip_logical)
                        continue;
                    pr->k_logical[s][li] = pa_load_as_float(c->cache_dtype, pr->kc, (size_t)ko) * pr->k_scale;
                    pr->v_logical[s][li] = pa_load_as_float(c->cache_dtype, vbuf, (size_t)vo) * pr->v_scale;
                }
        }
    }
    free(perm);
    if (c->with_alibi) {
        pr->alibi = pa_xmalloc(sizeof(float) * (size_t)c->num_heads);
        for (int h = 0; h < c->num_heads; h++)
            pr->alibi[h] = exp2f(-8.0f * (float)(h + 1) / (float)c->num_heads);
        p->alibi_slopes = pr->alibi;
    }
    p->query = pr->q;
    p->out = pr->out;
    p->block_tables = pr->block_tables;
    p->seq_lens = pr->seq_lens;
    return pr;
}

void pa_decode_problem_free(pa_decode_problem *pr) {
    if (!pr)
        return;
    for (int s = 0; s < pr->p.num_seqs; s++) {
        free(pr->k_logical[s]);
        free(pr->v_logical[s]);
    }
    free(pr->k_logical);
    free(pr->v_logical);
    free(pr->q);
    free(pr->out);
    free(pr->kc);
    free(pr->vc);
    free(pr->block_tables);
    free(pr->seq_lens);
    free(pr->alibi);
    free(pr);
}

void pa_decode_problem_plain(const pa_decode_problem *pr, float *ref) {
    const pa_decode_params *p = &pr->p;
    const int hs = p->kv.head_size, nkv = p->kv.num_kv_heads, group = p->num_heads / nkv;
    const int64_t qs = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    for (int s = 0; s < p->num_seqs; s++) {
        const int L = p->seq_lens[s];
        double *w = pa_xmalloc(sizeof(double) * (size_t)L);
        for (int h = 0; h < p->num_heads; h++) {
            const int kh = h / group;
            double mx = -INFINITY;
            for (int t = 0; t < L; t++) {
                if (p->sliding_window > 0 && L - 1 - t >= p->sliding_window) {
                    w[t] = -INFINITY;
                    continue;
                }
                double dot = 0;
                for (int d = 0; d < hs; d++)
                    dot += (double)pa_load_as_float(p->q_dtype, p->query, (size_t)(s * qs + h * hs + d)) *
                           pr->k_logical[s][((size_t)t * nkv + kh) * hs + d];
                double x = p->scale * dot;
                if (p->soft_cap > 0)
                    x = p->soft_cap * tanh(x / p->soft_cap);
                if (p->alibi_slopes)
                    x += p->alibi_slopes[h] * (double)(t - (L - 1));
                w[t] = x;
                mx = x > mx ? x : mx;
            }
            double sum = 0;
            for (int t = 0; t < L; t++) {
                w[t] = w[t] == -INFINITY ? 0.0 : exp(w[t] - mx);
                sum += w[t];
            }
            for (int d = 0; d < hs; d++) {
                double a = 0;
                for (int t = 0; t < L; t++)
                    a += w[t] * pr->v_logical[s][((size_t)t * nkv + kh) * hs + d];
                ref[((size_t)s * p->num_heads + h) * hs + d] = (float)(a / sum);
            }
        }
        free(w);
    }
}
