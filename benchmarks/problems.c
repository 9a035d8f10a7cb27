/* Random problems shared by the tests and the `pagedattn` CLI: the RNG, the
 * page pool and the plain attention every generator uses (decode here,
 * prefill_problems.h, ragged_problem.h), and the decode problem. */
#include "problems.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int g_fill_threads; /* pa_problems_set_threads: 0 = by the work and the machine */

/* The threads a fill of `work` elements takes (1..32). */

void pa_problems_set_threads(int n) { g_fill_threads = n < 0 ? 0 : n > 32 ? 32 : n; }

static int fill_threads(int64_t work) {
    if (g_fill_threads > 0)
        return g_fill_threads;
    if (work < ((int64_t)1 << 20))
        return 1;
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 32 ? 32 : (int)n;
}

/* fn on each of n jobs (job i at jobs + i x size): jobs 1.. on threads of
 * their own, job 0 (and any a thread could not take) on the caller's. */
static void run_jobs(int n, void *jobs, size_t size, void *(*fn)(void *)) {
    pthread_t tid[32];
    int started[32] = {0};
    n = n < 1 ? 1 : n > 32 ? 32 : n;
    for (int i = 1; i < n; i++)
        started[i] = pthread_create(&tid[i], NULL, fn, (char *)jobs + size * (size_t)i) == 0;
    for (int i = 0; i < n; i++)
        if (!started[i])
            fn((char *)jobs + size * (size_t)i);
    for (int i = 1; i < n; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
}

/* One thread's run [i0, i1) of pa_random_buffer: element i takes draw i. */
typedef struct buffer_fill {
    pa_rng base;
    pa_dtype t;
    void *b;
    size_t i0, i1;
    float lo, hi;
} buffer_fill;

static void *buffer_fill_run(void *arg) {
    const buffer_fill *j = arg;
    pa_rng r = pa_rng_skip(j->base, j->i0);
    for (size_t i = j->i0; i < j->i1; i++)
        pa_store_from_float(j->t, j->b, i, pa_rng_uniform(&r, j->lo, j->hi));
    return NULL;
}

void *pa_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi) {
    void *b = pa_xmalloc(n * pa_dtype_size(t) + 16);
    const int nt = fill_threads((int64_t)n);
    buffer_fill job[32];
    for (int i = 0; i < nt; i++)
        job[i] = (buffer_fill){*r, t, b, n * (size_t)i / (size_t)nt, n * (size_t)(i + 1) / (size_t)nt, lo, hi};
    run_jobs(nt, job, sizeof job[0], buffer_fill_run);
    *r = pa_rng_skip(*r, n);
    return b;
}

void pa_fill_nan(pa_dtype t, void *buf, size_t n) {
    if (n == 0)
        return;
    /* One element stored, then its bytes copied in doubling runs: a cache of
     * a GiB in a fraction of a second, the same bytes as storing each. */
    pa_store_from_float(t, buf, 0, NAN);
    const size_t total = n * pa_dtype_size(t);
    for (size_t done = pa_dtype_size(t); done < total;) {
        const size_t k = done < total - done ? done : total - done;
        memcpy((unsigned char *)buf + done, buf, k);
        done += k;
    }
}

pa_rng pa_rng_skip(pa_rng r, uint64_t n) {
    r.s += n * 0x9E3779B97F4A7C15ull;
    return r;
}

/* One thread's run [t_begin, t_end) of pa_fill_tokens. */
typedef struct token_run {
    const int64_t *tok0; /* num_seqs + 1 entries: the tokens before each sequence */
    int64_t draws, t_begin, t_end;
    pa_rng base;
    pa_token_fn fn;
    void *ctx;
} token_run;

static void *token_run_fill(void *arg) {
    const token_run *j = arg;
    pa_rng r = pa_rng_skip(j->base, (uint64_t)(j->t_begin * j->draws));
    int s = 0;
    for (int64_t t = j->t_begin; t < j->t_end; t++) {
        while (t >= j->tok0[s + 1])
            s++;
        j->fn(j->ctx, &r, s, (int)(t - j->tok0[s]));
    }
    return NULL;
}

