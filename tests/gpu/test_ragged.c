/* Ragged paged attention on the GPU against the CPU reference (which
 * tests/host/test_ragged_ref.c checks against unpaged attention). Pages past
 * each sequence and unused pages are NaN, unused page-table columns point
 * outside the pool, output rows are pre-filled with a sentinel: rows outside
 * the live sequences must keep it byte for byte. The bad-input tests fail in
 * host validation before any CUDA call and run without a GPU. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ragged_problem.h"
#include "ragged_internal.h"
#include "testutil.h"

/* ---- device copies of a problem ----------------------------------------------------- */

typedef struct dev_problem {
    pa_ragged_params p; /* device pointers */
    void *q, *out, *cache, *ws;
    int32_t *kv_lens, *pages, *cu, *ns;
    float *scales, *sinks;
    size_t ws_bytes, pages_bytes;
    float *lse; /* the lse view's whole buffer (lv.n floats of the sentinel) */
    pa_test_lse_view lv;
} dev_problem;

/* ---- log-sum-exp output (ragged.h) -------------------------------------------------
 *
 * Every launch through dev_make asks for the lse, each in the next of
 * pa_test_lse_view_nth's layouts (the default, FlashInfer's [tokens, heads],
 * a padded view), and compare_rows holds it to the reference's for the rows
 * it compares; with check_tail the rows past the live ones, and every float
 * outside the layout (16 past its end included), keep the sentinel. */
static int lse_view_next;

/* |kernel - reference| allowed. The scores are the reference's to f32
 * accumulation and the kernels sum P in f32 before rounding it for P V, so
 * what differs is the order of f32 additions (as prefill's lse, whose 16-bit
 * kernels came within 1.4e-5 of it in interpret mode); f32 queries: their
 * dots' own f32 rounding too. An fp8 cache's K is dequantised by some paths
 * with its scale folded into sm_scale instead of rounding k * scale to the
 * query dtype as the reference does: a logit moves by up to 2^-8 of its size
 * in bf16 (2^-11 in f16), and so may the lse. */
static double rg_lse_tolerance(pa_dtype qd, pa_dtype cd, double want) {
    double tol = qd == PA_DTYPE_F32 ? 2e-4 + 1e-5 * fabs(want) : 1e-4 + 1e-5 * fabs(want);
    if (pa_dtype_is_fp8(cd))
        tol += (qd == PA_DTYPE_BF16 ? 0x1p-8 : 0x1p-11) * (1.0 + fabs(want));
    return tol;
}

/* Set by ragged_gpu/cache_offsets_past_32_bits: dev_make puts the pages at
 * the end of a cache whose first lead pages (past 2^31 elements and 2^32
 * bytes) are never written, and the page indices name page i lead + i
 * (pa_test_dev_upload_far); the reference runs on the problem as made. */
static int g_far;

static void dev_make(const rg_problem *pr, dev_problem *d) {
    memset(d, 0, sizeof *d);
    const pa_ragged_params *h = &pr->p;
    d->p = *h;
    d->q = pa_test_dev_upload(pr->q, pr->q_bytes);
    d->out = pa_test_dev_upload(pr->out, pr->q_bytes); /* the sentinel */
    d->cache = pa_test_dev_upload(pr->cache, pr->cache_bytes);
    d->kv_lens = pa_test_dev_upload(pr->kv_lens, sizeof(int32_t) * (size_t)h->max_num_seqs);
    d->pages_bytes = sizeof(int32_t) * (size_t)h->max_num_seqs * (size_t)h->pages_per_seq;
    d->pages = pa_test_dev_upload(pr->page_indices, d->pages_bytes);
    d->cu = pa_test_dev_upload(pr->cu_q_lens, sizeof(int32_t) * ((size_t)h->max_num_seqs + 1));
    d->ns = pa_test_dev_upload(&pr->num_seqs, sizeof(int32_t));
    if (g_far) {
        const int np = h->kv.num_blocks;
        pa_test_dev_free(d->cache);
        pa_test_dev_free(d->pages);
        const int64_t lead = pa_test_far_cache(&h->kv, &d->p.kv);
        d->cache = d->p.kv.key;
        const size_t n = (size_t)h->max_num_seqs * (size_t)h->pages_per_seq;
        int32_t *pg = pa_test_shift_ids(pr->page_indices, n, np, lead);
        d->pages = pa_test_dev_upload(pg, d->pages_bytes);
        free(pg);
    }
    /* k_scale then v_scale: the problem's one of each, or one per KV head */
    const int ph = h->kv.scales_per_head, nsc = ph ? h->kv.num_kv_heads : 1;
    float sc[2 * 64];
    cr_assert(nsc <= 64);
    for (int i = 0; i < nsc; i++) {
        sc[i] = ph ? h->kv.k_scale[i] : pr->k_scale;
        sc[nsc + i] = ph ? h->kv.v_scale[i] : pr->v_scale;
    }
    d->scales = pa_test_dev_upload(sc, sizeof(float) * 2 * (size_t)nsc);
    d->p.q = d->q;
    d->p.out = d->out;
    d->p.kv.key = d->cache;
    d->p.kv.k_scale = h->kv.k_scale ? d->scales : NULL;
    d->p.kv.v_scale = h->kv.v_scale ? d->scales + nsc : NULL;
    if (h->sinks) {
        d->sinks = pa_test_dev_upload(h->sinks, sizeof(float) * (size_t)h->num_q_heads);
        d->p.sinks = d->sinks;
    }
    d->p.kv_lens = d->kv_lens;
    d->p.page_indices = d->pages;
    d->p.cu_q_lens = d->cu;
    d->p.num_seqs = d->ns;
    d->lv = pa_test_lse_view_nth(lse_view_next++, h->num_q_heads, h->max_num_batched_tokens);
    float *sentinels = pa_test_lse_sentinels(d->lv.n);
    d->lse = pa_test_dev_upload(sentinels, sizeof(float) * d->lv.n);
    free(sentinels);
    d->p.lse = d->lse + d->lv.off;
    d->p.lse_head_stride = d->lv.head_stride;
    d->p.lse_token_stride = d->lv.token_stride;
    cr_assert_eq(pa_ragged_workspace_size(&d->p, &d->ws_bytes), PA_SUCCESS, "%s", pa_last_error());
    d->ws = pa_test_dev_alloc(d->ws_bytes);
    /* garbage in the workspace: the planner must not depend on its contents */
    cr_assert_eq(cudaMemset(d->ws, 0xA7, d->ws_bytes), cudaSuccess);
}

static void dev_free(dev_problem *d) {
    pa_test_dev_free(d->q);
    pa_test_dev_free(d->out);
    pa_test_dev_free(d->cache);
    pa_test_dev_free(d->kv_lens);
    pa_test_dev_free(d->pages);
    pa_test_dev_free(d->cu);
    pa_test_dev_free(d->ns);
    pa_test_dev_free(d->scales);
    pa_test_dev_free(d->sinks);
    pa_test_dev_free(d->ws);
    pa_test_dev_free(d->lse);
}

/* The lse back to the sentinel (a graph replayed on new data). */
static void dev_reset_lse(dev_problem *d) {
    float *sentinels = pa_test_lse_sentinels(d->lv.n);
    cr_assert_eq(cudaMemcpy(d->lse, sentinels, sizeof(float) * d->lv.n, cudaMemcpyHostToDevice), cudaSuccess);
    free(sentinels);
}

/* d's lse as [num_q_heads, max_num_batched_tokens] (malloc'd); fails when a
 * float outside its layout was written. */
static float *dev_lse(const dev_problem *d, const char *what) {
    float *buf = pa_xmalloc(sizeof(float) * (d->lv.n + 1));
    pa_test_dev_download(buf, d->lse, sizeof(float) * d->lv.n);
    char w[300];
    snprintf(w, sizeof w, "%s, lse as %s", what, d->lv.name);
    float *got = pa_test_lse_gather(buf, &d->lv, d->p.num_q_heads, d->p.max_num_batched_tokens, w);
    free(buf);
    return got;
}

/* Batch rows [r0, r1) of every head kept the sentinel (their lse unwritten). */
static void expect_lse_unwritten(const float *got, const pa_ragged_params *p, int r0, int r1, const char *what) {
    for (int h = 0; h < p->num_q_heads; h++)
        for (int t = r0; t < r1; t++) {
            uint32_t bits;
            memcpy(&bits, &got[(size_t)h * (size_t)p->max_num_batched_tokens + (size_t)t], sizeof bits);
            CHK(bits == PA_TEST_LSE_SENTINEL, "%s: lse of head %d row %d written (%g)", what, h, t,
                (double)got[(size_t)h * (size_t)p->max_num_batched_tokens + (size_t)t]);
        }
}

static void dev_run(dev_problem *d) {
    pa_status st = pa_ragged_paged_attention(&d->p, d->ws, d->ws_bytes, NULL);
    cr_assert_eq(st, PA_SUCCESS, "launch: %s", pa_last_error());
    pa_test_dev_sync();
}

/* Runs the reference on the host problem (its out keeps the sentinel where it
 * does not write) and compares the device output: live rows within the
 * tolerance, every other byte identical. */
static void compare_rows(rg_problem *pr, const dev_problem *d, const void *dev_out, const char *what, int check_tail) {
    const size_t nl = (size_t)pr->p.num_q_heads * (size_t)pr->p.max_num_batched_tokens;
    float *lse_want = pa_test_nan_floats(nl), *lse_got = d ? dev_lse(d, what) : NULL;
    pr->p.lse = lse_want;
    const pa_status rs = pa_ref_ragged_paged_attention(&pr->p);
    pr->p.lse = NULL;
    cr_assert_eq(rs, PA_SUCCESS, "reference: %s", pa_last_error());
    const pa_ragged_params *p = &pr->p;
    const size_t es = pa_dtype_size(p->q_dtype), row = (size_t)p->num_q_heads * p->kv.head_size;
    unsigned char *got = malloc(pr->q_bytes);
    cr_assert(got);
    memcpy(got, dev_out, pr->q_bytes);
    const unsigned char *want = pr->out;
    pa_tolerance tol = pa_tolerance_for(p->q_dtype, p->kv.dtype);
    for (int s = 0; s < pr->num_seqs; s++) {
        const int r0 = pr->cu_q_lens[s], n = pr->cu_q_lens[s + 1] - r0;
        if (n == 0)
            continue;
        float *ref = pa_test_to_float(p->q_dtype, want + (size_t)r0 * row * es, (size_t)n * row);
        pa_compare_result res;
        char buf[512];
        int ok = pa_compare(got + (size_t)r0 * row * es, p->q_dtype, ref, (int64_t)n * (int64_t)row, tol, &res);
        if (!ok)
            ok = rg_problem_within_p_rounding(pr, got, r0, n, ref, tol, &res);
        free(ref);
        cr_assert(ok, "%s: sequence %d (q_len %d kv_len %d) %s/%s heads %d/%d hs %d ps %d window %d cap %g: %s", what,
                  s, n, pr->kv_lens[s], pa_dtype_name(p->q_dtype), pa_dtype_name(p->kv.dtype), p->num_q_heads,
                  p->kv.num_kv_heads, p->kv.head_size, p->kv.block_size, p->sliding_window, (double)p->soft_cap,
                  pa_compare_format(&res, tol, buf, sizeof buf));
        for (int h = 0; lse_got && h < p->num_q_heads; h++)
            for (int t = r0; t < r0 + n; t++) {
                const size_t i = (size_t)h * (size_t)p->max_num_batched_tokens + (size_t)t;
                const double g = lse_got[i], w = lse_want[i], lt = rg_lse_tolerance(p->q_dtype, p->kv.dtype, w);
                if (isinf(w) || isnan(w))
                    CHK(g == w, "%s: sequence %d: lse of head %d row %d is %g, the reference's %g", what, s, h, t, g,
                        w);
                else
                    CHK(fabs(g - w) <= lt,
                        "%s: sequence %d (q_len %d kv_len %d, %s/%s): lse of head %d row %d is %.7g, the reference's "
                        "%.7g (at most %.3g apart)",
                        what, s, n, pr->kv_lens[s], pa_dtype_name(p->q_dtype), pa_dtype_name(p->kv.dtype), h, t, g, w,
                        lt);
            }
    }
    const size_t live_end = (size_t)pr->cu_q_lens[pr->num_seqs] * row * es;
    for (size_t i = live_end; check_tail && i < pr->q_bytes; i++)
        CHK_EQ(got[i], RG_SENTINEL_BYTE, "%s: byte %zu past the live rows was written", what, i);
    if (lse_got && check_tail)
        expect_lse_unwritten(lse_got, p, pr->cu_q_lens[pr->num_seqs], p->max_num_batched_tokens, what);
    free(got);
    free(lse_got);
    free(lse_want);
}

static void compare_with_ref(rg_problem *pr, const dev_problem *d, const void *dev_out, const char *what) {
    compare_rows(pr, d, dev_out, what, 1);
}

typedef struct gcase {
    uint64_t seed;
    pa_dtype q_dtype, cache_dtype;
    int num_seqs, max_num_seqs, qh, kvh, hs, ps;
    int q_lo, q_hi, extra_lo, extra_hi;
    int window, split;
    float soft_cap, mask_value;
    int decode_every; /* > 0: every n-th sequence is a decode (q_len 1) */
    float q_range;    /* queries in [-q_range, q_range) (0: 2), sm_scale shrunk by as much */
    float logit_mul;  /* > 0: sm_scale times this (a peaked softmax) */
    int sinks;        /* attention sinks: pa_sink_logits(qh, seed); 2: head 1's +inf and head 2's 800 (rows zero) */
    int null_scales;  /* fp8: the pages re-encoded at scale 1, k_scale and v_scale NULL (pa_kv_cache's 1.0) */
    int scale_kind;   /* 0: sm_scale as above; 1: -8 times it; 2: zero */
    int head_scales;  /* fp8: the pages read under a k_scale and v_scale per KV head (pa_test_head_scales) */
} gcase;

