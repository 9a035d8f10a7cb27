/* serve_loop: a continuous-batching serving loop over one attention layer,
 * built against the installed library as a server would use it, and checked
 * end to end.
 *
 * The "model" is one attention layer with random weights: every token t of a
 * request has a random input x (hidden 128) and q = x Wq, k = x Wk, v = x Wv
 * with 4 query heads and 2 KV heads of 64 dims. Requests arrive over time
 * with prompts of different lengths; each step the scheduler gives every
 * running decode one token and fills the rest of a 64-token budget with
 * prompt chunks (chunked prefill); a request decodes until its own length,
 * then leaves and its pages go back to the pool. Each step goes through the
 * library as a server's would:
 *   host layer   reorder the batch so decodes come first (with the swap
 *                callback moving the rows of the persistent batch), split it,
 *                build the common metadata (query_start_loc, seq_lens, slot
 *                mapping padded to a multiple of 16 tokens, as CUDA graphs
 *                pad) and the ragged metadata (kv lens, KV-update slices);
 *   cache write  even steps reshape_and_cache by slot mapping, odd steps
 *                kv_cache_update by slices (both write the combined layout);
 *   attention    ragged paged attention: one call for the prefill chunks
 *                and the decodes of the step together.
 * Every output row is compared with plain softmax attention over that
 * request's whole history kept contiguously here (no pages, no batch, no host
 * layer, double precision): a wrong slot, page, length or offset anywhere in
 * the chain shows up as a mismatch. Freed pages and unused page-table entries
 * hold NaN, so reading anything that is not the request's own is caught too.
 *
 * On a GPU the cache write and the attention run as CUDA kernels; without one
 * the same schedule runs on the CPU reference ops (and says so). The check is
 * the same on both.
 *
 *   serve_loop [--device auto|cpu|gpu|both] [--dtype f16|bf16|f32]
 *              [--cache-dtype same|fp8_e4m3|fp8_e5m2] [--window N] [--soft-cap X]
 *              [--seed N] [--verbose]
 * Exit: 0 every output matched, 1 a mismatch or an op failed, 2 usage,
 * 3 --device gpu without a usable GPU (or the GPU op does not support this).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <pagedattn/pagedattn.h>

enum {
    HIDDEN = 128,
    HQ = 4,
    HKV = 2,
    HEAD = 64,
    PAGE = 16,
    MAX_MODEL_LEN = 256,
    PAGES_PER_SEQ = MAX_MODEL_LEN / PAGE,
    NUM_PAGES = 120, /* the last one is a NaN trap page, never handed out */
    TRAP_PAGE = NUM_PAGES - 1,
    MAX_SEQS = 8,
    MAX_TOKENS = 64, /* token budget per step = rows of q/out */
    TOKEN_PAD = 16,
    SLICES_PER_BLOCK = 8,
    NUM_REQUESTS = 18,
    MAX_STEPS = 2000,
};

#define QROW (HQ * HEAD)
#define KVROW (HKV * HEAD)
#define PAGE_ELEMS ((size_t)PAGE * 2 * HKV * HEAD)
#define CACHE_ELEMS ((size_t)NUM_PAGES * PAGE_ELEMS)

typedef enum { WAITING, RUNNING, DONE } req_state;

typedef struct request {
    int arrival, prompt_len, total_len;
    int computed;  /* tokens already in the cache */
    int scheduled; /* new tokens this step */
    int pages[PAGES_PER_SEQ], num_pages;
    req_state state;
    float *hist_k, *hist_v; /* [MAX_MODEL_LEN][HKV][HEAD]: what the cache holds, as floats */
} request;

typedef struct options {
    int device; /* 0 cpu, 1 gpu, 2 auto, 3 both */
    pa_dtype dt, cdt;
    int cache_same;
    int window;
    float soft_cap;
    unsigned long long seed;
    int verbose;
} options;

/* Everything one run needs. Host buffers are what the CPU path computes on;
 * the GPU path copies them to their device twins each step. */
typedef struct engine {
    options opt;
    int gpu;
    float wq[HIDDEN][QROW], wk[HIDDEN][KVROW], wv[HIDDEN][KVROW];
    request req[NUM_REQUESTS];
    int free_pages[NUM_PAGES], num_free;
    int order[MAX_SEQS], num_running; /* the persistent batch: request ids by row */
    unsigned long long rng;
    /* host step buffers */
    void *cache;
    float scales[2];
    void *q, *out, *k, *v, *new_kv;
    int64_t slot64[MAX_TOKENS];
    int32_t *slices;
    int32_t slices_capacity;
    int32_t page_table[MAX_SEQS * PAGES_PER_SEQ];
    int32_t qsl[MAX_SEQS + 1], seq_lens[MAX_SEQS], computed[MAX_SEQS];
    int32_t sched[MAX_SEQS];
    int rows[MAX_SEQS]; /* the step batch: request id of each row */
    /* device twins */
    void *d_cache, *d_q, *d_out, *d_k, *d_v, *d_new_kv, *d_ws;
    float *d_scales;
    int64_t *d_slot64;
    int32_t *d_slices, *d_num_slices, *d_page_table, *d_kv_lens, *d_qsl, *d_num_seqs;
    size_t ws_bytes;
    /* statistics */
    int steps, mixed_steps, slot_steps, slice_steps, max_batch, min_free;
    long long prefill_tokens, decode_tokens, rows_checked, bad_rows;
    double max_abs_err;
} engine;