void pa_fill_tokens(const int *lens, int num_seqs, int64_t draws, pa_rng base, pa_token_fn fn, void *ctx) {
    int64_t *tok0 = pa_xmalloc(sizeof(int64_t) * ((size_t)num_seqs + 1));
    tok0[0] = 0;
    for (int s = 0; s < num_seqs; s++)
        tok0[s + 1] = tok0[s] + lens[s];
    const int64_t tokens = tok0[num_seqs];
    const int nt = fill_threads(tokens * draws / 2);
    token_run job[32];
    for (int i = 0; i < nt; i++)
        job[i] = (token_run){tok0, draws, tokens * i / nt, tokens * (i + 1) / nt, base, fn, ctx};
    run_jobs(nt, job, sizeof job[0], token_run_fill);
    free(tok0);
}

int pa_page_pool_blocks(int num_seqs, const int *lens, int block_size, int extra_blocks) {
    int used = 0;
    for (int s = 0; s < num_seqs; s++)
        used += (lens[s] + block_size - 1) / block_size;
    return used + extra_blocks + 1;
}

int pa_page_pool_deal(pa_rng *rng, int num_blocks, int num_seqs, const int *lens, int block_size, int32_t *table,
                      int64_t stride, int32_t unused_col) {
    if (pa_page_pool_blocks(num_seqs, lens, block_size, 0) > num_blocks) {
        fprintf(stderr, "page pool: %d blocks are too few for the sequences\n", num_blocks);
        exit(1);
    }
    int *perm = pa_xmalloc(sizeof(int) * (size_t)num_blocks);
    for (int i = 0; i < num_blocks; i++)
        perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = pa_rng_int(rng, 0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    const int spare = perm[num_blocks - 1];
    int next = 0;
    for (int s = 0; s < num_seqs; s++) {
        const int nblk = (lens[s] + block_size - 1) / block_size;
        for (int64_t b = 0; b < stride; b++)
            table[s * stride + b] = b < nblk ? perm[next++] : unused_col < 0 ? spare : unused_col;
    }
    free(perm);
    return spare;
}

double pa_abs_max(pa_dtype dt, const void *buf, size_t n, float scale) {
    double m = 0.0;
    for (size_t i = 0; buf && i < n; i++) {
        const double x = fabs((double)pa_load_as_float(dt, buf, i));
        if (x > m) /* false for NaN */
            m = x;
    }
    return m * fabs((double)scale);
}

float *pa_kv_head_scales(float base, int n, int salt) {
    float *s = pa_xmalloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int h = 0; h < n; h++)
        s[h] = base * pa_kv_head_scale_factor(h, salt);
    return s;
}

float *pa_sink_logits(int heads, uint64_t seed) {
    static const float pick[8] = {-INFINITY, 2.0f, -1.0f, 5.0f, 9.0f, 0.5f, 3.5f, 13.0f};
    float *s = pa_xmalloc(sizeof(float) * (size_t)(heads > 0 ? heads : 1));
    for (int h = 0; h < heads; h++)
        s[h] = pick[(h * 3 + (int)(seed % 5)) % 8] + 0.125f * (float)(h % 5);
    return s;
}

void pa_plain_attention_row(const float *q, const float *k, const float *v, size_t kv_stride, int n_keys, int head_size,
                            int q_pos, const pa_plain_opts *o, float *out) {
    const int hs = head_size;
    double *w = pa_xmalloc(sizeof(double) * ((size_t)n_keys + (size_t)hs + 1)), *acc = w + n_keys;
    double mx = -INFINITY;
    for (int j = 0; j < n_keys; j++) {
        const int masked = (o->causal && j > q_pos) || (o->window > 0 && q_pos - j >= o->window) ||
                           (!o->causal && o->window > 0 && j - q_pos >= o->window);
        if (masked && !o->additive_mask) {
            w[j] = -INFINITY;
            continue;
        }
        const float *kj = k + (size_t)j * kv_stride;
        double dot = 0;
        for (int d = 0; d < hs; d++)
            dot += (double)q[d] * kj[d];
        double x = o->scale * dot;
        if (o->soft_cap > 0)
            x = o->soft_cap * tanh(x / o->soft_cap);
        if (o->alibi_slope != 0)
            x -= o->alibi_slope * fabs((double)q_pos - (double)j);
        if (masked)
            x += o->mask_value;
        w[j] = x;
        mx = x > mx ? x : mx;
    }
    /* Every key, masked ones with weight 0, in key order for each d. */
    double sum = 0;
    for (int d = 0; d < hs; d++)
        acc[d] = 0;
    for (int j = 0; j < n_keys; j++) {
        const double e = w[j] == -INFINITY ? 0.0 : exp(w[j] - mx);
        const float *vj = v + (size_t)j * kv_stride;
        sum += e;
        for (int d = 0; d < hs; d++)
            acc[d] += e * (o->abs_v ? fabs((double)vj[d]) : (double)vj[d]);
    }
    /* The sink, appended as one more score: the max runs over it too, and it
     * weighs in the sum with no value. */
    double level = mx; /* sum is of e^(score - level) */
    if (o->has_sink && sum > 0) {
        const double m2 = o->sink > mx ? o->sink : mx;
        const double f = exp(mx - m2);
        sum = sum * f + exp(o->sink - m2);
        level = m2;
        for (int d = 0; d < hs; d++)
            acc[d] *= f;
    }
    if (o->lse)
        *o->lse = sum > 0 ? level + log(sum) : o->has_sink ? o->sink : -INFINITY;
    for (int d = 0; d < hs; d++)
        out[d] = o->empty_is_zero && !(sum > 0) ? 0.0f : (float)(acc[d] / sum);
    free(w);
}