/* k's configuration on the given sequences (k's lengths and count unused). */
static void run_lens(const gcase *k, int ns, const int *ql, const int *kl) {
    rg_problem_cfg c = {
        .seed = k->seed,
        .q_dtype = k->q_dtype,
        .cache_dtype = k->cache_dtype,
        .num_seqs = ns,
        .max_num_seqs = k->max_num_seqs,
        .num_q_heads = k->qh,
        .num_kv_heads = k->kvh,
        .head_size = k->hs,
        .page_size = k->ps,
        .q_lens = ql,
        .kv_lens = kl,
        .extra_pages = 5,
        .extra_cols = 3,
        .window = k->window,
        .soft_cap = k->soft_cap,
        .mask_value = k->mask_value,
        .q_range = k->q_range,
        .with_sinks = k->sinks != 0,
    };
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr, "problem allocation failed");
    pr->p.kv_split_tokens = k->split;
    if (k->q_range > 0.0f)
        pr->p.sm_scale *= 2.0f / k->q_range; /* the logits as with the default range */
    if (k->logit_mul > 0.0f)
        pr->p.sm_scale *= k->logit_mul;
    if (k->scale_kind)
        pr->p.sm_scale = k->scale_kind == 1 ? -8.0f * pr->p.sm_scale : 0.0f;
    if (k->sinks == 2) {
        pr->sinks[1] = INFINITY;
        pr->sinks[2] = 800.0f; /* e^(800 - max) overflows: rows of zeros, lse 800 */
    }
    if (k->null_scales) {
        /* combined pages [page][token][2 x kv head + {K, V}][d]: each element
         * times its own scale, so K and V keep their sizes at scale 1 */
        const size_t n = pr->cache_bytes / pa_dtype_size(k->cache_dtype), hs = (size_t)k->hs;
        for (size_t r = 0; r < n / hs; r++)
            pa_test_scale_in_place(k->cache_dtype, pr->cache, r * hs, hs, r % 2 ? pr->v_scale : pr->k_scale);
        pr->p.kv.k_scale = pr->p.kv.v_scale = NULL;
    }
    float ks[64], vs[64];
    if (k->head_scales) {
        cr_assert(k->kvh <= 64);
        pa_test_head_scales(pr->k_scale, k->kvh, 0, ks);
        pa_test_head_scales(pr->v_scale, k->kvh, 3, vs);
        pr->p.kv.k_scale = ks;
        pr->p.kv.v_scale = vs;
        pr->p.kv.scales_per_head = 1;
    }
    dev_problem d;
    dev_make(pr, &d);
    dev_run(&d);
    void *out = malloc(pr->q_bytes);
    cr_assert(out);
    pa_test_dev_download(out, d.out, pr->q_bytes);
    compare_with_ref(pr, &d, out, k->sinks ? "case with sinks" : "case");
    free(out);
    dev_free(&d);
    rg_problem_free(pr);
}

static void run_case(const gcase *k) {
    /* PA_TEST_SHRINK (interpret mode) shrinks the batch and the lengths, but keeps
     * two sequences where there were several (with decode_every, sequence 0 is a
     * decode: one alone left the shrunk cases without a prefill item, 2026-12-06)
     * and keys past the 512-key decode chunk where the case reached past it (so
     * its decodes still split). */
    const int ns = k->num_seqs >= 2 && pa_test_shrink(k->num_seqs) < 2 ? 2 : pa_test_shrink(k->num_seqs);
    const int q_hi = pa_test_shrink(k->q_hi) < k->q_lo ? k->q_lo : pa_test_shrink(k->q_hi);
    int x_hi = pa_test_shrink(k->extra_hi) < k->extra_lo ? k->extra_lo : pa_test_shrink(k->extra_hi);
    if (k->extra_hi > 512 && x_hi < 513)
        x_hi = 513;
    int *ql = malloc(sizeof(int) * (size_t)ns), *kl = malloc(sizeof(int) * (size_t)ns);
    cr_assert(ql && kl);
    pa_rng r = pa_rng_make(k->seed * 31 + 5);
    for (int s = 0; s < ns; s++) {
        ql[s] = pa_rng_int(&r, k->q_lo, q_hi);
        if (k->decode_every > 0 && s % k->decode_every == 0)
            ql[s] = 1;
        kl[s] = ql[s] + pa_rng_int(&r, k->extra_lo, x_hi);
    }
    run_lens(k, ns, ql, kl);
    free(ql);
    free(kl);
}

/* The problem c on the device, either refused for its shared memory
 * (PA_ERR_UNSUPPORTED before anything launched: the message holds each of
 * msgs, NULL-terminated, and "nothing was launched"; the workspace keeps its
 * 0xA7 bytes, the output its sentinel) or, with msgs NULL, run and equal to
 * the reference. */
static void refused_or_run(const rg_problem_cfg *c, const char *const *msgs, const char *what) {
    rg_problem *pr = rg_problem_make(c);
    cr_assert(pr);
    dev_problem d;
    dev_make(pr, &d);
    if (msgs) {
        cr_assert_eq(pa_ragged_paged_attention(&d.p, d.ws, d.ws_bytes, NULL), PA_ERR_UNSUPPORTED, "%s: %s", what,
                     pa_last_error());
        for (const char *const *m = msgs; *m; m++)
            cr_assert(strstr(pa_last_error(), *m), "%s: no '%s' in: %s", what, *m, pa_last_error());
        cr_assert(strstr(pa_last_error(), "nothing was launched"), "%s: %s", what, pa_last_error());
        pa_test_dev_sync();
        unsigned char *ws = malloc(d.ws_bytes + 1), *out = malloc(pr->q_bytes);
        cr_assert(ws && out);
        pa_test_dev_download(ws, d.ws, d.ws_bytes);
        pa_test_dev_download(out, d.out, pr->q_bytes);
        for (size_t i = 0; i < d.ws_bytes; i++)
            cr_assert_eq(ws[i], 0xA7, "%s: workspace byte %zu written: the planner ran", what, i);
        cr_assert(memcmp(out, pr->out, pr->q_bytes) == 0, "%s: output written", what);
        free(ws);
        free(out);
    } else {
        dev_run(&d);
        void *out = malloc(pr->q_bytes);
        cr_assert(out);
        pa_test_dev_download(out, d.out, pr->q_bytes);
        compare_with_ref(pr, &d, out, what);
        free(out);
    }
    dev_free(&d);
    rg_problem_free(pr);
}

/* A device whose CTAs hold 99 KiB (compute capability 8.6, 8.9, 12.x), which
 * interpret mode stands in for under PA_INTERP_SMEM_OPTIN: the f32 kernel at
 * heads 129..256 asks for 139520 bytes (the 16-bit kernel takes its compact
 * shape there: compact_slots_on_a_99_KiB_device). The entry refuses with
 * PA_ERR_UNSUPPORTED naming the bytes before anything launches, its planner
 * included (the workspace keeps its 0xA7 bytes, the output its sentinel),
 * and leaves no CUDA error behind: head 64's kernel (within the limit) then
 * runs and matches the reference. Interpret mode only: a GPU's limit is its
 * own (on an H100 nothing is refused). */
Test(ragged_gpu, a_kernel_past_the_devices_shared_memory_is_refused) {
    PA_SKIP_WITHOUT_GPU();
    pa_device_props dp;
    if (pa_device_info(0, &dp) != PA_SUCCESS || !strstr(dp.name, "interpreter"))
        cr_skip_test("the 99 KiB device is interpret mode's stand-in");
    cr_assert_eq(setenv("PA_INTERP_SMEM_OPTIN", "101376", 1), 0);
    const int ql[3] = {1, 40, 9}, kl[3] = {70, 40, 100};
    static const char *const msgs[] = {"bytes of shared memory a CTA", "allows 101376", NULL};
    for (int hs = 256; hs >= 64; hs -= 192) {
        const rg_problem_cfg c = {.seed = 8800u + (uint64_t)hs,
                                  .q_dtype = PA_DTYPE_F32,
                                  .cache_dtype = PA_DTYPE_F32,
                                  .num_seqs = 3,
                                  .num_q_heads = 8,
                                  .num_kv_heads = 2,
                                  .head_size = hs,
                                  .page_size = 16,
                                  .q_lens = ql,
                                  .kv_lens = kl,
                                  .extra_pages = 5,
                                  .extra_cols = 3};
        refused_or_run(&c, hs == 256 ? msgs : NULL, hs == 256 ? "head 256" : "head 64 under a 99 KiB device");
    }
    unsetenv("PA_INTERP_SMEM_OPTIN");
}

/* PAGEDATTN_SMEM_LIMIT (csrc/shared/launch_status.h) lowers the limit the
 * launchers assume, so a larger GPU takes what a 99 KiB device would; an
 * H100 runs the compact tests so (scripts/gpu-check.sh). Held here on the f32
 * kernel at head 256 (139520 bytes; no compact shape): refused under 101376
 * and under any smaller number (which counts as 101376), with the message
 * naming the variable; run, and equal to the reference, with the variable
 * unset, empty, above the kernel's need, or not plain decimal digits (ignored).
 * Where the device itself holds less than the kernel, only the refusals. */
Test(ragged_gpu, smem_limit_variable_lowers_the_devices_limit) {
    PA_SKIP_WITHOUT_GPU();
    pa_device_props dp;
    cr_assert_eq(pa_device_info(0, &dp), PA_SUCCESS);
    const int big = dp.smem_per_block_optin >= 139520 + 8192;
    static const struct {
        const char *v; /* NULL: unset */
        int refused;
    } cs[] = {{"101376", 1}, {NULL, 0},      {"5000", 1},   {"", 0},  {"0x18c00", 0},
              {"-1", 0},     {"101376 ", 0}, {"200000", 0}, {"0", 1}, {"99999999999999999999", 0},
              {"1x", 0}};
    const int ql[2] = {1, 7}, kl[2] = {40, 19};
    /* named where it lowered the device's limit (a 99 KiB device's own is 101376) */
    const char *const msgs[] = {
        dp.smem_per_block_optin > 101376 ? "allows 101376 under PAGEDATTN_SMEM_LIMIT" : "allows 101376", NULL};
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
        if (!cs[i].refused && !big)
            continue;
        if (cs[i].v)
            cr_assert_eq(setenv("PAGEDATTN_SMEM_LIMIT", cs[i].v, 1), 0);
        else
            unsetenv("PAGEDATTN_SMEM_LIMIT");
        const rg_problem_cfg c = {.seed = 8850u + (uint64_t)i,
                                  .q_dtype = PA_DTYPE_F32,
                                  .cache_dtype = PA_DTYPE_F32,
                                  .num_seqs = 2,
                                  .num_q_heads = 2,
                                  .num_kv_heads = 1,
                                  .head_size = 256,
                                  .page_size = 16,
                                  .q_lens = ql,
                                  .kv_lens = kl,
                                  .extra_pages = 2,
                                  .extra_cols = 1};
        char what[96];
        snprintf(what, sizeof what, "PAGEDATTN_SMEM_LIMIT=%s%s%s", cs[i].v ? "'" : "(unset)", cs[i].v ? cs[i].v : "",
                 cs[i].v ? "'" : "");
        refused_or_run(&c, cs[i].refused ? msgs : NULL, what);
    }
    unsetenv("PAGEDATTN_SMEM_LIMIT");
}

/* Where the 16-bit kernel's full shape does not fit a 99 KiB device (heads
 * 65..128: 104448 bytes; 129..256: 101376 plus the static bytes), it takes
 * the compact shape (ragged_mma.cuh, MmaShape): slots of 32 keys at head 128
 * and 16 at head 256, decode items split across the warps as the slot gives
 * it (head 128 as head 256's pairs; head 256 four warps a quarter of the head
 * each). Interpret mode stands in for such a device (PA_INTERP_SMEM_OPTIN:
 * the full shape would fail to launch); a real GPU runs it only when it is
 * one. Heads 128, 96, 256 and 136 (the quarter past the head: no columns),
 * pages of the query dtype and both fp8 kinds (prefill items convert, decode
 * items read the raw bytes), prefill and decode items, windows shorter and
 * longer than a slot, soft caps, a soft mask, sinks, a page size that is not a
 * power of two and forced key splits, against the reference. The query dtype
 * alternates (odd cases f16); the last three (since 2026-12-06) run the compact
 * instances no case before them ran (scripts/kernel_coverage.py): f16 at head
 * 128 over e4m3 and over its own dtype, bf16 at head 256 over e5m2. */