/* ---- deterministic inputs ---------------------------------------------------- */

static unsigned long long splitmix(unsigned long long *s) {
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(unsigned long long *s, float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(splitmix(s) >> 11) / 9007199254740992.0);
}

/* The input of token `pos` of request `r`: the same whatever batch it lands in. */
static void token_input(const engine *e, int r, int pos, float x[HIDDEN]) {
    unsigned long long s = e->opt.seed * 1000003ull + (unsigned long long)r * 65537ull + (unsigned long long)pos;
    for (int i = 0; i < HIDDEN; i++)
        x[i] = uniform(&s, -1.0f, 1.0f);
}

static float rounded(pa_dtype t, float v) {
    unsigned char b[8];
    pa_store_from_float(t, b, 0, v);
    return pa_load_as_float(t, b, 0);
}

/* What the cache holds for input value v: the cache dtype's rounding (fp8:
 * of v / scale, read back times scale), written by the same conversions the
 * ops use, and read the way the attention reads it. */
static float cache_value(const engine *e, float v, float scale) {
    const float in = rounded(e->opt.dt, v); /* the op's input is in the query dtype */
    if (!pa_dtype_is_fp8(e->opt.cdt))
        return in;
    return rounded(e->opt.dt, rounded(e->opt.cdt, in / scale) * scale);
}

/* ---- plain attention: the check ------------------------------------------------ */

/* Softmax attention of query row q (QROW floats) at position pos of request r
 * over its contiguous history 0..pos, in double. No pages, no batch. mag gets
 * sum_t p_t |v_t| per element: the scale of the difference that rounding the
 * probabilities at another point (a kernel's online softmax) can make. */
static void plain_attention(const engine *e, const request *rq, int pos, const float *q, float *ref, float *mag) {
    static double w[MAX_MODEL_LEN];
    const double scale = 1.0 / sqrt((double)HEAD);
    for (int h = 0; h < HQ; h++) {
        const int kh = h / (HQ / HKV);
        double mx = -INFINITY;
        for (int t = 0; t <= pos; t++) {
            if (e->opt.window > 0 && pos - t >= e->opt.window) {
                w[t] = -INFINITY;
                continue;
            }
            double dot = 0;
            for (int d = 0; d < HEAD; d++)
                dot += (double)q[h * HEAD + d] * rq->hist_k[((size_t)t * HKV + kh) * HEAD + d];
            double x = scale * dot;
            if (e->opt.soft_cap > 0)
                x = e->opt.soft_cap * tanh(x / e->opt.soft_cap);
            w[t] = x;
            mx = x > mx ? x : mx;
        }
        double sum = 0;
        for (int t = 0; t <= pos; t++) {
            w[t] = w[t] == -INFINITY ? 0.0 : exp(w[t] - mx);
            sum += w[t];
        }
        /* Probabilities rounded to the value dtype before P.V, as the ragged op
         * specifies (JAX's softmax(...).astype(v.dtype)). Exact p would differ
         * from it by up to ~0.009 on bf16 outputs near zero, more than
         * pa_tolerance_for(bf16) allows there; f16 and f32 pass either way.
         * The GPU kernels round the unnormalised p of their online softmax
         * instead, so the check allows 2 u sum p |v| more (check_step). */
        for (int t = 0; t <= pos; t++)
            w[t] = rounded(e->opt.dt, (float)(w[t] / sum));
        for (int d = 0; d < HEAD; d++) {
            double a = 0, m = 0;
            for (int t = 0; t <= pos; t++) {
                const double v = rq->hist_v[((size_t)t * HKV + kh) * HEAD + d];
                a += w[t] * v;
                m += w[t] * fabs(v);
            }
            ref[h * HEAD + d] = (float)a;
            mag[h * HEAD + d] = (float)m;
        }
    }
}

/* ---- pages ----------------------------------------------------------------------- */

static void poison_page(engine *e, int page) {
    const size_t es = pa_dtype_size(e->opt.cdt);
    /* 0xFF bytes are NaN in every cache dtype (f32, f16, bf16, e4m3, e5m2). */
    memset((char *)e->cache + (size_t)page * PAGE_ELEMS * es, 0xFF, PAGE_ELEMS * es);
    if (e->gpu)
        cudaMemset((char *)e->d_cache + (size_t)page * PAGE_ELEMS * es, 0xFF, PAGE_ELEMS * es);
}