/* What a decode problem's tokens are written into (pa_fill_tokens). */
typedef struct decode_fill {
    const pa_decode_problem_cfg *c;
    pa_decode_problem *pr;
    const pa_kv_geom *g;
    void *vbuf;
    int max_blocks;
} decode_fill;

/* Token pos of sequence s: K, then V, for each (head, dim). */
static void decode_fill_token(void *ctx, pa_rng *rng, int s, int pos) {
    const decode_fill *j = ctx;
    const pa_decode_problem_cfg *c = j->c;
    pa_decode_problem *pr = j->pr;
    const int bs = c->block_size;
    const int64_t blk = pr->block_tables[(size_t)s * j->max_blocks + pos / bs];
    for (int h = 0; h < c->num_kv_heads; h++)
        for (int d = 0; d < c->head_size; d++) {
            const size_t li = ((size_t)pos * c->num_kv_heads + h) * c->head_size + d;
            const int64_t ko = pa_kv_key_offset(j->g, blk, h, pos % bs, d);
            const int64_t vo = pa_kv_value_offset(j->g, blk, h, pos % bs, d);
            const float kx = pa_rng_uniform(rng, -1.0f, 1.0f), vx = pa_rng_uniform(rng, -1.0f, 1.0f);
            const float ks = pr->k_scales ? pr->k_scales[h] : pr->k_scale; /* KV head h's, or the one */
            const float vs = pr->v_scales ? pr->v_scales[h] : pr->v_scale;
            pa_store_from_float(c->cache_dtype, pr->kc, (size_t)ko, kx / ks);
            pa_store_from_float(c->cache_dtype, j->vbuf, (size_t)vo, vx / vs);
            if (c->skip_logical)
                continue;
            pr->k_logical[s][li] = pa_load_as_float(c->cache_dtype, pr->kc, (size_t)ko) * ks;
            pr->v_logical[s][li] = pa_load_as_float(c->cache_dtype, j->vbuf, (size_t)vo) * vs;
        }
}