Test(ragged_gpu, compact_slots_on_a_99_KiB_device) {
    PA_SKIP_WITHOUT_GPU();
    int interp = 0;
    PA_SKIP_UNLESS_99_KIB_DEVICE(&interp);
    static const struct {
        int hs, cache, ps, window, split, sinks;
        float cap, mask;
    } cs[] = {
        {128, 0, 16, 0, 0, 0, 0.0f, 0.0f},     {256, 0, 16, 37, 0, 1, 0.0f, 0.0f}, {128, 1, 16, 0, 64, 0, 0.8f, 0.0f},
        {256, 2, 24, 0, 0, 0, 0.0f, -3.0f},    {96, 2, 16, 53, 0, 1, 0.0f, 0.0f},  {136, 1, 16, 0, 0, 0, 0.5f, 0.0f},
        {128, 0, 24, 300, 128, 0, 0.0f, 0.0f}, {256, 1, 32, 0, 0, 0, 0.0f, 0.0f},  {200, 0, 16, 0, 64, 1, 1.0f, -2.0f},
        {120, 1, 16, 0, 0, 1, 0.0f, 0.0f},     {256, 2, 16, 0, 0, 0, 0.6f, 0.0f},  {128, 0, 16, 45, 0, 0, 0.0f, 0.0f},
    };
    const int n_cs = (int)(sizeof cs / sizeof cs[0]);
    static const int heads[3][2] = {{8, 2}, {16, 1}, {4, 4}};
    /* Interpret mode learns a kernel's static shared memory when it first runs
     * it (a device knows it from the binary), and head 256's full shape passes
     * the limit only with its static bytes: a first pass at the interpreter's
     * own 227 KiB runs each kernel once, the second stands in for the device. */
    for (int i = interp ? 0 : n_cs; i < 2 * n_cs; i++) {
        if (i == n_cs && interp)
            cr_assert_eq(setenv("PA_INTERP_SMEM_OPTIN", "101376", 1), 0);
        const int j = i % n_cs;
        const pa_dtype q = j & 1 ? PA_DTYPE_F16 : PA_DTYPE_BF16;
        gcase k = {.seed = 8900 + (uint64_t)j,
                   .q_dtype = q,
                   .cache_dtype = cs[j].cache == 0   ? q
                                  : cs[j].cache == 1 ? PA_DTYPE_FP8_E4M3
                                                     : PA_DTYPE_FP8_E5M2,
                   .num_seqs = 5,
                   .qh = heads[j % 3][0],
                   .kvh = heads[j % 3][1],
                   .hs = cs[j].hs,
                   .ps = cs[j].ps,
                   .q_lo = 1,
                   .q_hi = 90,
                   .extra_lo = 0,
                   .extra_hi = 150,
                   .window = cs[j].window,
                   .split = cs[j].split,
                   .soft_cap = cs[j].cap,
                   .mask_value = cs[j].mask,
                   .decode_every = 2,
                   .sinks = cs[j].sinks};
        run_case(&k);
    }
    /* Each compact instance (heads 128 and 256, f16 and bf16 queries) with
     * each cache dtype, a decode item (1 query x a group of 4) and prefill
     * items in one batch: the table above leaves some of them to other shapes
     * (per-instance line counts, scripts/interp-line-coverage.sh, 2026-12-06:
     * e5m2 decode items at head 128 under f16 queries, e4m3 at head 256 under
     * bf16). Heads of the class and 8 below it; a window on every fourth case,
     * a soft cap on every fourth from the second (each cache dtype meets both);
     * a soft mask value at head 128 over e4m3 and at head 256 over the query
     * dtype, so each compact prefill shape masks a slot with it (the per-line
     * counts of 2026-12-07: head 128's had only ever taken the hard mask). */
    static const int ql[4] = {1, 37, 3, 90}, kl[4] = {70, 100, 150, 160};
    int n = 0;
    for (int h = 0; h < 2; h++)
        for (int d = 0; d < 2; d++)
            for (int c = 0; c < 3; c++, n++) {
                const pa_dtype q = d ? PA_DTYPE_BF16 : PA_DTYPE_F16;
                gcase k = {.seed = 8950 + (uint64_t)n,
                           .q_dtype = q,
                           .cache_dtype = c == 0   ? q
                                          : c == 1 ? PA_DTYPE_FP8_E4M3
                                                   : PA_DTYPE_FP8_E5M2,
                           .qh = 8,
                           .kvh = 2,
                           .hs = (h ? 256 : 128) - ((c + d) % 2 ? 8 : 0),
                           .ps = 16,
                           .window = n % 4 == 2 ? 45 : 0,
                           .soft_cap = n % 4 == 1 ? 0.7f : 0.0f,
                           .mask_value = (c + h) % 3 == 1 ? -2.5f : 0.0f,
                           .sinks = n % 4 == 1};
                run_lens(&k, 4, ql, kl);
            }
    if (interp)
        unsetenv("PA_INTERP_SMEM_OPTIN");
}

/* ---- the JAX test grid, sampled ---------------------------------------------------- */

/* seqs {1, 5, 16, 64} x heads {(32,8), (32,16), (16,2), (4,4), (8,1)} x dtypes
 * {f32, bf16} x page sizes {16, 32, 128}, q_len 1..99, kv_len = q_len + 0..49.
 * Every (heads, dtype, page size) runs once; the sequence count cycles through
 * the four values so each appears with every heads pair. */
Test(ragged_gpu, jax_grid) {
    PA_SKIP_WITHOUT_GPU();
    static const int heads[][2] = {{32, 8}, {32, 16}, {16, 2}, {4, 4}, {8, 1}};
    static const pa_dtype dts[] = {PA_DTYPE_F32, PA_DTYPE_BF16};
    static const int pss[] = {16, 32, 128};
    static const int seqs[] = {1, 5, 16, 64};
    int n = 0;
    for (int h = 0; h < 5; h++)
        for (int d = 0; d < 2; d++)
            for (int b = 0; b < 3; b++, n++) {
                gcase k = {.seed = 1000 + (uint64_t)n,
                           .q_dtype = dts[d],
                           .cache_dtype = dts[d],
                           .num_seqs = seqs[(n + h) % 4],
                           .qh = heads[h][0],
                           .kvh = heads[h][1],
                           .hs = 128,
                           .ps = pss[b],
                           .q_lo = 1,
                           .q_hi = 99,
                           .extra_lo = 0,
                           .extra_hi = 49,
                           .decode_every = 3};
                run_case(&k);
            }
}

Test(ragged_gpu, head_sizes_and_dtypes) {
    PA_SKIP_WITHOUT_GPU();
    /* 64, 128 and 256 are the instances; the rest run padded to the next one,
     * 8, 24, 40, 72 and 120 with a half-used last k16 step. */
    static const int hss[] = {8, 16, 24, 40, 64, 72, 80, 96, 120, 128, 160, 256};
    static const pa_dtype dts[] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    int n = 0;
    for (int i = 0; i < 12; i++)
        for (int d = 0; d < 3; d++, n++) {
            gcase k = {.seed = 2000 + (uint64_t)n,
                       .q_dtype = dts[d],
                       .cache_dtype = dts[d],
                       .num_seqs = 6,
                       .qh = 8,
                       .kvh = 2,
                       .hs = hss[i],
                       .ps = 16,
                       .q_lo = 1,
                       .q_hi = 70,
                       .extra_lo = 0,
                       .extra_hi = 90,
                       .decode_every = 2};
            run_case(&k);
        }
}

/* GQA groups that are not powers of two (28/4 as in Qwen2-7B, 12/4, 10/2, 24/4,
 * 12/1): a packed row's token and head come from a division by the group (a
 * multiply-high, pa_rg_launch.group_div), whose other cases a power of two never
 * reaches. Decode items of 3 to 14 rows (one and two tokens) and prefill items,
 * on both kernels (f32 queries take the CUDA-core one), fp8 pages, a window, a
 * soft cap and a forced split. */
Test(ragged_gpu, odd_groups) {
    PA_SKIP_WITHOUT_GPU();
    static const int heads[][2] = {{28, 4}, {12, 4}, {10, 2}, {24, 4}, {12, 1}};
    static const pa_dtype qd[] = {PA_DTYPE_BF16, PA_DTYPE_F16, PA_DTYPE_F32, PA_DTYPE_BF16};
    static const pa_dtype cd[] = {PA_DTYPE_BF16, PA_DTYPE_F16, PA_DTYPE_F32, PA_DTYPE_FP8_E4M3};
    static const int hss[] = {128, 64, 256, 96};
    int n = 0;
    for (int h = 0; h < 5; h++)
        for (int d = 0; d < 4; d++, n++) {
            gcase k = {.seed = 8100 + (uint64_t)n,
                       .q_dtype = qd[d],
                       .cache_dtype = cd[d],
                       .num_seqs = 6,
                       .qh = heads[h][0],
                       .kvh = heads[h][1],
                       .hs = hss[(h + d) % 4],
                       .ps = 16,
                       .q_lo = 1,
                       .q_hi = 40,
                       .extra_lo = 0,
                       .extra_hi = 150,
                       .window = n % 7 == 3 ? 37 : 0,
                       .split = n % 5 == 2 ? 64 : 0,
                       .soft_cap = n % 3 == 1 ? 0.5f : 0.0f,
                       .decode_every = 2};
            run_case(&k);
        }
}

/* Pages past 2^31 elements and 2^32 bytes (g_far): prefill and decode items,
 * 16-bit and fp8 pages (raw slots and the f16 decode fragments), f32 (2^31
 * elements: 8 GiB) on the CUDA-core kernel, head 256's slots, a forced split.
 * A page offset formed in 32 bits reads elsewhere or outside the cache. */
Test(ragged_gpu, cache_offsets_past_32_bits) {
    PA_SKIP_WITHOUT_GPU();
    static const struct {
        pa_dtype q, c;
        int hs, ps, split;
    } cs[] = {
        {PA_DTYPE_BF16, PA_DTYPE_BF16, 128, 16, 0},     {PA_DTYPE_F16, PA_DTYPE_FP8_E4M3, 128, 32, 0},
        {PA_DTYPE_BF16, PA_DTYPE_FP8_E5M2, 64, 16, 64}, {PA_DTYPE_F32, PA_DTYPE_F32, 80, 16, 0},
        {PA_DTYPE_BF16, PA_DTYPE_BF16, 256, 16, 0},
    };
    static const int ql[3] = {1, 45, 1}, kl[3] = {200, 150, 37};
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
        gcase k = {.seed = 8700 + (uint64_t)i,
                   .q_dtype = cs[i].q,
                   .cache_dtype = cs[i].c,
                   .max_num_seqs = 4,
                   .qh = 8,
                   .kvh = 2,
                   .hs = cs[i].hs,
                   .ps = cs[i].ps,
                   .split = cs[i].split};
        g_far = 1;
        run_lens(&k, 3, ql, kl);
        g_far = 0;
    }
    pa_test_far_done();
}

Test(ragged_gpu, fp8_pages_with_scales) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype qd[] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    static const pa_dtype cd[] = {PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    static const int hss[] = {40, 64, 120, 128, 256};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int h = 0; h < 5; h++, n++) {
                gcase k = {.seed = 3000 + (uint64_t)n,
                           .q_dtype = qd[a],
                           .cache_dtype = cd[b],
                           .num_seqs = 5,
                           .qh = 16,
                           .kvh = 2,
                           .hs = hss[h],
                           .ps = 32,
                           .q_lo = 1,
                           .q_hi = 99,
                           .extra_lo = 0,
                           .extra_hi = 300,
                           .decode_every = 2};
                run_case(&k);
            }
}

/* The soft cap is 0.5: these random logits have a spread of about 0.7, which
 * a cap of 50 (Gemma 2's) bends by less than the tolerance (dropping the cap
 * in the decode items passed with 50, and with 2). */
Test(ragged_gpu, sliding_window_and_soft_cap) {
    PA_SKIP_WITHOUT_GPU();
    static const int windows[] = {0, 5, 128};
    static const float caps[] = {0.0f, 0.5f};
    int n = 0;
    for (int w = 0; w < 3; w++)
        for (int c = 0; c < 2; c++)
            for (int d = 0; d < 2; d++, n++) {
                gcase k = {.seed = 4000 + (uint64_t)n,
                           .q_dtype = d ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                           .cache_dtype = d ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                           .num_seqs = 8,
                           .qh = 32,
                           .kvh = 8,
                           .hs = 128,
                           .ps = 16,
                           .q_lo = 1,
                           .q_hi = 99,
                           .extra_lo = 0,
                           .extra_hi = 700, /* past the 512-key decode chunk: splits too */
                           .window = windows[w],
                           .soft_cap = caps[c],
                           .decode_every = 2};
                run_case(&k);
            }
}

/* A mild mask value: masked keys are read and contribute (JAX semantics). */
Test(ragged_gpu, soft_mask_value) {
    PA_SKIP_WITHOUT_GPU();
    for (int d = 0; d < 2; d++) {
        gcase k = {.seed = 4500 + (uint64_t)d,
                   .q_dtype = d ? PA_DTYPE_F16 : PA_DTYPE_F32,
                   .cache_dtype = d ? PA_DTYPE_F16 : PA_DTYPE_F32,
                   .num_seqs = 6,
                   .qh = 8,
                   .kvh = 1,
                   .hs = 64,
                   .ps = 16,
                   .q_lo = 1,
                   .q_hi = 80,
                   .extra_lo = 0,
                   .extra_hi = 600,
                   .window = 37,
                   .mask_value = -3.0f,
                   .decode_every = 2};
        run_case(&k);
    }
}

/* Decode-only, prefill-only and mixed batches, at contexts that split. */
Test(ragged_gpu, decode_prefill_mixed) {
    PA_SKIP_WITHOUT_GPU();
    for (int kind = 0; kind < 3; kind++)
        for (int d = 0; d < 2; d++) {
            gcase k = {.seed = 5000 + (uint64_t)(kind * 2 + d),
                       .q_dtype = d ? PA_DTYPE_BF16 : PA_DTYPE_F16,
                       .cache_dtype = d ? PA_DTYPE_BF16 : PA_DTYPE_F16,
                       .num_seqs = kind == 0 ? 64 : 7,
                       .qh = 32,
                       .kvh = 8,
                       .hs = 128,
                       .ps = 16,
                       .q_lo = kind == 0 ? 1 : 17,
                       .q_hi = kind == 0 ? 1 : 150,
                       .extra_lo = 0,
                       .extra_hi = kind == 0 ? 3000 : 1500,
                       .decode_every = kind == 2 ? 2 : 0};
            run_case(&k);
        }
}

/* 2,048 prefill tokens over an 8K context (awkward lengths around it), with
 * decodes beside it. Few heads keep the CPU reference to seconds. */
Test(ragged_gpu, long_prefill, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype dts[] = {PA_DTYPE_BF16, PA_DTYPE_F32};
    for (int d = 0; d < 2; d++) {
        int ql[] = {2048, 1, 1, 113, 1};
        int kl[] = {8192, 2049, 1025, 1023, 8193};
        for (int s = 0; s < 5; s++) {
            ql[s] = pa_test_shrink(ql[s]);
            kl[s] = pa_test_shrink(kl[s]) + 1; /* keeps kv_len > q_len for the shrunk prompt */
        }
        rg_problem_cfg c = {
            .seed = 6000 + (uint64_t)d,
            .q_dtype = dts[d],
            .cache_dtype = dts[d],
            .num_seqs = 5,
            .num_q_heads = 4,
            .num_kv_heads = 1,
            .head_size = 64,
            .page_size = 128,
            .q_lens = ql,
            .kv_lens = kl,
            .extra_pages = 3,
        };
        rg_problem *pr = rg_problem_make(&c);
        cr_assert(pr);
        dev_problem dv;
        dev_make(pr, &dv);
        dev_run(&dv);
        void *out = malloc(pr->q_bytes);
        pa_test_dev_download(out, dv.out, pr->q_bytes);
        compare_with_ref(pr, &dv, out, "long prefill");
        free(out);
        dev_free(&dv);
        rg_problem_free(pr);
    }
}