/* Pages are handed out in random order, so a request's pages are scattered. */
static int alloc_page(engine *e) {
    if (e->num_free == 0)
        return -1;
    int i = (int)(splitmix(&e->rng) % (unsigned long long)e->num_free);
    int p = e->free_pages[i];
    e->free_pages[i] = e->free_pages[--e->num_free];
    return p;
}

static void free_request(engine *e, request *rq) {
    for (int i = 0; i < rq->num_pages; i++) {
        poison_page(e, rq->pages[i]);
        e->free_pages[e->num_free++] = rq->pages[i];
    }
    rq->num_pages = 0;
}

/* ---- one run ------------------------------------------------------------------------ */

#define CU(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t ce_ = (call);                                                                                      \
        if (ce_ != cudaSuccess) {                                                                                      \
            fprintf(stderr, "serve_loop: %s: %s\n", #call, cudaGetErrorString(ce_));                                   \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

#define PA(call)                                                                                                       \
    do {                                                                                                               \
        pa_status ps_ = (call);                                                                                        \
        if (ps_ != PA_SUCCESS) {                                                                                       \
            fprintf(stderr, "serve_loop: %s: %s: %s\n", #call, pa_status_string(ps_), pa_last_error());                \
            return ps_ == PA_ERR_UNSUPPORTED ? 3 : 1;                                                                  \
        }                                                                                                              \
    } while (0)

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "serve_loop: out of host memory\n");
        exit(1);
    }
    return p;
}

static int engine_init(engine *e, const options *opt, int gpu) {
    memset(e, 0, sizeof *e);
    e->opt = *opt;
    e->gpu = gpu;
    e->rng = opt->seed ^ 0x5DEECE66Dull;
    unsigned long long s = opt->seed + 17;
    const float a = 0.3f;
    for (int i = 0; i < HIDDEN; i++) {
        for (int j = 0; j < QROW; j++)
            e->wq[i][j] = uniform(&s, -a, a);
        for (int j = 0; j < KVROW; j++) {
            e->wk[i][j] = uniform(&s, -a, a);
            e->wv[i][j] = uniform(&s, -a, a);
        }
    }
    /* Prompt lengths include the awkward ones (1, a page +- 1, 113, 203); each
     * request then generates 1..40 tokens, all within MAX_MODEL_LEN. */
    static const int prompts[] = {113, 1, 17, 203, 15, 64, 2, 95, 33, 150, 16, 77, 129, 5, 48, 200, 31, 9};
    for (int r = 0; r < NUM_REQUESTS; r++) {
        request *rq = &e->req[r];
        rq->arrival = r < 4 ? 0 : (int)(splitmix(&e->rng) % 40) + r;
        rq->prompt_len = prompts[r % (int)(sizeof prompts / sizeof prompts[0])];
        int gen = 1 + (int)(splitmix(&e->rng) % 40);
        rq->total_len = rq->prompt_len + gen > MAX_MODEL_LEN ? MAX_MODEL_LEN : rq->prompt_len + gen;
        rq->hist_k = xcalloc((size_t)MAX_MODEL_LEN * KVROW, sizeof(float));
        rq->hist_v = xcalloc((size_t)MAX_MODEL_LEN * KVROW, sizeof(float));
    }
    for (int p = 0; p < TRAP_PAGE; p++)
        e->free_pages[e->num_free++] = p;
    e->min_free = e->num_free;
    /* fp8 caches get scales != 1 so a missing scale shows. */
    e->scales[0] = pa_dtype_is_fp8(opt->cdt) ? 0.25f : 1.0f;
    e->scales[1] = pa_dtype_is_fp8(opt->cdt) ? 0.125f : 1.0f;

    const size_t es = pa_dtype_size(opt->dt), ces = pa_dtype_size(opt->cdt);
    e->cache = xcalloc(CACHE_ELEMS, ces);
    memset(e->cache, 0xFF, CACHE_ELEMS * ces);
    e->q = xcalloc((size_t)MAX_TOKENS * QROW, es);
    e->out = xcalloc((size_t)MAX_TOKENS * QROW, es);
    e->k = xcalloc((size_t)MAX_TOKENS * KVROW, es);
    e->v = xcalloc((size_t)MAX_TOKENS * KVROW, es);
    e->new_kv = xcalloc((size_t)MAX_TOKENS * 2 * KVROW, es);
    PA(pa_kv_update_slices_upper_bound(MAX_SEQS, MAX_TOKENS, PAGE, SLICES_PER_BLOCK, &e->slices_capacity));
    e->slices = xcalloc((size_t)PA_SLICE_FIELDS * (size_t)e->slices_capacity, sizeof(int32_t));
    if (!gpu)
        return 0;

    CU(cudaMalloc(&e->d_cache, CACHE_ELEMS * ces));
    CU(cudaMemset(e->d_cache, 0xFF, CACHE_ELEMS * ces));
    CU(cudaMalloc(&e->d_q, (size_t)MAX_TOKENS * QROW * es));
    CU(cudaMalloc(&e->d_out, (size_t)MAX_TOKENS * QROW * es));
    CU(cudaMalloc(&e->d_k, (size_t)MAX_TOKENS * KVROW * es));
    CU(cudaMalloc(&e->d_v, (size_t)MAX_TOKENS * KVROW * es));
    CU(cudaMalloc(&e->d_new_kv, (size_t)MAX_TOKENS * 2 * KVROW * es));
    CU(cudaMalloc((void **)&e->d_scales, 2 * sizeof(float)));
    CU(cudaMemcpy(e->d_scales, e->scales, 2 * sizeof(float), cudaMemcpyHostToDevice));
    CU(cudaMalloc((void **)&e->d_slot64, MAX_TOKENS * sizeof(int64_t)));
    CU(cudaMalloc((void **)&e->d_slices, (size_t)PA_SLICE_FIELDS * e->slices_capacity * sizeof(int32_t)));
    CU(cudaMalloc((void **)&e->d_num_slices, sizeof(int32_t)));
    CU(cudaMalloc((void **)&e->d_page_table, sizeof e->page_table));
    CU(cudaMalloc((void **)&e->d_kv_lens, sizeof e->seq_lens));
    CU(cudaMalloc((void **)&e->d_qsl, sizeof e->qsl));
    CU(cudaMalloc((void **)&e->d_num_seqs, sizeof(int32_t)));
    return 0;
}