pa_decode_problem *pa_decode_problem_make(const pa_decode_problem_cfg *c) {
    pa_rng rng = pa_rng_make(c->seed);
    pa_decode_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    int max_len = 1, bs = c->block_size;
    for (int s = 0; s < c->num_seqs; s++)
        if (c->seq_lens[s] > max_len)
            max_len = c->seq_lens[s];
    const int max_blocks = (max_len + bs - 1) / bs;
    const int num_blocks = pa_page_pool_blocks(c->num_seqs, c->seq_lens, bs, c->extra_blocks);

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
    if (c->scales_per_head && pa_dtype_is_fp8(c->cache_dtype)) { /* each KV head its own */
        pr->k_scales = pa_kv_head_scales(pr->k_scale, c->num_kv_heads, 0);
        pr->v_scales = pa_kv_head_scales(pr->v_scale, c->num_kv_heads, 1);
        p->kv.k_scale = pr->k_scales;
        p->kv.v_scale = pr->v_scales;
        p->kv.scales_per_head = 1;
    }

    p->kv.key = (void *)1; /* placeholders for the size query */
    p->kv.value = c->layout == PA_LAYOUT_COMBINED ? NULL : (void *)1;
    int64_t ke, ve;
    if (pa_kv_cache_elements(&p->kv, &ke, &ve) != PA_SUCCESS) {
        fprintf(stderr, "decode problem: %s\n", pa_last_error());
        free(pr->q);
        free(pr->out);
        free(pr->k_scales);
        free(pr->v_scales);
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

    /* Scatter blocks over the pool; unused columns point at the spare (NaN) block. */
    pr->block_tables = pa_xmalloc(sizeof(int32_t) * (size_t)c->num_seqs * max_blocks + 4);
    pa_page_pool_deal(&rng, num_blocks, c->num_seqs, c->seq_lens, bs, pr->block_tables, max_blocks, -1);
    pr->seq_lens = pa_xmalloc(sizeof(int32_t) * (size_t)c->num_seqs + 4);
    pr->k_logical = calloc((size_t)c->num_seqs + 1, sizeof(float *));
    pr->v_logical = calloc((size_t)c->num_seqs + 1, sizeof(float *));
    if (!pr->k_logical || !pr->v_logical) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    pa_kv_geom g = pa_kv_geom_make(c->layout, (int)esz, bs, c->num_kv_heads, c->head_size, 0, 0, 0);
    for (int s = 0; s < c->num_seqs; s++) {
        pr->seq_lens[s] = c->seq_lens[s];
        if (!c->skip_logical) {
            const size_t n = (size_t)c->seq_lens[s] * c->num_kv_heads * c->head_size;
            pr->k_logical[s] = pa_xmalloc(n * sizeof(float) + 4);
            pr->v_logical[s] = pa_xmalloc(n * sizeof(float) + 4);
        }
    }
    decode_fill fill = {c, pr, &g, c->layout == PA_LAYOUT_COMBINED ? pr->kc : pr->vc, max_blocks};
    /* Token t of the batch (sequence s's token pos, after the tokens of the
     * sequences before it) takes draws 2 t H D on, K then V for each (head,
     * dim). */
    pa_fill_tokens(c->seq_lens, c->num_seqs, 2 * (int64_t)c->num_kv_heads * c->head_size, rng, decode_fill_token,
                   &fill);
    if (c->with_alibi) {
        pr->alibi = pa_xmalloc(sizeof(float) * (size_t)c->num_heads);
        for (int h = 0; h < c->num_heads; h++)
            pr->alibi[h] = pa_alibi_slope(h, c->num_heads);
        p->alibi_slopes = pr->alibi;
    }
    if (c->with_sinks)
        p->sinks = pr->sinks = pa_sink_logits(c->num_heads, c->seed);
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
    free(pr->sinks);
    free(pr->k_scales);
    free(pr->v_scales);
    free(pr);
}

void pa_decode_problem_plain(const pa_decode_problem *pr, float *ref) { pa_decode_problem_plain_lse(pr, ref, NULL); }

void pa_decode_problem_plain_lse(const pa_decode_problem *pr, float *ref, float *lse) {
    const pa_decode_params *p = &pr->p;
    const int hs = p->kv.head_size, nkv = p->kv.num_kv_heads, group = p->num_heads / nkv;
    const int64_t qs = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    float *q = pa_xmalloc(sizeof(float) * (size_t)hs);
    for (int s = 0; s < p->num_seqs; s++) {
        const int L = p->seq_lens[s];
        for (int h = 0; h < p->num_heads; h++) {
            const int kh = h / group;
            for (int d = 0; d < hs; d++)
                q[d] = pa_load_as_float(p->q_dtype, p->query, (size_t)(s * qs + h * hs + d));
            /* the query is the sequence's last token */
            double row_lse = 0.0;
            const pa_plain_opts o = {.scale = p->scale,
                                     .soft_cap = p->soft_cap,
                                     .alibi_slope = p->alibi_slopes ? p->alibi_slopes[h] : 0.0,
                                     .causal = 1,
                                     .window = p->sliding_window,
                                     .has_sink = p->sinks != NULL,
                                     .sink = p->sinks ? p->sinks[h] : 0.0,
                                     .lse = lse ? &row_lse : NULL};
            pa_plain_attention_row(q, pr->k_logical[s] + (size_t)kh * hs, pr->v_logical[s] + (size_t)kh * hs,
                                   (size_t)nkv * hs, L, hs, L - 1, &o, ref + ((size_t)s * p->num_heads + h) * hs);
            if (lse)
                lse[(int64_t)h * p->num_seqs + s] = (float)row_lse;
        }
    }
    free(q);
}