/* Head sizes over 128 (the head-256 instance): keys walk 32-key slots, two in
 * flight, and a decode item's warps pair up on 16 keys each, one half of the
 * head apiece in P V. Key counts ending inside a slot and inside a 16-key
 * slice, GQA groups of 1 to 16 (decode items of 1 to 16 rows), a forced split
 * (partials merged across CTAs), a window and fp8 pages of both kinds. */
Test(ragged_gpu, head_256_slots) {
    PA_SKIP_WITHOUT_GPU();
    static const int hss[] = {136, 200, 256};
    static const pa_dtype qd[] = {PA_DTYPE_BF16, PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_F16};
    static const pa_dtype cd[] = {PA_DTYPE_BF16, PA_DTYPE_F16, PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    static const int heads[][2] = {{16, 1}, {4, 4}, {8, 2}};
    int n = 0;
    for (int h = 0; h < 3; h++)
        for (int d = 0; d < 4; d++, n++) {
            gcase k = {.seed = 7300 + (uint64_t)n,
                       .q_dtype = qd[d],
                       .cache_dtype = cd[d],
                       .num_seqs = 5,
                       .qh = heads[(h + d) % 3][0],
                       .kvh = heads[(h + d) % 3][1],
                       .hs = hss[h],
                       .ps = d == 1 ? 24 : 16,
                       .q_lo = 1,
                       .q_hi = 90,
                       .extra_lo = 0,
                       .extra_hi = 150,
                       .window = d == 3 ? 45 : 0,
                       .split = d == 2 ? 64 : 0,
                       .decode_every = 2};
            run_case(&k);
        }
}

/* fp8 pages through the raw copy: each slot's bytes land by 8-byte cp.async
 * in shared memory and are dequantised there, the next slot's copy running
 * under this one's math. Head sizes 40 and 120 (rows only 8-byte aligned in
 * the cache), 64 and 128; both fp8 kinds with distinct K and V scales;
 * contexts of several slots, prefill and decode items, one forced split. */
Test(ragged_gpu, fp8_raw_slots) {
    PA_SKIP_WITHOUT_GPU();
    static const int hss[] = {40, 64, 120, 128};
    int n = 0;
    for (int h = 0; h < 4; h++, n++) {
        gcase k = {.seed = 7400 + (uint64_t)n,
                   .q_dtype = h & 1 ? PA_DTYPE_F16 : PA_DTYPE_BF16,
                   .cache_dtype = h & 2 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                   .num_seqs = 4,
                   .qh = 8,
                   .kvh = 2,
                   .hs = hss[h],
                   .ps = h == 2 ? 8 : 16,
                   .q_lo = 1,
                   .q_hi = 40,
                   .extra_lo = 60,
                   .extra_hi = 200,
                   .split = h == 3 ? 64 : 0,
                   .decode_every = 2};
        run_case(&k);
    }
}

/* fp8 pages under scales other than one float each, on every kernel path:
 * decode items (raw fragments, the query scaled per item) and prefill items
 * (the raw slot copy), heads 64, 128 and 256 on tensor cores and f32 queries
 * at head 40 (the CUDA-core kernel), both fp8 kinds, one forced split (its
 * merge). null: NULL k_scale and v_scale, which pa_kv_cache documents as 1.0
 * (every other case passes scales; the pages re-encoded at scale 1). Else a
 * k_scale and a v_scale per KV head (scales_per_head; factors 1/2 to 4 of the
 * problem's, neighbours apart), GQA 4 and 2 (the group's rows share their KV
 * head's scales): a kernel's CTAs take items of every KV head in turn, so an
 * item that kept the last one's scales fails. */
static void fp8_scale_cases(uint64_t seed, int null) {
    static const int hss[] = {40, 64, 128, 256};
    for (int h = 0; h < 4; h++) {
        gcase k = {.seed = seed + (uint64_t)h,
                   .q_dtype = h == 0  ? PA_DTYPE_F32
                              : h & 1 ? PA_DTYPE_F16
                                      : PA_DTYPE_BF16,
                   .cache_dtype = h & 2 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                   .num_seqs = 4,
                   .qh = 8,
                   .kvh = !null && (h & 1) ? 4 : 2,
                   .hs = hss[h],
                   .ps = 16,
                   .q_lo = 1,
                   .q_hi = 40,
                   .extra_lo = 60,
                   .extra_hi = 200,
                   .split = h == 2 ? 64 : 0,
                   .decode_every = 2,
                   .null_scales = null,
                   .head_scales = !null};
        run_case(&k);
    }
}

Test(ragged_gpu, fp8_null_scales) {
    PA_SKIP_WITHOUT_GPU();
    fp8_scale_cases(7450, 1);
}

Test(ragged_gpu, fp8_scales_per_head) {
    PA_SKIP_WITHOUT_GPU();
    fp8_scale_cases(7470, 0);
}

/* Decode items on fp8 pages run their MMAs in f16 (decode_item_fp8): a bf16
 * query far outside f16's range (|q| up to 2^20, or down to 2^-30) must be
 * scaled into it, not overflow to inf or flush to zero; an f16 query near
 * f16's largest value is taken as it is. The score scale shrinks by as much
 * as the queries grow, so the softmax is as well conditioned as elsewhere.
 * Decode and two-token items, groups 1 and 4, heads 64, 128 and 256, both
 * fp8 kinds. */
Test(ragged_gpu, fp8_decode_query_range) {
    PA_SKIP_WITHOUT_GPU();
    static const struct {
        pa_dtype q;
        float range;
    } qs[] = {{PA_DTYPE_BF16, 1048576.0f}, {PA_DTYPE_BF16, 9.3e-10f}, {PA_DTYPE_F16, 30000.0f}};
    static const int hss[] = {64, 128, 256};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int h = 0; h < 3; h++, n++) {
            gcase k = {.seed = 7700 + (uint64_t)n,
                       .q_dtype = qs[a].q,
                       .cache_dtype = n & 1 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                       .num_seqs = 4,
                       .qh = 8,
                       .kvh = h == 1 ? 8 : 2,
                       .hs = hss[h],
                       .ps = 16,
                       .q_lo = 1,
                       .q_hi = 2,
                       .extra_lo = 60,
                       .extra_hi = 200,
                       .decode_every = 2,
                       .q_range = qs[a].range};
            run_case(&k);
        }
}

/* fp8 pages at head sizes between the instances (each runs padded to 64,
 * 128 or 256): the decode items' fragment reads past the head size (a
 * 64-dim chunk partly or, at head 256, wholly empty), 8-byte row copies
 * where the head size is an odd multiple of 8 and 16-byte ones elsewhere,
 * and the prefill items' conversion, for both query dtypes and fp8 kinds. */
Test(ragged_gpu, fp8_head_sizes) {
    PA_SKIP_WITHOUT_GPU();
    static const int hss[] = {8, 24, 48, 72, 96, 136, 176, 200};
    int n = 0;
    for (int i = 0; i < 8; i++)
        for (int v = 0; v < 2; v++, n++) {
            gcase k = {.seed = 7800 + (uint64_t)n,
                       .q_dtype = (i + v) & 1 ? PA_DTYPE_F16 : PA_DTYPE_BF16,
                       .cache_dtype = v ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                       .num_seqs = 3,
                       .qh = 8,
                       .kvh = 2,
                       .hs = hss[i],
                       .ps = 16,
                       .q_lo = 1,
                       .q_hi = 24,
                       .extra_lo = 40,
                       .extra_hi = 160,
                       .decode_every = 2};
            run_case(&k);
        }
}

/* Decode items under every masking feature, on pages of the query dtype
 * (decode_item) and fp8 pages (decode_item_fp8): sliding windows shorter and
 * longer than a slot, soft caps small enough to bend these logits (their
 * spread is about 0.7; a cap of 30 would leave them within the tolerance of
 * no cap), a soft mask value, a page size that is not a power of two and
 * forced key splits, with one- and two-token items and groups 4 and 8, and
 * contexts of several slots, so interior and edge slots both run. */
Test(ragged_gpu, decode_masks) {
    PA_SKIP_WITHOUT_GPU();
    static const struct {
        int window;
        float cap, mask;
        int ps, split;
    } ms[] = {{37, 0.0f, 0.0f, 16, 0},  {300, 0.5f, 0.0f, 16, 0}, {0, 0.8f, 0.0f, 24, 0},
              {53, 0.0f, -3.0f, 16, 0}, {0, 0.0f, 0.0f, 24, 128}, {90, 1.0f, -2.0f, 32, 64}};
    int n = 0;
    for (int m = 0; m < 6; m++)
        for (int h = 0; h < 2; h++)
            for (int f = 0; f < 2; f++, n++) {
                const pa_dtype q = (m + h) & 1 ? PA_DTYPE_F16 : PA_DTYPE_BF16;
                gcase k = {.seed = 7900 + (uint64_t)n,
                           .q_dtype = q,
                           .cache_dtype = !f      ? q
                                          : m & 1 ? PA_DTYPE_FP8_E5M2
                                                  : PA_DTYPE_FP8_E4M3,
                           .num_seqs = 4,
                           .qh = 16,
                           .kvh = h ? 2 : 4,
                           .hs = h ? 128 : 256,
                           .ps = ms[m].ps,
                           .q_lo = 1,
                           .q_hi = 2,
                           .extra_lo = 60,
                           .extra_hi = 400,
                           .window = ms[m].window,
                           .split = ms[m].split,
                           .soft_cap = ms[m].cap,
                           .mask_value = ms[m].mask,
                           .decode_every = 2};
                run_case(&k);
            }
}

/* sm_scale is any finite number: negative and zero too. A negative one makes
 * the largest dot the smallest logit, so a path that folds the scale into its
 * exponent after the max of the raw dots (right only for a positive scale)
 * references the smallest logit; at -8 times the usual scale (a peaked
 * softmax) its f16 P then overflows (the first case: f16, no window, no cap, so
 * interior slots fold). Zero weighs every visible key alike. Prefill tiles and decode items,
 * pages of the query dtype, fp8 pages and f32, with a window, a soft cap, a soft
 * mask value and forced key splits among them. */
Test(ragged_gpu, negative_and_zero_scales) {
    PA_SKIP_WITHOUT_GPU();
    static const struct {
        pa_dtype q, c;
        int hs, window, split;
        float cap, mask;
    } cs[4] = {{PA_DTYPE_F16, PA_DTYPE_F16, 128, 0, 0, 0.0f, 0.0f},
               {PA_DTYPE_F16, PA_DTYPE_FP8_E4M3, 128, 90, 64, 0.0f, 0.0f},
               {PA_DTYPE_BF16, PA_DTYPE_BF16, 64, 0, 0, 1.0f, -3.0f},
               {PA_DTYPE_F32, PA_DTYPE_F32, 64, 53, 0, 0.0f, 0.0f}};
    for (int i = 0; i < 4; i++)
        for (int kind = 1; kind <= 2; kind++) {
            gcase k = {.seed = 9300 + (uint64_t)(2 * i + kind),
                       .q_dtype = cs[i].q,
                       .cache_dtype = cs[i].c,
                       .num_seqs = 6,
                       .qh = 16,
                       .kvh = 4,
                       .hs = cs[i].hs,
                       .ps = 16,
                       .q_lo = 1,
                       .q_hi = 150,
                       .extra_lo = 0,
                       .extra_hi = 400,
                       .window = cs[i].window,
                       .split = cs[i].split,
                       .soft_cap = cs[i].cap,
                       .mask_value = cs[i].mask,
                       .decode_every = 2,
                       .scale_kind = kind};
            run_case(&k);
        }
}

/* Prefill tiles of 128 rows, 32 per warp (heads up to 128 on f16/bf16): row
 * counts on both sides of every warp's share (17, 32, 33, 64, 65, 96, 127,
 * 128, 129, 257 rows), so tiles with one to four busy warps and a partial
 * last tile; the causal diagonal inside a tile and across two slots; NaN
 * pages past every sequence. Group 1 gives those row counts directly, group 8
 * packs 8 heads per token. Pages of the query dtype and fp8, a window with a
 * soft cap, a soft mask value, forced splits of a prefill tile. */
Test(ragged_gpu, prefill_tile_rows) {
    PA_SKIP_WITHOUT_GPU();
    static const int q1[] = {17, 32, 33, 64, 65, 96, 127, 128, 129, 257};
    static const int q8[] = {3, 4, 5, 8, 9, 12, 16, 17, 33, 1};
    static const int hss[] = {128, 64, 120, 40, 96, 128};
    for (int v = 0; v < 6; v++) {
        const int g8 = v & 1;
        gcase k = {.seed = 7500 + (uint64_t)v,
                   .q_dtype = v & 2 ? PA_DTYPE_F16 : PA_DTYPE_BF16,
                   .cache_dtype = v == 2   ? PA_DTYPE_FP8_E4M3
                                  : v == 3 ? PA_DTYPE_FP8_E5M2
                                  : v & 2  ? PA_DTYPE_F16
                                           : PA_DTYPE_BF16,
                   .qh = g8 ? 16 : 4,
                   .kvh = g8 ? 2 : 4,
                   .hs = hss[v],
                   .ps = v == 4 ? 24 : 16,
                   .window = v == 4 ? 70 : 0,
                   .soft_cap = v == 4 ? 0.5f : 0.0f,
                   .mask_value = v == 5 ? -3.0f : 0.0f,
                   .split = v == 1 ? 128 : 0};
        int ql[10], kl[10];
        for (int s = 0; s < 10; s++) {
            ql[s] = g8 ? q8[s] : q1[s];
            kl[s] = ql[s] + (s % 3 == 0 ? 0 : s % 3 == 1 ? 45 : 130); /* diagonal at several offsets in a slot */
        }
        run_lens(&k, 10, ql, kl);
    }
}