static void engine_free(engine *e) {
    for (int r = 0; r < NUM_REQUESTS; r++) {
        free(e->req[r].hist_k);
        free(e->req[r].hist_v);
    }
    free(e->cache);
    free(e->q);
    free(e->out);
    free(e->k);
    free(e->v);
    free(e->new_kv);
    free(e->slices);
    if (e->gpu) {
        void *d[] = {e->d_cache,      e->d_q,          e->d_out,     e->d_k,      e->d_v,
                     e->d_new_kv,     e->d_ws,         e->d_scales,  e->d_slot64, e->d_slices,
                     e->d_num_slices, e->d_page_table, e->d_kv_lens, e->d_qsl,    e->d_num_seqs};
        for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
            cudaFree(d[i]);
    }
}

/* The KV cache descriptor: host or device memory. */
static pa_kv_cache cache_desc(const engine *e, int device) {
    pa_kv_cache c = {.layout = PA_LAYOUT_COMBINED,
                     .dtype = e->opt.cdt,
                     .key = device ? e->d_cache : e->cache,
                     .value = NULL,
                     .num_blocks = NUM_PAGES,
                     .block_size = PAGE,
                     .num_kv_heads = HKV,
                     .head_size = HEAD,
                     .k_scale = device ? e->d_scales : &e->scales[0],
                     .v_scale = device ? e->d_scales + 1 : &e->scales[1]};
    return c;
}

static void swap_rows(void *user, int32_t a, int32_t b) {
    engine *e = user;
    int t = e->rows[a];
    e->rows[a] = e->rows[b];
    e->rows[b] = t;
}

/* Admits arrivals, then schedules: every running decode gets one token, prompt
 * chunks fill the rest of the budget. Pages are taken as tokens need them.
 * Returns the number of rows of the step batch (e->rows, persistent order). */
static int schedule(engine *e, int step) {
    for (int r = 0; r < NUM_REQUESTS && e->num_running < MAX_SEQS; r++)
        if (e->req[r].state == WAITING && e->req[r].arrival <= step) {
            e->req[r].state = RUNNING;
            e->order[e->num_running++] = r;
        }
    int budget = MAX_TOKENS;
    for (int pass = 0; pass < 2; pass++) /* decodes first, then prompt chunks */
        for (int i = 0; i < e->num_running; i++) {
            request *rq = &e->req[e->order[i]];
            const int decoding = rq->computed >= rq->prompt_len;
            if (pass == 0)
                rq->scheduled = 0;
            if (decoding != (pass == 0))
                continue;
            int want = decoding ? 1 : rq->prompt_len - rq->computed;
            want = want < budget ? want : budget;
            /* pages for positions up to computed + want */
            while (want > 0 && rq->num_pages * PAGE < rq->computed + want) {
                int p = alloc_page(e);
                if (p < 0) { /* pool exhausted: schedule only what fits */
                    want = rq->num_pages * PAGE - rq->computed;
                    break;
                }
                rq->pages[rq->num_pages++] = p;
            }
            rq->scheduled = want > 0 ? want : 0;
            budget -= rq->scheduled;
        }
    if (e->num_free < e->min_free)
        e->min_free = e->num_free;
    /* The step batch: scheduled requests in persistent order; the persistent
     * batch keeps them first, unscheduled ones after. */
    int n = 0, keep[MAX_SEQS], nk = 0;
    for (int i = 0; i < e->num_running; i++) {
        if (e->req[e->order[i]].scheduled > 0)
            e->rows[n++] = e->order[i];
        else
            keep[nk++] = e->order[i];
    }
    memcpy(e->order + n, keep, sizeof(int) * (size_t)nk);
    return n;
}