/* Forced small KV chunks: every tile splits and merges (the last CTA merges).
 * Head 128 in each dtype, and head 8, whose rows are one 8-column group: the
 * group that stores a partial row's log-sum-exp is the only one there is. */
Test(ragged_gpu, forced_kv_splits) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype dts[] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_F16};
    static const int hss[] = {128, 128, 128, 8};
    for (int d = 0; d < 4; d++) {
        gcase k = {.seed = 7000 + (uint64_t)d,
                   .q_dtype = dts[d],
                   .cache_dtype = dts[d],
                   .num_seqs = d == 3 ? 5 : 9,
                   .qh = 16,
                   .kvh = 2,
                   .hs = hss[d],
                   .ps = 32,
                   .q_lo = 1,
                   .q_hi = 150,
                   .extra_lo = 0,
                   .extra_hi = 400,
                   .window = d == 1 ? 100 : 0,
                   .split = 64 * (d % 3 + 1),
                   .decode_every = 3};
        run_case(&k);
    }
    /* Heads 64 and 200 (the class of 256, padded columns) in each dtype, on
     * every other case a window of 8 keys and a group of 1. A chunk past an
     * early row's causal limit has an lse of -inf, which the merge passes
     * over. The per-line counts of 2026-12-07: the f32 kernel had passed over
     * one only at heads 128 and 256, the f16 tensor-core one only at 64 and
     * 128. With these cases a probe counted 9120 passes in the f32 kernel at
     * head 64 and 11400 in the f16 one at head 256. There the -inf chunks
     * always come last (chunks of 64 keys start where 64-row tiles do), so
     * skipping them and stopping at them give the same output: these cases
     * reach the skip but cannot tell the two apart. */
    for (int n = 0; n < 6; n++) {
        gcase k = {.seed = 7010 + (uint64_t)n,
                   .q_dtype = dts[n % 3],
                   .cache_dtype = dts[n % 3],
                   .num_seqs = 7,
                   .qh = 4,
                   .kvh = n % 2 == 0 ? 4 : 1,
                   .hs = n < 3 ? 64 : 200,
                   .ps = 16,
                   .q_lo = 1,
                   .q_hi = 150,
                   .extra_lo = 0,
                   .extra_hi = 400,
                   .window = n % 2 == 0 ? 8 : 0,
                   .split = 64,
                   .decode_every = 3};
        run_case(&k);
    }
}

/* Attention sinks (gpt-oss; tpu-inference's attention_sink) through every path
 * that writes a row: decode items, whose warps split the keys (the slices'
 * merge adds the sink), prefill tiles written directly (the row scaled by
 * e^lse / (e^lse + e^sink)), chunked tiles (the last CTA's merge adds it once,
 * not per chunk), the f32 kernel, fp8 pages, a window (gpt-oss's 128 over head
 * 64 and group 8), a soft cap and a mild mask value. Each head has its own
 * sink, -inf (none) to far above the logits; in two cases head 1's is +inf
 * and head 2's 800, whose rows must be zeros (direct, sliced and merged rows
 * alike) and their lse +inf and 800. */
Test(ragged_gpu, attention_sinks) {
    PA_SKIP_WITHOUT_GPU();
    static const gcase ks[] = {
        /* gpt-oss: head 64, group 8, window 128; decodes and prefill chunks */
        {.seed = 7700,
         .q_dtype = PA_DTYPE_BF16,
         .cache_dtype = PA_DTYPE_BF16,
         .num_seqs = 6,
         .qh = 16,
         .kvh = 2,
         .hs = 64,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 150,
         .extra_lo = 0,
         .extra_hi = 400,
         .window = 128,
         .decode_every = 2,
         .sinks = 1},
        /* long decodes (automatic key splits) and prefill tiles, f16 head 128 */
        {.seed = 7701,
         .q_dtype = PA_DTYPE_F16,
         .cache_dtype = PA_DTYPE_F16,
         .num_seqs = 5,
         .qh = 16,
         .kvh = 4,
         .hs = 128,
         .ps = 32,
         .q_lo = 1,
         .q_hi = 200,
         .extra_lo = 60,
         .extra_hi = 1500,
         .decode_every = 2,
         .sinks = 2},
        /* f32 queries (the SIMT kernel): forced chunks, then rows written directly */
        {.seed = 7702,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 5,
         .qh = 8,
         .kvh = 2,
         .hs = 128,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 90,
         .extra_lo = 0,
         .extra_hi = 300,
         .split = 64,
         .decode_every = 3,
         .sinks = 2},
        {.seed = 7705,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 4,
         .qh = 4,
         .kvh = 4,
         .hs = 64,
         .ps = 16,
         .q_lo = 20,
         .q_hi = 80,
         .extra_lo = 0,
         .extra_hi = 60,
         .sinks = 1},
        /* rows written directly with their sink where the cases above had
         * written none (the per-line counts of 2026-12-07): the f32 kernel at
         * head 200 (the class of 256) and the f16 tensor-core one at head 64 */
        {.seed = 7706,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 3,
         .qh = 4,
         .kvh = 2,
         .hs = 200,
         .ps = 16,
         .q_lo = 20,
         .q_hi = 70,
         .extra_lo = 0,
         .extra_hi = 80,
         .sinks = 2},
        {.seed = 7707,
         .q_dtype = PA_DTYPE_F16,
         .cache_dtype = PA_DTYPE_F16,
         .num_seqs = 4,
         .qh = 8,
         .kvh = 2,
         .hs = 64,
         .ps = 16,
         .q_lo = 17,
         .q_hi = 90,
         .extra_lo = 0,
         .extra_hi = 120,
         .window = 60,
         .sinks = 1},
        /* fp8 pages, head 256, forced chunks, a soft cap */
        {.seed = 7703,
         .q_dtype = PA_DTYPE_BF16,
         .cache_dtype = PA_DTYPE_FP8_E4M3,
         .num_seqs = 4,
         .qh = 8,
         .kvh = 2,
         .hs = 256,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 70,
         .extra_lo = 0,
         .extra_hi = 300,
         .split = 128,
         .soft_cap = 0.5f,
         .decode_every = 2,
         .sinks = 1},
        /* a mild mask value: masked keys weigh in beside the sink */
        {.seed = 7704,
         .q_dtype = PA_DTYPE_F16,
         .cache_dtype = PA_DTYPE_F16,
         .num_seqs = 4,
         .qh = 8,
         .kvh = 1,
         .hs = 128,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 40,
         .extra_lo = 0,
         .extra_hi = 200,
         .window = 53,
         .mask_value = -3.0f,
         .decode_every = 2,
         .sinks = 1},
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        run_case(&ks[i]);
}

/* ---- random configurations ------------------------------------------------------------
 * Whole configurations drawn at random (tests/common/testutil.h): query and
 * page dtypes, head size, group (odd ones too), page size, sequence count and
 * max_num_seqs, each sequence a decode or a prefill chunk over a drawn
 * context, window, soft cap, soft mask value, forced KV splits, the query
 * range and the logit scale (how peaked the softmax is), so the axes the tests above rotate meet
 * in combinations none of them lists. CI draws PA_TEST_RANDOM_CASES (default
 * 24) from seed 1; scripts/gpu-check.sh draws hundreds from a fresh seed. */
Test(ragged_gpu, random_configurations, .timeout = 1200) {
    PA_SKIP_WITHOUT_GPU();
    uint64_t seed;
    int first;
    const int n = pa_test_random_begin("ragged_gpu/random_configurations", 24, &seed, &first);
    static const pa_dtype qds[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    static const int tc[3] = {64, 128, 256}, kvs[4] = {1, 2, 4, 8}, groups[9] = {1, 2, 3, 4, 5, 7, 8, 12, 16};
    static const int pss[8] = {16, 32, 128, 1, 3, 8, 24, 256};
    for (int i = first; i < first + n; i++) {
        pa_rng r = pa_test_random_rng(seed, i);
        gcase k = {0};
        k.q_dtype = qds[pa_rng_int(&r, 0, 2)];
        const int ck = pa_rng_int(&r, 0, 3);
        k.cache_dtype = ck < 2 ? k.q_dtype : ck == 2 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
        k.hs = pa_rng_int(&r, 0, 1) ? tc[pa_rng_int(&r, 0, 2)] : 8 * pa_rng_int(&r, 1, 32);
        k.kvh = kvs[pa_rng_int(&r, 0, 3)];
        k.qh = k.kvh * groups[pa_rng_int(&r, 0, 8)];
        k.ps = pss[pa_rng_int(&r, 0, 7)];
        const int ns = pa_rng_int(&r, 1, 10);
        k.max_num_seqs = pa_rng_int(&r, 0, 2) == 0 ? ns + pa_rng_int(&r, 1, 4) : 0;
        k.window = pa_rng_int(&r, 0, 4) == 0 ? pa_rng_int(&r, 1, 400) : 0;
        k.soft_cap = pa_rng_int(&r, 0, 4) == 0 ? pa_rng_uniform(&r, 0.3f, 10.0f) : 0.0f;
        k.mask_value = pa_rng_int(&r, 0, 5) == 0 ? -pa_rng_uniform(&r, 0.5f, 8.0f) : 0.0f;
        k.split = pa_rng_int(&r, 0, 4) == 0 ? 64 * pa_rng_int(&r, 1, 6) : 0;
        static const float qr[4] = {0.0f, 0.0f, 8.0f, 30.0f}, lm[4] = {1.0f, 1.0f, 6.0f, 30.0f}; /* 0: range 2 */
        k.q_range = qr[pa_rng_int(&r, 0, 3)];
        /* f32 queries stop at 6: at 30 times the logit scale the two f32 dot
         * products' different summation orders alone move a logit of about 35
         * by 2e-5, past f32's tolerance (atol 1e-5; seed 1, configuration 1:
         * 7 of 10752 elements up to 1.45e-5 off, what that rounding predicts) */
        k.logit_mul = lm[pa_rng_int(&r, 0, k.q_dtype == PA_DTYPE_F32 ? 2 : 3)];
        int ql[10], kl[10];
        int64_t cost = 0;
        for (int s = 0; s < ns; s++) {
            const int kind = pa_rng_int(&r, 0, 2); /* decode, short chunk, long chunk */
            ql[s] = kind == 0 ? 1 : pa_test_shrink(pa_rng_int(&r, 1, kind == 1 ? 40 : 600));
            kl[s] = ql[s] +
                    (pa_rng_int(&r, 0, 3) ? pa_test_shrink(pa_rng_int(&r, 0, pa_rng_int(&r, 0, 1) ? 300 : 3000)) : 0);
            cost += (int64_t)ql[s] * kl[s];
        }
        /* the reference's work bounded: sum(q_len x kv_len) x heads x head size <= 2^26 */
        while (cost * k.qh * k.hs > ((int64_t)1 << 26)) {
            cost = 0;
            for (int s = 0; s < ns; s++) {
                const int ctx = (kl[s] - ql[s]) / 2;
                ql[s] = ql[s] > 1 ? (ql[s] + 1) / 2 : 1;
                kl[s] = ql[s] + ctx;
                cost += (int64_t)ql[s] * kl[s];
            }
        }
        if (k.max_num_seqs == 0)
            k.max_num_seqs = ns;
        k.seed = r.s;
        /* the configuration before its run, so a failure's message follows it */
        char redraw[160];
        pa_test_random_redraw(redraw, sizeof redraw, seed, i);
        fprintf(stderr,
                "  %d: q=%s cache=%s heads %d/%d head %d page %d seqs %d of %d window %d cap %g mask %g split %d "
                "q_range %g logits x%g (%s)\n",
                i, pa_dtype_name(k.q_dtype), pa_dtype_name(k.cache_dtype), k.qh, k.kvh, k.hs, k.ps, ns, k.max_num_seqs,
                k.window, (double)k.soft_cap, (double)k.mask_value, k.split, (double)k.q_range, (double)k.logit_mul,
                redraw);
        run_lens(&k, ns, ql, kl);
    }
}

/* Odd page sizes (any page size works). */
Test(ragged_gpu, odd_page_sizes) {
    PA_SKIP_WITHOUT_GPU();
    static const int pss[] = {1, 3, 8, 24, 256};
    for (int i = 0; i < 5; i++) {
        gcase k = {.seed = 7500 + (uint64_t)i,
                   .q_dtype = PA_DTYPE_BF16,
                   .cache_dtype = PA_DTYPE_BF16,
                   .num_seqs = 5,
                   .qh = 8,
                   .kvh = 2,
                   .hs = 64,
                   .ps = pss[i],
                   .q_lo = 1,
                   .q_hi = 60,
                   .extra_lo = 0,
                   .extra_hi = 200,
                   .decode_every = 2};
        run_case(&k);
    }
}

/* num_seqs below max_num_seqs, with garbage in the table rows past it: those
 * rows are not read and the output past the live rows stays untouched. */
Test(ragged_gpu, num_seqs_below_max) {
    PA_SKIP_WITHOUT_GPU();
    int ql[] = {5, 1, 40, 1}, kl[] = {9, 700, 40, 3};
    rg_problem_cfg c = {
        .seed = 8000,
        .q_dtype = PA_DTYPE_BF16,
        .cache_dtype = PA_DTYPE_BF16,
        .num_seqs = 4,
        .max_num_seqs = 16,
        .max_tokens = 128,
        .num_q_heads = 8,
        .num_kv_heads = 2,
        .head_size = 128,
        .page_size = 16,
        .q_lens = ql,
        .kv_lens = kl,
    };
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    pr->num_seqs = 3;
    for (int s = 4; s < 16; s++) {
        pr->kv_lens[s] = 999999;
        pr->cu_q_lens[s + 1] = 100 + s;
    }
    dev_problem d;
    dev_make(pr, &d);
    dev_run(&d);
    void *out = malloc(pr->q_bytes);
    pa_test_dev_download(out, d.out, pr->q_bytes);
    /* the reference must not see the garbage rows either: num_seqs = 3 */
    compare_with_ref(pr, &d, out, "num_seqs 3 of 16");
    free(out);
    dev_free(&d);
    pr->num_seqs = 4;
    rg_problem_free(pr);
}

/* The bad-device-data tests' problem: f16, 4/2 heads of 64, pages of 16. */
static rg_problem *small_f16_problem(uint64_t seed, int ns, const int *ql, const int *kl) {
    rg_problem_cfg c = {
        .seed = seed,
        .q_dtype = PA_DTYPE_F16,
        .cache_dtype = PA_DTYPE_F16,
        .num_seqs = ns,
        .num_q_heads = 4,
        .num_kv_heads = 2,
        .head_size = 64,
        .page_size = 16,
        .q_lens = ql,
        .kv_lens = kl,
    };
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    return pr;
}

/* q_len > kv_len, or kv_len past the page table, on the device: that sequence
 * is skipped (its rows untouched), the others are computed. */
Test(ragged_gpu, bad_device_lengths_are_skipped) {
    PA_SKIP_WITHOUT_GPU();
    const int ql[] = {4, 6, 3}, kl[] = {10, 20, 30};
    rg_problem *pr = small_f16_problem(8100, 3, ql, kl);
    pr->kv_lens[1] = 5;                             /* q_len 6 > kv_len 5 */
    pr->page_indices[2 * pr->p.pages_per_seq] = -7; /* a bad page id: no crash */
    dev_problem d;
    dev_make(pr, &d);
    dev_run(&d);
    unsigned char *out = malloc(pr->q_bytes);
    pa_test_dev_download(out, d.out, pr->q_bytes);
    const size_t row = (size_t)4 * 64 * 2;
    for (size_t i = 4 * row; i < 10 * row; i++)
        CHK_EQ(out[i], RG_SENTINEL_BYTE, "rows of the skipped sequence written (byte %zu)", i);
    /* sequence 0 is intact: compare it alone with the reference (sequence 2,
     * with a page read as zeros, is written but meaningless) */
    float *lse = dev_lse(&d, "a skipped sequence");
    expect_lse_unwritten(lse, &pr->p, 4, 10, "the skipped sequence");
    free(lse);
    pr->num_seqs = 1;
    compare_rows(pr, &d, out, "sequence 0 beside a skipped one", 0);
    pr->num_seqs = 3;
    free(out);
    dev_free(&d);
    rg_problem_free(pr);
}

/* Device data past the bounds the header states (ragged.h), each next to
 * sequences that must still come out right:
 *  - num_seqs above max_num_seqs: clamped, so cu_q_lens, kv_lens and the page
 *    table (uploaded at exactly max_num_seqs rows) are never read past;
 *  - a sequence whose rows start before an earlier sequence's end (cu_q_lens
 *    decreasing: 0, 10, 20, 15, 30): sequence 2 (rows 20..15) and sequence 3
 *    (rows 15..30, over sequence 1's last five) are skipped, so sequence 1's
 *    rows stay its own and rows 20..29 stay untouched;
 *  - (since 2026-12-07, twenty-second session; the kernels held, no test ran
 *    them) sequence 1's kv_len one past pages_per_seq * page_size: its rows
 *    10..19 untouched; sequence 3's rows ending past max_num_batched_tokens
 *    (31): its rows 21..30 untouched; num_seqs -3: clamped to 0, nothing
 *    written. */
Test(ragged_gpu, out_of_range_device_data_is_skipped) {
    PA_SKIP_WITHOUT_GPU();
    const int ql[] = {10, 10, 1, 10}, kl[] = {40, 300, 20, 64};
    for (int v = 0; v < 5; v++) {
        rg_problem *pr = small_f16_problem(8150, 4, ql, kl);
        const size_t row = (size_t)4 * 64 * 2;
        cr_assert_eq(pr->p.max_num_batched_tokens, 31);
        if (v == 0) {
            pr->num_seqs = 4 + 5; /* device num_seqs past max_num_seqs (4) */
        } else if (v == 1) {
            pr->cu_q_lens[3] = 15; /* sequence 2: rows 20..15; sequence 3: rows 15..30 */
            pr->cu_q_lens[4] = 30;
        } else if (v == 2) {
            pr->kv_lens[1] = pr->p.pages_per_seq * 16 + 1;
        } else if (v == 3) {
            pr->cu_q_lens[4] = 32;
        } else {
            pr->num_seqs = -3;
        }
        dev_problem d;
        dev_make(pr, &d);
        dev_run(&d);
        unsigned char *out = malloc(pr->q_bytes);
        pa_test_dev_download(out, d.out, pr->q_bytes);
        if (v >= 2) {
            const int r0 = v == 2 ? 10 : v == 3 ? 21 : 0, r1 = v == 2 ? 20 : 31;
            char what[64];
            snprintf(what, sizeof what, "case %d: the skipped rows %d..%d", v, r0, r1 - 1);
            for (size_t i = (size_t)r0 * row; i < (size_t)r1 * row; i++)
                CHK_EQ(out[i], RG_SENTINEL_BYTE, "%s written (byte %zu)", what, i);
            float *lse = dev_lse(&d, what);
            expect_lse_unwritten(lse, &pr->p, r0, r1, what);
            free(lse);
            if (v < 4) { /* the sequences before the skipped one, against the reference */
                pr->kv_lens[1] = kl[1];
                pr->cu_q_lens[4] = 31;
                pr->num_seqs = v == 2 ? 1 : 3;
                compare_rows(pr, &d, out, what, 0);
            }
            pr->num_seqs = 4;
        } else if (v == 0) {
            pr->num_seqs = 4;
            compare_with_ref(pr, &d, out, "num_seqs 9 of at most 4, clamped");
        } else {
            for (size_t i = 20 * row; i < 30 * row; i++)
                CHK_EQ(out[i], RG_SENTINEL_BYTE, "rows of the skipped sequences written (byte %zu)", i);
            float *lse = dev_lse(&d, "overlapping sequences");
            expect_lse_unwritten(lse, &pr->p, 20, 30, "the skipped sequences");
            free(lse);
            pr->num_seqs = 2; /* sequences 0 and 1, rows 0..19, against the reference */
            compare_rows(pr, &d, out, "sequences 0 and 1 beside overlapping ones", 0);
            pr->num_seqs = 4;
        }
        free(out);
        dev_free(&d);
        rg_problem_free(pr);
    }
}

/* A page id outside [0, num_pages) is never dereferenced and reads as zeros
 * (ragged.h): ids num_pages (one past the pool, which the device cache ends
 * at), -1 and INT32_MAX in used columns, over 16-bit and fp8 pages, decode and
 * prefill rows. The device output is held to the reference run on a table
 * where those entries name a spare page of zeros. */
Test(ragged_gpu, bad_page_ids_read_as_zeros) {
    PA_SKIP_WITHOUT_GPU();
    int ql[] = {1, 40, 1, 70}, kl[] = {100, 90, 33, 200};
    for (int v = 0; v < 3; v++) {
        const pa_dtype qd = v == 2 ? PA_DTYPE_BF16 : PA_DTYPE_F16;
        const pa_dtype cd = v == 1 ? PA_DTYPE_FP8_E4M3 : v == 2 ? PA_DTYPE_FP8_E5M2 : qd;
        rg_problem_cfg c = {
            .seed = 8170 + (uint64_t)v,
            .q_dtype = qd,
            .cache_dtype = cd,
            .num_seqs = 4,
            .num_q_heads = 8,
            .num_kv_heads = 2,
            .head_size = v == 2 ? 256 : 128,
            .page_size = 16,
            .q_lens = ql,
            .kv_lens = kl,
            .extra_pages = 2,
        };
        rg_problem *pr = rg_problem_make(&c);
        cr_assert(pr);
        const int np = pr->p.kv.num_blocks, cols = pr->p.pages_per_seq;
        /* a page no sequence uses (the pool's extra pages are NaN): zeros */
        char *used = calloc((size_t)np, 1);
        for (int s = 0; s < 4; s++)
            for (int b = 0; b < (kl[s] + 15) / 16; b++)
                used[pr->page_indices[s * cols + b]] = 1;
        int spare = -1;
        for (int b = 0; b < np && spare < 0; b++)
            if (!used[b])
                spare = b;
        free(used);
        cr_assert(spare >= 0, "no spare page in the pool");
        const size_t page_bytes = pr->cache_bytes / (size_t)np;
        memset((char *)pr->cache + (size_t)spare * page_bytes, 0, page_bytes);
        const int bad[3][3] = {{0, 3, np}, {1, 0, -1}, {3, 7, INT32_MAX}}; /* sequence, column, id */
        for (int i = 0; i < 3; i++)
            pr->page_indices[bad[i][0] * cols + bad[i][1]] = bad[i][2];
        dev_problem d;
        dev_make(pr, &d);
        dev_run(&d);
        void *out = malloc(pr->q_bytes);
        pa_test_dev_download(out, d.out, pr->q_bytes);
        for (int i = 0; i < 3; i++)
            pr->page_indices[bad[i][0] * cols + bad[i][1]] = spare;
        compare_with_ref(pr, &d, out, v == 0 ? "bad page ids, f16 pages" : "bad page ids, fp8 pages");
        free(out);
        dev_free(&d);
        rg_problem_free(pr);
    }
}

/* The work list the device planner writes equals the host mirror's. */
/* The device planner's work list equals the host mirror's, item for item and
 * merge for merge, and the attention it drives matches the reference. */
static void plan_case(const rg_problem_cfg *c, int32_t split_tokens) {
    rg_problem *pr = rg_problem_make(c);
    cr_assert(pr);
    pr->p.kv_split_tokens = split_tokens;
    dev_problem d;
    dev_make(pr, &d);
    dev_run(&d);
    pa_rg_ws_layout wl;
    pa_rg_ws_layout_make(&d.p, &wl);
    pa_rg_plan_totals tot;
    pa_rg_item *want = malloc(sizeof(pa_rg_item) * (size_t)wl.max_items);
    pa_rg_merge *wm = malloc(sizeof(pa_rg_merge) * (size_t)wl.max_merges);
    cr_assert(want && wm);
    cr_assert_eq(
        pa_rg_plan_host(&pr->p, pr->kv_lens, pr->cu_q_lens, pr->num_seqs, want, wl.max_items, wm, wl.max_merges, &tot),
        PA_SUCCESS);
    int hdr[4];
    pa_test_dev_download(hdr, d.ws, sizeof hdr);
    cr_assert_eq(hdr[0], tot.items);
    cr_assert_eq(hdr[2], tot.merges);
    cr_assert_eq(hdr[3], tot.part_rows);
    cr_assert(tot.part_rows > 0, "the test should exercise splits");
    pa_rg_item *got = malloc(sizeof(pa_rg_item) * (size_t)tot.items + 1);
    pa_rg_merge *gm = malloc(sizeof(pa_rg_merge) * (size_t)tot.merges + 1);
    pa_test_dev_download(got, (char *)d.ws + wl.off_items, sizeof(pa_rg_item) * (size_t)tot.items);
    pa_test_dev_download(gm, (char *)d.ws + wl.off_merges, sizeof(pa_rg_merge) * (size_t)tot.merges);
    cr_assert(memcmp(got, want, sizeof(pa_rg_item) * (size_t)tot.items) == 0, "device items differ from the host plan");
    cr_assert(memcmp(gm, wm, sizeof(pa_rg_merge) * (size_t)tot.merges) == 0, "device merges differ from the host plan");
    void *out = malloc(pr->q_bytes);
    pa_test_dev_download(out, d.out, pr->q_bytes);
    compare_with_ref(pr, &d, out, "plan case");
    free(out);
    free(got);
    free(gm);
    free(want);
    free(wm);
    dev_free(&d);
    rg_problem_free(pr);
}

/* 40 sequences, automatic splits. PA_TEST_SHRINK (interpret mode) shrinks the
 * lengths drawn (the same draws); decode sequences of more than 512 keys still
 * split. */
Test(ragged_gpu, device_plan_matches_host) {
    PA_SKIP_WITHOUT_GPU();
    int ql[40], kl[40];
    pa_rng r = pa_rng_make(8200);
    for (int s = 0; s < 40; s++) {
        ql[s] = s % 2 ? pa_test_shrink(pa_rng_int(&r, 1, 200)) : 1;
        kl[s] = ql[s] + pa_test_shrink(pa_rng_int(&r, 0, 5000));
    }
    rg_problem_cfg c = {
        .seed = 8200,
        .q_dtype = PA_DTYPE_BF16,
        .cache_dtype = PA_DTYPE_BF16,
        .num_seqs = 40,
        .num_q_heads = 32,
        .num_kv_heads = 8,
        .head_size = 128,
        .page_size = 16,
        .q_lens = ql,
        .kv_lens = kl,
    };
    plan_case(&c, 0);
}

/* Small enough for interpret mode, with sequences of more than 32 tiles (the
 * device planner scans tiles 32 at a time) and forced splits, so tiles touch
 * several chunks and get merges. */
Test(ragged_gpu, device_plan_matches_host_many_tiles) {
    PA_SKIP_WITHOUT_GPU();
    static const int ql[6] = {1, 300, 1, 270, 17, 1}, extra[6] = {90, 140, 700, 60, 200, 0};
    int kl[6];
    for (int s = 0; s < 6; s++)
        kl[s] = ql[s] + extra[s];
    rg_problem_cfg c = {
        .seed = 8300,
        .q_dtype = PA_DTYPE_F16,
        .cache_dtype = PA_DTYPE_F16,
        .num_seqs = 6,
        .num_q_heads = 8,
        .num_kv_heads = 1,
        .head_size = 64,
        .page_size = 16,
        .q_lens = ql,
        .kv_lens = kl,
    };
    plan_case(&c, 64);
}

/* Bitwise batch invariance: a sequence's output rows are identical whether it
 * runs alone or inside different batches (different neighbours, positions,
 * batch sizes), for decode and prefill sequences, with and without splits
 * (bf16 with attention sinks, f32 without).
 * PA_TEST_SHRINK (interpret mode) shrinks the neighbours' lengths (the same
 * draws) and the long prefill and decode targets; the short prefill target
 * keeps more than PA_RG_PRE_MIN_CHUNK keys, so it still splits. */
Test(ragged_gpu, batch_invariance_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype dts[] = {PA_DTYPE_BF16, PA_DTYPE_F32};
    for (int d = 0; d < 2; d++)
        for (int target = 0; target < 3; target++) {
            /* the target sequence: decode over a long context, a short prefill chunk
             * over a long context (splits), a long prefill */
            const int short_kv = pa_test_shrink(4000) > PA_RG_PRE_MIN_CHUNK ? pa_test_shrink(4000)
                                                                            : PA_RG_PRE_MIN_CHUNK + PA_RG_KEY_TILE;
            const int tq[] = {1, 20, pa_test_shrink(300)}, tk[] = {pa_test_shrink(3000), short_kv, pa_test_shrink(600)};
            /* the decode target and, on the tensor-core kernel, the short prefill split their keys */
            if (target == 0 || (target == 1 && dts[d] != PA_DTYPE_F32))
                cr_assert(pa_rg_plan_seq(tq[target], tk[target], 8, 0, 1, 0, pa_rg_tile_rows(dts[d], 128)).n_split > 1,
                          "target %d should split its keys", target);
            int ql[12], kl[12];
            pa_rng r = pa_rng_make(9000 + (uint64_t)(d * 3 + target));
            unsigned char *alone = NULL;
            float *alone_lse = NULL; /* the target's lse, [16 heads][tq] */
            size_t rowbytes = 0;
            for (int variant = 0; variant < 3; variant++) {
                const int n = variant == 0 ? 1 : (variant == 1 ? 5 : 12);
                const int at = variant == 0 ? 0 : (variant == 1 ? 2 : 11);
                for (int s = 0; s < n; s++) {
                    ql[s] = pa_rng_int(&r, 1, 3) == 1 ? 1 : pa_test_shrink(pa_rng_int(&r, 1, 200));
                    kl[s] = ql[s] + pa_test_shrink(pa_rng_int(&r, 0, 3000));
                }
                ql[at] = tq[target];
                kl[at] = tk[target];
                rg_problem_cfg c = {
                    .seed = 9100 + (uint64_t)(variant * 7 + d),
                    .q_dtype = dts[d],
                    .cache_dtype = dts[d],
                    .num_seqs = n,
                    .max_num_seqs = 16,
                    .max_tokens = 4096,
                    .num_q_heads = 16,
                    .num_kv_heads = 2,
                    .head_size = 128,
                    .page_size = 16,
                    .q_lens = ql,
                    .kv_lens = kl,
                };
                rg_problem *pr = rg_problem_make(&c);
                cr_assert(pr);
                /* bf16 with attention sinks (added after the merge, so the
                 * partial rows and the invariance are untouched) */
                float *sinks = d == 0 ? pa_sink_logits(16, 77) : NULL;
                pr->p.sinks = sinks;
                /* Give the target the same queries and K/V in every batch: fill
                 * its rows and pages from a fixed generator. */
                pa_rng tr = pa_rng_make(424242 + (uint64_t)target);
                const size_t es = pa_dtype_size(dts[d]);
                rowbytes = (size_t)16 * 128 * es;
                const int r0 = pr->cu_q_lens[at];
                for (size_t i = 0; i < (size_t)tq[target] * 16 * 128; i++)
                    pa_store_from_float(dts[d], (char *)pr->q + (size_t)r0 * rowbytes, i,
                                        pa_rng_uniform(&tr, -2.0f, 2.0f));
                const int ps = 16, cols = pr->p.pages_per_seq;
                for (int pos = 0; pos < tk[target]; pos++) {
                    const int64_t page = pr->page_indices[(size_t)at * cols + pos / ps];
                    for (int e = 0; e < 2 * 2 * 128; e++)
                        pa_store_from_float(dts[d], pr->cache, ((size_t)page * ps + pos % ps) * 2 * 2 * 128 + e,
                                            pa_rng_uniform(&tr, -1.0f, 1.0f));
                }
                dev_problem dv;
                dev_make(pr, &dv);
                dev_run(&dv);
                unsigned char *out = malloc(pr->q_bytes);
                pa_test_dev_download(out, dv.out, pr->q_bytes);
                const size_t nb = (size_t)tq[target] * rowbytes;
                float *lse = dev_lse(&dv, "batch invariance");
                float *mine = pa_xmalloc(sizeof(float) * 16 * (size_t)tq[target]);
                for (int h = 0; h < 16; h++)
                    memcpy(mine + (size_t)h * tq[target], lse + (size_t)h * pr->p.max_num_batched_tokens + r0,
                           sizeof(float) * (size_t)tq[target]);
                free(lse);
                if (variant == 0) {
                    alone_lse = mine;
                } else {
                    cr_assert(memcmp(alone_lse, mine, sizeof(float) * 16 * (size_t)tq[target]) == 0,
                              "dtype %s target %d: lse differs in batch variant %d", pa_dtype_name(dts[d]), target,
                              variant);
                    free(mine);
                }
                if (variant == 0) {
                    alone = malloc(nb);
                    memcpy(alone, out + (size_t)r0 * rowbytes, nb);
                    compare_with_ref(pr, &dv, out, "target alone");
                } else {
                    cr_assert(memcmp(alone, out + (size_t)r0 * rowbytes, nb) == 0,
                              "dtype %s target %d: output differs in batch variant %d", pa_dtype_name(dts[d]), target,
                              variant);
                }
                free(out);
                dev_free(&dv);
                free(sinks);
                rg_problem_free(pr);
            }
            free(alone);
            free(alone_lse);
        }
}

/* One CUDA graph captured at the padded maximum replays for a different batch
 * after only the device arrays change. */
Test(ragged_gpu, graph_replay_with_new_batch) {
    PA_SKIP_WITHOUT_GPU();
    /* both batches: the same longest context (same page-table width) and the
     * same pool size (extra pages even it out), so one set of buffers serves */
    int qa[] = {30, 1, 1}, ka[] = {90, 3000, 17};
    int qb[] = {1, 1, 64, 1, 9}, kb[] = {700, 5, 64, 3000, 100};
    int used_a = 0, used_b = 0;
    for (int s = 0; s < 3; s++)
        used_a += (ka[s] + 15) / 16;
    for (int s = 0; s < 5; s++)
        used_b += (kb[s] + 15) / 16;
    rg_problem_cfg ca = {
        .seed = 9500,
        .q_dtype = PA_DTYPE_BF16,
        .cache_dtype = PA_DTYPE_BF16,
        .num_seqs = 3,
        .max_num_seqs = 8,
        .max_tokens = 128,
        .num_q_heads = 32,
        .num_kv_heads = 8,
        .head_size = 128,
        .page_size = 16,
        .q_lens = qa,
        .kv_lens = ka,
        .extra_pages = 4 + (used_b > used_a ? used_b - used_a : 0),
        .extra_cols = 2,
    };
    rg_problem_cfg cb = ca;
    cb.seed = 9501;
    cb.num_seqs = 5;
    cb.q_lens = qb;
    cb.kv_lens = kb;
    cb.extra_pages = 4 + (used_a > used_b ? used_a - used_b : 0);
    rg_problem *pa = rg_problem_make(&ca), *pb = rg_problem_make(&cb);
    cr_assert(pa && pb);
    cr_assert_eq(pa->p.pages_per_seq, pb->p.pages_per_seq);
    cr_assert_eq(pa->cache_bytes, pb->cache_bytes);
    cr_assert_eq(pa->q_bytes, pb->q_bytes);
    dev_problem d;
    dev_make(pa, &d);
    cudaStream_t st;
    cr_assert_eq(cudaStreamCreate(&st), cudaSuccess);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cr_assert_eq(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal), cudaSuccess);
    pa_status s = pa_ragged_paged_attention(&d.p, d.ws, d.ws_bytes, (pa_stream)st);
    cr_assert_eq(cudaStreamEndCapture(st, &g), cudaSuccess);
    cr_assert_eq(s, PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, st), cudaSuccess);
    cr_assert_eq(cudaStreamSynchronize(st), cudaSuccess);
    void *out = malloc(pa->q_bytes);
    pa_test_dev_download(out, d.out, pa->q_bytes);
    compare_with_ref(pa, &d, out, "graph, batch A");
    dev_reset_lse(&d);
    /* batch B: new contents in the same device buffers, same graph */
    cr_assert_eq(cudaMemcpy(d.cache, pb->cache, pb->cache_bytes, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.q, pb->q, pb->q_bytes, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.out, pb->out, pb->q_bytes, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.kv_lens, pb->kv_lens, sizeof(int32_t) * 8, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.cu, pb->cu_q_lens, sizeof(int32_t) * 9, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.pages, pb->page_indices, d.pages_bytes, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d.ns, &pb->num_seqs, sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, st), cudaSuccess);
    cr_assert_eq(cudaStreamSynchronize(st), cudaSuccess);
    pa_test_dev_download(out, d.out, pb->q_bytes);
    compare_with_ref(pb, &d, out, "graph replay, batch B");
    free(out);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(st);
    dev_free(&d);
    rg_problem_free(pa);
    rg_problem_free(pb);
}