/* q, k, v of every new token into the flat step buffers, and the contiguous
 * history of each request. */
static void make_tokens(engine *e, int n, int32_t padded) {
    const pa_dtype dt = e->opt.dt;
    float x[HIDDEN], q[QROW], k[KVROW], v[KVROW];
    for (int r = 0; r < n; r++) {
        request *rq = &e->req[e->rows[r]];
        for (int j = 0; j < rq->scheduled; j++) {
            const int pos = rq->computed + j;
            const size_t t = (size_t)e->qsl[r] + (size_t)j;
            token_input(e, e->rows[r], pos, x);
            memset(q, 0, sizeof q);
            memset(k, 0, sizeof k);
            memset(v, 0, sizeof v);
            for (int i = 0; i < HIDDEN; i++) {
                for (int c = 0; c < QROW; c++)
                    q[c] += x[i] * e->wq[i][c];
                for (int c = 0; c < KVROW; c++) {
                    k[c] += x[i] * e->wk[i][c];
                    v[c] += x[i] * e->wv[i][c];
                }
            }
            for (int c = 0; c < QROW; c++)
                pa_store_from_float(dt, e->q, t * QROW + c, q[c]);
            for (int h = 0; h < HKV; h++)
                for (int d = 0; d < HEAD; d++) {
                    const int c = h * HEAD + d;
                    pa_store_from_float(dt, e->k, t * KVROW + c, k[c]);
                    pa_store_from_float(dt, e->v, t * KVROW + c, v[c]);
                    /* new_kv [tokens, 2 * HKV, HEAD]: K at even, V at odd combined heads */
                    pa_store_from_float(dt, e->new_kv, (t * 2 * HKV + 2 * h) * HEAD + d, k[c]);
                    pa_store_from_float(dt, e->new_kv, (t * 2 * HKV + 2 * h + 1) * HEAD + d, v[c]);
                    rq->hist_k[(size_t)pos * KVROW + c] = cache_value(e, k[c], e->scales[0]);
                    rq->hist_v[(size_t)pos * KVROW + c] = cache_value(e, v[c], e->scales[1]);
                }
        }
    }
    /* Padding rows: zeros (their slot is -1, so nothing is written for them). */
    const size_t es = pa_dtype_size(dt), t0 = (size_t)e->qsl[n];
    memset((char *)e->q + t0 * QROW * es, 0, (size_t)(padded - e->qsl[n]) * QROW * es);
    memset((char *)e->k + t0 * KVROW * es, 0, (size_t)(padded - e->qsl[n]) * KVROW * es);
    memset((char *)e->v + t0 * KVROW * es, 0, (size_t)(padded - e->qsl[n]) * KVROW * es);
    memset((char *)e->new_kv + t0 * 2 * KVROW * es, 0, (size_t)(padded - e->qsl[n]) * 2 * KVROW * es);
}

/* Cache write + attention on the CPU reference ops. */
static int run_cpu(engine *e, int step, int n, int32_t padded, const pa_ragged_metadata *rg) {
    const pa_kv_cache cache = cache_desc(e, 0);
    if (step % 2 == 0) {
        const pa_kv_input in = {.key = e->k, .value = e->v, .dtype = e->opt.dt, .num_tokens = padded};
        PA(pa_ref_reshape_and_cache(&in, e->slot64, &cache));
    } else {
        const int32_t live = rg->num_slices;
        PA(pa_ref_kv_cache_update(e->new_kv, e->opt.dt, padded, 0, e->slices, &live, e->slices_capacity, &cache));
    }
    const int32_t num_seqs = n;
    pa_ragged_params p = {.out = e->out,
                          .q = e->q,
                          .q_dtype = e->opt.dt,
                          .kv = cache,
                          .kv_lens = rg->context_lens,
                          .page_indices = e->page_table,
                          .pages_per_seq = PAGES_PER_SEQ,
                          .cu_q_lens = rg->query_start_loc,
                          .num_seqs = &num_seqs,
                          .max_num_seqs = MAX_SEQS,
                          .max_num_batched_tokens = MAX_TOKENS,
                          .num_q_heads = HQ,
                          .sm_scale = 1.0f / sqrtf((float)HEAD),
                          .sliding_window = e->opt.window,
                          .soft_cap = e->opt.soft_cap};
    PA(pa_ref_ragged_paged_attention(&p));
    return 0;
}

/* The same on the GPU: per-step arrays to the device, the two kernels, the
 * output back. Everything the kernels read per step is device memory. */