/* ---- bad input: rejected in validation, nothing launched (no GPU needed) ---------------- */

static pa_ragged_params host_only_params(void) {
    pa_ragged_params p;
    memset(&p, 0, sizeof p);
    p.out = pa_test_addr(0); /* each buffer a range of its own, so only the field at fault is refused */
    p.q = pa_test_addr(1);
    p.q_dtype = PA_DTYPE_BF16;
    p.kv = (pa_kv_cache){.layout = PA_LAYOUT_COMBINED,
                         .dtype = PA_DTYPE_BF16,
                         .key = pa_test_addr(2),
                         .num_blocks = 4,
                         .block_size = 16,
                         .num_kv_heads = 2,
                         .head_size = 128};
    p.kv_lens = (const int32_t *)pa_test_addr(3);
    p.page_indices = (const int32_t *)pa_test_addr(4);
    p.cu_q_lens = (const int32_t *)pa_test_addr(5);
    p.num_seqs = (const int32_t *)pa_test_addr(6);
    p.pages_per_seq = 4;
    p.max_num_seqs = 1;
    p.max_num_batched_tokens = 1;
    p.num_q_heads = 8;
    p.sm_scale = 0.1f;
    return p;
}

static void expect(pa_ragged_params *p, pa_status want, const char *needle) {
    static char ws[1 << 16] __attribute__((aligned(256)));
    pa_status s = pa_ragged_paged_attention(p, ws, sizeof ws, NULL);
    cr_assert_eq(s, want, "got %s (%s)", pa_status_string(s), pa_last_error());
    cr_assert(strstr(pa_last_error(), needle), "message '%s' lacks '%s'", pa_last_error(), needle);
}

Test(ragged_bad_gpu, rejected_before_launch) {
    pa_ragged_params p = host_only_params();
    p.sliding_window = -1;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "sliding_window");
    p = host_only_params();
    p.num_q_heads = 7;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "not a multiple");
    p = host_only_params();
    p.soft_cap = -2.0f;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "soft_cap");
    p = host_only_params();
    p.kv.head_size = 68;
    expect(&p, PA_ERR_UNSUPPORTED, "head_size 68");
    p = host_only_params();
    p.kv.head_size = 264;
    expect(&p, PA_ERR_UNSUPPORTED, "head_size 264");
    p = host_only_params();
    p.kv.dtype = PA_DTYPE_F16;
    expect(&p, PA_ERR_UNSUPPORTED, "cache dtype f16");
    p = host_only_params();
    p.kv.layout = PA_LAYOUT_FLASH_NHD;
    p.kv.value = p.kv.key;
    expect(&p, PA_ERR_UNSUPPORTED, "PA_LAYOUT_COMBINED"); /* a valid cache the op does not serve */
    /* int32 and float arrays off 4 bytes (the kernels' loads would fault) */
    static int32_t words[4];
    const int32_t *odd = (const int32_t *)((const char *)words + 2);
    p = host_only_params();
    p.cu_q_lens = NULL;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "ragged: cu_q_lens must not be NULL");
    p = host_only_params();
    p.kv_lens = odd;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "kv_lens (");
    p = host_only_params();
    p.page_indices = odd;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "page_indices (");
    p = host_only_params();
    p.cu_q_lens = odd;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "cu_q_lens (");
    p = host_only_params();
    p.num_seqs = odd;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "num_seqs (");
    p = host_only_params();
    p.kv.dtype = PA_DTYPE_FP8_E4M3;
    p.kv.v_scale = (const float *)odd;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "kv.v_scale (");
    /* kv_cache.h: a cache that is not fp8 reads neither scale, so neither is checked */
    p.kv.dtype = PA_DTYPE_BF16;
    p.kv.k_scale = (const float *)(odd + 1);
    cr_assert_eq(pa_ragged_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p = host_only_params();
    p.kv.num_kv_heads = 1;
    p.num_q_heads = 128;
    p.max_num_batched_tokens = 1 << 23; /* x 128: 2^30 query rows in one sequence */
    expect(&p, PA_ERR_UNSUPPORTED, "32-bit row index");
}

/* An empty batch (max_num_seqs or max_num_batched_tokens 0; ragged.h) is a
 * no-op: success with every pointer but the cache's NULL and no workspace,
 * nothing launched (a launch would read num_seqs; with a GPU, a sync after it
 * must find nothing failed, and an output buffer of sentinels stays as it
 * was). A negative count beside the 0 is refused. */