static int run_gpu(engine *e, int step, int n, int32_t padded, const pa_ragged_metadata *rg) {
    const size_t es = pa_dtype_size(e->opt.dt);
    const pa_kv_cache cache = cache_desc(e, 1);
    CU(cudaMemcpy(e->d_q, e->q, (size_t)padded * QROW * es, cudaMemcpyHostToDevice));
    if (step % 2 == 0) {
        CU(cudaMemcpy(e->d_k, e->k, (size_t)padded * KVROW * es, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(e->d_v, e->v, (size_t)padded * KVROW * es, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(e->d_slot64, e->slot64, (size_t)padded * sizeof(int64_t), cudaMemcpyHostToDevice));
        const pa_kv_input in = {.key = e->d_k, .value = e->d_v, .dtype = e->opt.dt, .num_tokens = padded};
        PA(pa_reshape_and_cache(&in, e->d_slot64, &cache, NULL));
    } else {
        const int32_t live = rg->num_slices;
        CU(cudaMemcpy(e->d_new_kv, e->new_kv, (size_t)padded * 2 * KVROW * es, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(e->d_slices, e->slices, (size_t)PA_SLICE_FIELDS * e->slices_capacity * sizeof(int32_t),
                      cudaMemcpyHostToDevice));
        CU(cudaMemcpy(e->d_num_slices, &live, sizeof live, cudaMemcpyHostToDevice));
        PA(pa_kv_cache_update(e->d_new_kv, e->opt.dt, padded, 0, e->d_slices, e->d_num_slices, e->slices_capacity,
                              &cache, NULL));
    }
    const int32_t num_seqs = n;
    CU(cudaMemcpy(e->d_page_table, e->page_table, sizeof e->page_table, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(e->d_kv_lens, rg->context_lens, (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(e->d_qsl, rg->query_start_loc, (size_t)(n + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(e->d_num_seqs, &num_seqs, sizeof num_seqs, cudaMemcpyHostToDevice));
    pa_ragged_params p = {.out = e->d_out,
                          .q = e->d_q,
                          .q_dtype = e->opt.dt,
                          .kv = cache,
                          .kv_lens = e->d_kv_lens,
                          .page_indices = e->d_page_table,
                          .pages_per_seq = PAGES_PER_SEQ,
                          .cu_q_lens = e->d_qsl,
                          .num_seqs = e->d_num_seqs,
                          .max_num_seqs = MAX_SEQS,
                          .max_num_batched_tokens = MAX_TOKENS,
                          .num_q_heads = HQ,
                          .sm_scale = 1.0f / sqrtf((float)HEAD),
                          .sliding_window = e->opt.window,
                          .soft_cap = e->opt.soft_cap};
    if (!e->d_ws) { /* sized once from the maxima: one workspace for every step */
        PA(pa_ragged_workspace_size(&p, &e->ws_bytes));
        CU(cudaMalloc(&e->d_ws, e->ws_bytes ? e->ws_bytes : 256));
    }
    PA(pa_ragged_paged_attention(&p, e->d_ws, e->ws_bytes, NULL));
    CU(cudaMemcpy(e->out, e->d_out, (size_t)e->qsl[n] * QROW * es, cudaMemcpyDeviceToHost));
    return 0;
}

/* Compares every output row of the step with plain attention. */
static void check_step(engine *e, int step, int n) {
    const pa_tolerance tol = pa_tolerance_for(e->opt.dt, e->opt.cdt);
    const double p_allow = 2.0 * pa_prob_rounding_unit(e->opt.dt);
    float qf[QROW], ref[QROW], mag[QROW];
    for (int r = 0; r < n; r++) {
        const request *rq = &e->req[e->rows[r]];
        for (int j = 0; j < rq->scheduled; j++) {
            const size_t t = (size_t)e->qsl[r] + (size_t)j;
            for (int c = 0; c < QROW; c++)
                qf[c] = pa_load_as_float(e->opt.dt, e->q, t * QROW + c);
            plain_attention(e, rq, rq->computed + j, qf, ref, mag);
            pa_compare_result cr;
            const size_t es = pa_dtype_size(e->opt.dt);
            const int ok = pa_compare_with_allowance((const char *)e->out + t * QROW * es, e->opt.dt, ref, mag, p_allow,
                                                     QROW, tol, &cr);
            e->rows_checked++;
            if (cr.max_abs_err > e->max_abs_err || cr.nan_count)
                e->max_abs_err = cr.nan_count ? INFINITY : cr.max_abs_err;
            if (!ok) {
                if (e->bad_rows < 5) {
                    char buf[512];
                    fprintf(stderr, "serve_loop: step %d request %d position %d (row %zu): %s\n", step, e->rows[r],
                            rq->computed + j, t, pa_compare_format(&cr, tol, buf, sizeof buf));
                }
                e->bad_rows++;
            }
        }
    }
}

static int run_step(engine *e, int step) {
    const int n = schedule(e, step);
    if (n == 0)
        return 0;
    /* 1. reorder: decodes first (the swap callback moves our rows). */
    int32_t tokens[MAX_SEQS];
    for (int r = 0; r < n; r++)
        tokens[r] = e->req[e->rows[r]].scheduled;
    int modified = 0;
    PA(pa_reorder_batch_to_split_decodes_and_prefills(tokens, n, 1, swap_rows, e, NULL, tokens, &modified));
    memcpy(e->order, e->rows, sizeof(int) * (size_t)n); /* the persistent batch keeps the new order */

    /* 2. common metadata: lengths, query_start_loc, slot mapping (padded). */
    for (int r = 0; r < n; r++) {
        const request *rq = &e->req[e->rows[r]];
        e->computed[r] = rq->computed;
        e->sched[r] = rq->scheduled;
        for (int b = 0; b < PAGES_PER_SEQ; b++) /* unused entries: the NaN trap page */
            e->page_table[r * PAGES_PER_SEQ + b] = b < rq->num_pages ? rq->pages[b] : TRAP_PAGE;
    }
    for (int r = n; r < MAX_SEQS; r++)
        for (int b = 0; b < PAGES_PER_SEQ; b++)
            e->page_table[r * PAGES_PER_SEQ + b] = TRAP_PAGE;
    const pa_batch batch = {.num_reqs = n,
                            .num_computed_tokens = e->computed,
                            .num_scheduled_tokens = e->sched,
                            .block_size = PAGE,
                            .block_table = e->page_table,
                            .block_table_stride = PAGES_PER_SEQ};
    pa_common_metadata cm = {.query_start_loc = e->qsl,
                             .seq_lens = e->seq_lens,
                             .num_computed_tokens = e->computed,
                             .slot_mapping = e->slot64, /* int64: feeds pa_reshape_and_cache as is */
                             .slot_mapping_capacity = MAX_TOKENS};
    int32_t total = 0;
    for (int r = 0; r < n; r++)
        total += e->sched[r];
    int32_t padded = (total + TOKEN_PAD - 1) / TOKEN_PAD * TOKEN_PAD;
    padded = padded > MAX_TOKENS ? MAX_TOKENS : padded;
    PA(pa_build_common_metadata(&batch, padded, &cm));

    /* 3. split: the reorder must have put every decode first. */
    pa_batch_split split;
    PA(pa_split_decodes_and_prefills(e->qsl, n, 1, &split));
    int decodes = 0;
    for (int r = 0; r < n; r++)
        decodes += e->sched[r] <= 1;
    if (split.num_decodes != decodes) {
        fprintf(stderr, "serve_loop: step %d: split found %d decodes, the schedule has %d\n", step, split.num_decodes,
                decodes);
        return 1;
    }

    /* 4. ragged metadata: kv lens and the KV-update slices. */
    pa_ragged_metadata rg = {.slices = e->slices, .slices_capacity = e->slices_capacity};
    PA(pa_build_ragged_metadata(&cm, SLICES_PER_BLOCK, &rg));

    /* 5. the model's new tokens, then the cache write and the attention. */
    make_tokens(e, n, padded);
    const int rc = e->gpu ? run_gpu(e, step, n, padded, &rg) : run_cpu(e, step, n, padded, &rg);
    if (rc)
        return rc;
    check_step(e, step, n);

    /* 6. statistics, then advance; finished requests leave and free their pages. */
    e->steps++;
    e->slot_steps += step % 2 == 0;
    e->slice_steps += step % 2 == 1;
    e->mixed_steps += split.num_decodes > 0 && split.num_prefills > 0;
    e->max_batch = n > e->max_batch ? n : e->max_batch;
    for (int r = 0; r < n; r++) {
        request *rq = &e->req[e->rows[r]];
        if (rq->computed >= rq->prompt_len)
            e->decode_tokens += rq->scheduled;
        else
            e->prefill_tokens += rq->scheduled;
    }
    if (e->opt.verbose)
        printf("step %3d: batch of %d (%d decodes, %d prefill chunks), %d tokens padded to %d, %d slices, "
               "%d free pages%s\n",
               step, n, split.num_decodes, split.num_prefills, total, padded, rg.num_slices, e->num_free,
               modified ? ", reordered" : "");
    for (int r = 0; r < n; r++) {
        request *rq = &e->req[e->rows[r]];
        rq->computed += rq->scheduled;
        if (rq->computed >= rq->total_len) {
            rq->state = DONE;
            free_request(e, rq);
            for (int i = 0; i < e->num_running; i++)
                if (e->order[i] == e->rows[r]) {
                    memmove(e->order + i, e->order + i + 1, sizeof(int) * (size_t)(e->num_running - i - 1));
                    e->num_running--;
                    break;
                }
        }
    }
    return 0;
}

static int run(const options *opt, int gpu) {
    engine *e = xcalloc(1, sizeof *e);
    int rc = engine_init(e, opt, gpu);
    int step = 0;
    for (; rc == 0 && step < MAX_STEPS; step++) {
        int done = 1;
        for (int r = 0; r < NUM_REQUESTS; r++)
            done &= e->req[r].state == DONE;
        if (done)
            break;
        rc = run_step(e, step);
    }
    if (rc == 0 && step >= MAX_STEPS) {
        fprintf(stderr, "serve_loop: requests still running after %d steps\n", MAX_STEPS);
        rc = 1;
    }
    if (rc == 0) {
        const int pass = e->bad_rows == 0 && e->num_free == TRAP_PAGE;
        printf("serve_loop (%s, %s/%s cache%s): %d requests in %d steps (%d mixed prefill+decode), %lld prompt + "
               "%lld decode tokens, up to %d requests per step, at most %d of %d pages in use; cache writes: "
               "%d by slot mapping, %d by slices; %lld output rows vs unpaged attention: %lld outside "
               "tolerance, max abs err %.2e, all pages returned: %s: %s\n",
               gpu ? "GPU kernels" : "CPU reference ops", pa_dtype_name(opt->dt), pa_dtype_name(opt->cdt),
               opt->window ? ", sliding window" : "", NUM_REQUESTS, e->steps, e->mixed_steps, e->prefill_tokens,
               e->decode_tokens, e->max_batch, TRAP_PAGE - e->min_free, TRAP_PAGE, e->slot_steps, e->slice_steps,
               e->rows_checked, e->bad_rows, e->max_abs_err, e->num_free == TRAP_PAGE ? "yes" : "no",
               pass ? "PASS" : "FAIL");
        rc = pass ? 0 : 1;
    }
    engine_free(e);
    free(e);
    return rc;
}

static int usage(const char *msg, const char *arg) {
    fprintf(stderr,
            "serve_loop: %s%s%s (usage: serve_loop [--device auto|cpu|gpu|both] [--dtype f16|bf16|f32] "
            "[--cache-dtype same|fp8_e4m3|fp8_e5m2] [--window N] [--soft-cap X] [--seed N] [--verbose])\n",
            msg, arg ? ": " : "", arg ? arg : "");
    return 2;
}

int main(int argc, char **argv) {
    options opt = {.device = 2, .dt = PA_DTYPE_F16, .cache_same = 1, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--verbose")) {
            opt.verbose = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("serve_loop: a continuous-batching loop over libpagedattn, checked against unpaged attention\n"
                   "  --device auto|cpu|gpu|both   (auto: the GPU when there is one, else the CPU reference ops)\n"
                   "  --dtype f16|bf16|f32  --cache-dtype same|fp8_e4m3|fp8_e5m2  --window N  --soft-cap X\n"
                   "  --seed N  --verbose\n");
            return 0;
        }
        if (!v)
            return usage("option needs a value", a);
        i++;
        if (!strcmp(a, "--device")) {
            opt.device = !strcmp(v, "cpu")    ? 0
                         : !strcmp(v, "gpu")  ? 1
                         : !strcmp(v, "auto") ? 2
                         : !strcmp(v, "both") ? 3
                                              : -1;
            if (opt.device < 0)
                return usage("--device must be auto, cpu, gpu or both", v);
        } else if (!strcmp(a, "--dtype")) {
            if (pa_dtype_from_name(v, &opt.dt) != PA_SUCCESS || pa_dtype_is_fp8(opt.dt))
                return usage("--dtype must be f16, bf16 or f32", v);
        } else if (!strcmp(a, "--cache-dtype")) {
            opt.cache_same = !strcmp(v, "same");
            if (!opt.cache_same && (pa_dtype_from_name(v, &opt.cdt) != PA_SUCCESS || !pa_dtype_is_fp8(opt.cdt)))
                return usage("--cache-dtype must be same, fp8_e4m3 or fp8_e5m2", v);
        } else if (!strcmp(a, "--window")) {
            long w = strtol(v, &end, 10);
            if (*end || w < 0 || w > MAX_MODEL_LEN)
                return usage("--window must be 0..256", v);
            opt.window = (int)w;
        } else if (!strcmp(a, "--soft-cap")) {
            double x = strtod(v, &end);
            if (*end || !(x >= 0) || !isfinite(x))
                return usage("--soft-cap must be a number >= 0", v);
            opt.soft_cap = (float)x;
        } else if (!strcmp(a, "--seed")) {
            unsigned long long s = strtoull(v, &end, 10);
            if (*end)
                return usage("--seed must be an integer", v);
            opt.seed = s;
        } else {
            return usage("unknown option", a);
        }
    }
    if (opt.cache_same)
        opt.cdt = opt.dt;

    const int have_gpu = pa_device_count() > 0;
    int rc = 0;
    if (opt.device == 0 || opt.device == 3 || (opt.device == 2 && !have_gpu)) {
        if (opt.device != 0 && !have_gpu)
            printf("serve_loop: no CUDA device: running the schedule on the CPU reference ops\n");
        rc = run(&opt, 0);
    }
    if (rc == 0 && (opt.device == 1 || (opt.device >= 2 && have_gpu))) {
        if (!have_gpu) {
            fprintf(stderr, "serve_loop: --device gpu: no usable CUDA device\n");
            return 3;
        }
        rc = run(&opt, 1);
        if (rc == 3)
            fprintf(stderr, "serve_loop: the GPU ops do not support this configuration (see above)%s\n",
                    opt.device == 1 ? "" : "; the CPU reference run above still holds");
    }
    return rc;
}