Test(ragged_bad_gpu, empty_batch_launches_nothing) {
    static const int32_t sizes[3][2] = {{0, 5}, {3, 0}, {0, 0}};
    const int gpu = pa_test_have_gpu();
    for (int k = 0; k < 3; k++) {
        pa_ragged_params p = host_only_params();
        p.max_num_seqs = sizes[k][0];
        p.max_num_batched_tokens = sizes[k][1];
        p.q = NULL, p.out = NULL, p.kv_lens = NULL, p.page_indices = NULL, p.cu_q_lens = NULL, p.num_seqs = NULL;
        void *dev = NULL;
        if (gpu) { /* a device output of sentinels, 5 rows */
            const size_t ob = (size_t)5 * 8 * 128 * 2;
            unsigned char *host = malloc(ob);
            cr_assert(host != NULL);
            memset(host, 0x5A, ob);
            dev = pa_test_dev_upload(host, ob);
            p.out = dev;
            free(host);
        }
        size_t ws = 9;
        cr_assert_eq(pa_ragged_workspace_size(&p, &ws), PA_SUCCESS, "%s", pa_last_error());
        cr_assert_eq(ws, 0, "sizes %d, %d: workspace %zu bytes", sizes[k][0], sizes[k][1], ws);
        const pa_status s = pa_ragged_paged_attention(&p, NULL, 0, NULL);
        cr_assert_eq(s, PA_SUCCESS, "sizes %d, %d: %s (%s)", sizes[k][0], sizes[k][1], pa_status_string(s),
                     pa_last_error());
        if (gpu) {
            pa_test_dev_sync();
            const size_t ob = (size_t)5 * 8 * 128 * 2;
            unsigned char *back = malloc(ob);
            cr_assert(back != NULL);
            pa_test_dev_download(back, dev, ob);
            for (size_t i = 0; i < ob; i++)
                cr_assert_eq(back[i], 0x5A, "sizes %d, %d: output byte %zu written", sizes[k][0], sizes[k][1], i);
            free(back);
            pa_test_dev_free(dev);
        }
        if (sizes[k][0] == 0)
            p.max_num_batched_tokens = -1;
        else
            p.max_num_seqs = -1;
        expect(&p, PA_ERR_INVALID_ARGUMENT, "must be >= 0");
    }
}

/* The lse (ragged.h): its strides, alignment and the buffers it must keep
 * clear of (out, q, the cache and the workspace, each by its own extent: 4096
 * bytes of rows, 64 KiB of cache), refused before anything launches. */
Test(ragged_bad_gpu, lse_refusals) {
    /* out: the last 1024 floats of its array (the first 64 lie before it): 2 tokens x 8 heads x 128 bf16 */
    static float out_buf[64 + 1024] __attribute__((aligned(16))), q[1024] __attribute__((aligned(16)));
    float *out = out_buf + 64;
    static float cache[16384 + 64] __attribute__((aligned(16))), lse[64] __attribute__((aligned(16)));
    pa_ragged_params p = host_only_params();
    p.out = out;
    p.q = q;
    p.kv.key = cache;
    p.lse = lse;
    p.max_num_batched_tokens = 2;
    p.lse_head_stride = -2;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse_head_stride = -2");
    p.lse_head_stride = 0;
    p.lse_token_stride = -1;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse_token_stride = -1");
    p.lse = NULL; /* the strides are checked without an lse too */
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse_token_stride = -1");
    p.lse = lse;
    p.lse_head_stride = p.lse_token_stride = 1; /* (0, 1) and (1, 0) on one float */
    expect(&p, PA_ERR_INVALID_ARGUMENT, "on one float");
    p.lse_head_stride = p.lse_token_stride = 0;
    p.lse = (float *)((char *)lse + 2);
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse (");
    p.lse = out + 1023; /* out's last float: the layout's first */
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse overlaps out");
    p.lse = q + 1008;
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse overlaps q");
    p.lse = cache + 16383; /* the combined cache: 4 pages x 16 x 2 x 2 heads x 128 bf16, 64 KiB */
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse overlaps the cache");
    p.lse = cache + 16384; /* just past it */
    size_t need = 0;
    cr_assert_eq(pa_ragged_workspace_size(&p, &need), PA_SUCCESS, "%s", pa_last_error());
    /* [8 heads, 2 tokens] from 16 floats before the workspace's end, and just past it */
    static char ws[1 << 16] __attribute__((aligned(256)));
    cr_assert(need + 64 <= sizeof ws);
    p.lse = (float *)(ws + need) - 1;
    cr_assert_eq(pa_ragged_paged_attention(&p, ws, need, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "lse overlaps the workspace"), "%s", pa_last_error());
    /* the layout's span counts, gaps included: [tokens, heads] with a padded
     * token stride, its first float clear of out but its last inside it */
    p.lse = out_buf + 24; /* out - 40 */
    p.lse_head_stride = 1;
    p.lse_token_stride = 48; /* (7, 1) at 55 floats on: out + 15 */
    expect(&p, PA_ERR_INVALID_ARGUMENT, "lse overlaps out");
}

/* What the ragged launches write (out, lse, the workspace) shares no byte with
 * what they read (ragged.h): out (16-byte aligned) over each input's last byte
 * is refused naming both, from the next 16 bytes accepted; lse on the last
 * four bytes refused and just past them accepted (over q and
 * the cache it has its own message, lse_refusals above); the workspace from
 * 256 bytes before an input's end refused before anything launches. Extents by
 * hand from ragged.h's shapes: 5 token rows of 8 bf16 heads of 128 (10240
 * bytes), an e4m3 combined cache of 4 pages x 16 x (2 x 2 heads) x 128
 * (32768), max_num_seqs 3: kv_lens 3 int32, page_indices 3 x 4, cu_q_lens 4,
 * num_seqs 1; sinks 8 floats, one k_scale and v_scale. Addresses only. */
Test(ragged_bad_gpu, outputs_apart_from_inputs) {
    pa_ragged_params p = host_only_params();
    p.kv.dtype = PA_DTYPE_FP8_E4M3;
    p.kv.k_scale = (const float *)pa_test_addr(7);
    p.kv.v_scale = (const float *)pa_test_addr(8);
    p.sinks = (const float *)pa_test_addr(9);
    p.max_num_seqs = 3;
    p.max_num_batched_tokens = 5;
    cr_assert_eq(pa_ragged_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    const struct {
        const char *name;
        const void *at;
        int64_t bytes;
    } in[] = {{"q", p.q, 10240},
              {"kv.key", p.kv.key, 32768},
              {"kv.k_scale", p.kv.k_scale, 4},
              {"kv.v_scale", p.kv.v_scale, 4},
              {"kv_lens", p.kv_lens, 12},
              {"page_indices", p.page_indices, 48},
              {"cu_q_lens", p.cu_q_lens, 16},
              {"num_seqs", p.num_seqs, 4},
              {"sinks", p.sinks, 32}};
    size_t need = 0;
    cr_assert_eq(pa_ragged_workspace_size(&p, &need), PA_SUCCESS, "%s", pa_last_error());
    char want[128];
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        const char *end = (const char *)in[i].at + in[i].bytes;
        pa_ragged_params q = p;
        q.out = (void *)(((uintptr_t)end - 1) & ~(uintptr_t)15); /* out 16-byte aligned: on the input's last byte */
        snprintf(want, sizeof want, "ragged: output out overlaps the input %s", in[i].name);
        cr_assert_eq(pa_ragged_validate(&q), PA_ERR_INVALID_ARGUMENT, "out over %s accepted", in[i].name);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        q.out = (void *)(((uintptr_t)end + 15) & ~(uintptr_t)15);
        cr_assert_eq(pa_ragged_validate(&q), PA_SUCCESS, "out just past %s: %s", in[i].name, pa_last_error());
        q = p;
        q.lse = (float *)(void *)(end - 4);
        if (i > 1) {
            snprintf(want, sizeof want, "ragged: output lse overlaps the input %s", in[i].name);
            cr_assert_eq(pa_ragged_validate(&q), PA_ERR_INVALID_ARGUMENT, "lse over %s accepted", in[i].name);
            cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        }
        q.lse = (float *)(void *)end;
        cr_assert_eq(pa_ragged_validate(&q), PA_SUCCESS, "lse just past %s: %s", in[i].name, pa_last_error());
        q = p;
        void *ws = (void *)(((uintptr_t)end - 256) & ~(uintptr_t)255);
        snprintf(want, sizeof want, "ragged: output workspace overlaps the input %s", in[i].name);
        cr_assert_eq(pa_ragged_paged_attention(&q, ws, need, NULL), PA_ERR_INVALID_ARGUMENT,
                     "workspace over %s accepted", in[i].name);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
    }
    /* the workspace's last bytes on out's first */
    cr_assert_eq(pa_ragged_paged_attention(&p, (char *)p.out - ((need + 255) & ~(size_t)255) + 256, need, NULL),
                 PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "ragged: outputs out and workspace overlap") != NULL, "%s", pa_last_error());
}

Test(ragged_bad_gpu, workspace_checks) {
    pa_ragged_params p = host_only_params();
    size_t need = 0;
    cr_assert_eq(pa_ragged_workspace_size(&p, &need), PA_SUCCESS, "%s", pa_last_error());
    static char ws[1 << 16] __attribute__((aligned(256)));
    cr_assert(need > 0);
    cr_assert_eq(pa_ragged_paged_attention(&p, ws, need - 1, NULL), PA_ERR_WORKSPACE_TOO_SMALL);
    /* ragged.h: short is PA_ERR_WORKSPACE_TOO_SMALL whatever the pointer, as
     * in the decode and mixed entries */
    cr_assert_eq(pa_ragged_paged_attention(&p, NULL, 0, NULL), PA_ERR_WORKSPACE_TOO_SMALL, "%s", pa_last_error());
    cr_assert_eq(pa_ragged_paged_attention(&p, ws + 16, need - 1, NULL), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert_eq(pa_ragged_paged_attention(&p, NULL, need, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_ragged_paged_attention(&p, ws + 16, need, NULL), PA_ERR_INVALID_ARGUMENT);
}

/* ---- every route the kernels can take ---------------------------------------------
 * As decode_routes and prefill_routes: the ragged launch picks its kernel from
 * the query dtype (CUDA cores for f32, tensor cores for 16-bit), its instance
 * from the head size (padded to 64, 128 or 256), the prefill tile rows from
 * both (pa_rg_tile_rows), and a sequence's items from its rows (q_len x
 * group: up to PA_RG_DEC_ROWS a decode item); fp8 pages take their own slots.
 * The hand-made tests above each cover some of these. This test walks query
 * dtype x cache dtype x head size (every multiple of 8 to 256) x group (1, 2,
 * 3, 4, 5, 8, 16, 17, 32; over two KV heads) x page size (1, 3, 8, 16, 24, 32, 128, 256) and runs
 * each shape that is the first of a class below, on a decode sequence (1
 * query over 700 keys: two KV splits) and a prefill one (70 over 200), against
 * the CPU reference. A class:
 *   A  query dtype, cache dtype, instance, prefill tile rows;
 *   B  kernel, head size, cache element size: each head's padding;
 *   C  kernel, instance, group (a decode sequence's rows, the packing);
 *   D  kernel, cache element size, page size. */
static uint64_t ragged_route_class(int fam, pa_dtype q, pa_dtype c, int hs, int group, int ps) {
    const uint64_t kern = q != PA_DTYPE_F32, hp = hs <= 64 ? 64 : hs <= 128 ? 128 : 256;
    const uint64_t esz = pa_dtype_size(c);
    switch (fam) {
    case 0: return (uint64_t)q | (uint64_t)c << 4 | hp << 8 | (uint64_t)pa_rg_tile_rows(q, hs) << 20;
    case 1: return kern | (uint64_t)hs << 4 | esz << 16;
    case 2: return kern | hp << 4 | (uint64_t)group << 16;
    default: return kern | esz << 4 | (uint64_t)ps << 8;
    }
}

Test(ragged_routes, every_route, .timeout = 900) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype qds[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    static const int groups[9] = {1, 2, 3, 4, 5, 8, 16, 17, 32}, pss[8] = {1, 3, 8, 16, 24, 32, 128, 256};
    static const int ql[2] = {1, 70}, kl[2] = {700, 200};
    uint64_t seen[1024];
    int nseen = 0, shapes = 0, ran = 0;
    for (int gi = 0; gi < 9; gi++)
        for (int hs = 8; hs <= 256; hs += 8)
            for (int qi = 0; qi < 3; qi++)
                for (int ci = 0; ci < 3; ci++)
                    for (int pi = 0; pi < 8; pi++) {
                        const pa_dtype q = qds[qi];
                        const pa_dtype c = ci == 0 ? q : ci == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
                        shapes++;
                        int fresh = 0;
                        for (int f = 0; f < 4; f++) {
                            const uint64_t key = ragged_route_class(f, q, c, hs, groups[gi], pss[pi]) * 4 + (uint64_t)f;
                            int have = 0;
                            for (int i = 0; i < nseen && !have; i++)
                                have = seen[i] == key;
                            if (!have) {
                                cr_assert_lt(nseen, 1024);
                                seen[nseen++] = key;
                                fresh = 1;
                            }
                        }
                        if (!fresh)
                            continue;
                        ran++;
                        gcase k = {.seed = 61000u + (uint64_t)shapes,
                                   .q_dtype = q,
                                   .cache_dtype = c,
                                   .max_num_seqs = 2,
                                   .qh = 2 * groups[gi], /* two KV heads: a head's offset is used */
                                   .kvh = 2,
                                   .hs = hs,
                                   .ps = pss[pi]};
                        run_lens(&k, 2, ql, kl);
                    }
    cr_log_info("ragged_routes: %d of %d shapes run, %d classes", ran, shapes, nseen);
    /* every head size on each kernel, its own element size and fp8 (B) */
    int heads = 0;
    for (int i = 0; i < nseen; i++)
        heads += seen[i] % 4 == 1;
    cr_assert_eq(heads, 2 * 32 * 2, "%d (kernel, head size, element size) classes walked", heads);
}
