/* Ragged paged attention without a GPU: the CPU reference against unpaged
 * attention over contiguous K/V (benchmarks/ragged_problem.h), the masking
 * rules, bad input (nothing written), the workspace bound and the work
 * decomposition policy the device planner follows (coverage, bounds, batch
 * invariance). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ragged_problem.h"
#include "ragged_internal.h"
#include "testutil.h"

/* ---- helpers --------------------------------------------------------------------- */

typedef struct rg_case {
    uint64_t seed;
    pa_dtype q_dtype, cache_dtype;
    int num_seqs, qh, kvh, hs, ps;
    int q_lo, q_hi;         /* q_len range */
    int extra_lo, extra_hi; /* kv_len - q_len range */
    int window;
    float soft_cap, mask_value;
    int sinks; /* attention sinks: pa_sink_logits(qh, seed) */
} rg_case;

static rg_problem *make_case(const rg_case *k, int *q_lens, int *kv_lens) {
    pa_rng r = pa_rng_make(k->seed ^ 0xABCDEFull);
    for (int s = 0; s < k->num_seqs; s++) {
        q_lens[s] = pa_rng_int(&r, k->q_lo, k->q_hi);
        kv_lens[s] = q_lens[s] + pa_rng_int(&r, k->extra_lo, k->extra_hi);
    }
    rg_problem_cfg c = {.seed = k->seed,
                        .q_dtype = k->q_dtype,
                        .cache_dtype = k->cache_dtype,
                        .num_seqs = k->num_seqs,
                        .num_q_heads = k->qh,
                        .num_kv_heads = k->kvh,
                        .head_size = k->hs,
                        .page_size = k->ps,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens,
                        .extra_pages = 3,
                        .extra_cols = 2,
                        .window = k->window,
                        .soft_cap = k->soft_cap,
                        .mask_value = k->mask_value,
                        .with_sinks = k->sinks};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr != NULL, "problem allocation failed");
    return pr;
}

/* Runs the reference and compares every live row with unpaged attention;
 * checks padding rows kept the sentinel. */
static void check_against_plain(const rg_case *k) {
    int *q_lens = malloc(sizeof(int) * (size_t)k->num_seqs), *kv_lens = malloc(sizeof(int) * (size_t)k->num_seqs);
    cr_assert(q_lens && kv_lens);
    rg_problem *pr = make_case(k, q_lens, kv_lens);
    pa_status st = pa_ref_ragged_paged_attention(&pr->p);
    cr_assert_eq(st, PA_SUCCESS, "reference failed: %s", pa_last_error());

    const size_t row_el = (size_t)k->qh * k->hs;
    const size_t n = (size_t)pr->total_rows * row_el;
    float *plain = malloc(sizeof(float) * (n + 1));
    cr_assert(plain);
    rg_problem_plain(pr, plain);
    pa_tolerance tol = pa_tolerance_for(k->q_dtype, k->cache_dtype);
    pa_compare_result res;
    char buf[512];
    int ok = pa_compare(pr->out, k->q_dtype, plain, (int64_t)n, tol, &res);
    cr_assert(ok, "seed %llu %s/%s seqs %d heads %d/%d hs %d ps %d window %d cap %g%s: %s", (unsigned long long)k->seed,
              pa_dtype_name(k->q_dtype), pa_dtype_name(k->cache_dtype), k->num_seqs, k->qh, k->kvh, k->hs, k->ps,
              k->window, (double)k->soft_cap, k->sinks ? " sinks" : "", pa_compare_format(&res, tol, buf, sizeof buf));
    /* rows past the last sequence: untouched */
    const unsigned char *o = (const unsigned char *)pr->out;
    const size_t esz = pa_dtype_size(k->q_dtype);
    for (size_t i = n * esz; i < pr->q_bytes; i++)
        CHK_EQ(o[i], RG_SENTINEL_BYTE, "padding byte %zu was written", i);
    free(plain);
    free(q_lens);
    free(kv_lens);
    rg_problem_free(pr);
}

/* ---- reference vs unpaged attention ---------------------------------------------- */

/* The JAX test grid (seqs x heads x dtypes x page sizes), sampled so the host
 * test stays a few seconds: every combination of heads, dtype and page size
 * runs once with a sequence count drawn from {1, 5, 16} (64 runs on the GPU
 * test). q_len 1..24 here (1..99 on the GPU test), kv_len = q_len + 0..49. */
Test(ragged_ref, jax_grid_sampled) {
    static const int heads[][2] = {{32, 8}, {32, 16}, {16, 2}, {4, 4}, {8, 1}};
    static const pa_dtype dts[] = {PA_DTYPE_F32, PA_DTYPE_BF16};
    static const int pss[] = {16, 32, 128};
    static const int seqs[] = {1, 5, 16};
    pa_rng r = pa_rng_make(7);
    int n = 0;
    for (int h = 0; h < 5; h++)
        for (int d = 0; d < 2; d++)
            for (int b = 0; b < 3; b++) {
                rg_case k = {.seed = 100 + (uint64_t)n,
                             .q_dtype = dts[d],
                             .cache_dtype = dts[d],
                             .num_seqs = seqs[pa_rng_int(&r, 0, 2)],
                             .qh = heads[h][0],
                             .kvh = heads[h][1],
                             .hs = 64,
                             .ps = pss[b],
                             .q_lo = 1,
                             .q_hi = 24,
                             .extra_lo = 0,
                             .extra_hi = 49};
                if (k.num_seqs == 16 && k.qh == 32)
                    k.num_seqs = 5; /* keep the host run short */
                check_against_plain(&k);
                n++;
            }
    cr_assert_eq(n, 30);
}

Test(ragged_ref, head_sizes_and_f16) {
    static const int hss[] = {16, 80, 128, 256};
    for (int i = 0; i < 4; i++) {
        rg_case k = {.seed = 300 + (uint64_t)i,
                     .q_dtype = PA_DTYPE_F16,
                     .cache_dtype = PA_DTYPE_F16,
                     .num_seqs = 3,
                     .qh = 4,
                     .kvh = 2,
                     .hs = hss[i],
                     .ps = 16,
                     .q_lo = 1,
                     .q_hi = 20,
                     .extra_lo = 0,
                     .extra_hi = 30};
        check_against_plain(&k);
    }
}

Test(ragged_ref, odd_page_sizes) {
    static const int pss[] = {1, 3, 7, 256};
    for (int i = 0; i < 4; i++) {
        rg_case k = {.seed = 400 + (uint64_t)i,
                     .q_dtype = PA_DTYPE_BF16,
                     .cache_dtype = PA_DTYPE_BF16,
                     .num_seqs = 4,
                     .qh = 8,
                     .kvh = 2,
                     .hs = 32,
                     .ps = pss[i],
                     .q_lo = 1,
                     .q_hi = 30,
                     .extra_lo = 0,
                     .extra_hi = 40};
        check_against_plain(&k);
    }
}

Test(ragged_ref, sliding_window_and_soft_cap) {
    static const int windows[] = {0, 5, 128, 1};
    static const float caps[] = {0.0f, 50.0f};
    int n = 0;
    for (int w = 0; w < 4; w++)
        for (int c = 0; c < 2; c++) {
            rg_case k = {.seed = 500 + (uint64_t)n++,
                         .q_dtype = w % 2 ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                         .cache_dtype = w % 2 ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                         .num_seqs = 4,
                         .qh = 8,
                         .kvh = 2,
                         .hs = 64,
                         .ps = 16,
                         .q_lo = 1,
                         .q_hi = 40,
                         .extra_lo = 0,
                         .extra_hi = 160,
                         .window = windows[w],
                         .soft_cap = caps[c]};
            check_against_plain(&k);
        }
}

/* A mild mask value: masked keys contribute exp(x + mask - max), as in JAX. */
Test(ragged_ref, soft_mask_value_is_added) {
    rg_case k = {.seed = 600,
                 .q_dtype = PA_DTYPE_F32,
                 .cache_dtype = PA_DTYPE_F32,
                 .num_seqs = 3,
                 .qh = 4,
                 .kvh = 1,
                 .hs = 32,
                 .ps = 8,
                 .q_lo = 1,
                 .q_hi = 10,
                 .extra_lo = 0,
                 .extra_hi = 20,
                 .window = 4,
                 .mask_value = -2.0f};
    check_against_plain(&k);
}

Test(ragged_ref, fp8_pages_with_scales) {
    static const pa_dtype qd[] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    static const pa_dtype cd[] = {PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    int n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++) {
            rg_case k = {.seed = 700 + (uint64_t)n++,
                         .q_dtype = qd[a],
                         .cache_dtype = cd[b],
                         .num_seqs = 3,
                         .qh = 8,
                         .kvh = 2,
                         .hs = 64,
                         .ps = 16,
                         .q_lo = 1,
                         .q_hi = 20,
                         .extra_lo = 0,
                         .extra_hi = 40};
            check_against_plain(&k);
        }
}

/* A long prefill (awkward lengths) and decode rows in one batch. */
Test(ragged_ref, long_prefill_mixed_with_decodes) {
    int q_lens[] = {203, 1, 1, 113, 1};
    int kv_lens[] = {2049, 1025, 1, 113, 1023};
    rg_problem_cfg c = {.seed = 800,
                        .q_dtype = PA_DTYPE_BF16,
                        .cache_dtype = PA_DTYPE_BF16,
                        .num_seqs = 5,
                        .max_num_seqs = 8,
                        .max_tokens = 400,
                        .num_q_heads = 4,
                        .num_kv_heads = 1,
                        .head_size = 32,
                        .page_size = 32,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens,
                        .extra_pages = 2};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const size_t n = (size_t)pr->total_rows * 4 * 32;
    float *plain = malloc(sizeof(float) * n);
    cr_assert(plain);
    rg_problem_plain(pr, plain);
    pa_tolerance tol = pa_tolerance_for(PA_DTYPE_BF16, PA_DTYPE_BF16);
    pa_compare_result res;
    char buf[512];
    cr_assert(pa_compare(pr->out, PA_DTYPE_BF16, plain, (int64_t)n, tol, &res), "%s",
              pa_compare_format(&res, tol, buf, sizeof buf));
    const unsigned char *o = pr->out;
    for (size_t i = n * 2; i < pr->q_bytes; i++)
        CHK_EQ(o[i], RG_SENTINEL_BYTE, "row past the batch written (byte %zu)", i);
    free(plain);
    rg_problem_free(pr);
}

/* Facts that do not come from any attention code: */
/* kv_len 1: the output is the one value row. */
Test(ragged_ref, single_key_returns_its_value) {
    int q_lens[] = {1, 1}, kv_lens[] = {1, 1};
    rg_problem_cfg c = {.seed = 900,
                        .q_dtype = PA_DTYPE_F32,
                        .cache_dtype = PA_DTYPE_F32,
                        .num_seqs = 2,
                        .num_q_heads = 6,
                        .num_kv_heads = 3,
                        .head_size = 16,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const float *o = pr->out;
    for (int s = 0; s < 2; s++)
        for (int h = 0; h < 6; h++)
            for (int d = 0; d < 16; d++)
                CHK_EQ(o[(s * 6 + h) * 16 + d], pr->v_logical[s][(h / 2) * 16 + d]);
    rg_problem_free(pr);
}

/* Attention sinks (gpt-oss; tpu-inference's attention_sink) against unpaged
 * attention that appends the sink as one more score with no value: f32 and
 * bf16, groups 1 to 8, a window, a soft cap (which must not touch the sink), a
 * mild mask value (masked keys still weigh in beside the sink), fp8 pages.
 * pa_sink_logits gives each head its own sink, -inf (none) to far above the
 * logits, so a sink dropped, taken from another head or capped fails. */
Test(ragged_ref, sinks_as_an_extra_score) {
    static const rg_case ks[] = {
        {.seed = 1300,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 5,
         .qh = 16,
         .kvh = 2,
         .hs = 64,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 20,
         .extra_lo = 0,
         .extra_hi = 60,
         .sinks = 1},
        {.seed = 1301,
         .q_dtype = PA_DTYPE_BF16,
         .cache_dtype = PA_DTYPE_BF16,
         .num_seqs = 4,
         .qh = 8,
         .kvh = 8,
         .hs = 64,
         .ps = 32,
         .q_lo = 1,
         .q_hi = 16,
         .extra_lo = 10,
         .extra_hi = 80,
         .window = 9,
         .sinks = 1},
        {.seed = 1302,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 3,
         .qh = 8,
         .kvh = 2,
         .hs = 32,
         .ps = 8,
         .q_lo = 1,
         .q_hi = 12,
         .extra_lo = 0,
         .extra_hi = 40,
         .soft_cap = 0.5f,
         .sinks = 1},
        {.seed = 1303,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 3,
         .qh = 4,
         .kvh = 1,
         .hs = 32,
         .ps = 16,
         .q_lo = 2,
         .q_hi = 12,
         .extra_lo = 0,
         .extra_hi = 30,
         .window = 5,
         .mask_value = -2.0f,
         .sinks = 1},
        {.seed = 1304,
         .q_dtype = PA_DTYPE_F16,
         .cache_dtype = PA_DTYPE_FP8_E4M3,
         .num_seqs = 3,
         .qh = 8,
         .kvh = 4,
         .hs = 64,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 10,
         .extra_lo = 0,
         .extra_hi = 50,
         .sinks = 1},
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        check_against_plain(&ks[i]);
}

/* ---- the log-sum-exp output (ragged.h) -------------------------------------------- */

/* pa_test_lse_run for the reference: ctx the params. */
static pa_status run_ragged_ref_lse(void *ctx, float *lse, int64_t hs, int64_t ts) {
    pa_ragged_params q = *(const pa_ragged_params *)ctx;
    q.lse = lse, q.lse_head_stride = hs, q.lse_token_stride = ts;
    return pa_ref_ragged_paged_attention(&q);
}

/* Every live row's lse against unpaged attention's (rg_problem_plain_lse, its
 * own softmax in double): with sinks (a -inf one among them), a window, a soft
 * cap, a mild mask_value (masked keys then count), an fp8 cache, 16-bit
 * queries. Asking for it changes no output bit; the 5 padding rows past the
 * live ones keep their floats; the other test layouts hold the same values bit
 * for bit. Then a +inf sink: +inf for its head; a sink of 800: 800 (float
 * rounding drops the keys' share); the others as before. */
Test(ragged_ref, lse_is_the_log_of_each_rows_denominator) {
    static const rg_case ks[] = {
        {.seed = 1500,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 4,
         .qh = 8,
         .kvh = 2,
         .hs = 32,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 20,
         .extra_lo = 0,
         .extra_hi = 60,
         .sinks = 1},
        {.seed = 1501,
         .q_dtype = PA_DTYPE_BF16,
         .cache_dtype = PA_DTYPE_BF16,
         .num_seqs = 3,
         .qh = 4,
         .kvh = 4,
         .hs = 64,
         .ps = 8,
         .q_lo = 1,
         .q_hi = 12,
         .extra_lo = 5,
         .extra_hi = 50,
         .window = 7,
         .sinks = 1},
        {.seed = 1502,
         .q_dtype = PA_DTYPE_F32,
         .cache_dtype = PA_DTYPE_F32,
         .num_seqs = 3,
         .qh = 4,
         .kvh = 1,
         .hs = 32,
         .ps = 16,
         .q_lo = 2,
         .q_hi = 12,
         .extra_lo = 0,
         .extra_hi = 30,
         .window = 5,
         .soft_cap = 0.5f,
         .mask_value = -2.0f},
        {.seed = 1503,
         .q_dtype = PA_DTYPE_F16,
         .cache_dtype = PA_DTYPE_FP8_E4M3,
         .num_seqs = 3,
         .qh = 8,
         .kvh = 4,
         .hs = 64,
         .ps = 16,
         .q_lo = 1,
         .q_hi = 10,
         .extra_lo = 0,
         .extra_hi = 50,
         .sinks = 1},
    };
    for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
        const rg_case *k = &ks[c];
        int q_lens[8], kv_lens[8];
        pa_rng r = pa_rng_make(k->seed);
        int rows = 0;
        for (int s = 0; s < k->num_seqs; s++) {
            q_lens[s] = pa_rng_int(&r, k->q_lo, k->q_hi);
            kv_lens[s] = q_lens[s] + pa_rng_int(&r, k->extra_lo, k->extra_hi);
            rows += q_lens[s];
        }
        rg_problem_cfg cfg = {.seed = k->seed,
                              .q_dtype = k->q_dtype,
                              .cache_dtype = k->cache_dtype,
                              .num_seqs = k->num_seqs,
                              .max_tokens = rows + 5,
                              .num_q_heads = k->qh,
                              .num_kv_heads = k->kvh,
                              .head_size = k->hs,
                              .page_size = k->ps,
                              .q_lens = q_lens,
                              .kv_lens = kv_lens,
                              .extra_pages = 2,
                              .window = k->window,
                              .soft_cap = k->soft_cap,
                              .mask_value = k->mask_value,
                              .with_sinks = k->sinks};
        rg_problem *pr = rg_problem_make(&cfg);
        cr_assert(pr);
        const int T = pr->p.max_num_batched_tokens;
        cr_assert_eq(T, rows + 5);
        const size_t n = (size_t)k->qh * (size_t)T;
        char what[64];
        snprintf(what, sizeof what, "case %zu", c);
        cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        unsigned char *plain_out = malloc(pr->q_bytes);
        cr_assert(plain_out);
        memcpy(plain_out, pr->out, pr->q_bytes);
        float *lse = pa_test_nan_floats(n), *want = pa_test_nan_floats(n);
        pr->p.lse = lse;
        cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        pr->p.lse = NULL;
        cr_assert(memcmp(plain_out, pr->out, pr->q_bytes) == 0, "%s: asking for lse changed the output", what);
        float *plain = malloc(sizeof(float) * ((size_t)rows * k->qh * k->hs + 1));
        cr_assert(plain);
        rg_problem_plain_lse(pr, plain, 0, want);
        for (int h = 0; h < k->qh; h++) {
            pa_test_expect_lse(lse + (size_t)h * T, want + (size_t)h * T, (size_t)rows, what);
            for (int t = rows; t < T; t++)
                CHK(isnan(lse[(size_t)h * T + t]), "%s: lse of head %d padding row %d written", what, h, t);
        }
        cr_assert(isnan(lse[n]), "%s: written past the lse array", what);
        /* the other layouts: the same floats, the padding rows' the sentinel */
        float *views_want = pa_test_lse_sentinels(n);
        for (int h = 0; h < k->qh; h++)
            memcpy(views_want + (size_t)h * T, lse + (size_t)h * T, sizeof(float) * (size_t)rows);
        pa_test_lse_views_match(run_ragged_ref_lse, &pr->p, 1, k->qh, T, views_want, 1, what);
        free(views_want);
        if (k->sinks) {
            pr->sinks[1] = INFINITY; /* head 1: every row zero, lse +inf */
            pr->sinks[2] = 800.0f;   /* head 2: far above every logit (e^800 overflows a double), lse 800 */
            float *lse2 = pa_test_nan_floats(n);
            pr->p.lse = lse2;
            cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
            pr->p.lse = NULL;
            for (int h = 0; h < k->qh; h++)
                for (int t = 0; t < rows; t++) {
                    const float g = lse2[(size_t)h * T + t], w = h == 1   ? INFINITY
                                                                 : h == 2 ? 800.0f
                                                                          : lse[(size_t)h * T + t];
                    CHK(g == w, "%s, sinks +inf and 800: lse of head %d row %d is %g, want %g", what, h, t, (double)g,
                        (double)w);
                }
            free(lse2);
        }
        free(plain);
        free(lse);
        free(want);
        free(plain_out);
        rg_problem_free(pr);
    }
}

/* Cascade over the ragged op (ragged.h): decode rows (q_len 1, which see every
 * key of either call) over each sequence's first two pages, then over the rest
 * (its page-table row moved past them, kv_len less 2 pages), both with lse,
 * merged by pa_ref_merge_attn_states: the call over all of its keys, within
 * float rounding. Sinks go to the first call only. f32 throughout. */
Test(ragged_ref, decode_rows_split_by_pages_merge_into_the_whole) {
    for (int sinks = 0; sinks < 2; sinks++) {
        enum { NS = 4, QH = 8, KVH = 2, HS = 32, PS = 8, CUT = 2 * PS };
        const int q_lens[NS] = {1, 1, 1, 1}, kv_lens[NS] = {CUT + 1, CUT + 9, 40, 77};
        rg_problem_cfg cfg = {.seed = 1600 + (uint64_t)sinks,
                              .q_dtype = PA_DTYPE_F32,
                              .cache_dtype = PA_DTYPE_F32,
                              .num_seqs = NS,
                              .num_q_heads = QH,
                              .num_kv_heads = KVH,
                              .head_size = HS,
                              .page_size = PS,
                              .q_lens = q_lens,
                              .kv_lens = kv_lens,
                              .extra_pages = 2,
                              .with_sinks = sinks};
        rg_problem *pr = rg_problem_make(&cfg);
        cr_assert(pr);
        const int T = NS, cols = pr->p.pages_per_seq;
        const size_t n = (size_t)QH * T, ne = n * HS;
        float *whole_lse = pa_test_nan_floats(n), *lse_a = pa_test_nan_floats(n), *lse_b = pa_test_nan_floats(n);
        float *whole = pa_test_nan_floats(ne), *out_a = pa_test_nan_floats(ne), *out_b = pa_test_nan_floats(ne);
        pa_ragged_params p = pr->p;
        p.out = whole, p.lse = whole_lse;
        cr_assert_eq(pa_ref_ragged_paged_attention(&p), PA_SUCCESS, "%s", pa_last_error());
        /* the first CUT keys, with the sinks */
        int32_t kv_a[NS], kv_b[NS];
        for (int s = 0; s < NS; s++)
            kv_a[s] = CUT, kv_b[s] = kv_lens[s] - CUT;
        p.out = out_a, p.lse = lse_a, p.kv_lens = kv_a;
        cr_assert_eq(pa_ref_ragged_paged_attention(&p), PA_SUCCESS, "%s", pa_last_error());
        /* the rest: each row of the page table from column CUT / PS on */
        int32_t *tab = pa_test_tables_past(pr->page_indices, NS, cols, (const int[NS]){CUT, CUT, CUT, CUT}, PS);
        p.out = out_b, p.lse = lse_b, p.kv_lens = kv_b, p.page_indices = tab, p.sinks = NULL;
        cr_assert_eq(pa_ref_ragged_paged_attention(&p), PA_SUCCESS, "%s", pa_last_error());
        pa_test_expect_merged_is_whole(sinks, T, QH, HS, out_a, lse_a, out_b, lse_b, whole, whole_lse);
        free(tab);
        free(whole_lse), free(lse_a), free(lse_b), free(whole), free(out_a), free(out_b);
        rg_problem_free(pr);
    }
}

/* One key and a sink: p = 1 / (1 + e^(sink - x)), out = p v (f32, so p is not
 * rounded); a -inf sink gives v exactly, +inf gives zeros. */
Test(ragged_ref, sink_of_a_single_key) {
    int q_lens[] = {1, 1}, kv_lens[] = {1, 1};
    rg_problem_cfg c = {.seed = 902,
                        .q_dtype = PA_DTYPE_F32,
                        .cache_dtype = PA_DTYPE_F32,
                        .num_seqs = 2,
                        .num_q_heads = 4,
                        .num_kv_heads = 2,
                        .head_size = 16,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    const float sinks[4] = {0.75f, -INFINITY, INFINITY, -1.5f};
    pr->p.sinks = sinks;
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const float *o = pr->out, *q = pr->q;
    for (int s = 0; s < 2; s++)
        for (int h = 0; h < 4; h++) {
            const float *k = pr->k_logical[s] + (h / 2) * 16, *v = pr->v_logical[s] + (h / 2) * 16;
            double dot = 0.0;
            for (int d = 0; d < 16; d++)
                dot += (double)q[(s * 4 + h) * 16 + d] * k[d];
            const double x = (double)pr->p.sm_scale * dot;
            const double pk = h == 1 ? 1.0 : h == 2 ? 0.0 : 1.0 / (1.0 + exp((double)sinks[h] - x));
            for (int d = 0; d < 16; d++) {
                const float got = o[(s * 4 + h) * 16 + d], want = (float)(pk * v[d]);
                if (h == 1 || h == 2)
                    CHK_EQ(got, want, "seq %d head %d dim %d", s, h, d);
                else
                    cr_assert(fabsf(got - want) <= 1e-6f * fabsf(want) + 1e-7f, "seq %d head %d dim %d: %g, want %g", s,
                              h, d, (double)got, (double)want);
            }
        }
    rg_problem_free(pr);
}

/* window 1: every row sees only its own position, so out = v[q_pos]. */
Test(ragged_ref, window_one_sees_only_itself) {
    int q_lens[] = {7, 3}, kv_lens[] = {20, 3};
    rg_problem_cfg c = {.seed = 901,
                        .q_dtype = PA_DTYPE_F32,
                        .cache_dtype = PA_DTYPE_F32,
                        .num_seqs = 2,
                        .num_q_heads = 2,
                        .num_kv_heads = 1,
                        .head_size = 16,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens,
                        .window = 1};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const float *o = pr->out;
    int row = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < q_lens[s]; i++, row++) {
            const int pos = kv_lens[s] - q_lens[s] + i;
            for (int h = 0; h < 2; h++)
                for (int d = 0; d < 16; d++)
                    CHK_EQ(o[(row * 2 + h) * 16 + d], pr->v_logical[s][pos * 16 + d], "row %d head %d", row, h);
        }
    rg_problem_free(pr);
}

/* All logits equal (q = 0): causal rows average their visible values. */
Test(ragged_ref, zero_query_averages_visible_values) {
    int q_lens[] = {5}, kv_lens[] = {9};
    rg_problem_cfg c = {.seed = 902,
                        .q_dtype = PA_DTYPE_F32,
                        .cache_dtype = PA_DTYPE_F32,
                        .num_seqs = 1,
                        .num_q_heads = 1,
                        .num_kv_heads = 1,
                        .head_size = 16,
                        .page_size = 2,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens,
                        .window = 3};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    memset(pr->q, 0, pr->q_bytes);
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const float *o = pr->out;
    for (int i = 0; i < 5; i++) {
        const int pos = 4 + i;
        for (int d = 0; d < 16; d++) {
            double want = 0;
            for (int k = pos - 2; k <= pos; k++)
                want += pr->v_logical[0][k * 16 + d];
            want /= 3;
            CHK(fabs(o[i * 16 + d] - want) < 1e-6, "row %d d %d: %g vs %g", i, d, (double)o[i * 16 + d], want);
        }
    }
    rg_problem_free(pr);
}

/* Writes value `x` into every element of token pos's V row (all KV heads) of
 * sequence s, at the combined layout's offsets spelled out here:
 * [page][slot][2 * kv_heads][head], V at the odd combined heads. */
static void put_value_row(rg_problem *pr, int s, int pos, float x) {
    const pa_ragged_params *p = &pr->p;
    const int ps = p->kv.block_size, nkv = p->kv.num_kv_heads, hs = p->kv.head_size;
    const int64_t page = pr->page_indices[(size_t)s * p->pages_per_seq + pos / ps];
    for (int h = 0; h < nkv; h++)
        for (int d = 0; d < hs; d++) {
            const size_t off = (size_t)(((page * ps + pos % ps) * 2 * nkv + 2 * h + 1) * hs + d);
            pa_store_from_float(p->kv.dtype, pr->cache, off, x);
            cr_assert_eq(pa_load_as_float(p->kv.dtype, pr->cache, off), x, "%g is not exact in the cache", x);
        }
}

/* The JAX reference's two roundings (ragged.h), by hand, where each decides
 * the bf16 output. A zero query gives every key logit 0, so p = 1/kv_len.
 *  - Probabilities rounded to the value dtype: 3 keys, p = bf16(1/3) =
 *    0.333984375 (1/3 = 1.0101010|1...b * 2^-2 rounds up). Values 1, 1,
 *    1 + 2^-7: sum p v = 0.333984375 * 3.0078125 = 1.004554..., which is
 *    0.58 of a bf16 step (2^-7) above 1: out 1.0078125. With exact p the sum
 *    is 3.0078125 / 3 = 1.0026 (0.33 of a step): out 1.0.
 *  - An fp8 value dequantised into the query dtype: e4m3 codes 1.0 and 1.875
 *    x3 with v_scale 1.078125: 1.078125 is bf16, 1.875 * 1.078125 =
 *    2.021484375 rounds to 2.015625 (steps of 2^-6 above 2: 129.375 of them).
 *    p = 1/4: out = (1.078125 + 3 * 2.015625) / 4 = 1.78125, a bf16. Values
 *    left unrounded give 1.78564453125, 228.56 steps: out 1.7890625. */
Test(ragged_ref, probabilities_and_fp8_values_round_to_the_query_dtype) {
    for (int v = 0; v < 2; v++) {
        const int fp8 = v == 1;
        int q_lens[] = {1}, kv_lens[] = {fp8 ? 4 : 3};
        rg_problem_cfg c = {.seed = 910u + (unsigned)v,
                            .q_dtype = PA_DTYPE_BF16,
                            .cache_dtype = fp8 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_BF16,
                            .num_seqs = 1,
                            .num_q_heads = 2,
                            .num_kv_heads = 1,
                            .head_size = 16,
                            .page_size = 2,
                            .q_lens = q_lens,
                            .kv_lens = kv_lens};
        rg_problem *pr = rg_problem_make(&c);
        cr_assert(pr);
        memset(pr->q, 0, pr->q_bytes);
        const float vals[2][4] = {{1.0f, 1.0f, 1.0078125f}, {1.0f, 1.875f, 1.875f, 1.875f}};
        for (int k = 0; k < kv_lens[0]; k++)
            put_value_row(pr, 0, k, vals[v][k]);
        if (fp8)
            pr->v_scale = 1.078125f;
        cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        const float want = fp8 ? 1.78125f : 1.0078125f;
        for (int i = 0; i < 2 * 16; i++)
            cr_assert_eq(pa_load_as_float(PA_DTYPE_BF16, pr->out, (size_t)i), want, "%s: out[%d] = %.9g, want %.9g",
                         fp8 ? "fp8 values" : "probabilities", i,
                         (double)pa_load_as_float(PA_DTYPE_BF16, pr->out, (size_t)i), (double)want);
        rg_problem_free(pr);
    }
}

/* num_seqs below max_num_seqs: the later table rows (garbage) are not read and
 * their output rows stay untouched. */
Test(ragged_ref, num_seqs_below_max_leaves_rest_untouched) {
    int q_lens[] = {3, 1, 4}, kv_lens[] = {10, 5, 4};
    rg_problem_cfg c = {.seed = 903,
                        .q_dtype = PA_DTYPE_BF16,
                        .cache_dtype = PA_DTYPE_BF16,
                        .num_seqs = 3,
                        .max_num_seqs = 6,
                        .max_tokens = 32,
                        .num_q_heads = 4,
                        .num_kv_heads = 2,
                        .head_size = 32,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    pr->num_seqs = 2; /* the third sequence exists in the arrays but is not live */
    pr->kv_lens[3] = 1 << 30;
    pr->kv_lens[4] = -5;
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const unsigned char *o = pr->out;
    const size_t live = (size_t)4 * 4 * 32; /* rows 0..3, in elements */
    for (size_t i = 0; i < live; i++) {
        const float v = pa_load_as_float(PA_DTYPE_BF16, pr->out, i);
        CHK(fabsf(v) <= 1.0f, "live element %zu = %g (unwritten?)", i, (double)v);
    }
    for (size_t i = live * 2; i < pr->q_bytes; i++)
        CHK_EQ(o[i], RG_SENTINEL_BYTE, "byte %zu past num_seqs written", i);
    pr->num_seqs = 3;
    rg_problem_free(pr);
}

/* ---- bad input: clear error, nothing written -------------------------------------- */

static rg_problem *small_problem(void) {
    static int q_lens[] = {2, 1}, kv_lens[] = {5, 3};
    rg_problem_cfg c = {.seed = 1000,
                        .q_dtype = PA_DTYPE_F32,
                        .cache_dtype = PA_DTYPE_F32,
                        .num_seqs = 2,
                        .num_q_heads = 4,
                        .num_kv_heads = 2,
                        .head_size = 32,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    return pr;
}

static void expect_error_dev(rg_problem *pr, pa_status want, const char *needle, int device_data) {
    pa_status st = pa_ref_ragged_paged_attention(&pr->p);
    cr_assert_eq(st, want, "got %s (%s), want %s", pa_status_string(st), pa_last_error(), pa_status_string(want));
    cr_assert(strstr(pa_last_error(), needle) != NULL, "message '%s' lacks '%s'", pa_last_error(), needle);
    const unsigned char *o = pr->out;
    for (size_t i = 0; i < pr->q_bytes; i++)
        CHK_EQ(o[i], RG_SENTINEL_BYTE, "output byte %zu written on error", i);
    size_t ws = 0;
    pa_status wst = pa_ragged_workspace_size(&pr->p, &ws);
    /* device-side data is not checked by validate / workspace_size */
    if (!device_data)
        cr_assert_eq(wst, want, "workspace_size disagrees with the reference on %s", needle);
    else
        cr_assert_eq(wst, PA_SUCCESS, "workspace_size must not read device data (%s)", pa_last_error());
}

static void expect_error(rg_problem *pr, pa_status want, const char *needle) { expect_error_dev(pr, want, needle, 0); }

Test(ragged_bad, q_len_greater_than_kv_len) {
    rg_problem *pr = small_problem();
    pr->kv_lens[1] = 0; /* q_len 1 > kv_len 0 */
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "q_len 1 > kv_len 0", 1);
    rg_problem_free(pr);
}

Test(ragged_bad, negative_window) {
    rg_problem *pr = small_problem();
    pr->p.sliding_window = -1;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "sliding_window");
    rg_problem_free(pr);
}

Test(ragged_bad, negative_or_nan_soft_cap) {
    rg_problem *pr = small_problem();
    pr->p.soft_cap = -1.0f;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "soft_cap");
    pr->p.soft_cap = NAN;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "soft_cap");
    rg_problem_free(pr);
}

/* decode_validate/soft_cap_range's table: the ragged kernel divides by the cap
 * with __fdividef, 0 past 2^126. */
Test(ragged_bad, soft_cap_range) {
    for (int i = 0; i < PA_TEST_SOFT_CAPS; i++) {
        rg_problem *pr = small_problem();
        pr->p.soft_cap = pa_test_soft_caps[i].cap;
        size_t ws = 0;
        const pa_status want = pa_test_soft_caps[i].ok ? PA_SUCCESS : PA_ERR_INVALID_ARGUMENT;
        const pa_status got = pa_ragged_workspace_size(&pr->p, &ws);
        cr_assert_eq(got, want, "soft cap %s: got %s (%s)", pa_test_soft_caps[i].what, pa_status_string(got),
                     pa_last_error());
        if (want != PA_SUCCESS)
            expect_error(pr, want, "soft_cap");
        rg_problem_free(pr);
    }
}

Test(ragged_bad, infinite_mask_value) {
    rg_problem *pr = small_problem();
    pr->p.mask_value = -INFINITY;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "mask_value");
    rg_problem_free(pr);
}

Test(ragged_bad, heads_not_a_multiple) {
    rg_problem *pr = small_problem();
    pr->p.num_q_heads = 3;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "not a multiple");
    pr->p.num_q_heads = 0;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "num_q_heads");
    rg_problem_free(pr);
}

Test(ragged_bad, unsupported_head_size_and_dtypes) {
    rg_problem *pr = small_problem();
    pr->p.kv.head_size = 36;
    expect_error(pr, PA_ERR_UNSUPPORTED, "head_size 36");
    pr->p.kv.head_size = 272;
    expect_error(pr, PA_ERR_UNSUPPORTED, "head_size 272");
    pr->p.kv.head_size = 32;
    pr->p.kv.dtype = PA_DTYPE_BF16; /* f32 query with a bf16 cache */
    expect_error(pr, PA_ERR_UNSUPPORTED, "cache dtype bf16");
    pr->p.kv.dtype = PA_DTYPE_F32;
    pr->p.q_dtype = PA_DTYPE_FP8_E4M3;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "q_dtype");
    pr->p.q_dtype = PA_DTYPE_F32;
    pr->p.kv.layout = PA_LAYOUT_FLASH_NHD;
    pr->p.kv.value = pr->p.kv.key;
    /* a valid cache the op does not serve: unsupported, as decode refuses the combined one */
    expect_error(pr, PA_ERR_UNSUPPORTED, "PA_LAYOUT_COMBINED");
    rg_problem_free(pr);
}

/* An empty batch (max_num_seqs or max_num_batched_tokens 0; ragged.h): valid,
 * a workspace of 0 bytes, and a reference call that reads no pointer (every
 * one NULL but the cache's, out and lse) and writes nothing. Its sizes and options are
 * still checked: a negative count, a bad option or lse strides that collide
 * are refused, with nothing written. */
Test(ragged_ref, empty_batch_is_a_no_op) {
    static const int32_t sizes[3][2] = {{0, 3}, {2, 0}, {0, 0}};
    for (int k = 0; k < 3; k++) {
        rg_problem *pr = small_problem();
        const size_t nl = 4 * 3 + 1;
        float *lse = pa_test_nan_floats(nl);
        pa_ragged_params p = pr->p;
        p.max_num_seqs = sizes[k][0];
        p.max_num_batched_tokens = sizes[k][1];
        p.q = NULL, p.kv_lens = NULL, p.page_indices = NULL, p.cu_q_lens = NULL, p.num_seqs = NULL;
        p.lse = lse;
        size_t ws = 7;
        cr_assert_eq(pa_ragged_validate(&p), PA_SUCCESS, "sizes %d, %d: %s", sizes[k][0], sizes[k][1], pa_last_error());
        cr_assert_eq(pa_ragged_workspace_size(&p, &ws), PA_SUCCESS, "%s", pa_last_error());
        cr_assert_eq(ws, 0, "sizes %d, %d: workspace %zu bytes", sizes[k][0], sizes[k][1], ws);
        cr_assert_eq(pa_ref_ragged_paged_attention(&p), PA_SUCCESS, "%s", pa_last_error());
        const unsigned char *o = pr->out;
        for (size_t i = 0; i < pr->q_bytes; i++)
            CHK_EQ(o[i], RG_SENTINEL_BYTE, "sizes %d, %d: output byte %zu written", sizes[k][0], sizes[k][1], i);
        for (size_t i = 0; i < nl; i++)
            CHK(isnan(lse[i]), "sizes %d, %d: lse[%zu] written", sizes[k][0], sizes[k][1], i);
        /* still refused: a negative count beside the 0, a bad option, colliding lse strides */
        pa_ragged_params bad = p;
        if (bad.max_num_seqs == 0)
            bad.max_num_batched_tokens = -1;
        else
            bad.max_num_seqs = -1;
        cr_assert_eq(pa_ref_ragged_paged_attention(&bad), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "must be >= 0") != NULL, "%s", pa_last_error());
        bad = p;
        bad.sm_scale = NAN;
        cr_assert_eq(pa_ref_ragged_paged_attention(&bad), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "sm_scale") != NULL, "%s", pa_last_error());
        bad = p;
        bad.lse_head_stride = 1, bad.lse_token_stride = 1;
        if (bad.max_num_batched_tokens > 1) {
            cr_assert_eq(pa_ragged_validate(&bad), PA_ERR_INVALID_ARGUMENT);
            cr_assert(strstr(pa_last_error(), "lse strides") != NULL, "%s", pa_last_error());
        }
        for (size_t i = 0; i < pr->q_bytes; i++)
            CHK_EQ(o[i], RG_SENTINEL_BYTE, "sizes %d, %d: output byte %zu written on a refusal", sizes[k][0],
                   sizes[k][1], i);
        free(lse);
        rg_problem_free(pr);
    }
}

Test(ragged_bad, shapes_pointers_and_options) {
    rg_problem *pr = small_problem();
    pa_ragged_params keep = pr->p;
    pr->p.max_num_seqs = -1;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "max_num_seqs");
    pr->p = keep;
    pr->p.max_num_batched_tokens = -1;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "max_num_batched_tokens");
    pr->p = keep;
    pr->p.pages_per_seq = 0;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "pages_per_seq");
    pr->p = keep;
    pr->p.sm_scale = INFINITY;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "sm_scale");
    pr->p = keep;
    pr->p.kv_split_tokens = 100;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "kv_split_tokens");
    pr->p = keep;
    pr->p.cu_q_lens = NULL;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "cu_q_lens");
    pr->p = keep;
    pr->p.q = (const char *)pr->q + 4;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "16-byte aligned");
    pr->p = keep;
    const float sinks[5] = {0};
    pr->p.sinks = (const float *)((const char *)sinks + 2);
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "sinks");
    pr->p = keep;
    cr_assert_eq(pa_ragged_validate(NULL), PA_ERR_INVALID_ARGUMENT);
    rg_problem_free(pr);
}

/* A NaN sink is refused by the reference (the kernels cannot see it). */
Test(ragged_bad, nan_sink) {
    rg_problem *pr = small_problem();
    const float sinks[4] = {0.5f, -INFINITY, NAN, 1.0f};
    pr->p.sinks = sinks;
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "sinks[2] is NaN", 1);
    rg_problem_free(pr);
}

Test(ragged_bad, device_data_checked_by_the_reference) {
    rg_problem *pr = small_problem();
    pr->num_seqs = 3; /* > max_num_seqs 2 */
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "num_seqs 3", 1);
    pr->num_seqs = 2;
    pr->cu_q_lens[1] = 3;
    pr->cu_q_lens[2] = 1; /* decreasing */
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "sequence 1: cu_q_lens", 1);
    pr->cu_q_lens[1] = 2;
    pr->cu_q_lens[2] = 3;
    pr->kv_lens[0] = 1000; /* more than pages_per_seq * page_size */
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "sequence 0: kv_len 1000", 1);
    pr->kv_lens[0] = 5;
    pr->page_indices[pr->p.pages_per_seq + 0] = -1;
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "sequence 1: page_indices[1][0] = -1", 1);
    rg_problem_free(pr);
}

/* Pages of nearly 2^31 tokens (any page size >= 1 is allowed): the count of a
 * sequence's pages was (kv_len + page_size - 1) / page_size in int, which wraps
 * negative there, so no page id was checked and a bad one was read (a crash).
 * The cache buffers are the small problem's: the reference must refuse before
 * it reads any page. */
Test(ragged_bad, page_ids_checked_at_page_sizes_near_int32_max) {
    rg_problem *pr = small_problem();
    pr->p.kv.block_size = INT32_MAX - 65;
    pr->p.pages_per_seq = 1; /* pages_per_seq * page_size <= INT32_MAX - 64 */
    pr->p.kv.num_blocks = 1;
    pr->kv_lens[0] = 100;    /* 100 + page_size - 1 passes INT32_MAX */
    pr->page_indices[0] = 3; /* sequence 0's one page: past the pool */
    pr->page_indices[1] = 0;
    expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, "sequence 0: page_indices[0][0] = 3 outside 0..0", 1);
    /* one page more than that range holds (found unreached by scripts/refusal-coverage.py) */
    pr->p.kv.block_size = INT32_MAX - 63;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "ragged: pages_per_seq 1 * page_size 2147483584 exceeds the int32 token");
    pr->p.kv.block_size = 1 << 20;
    pr->p.pages_per_seq = 2048;
    expect_error(pr, PA_ERR_INVALID_ARGUMENT, "ragged: pages_per_seq 2048 * page_size 1048576 exceeds the int32 token");
    rg_problem_free(pr);
}

Test(ragged_bad, fp8_scales_checked_by_the_reference) {
    /* The reference reads kv.k_scale / kv.v_scale from host memory: 0, a
     * negative, NaN or infinite scale is an error (the device entries cannot
     * see it), and nothing is written. */
    static int q_lens[] = {2, 1}, kv_lens[] = {5, 3};
    rg_problem_cfg c = {.seed = 1001,
                        .q_dtype = PA_DTYPE_BF16,
                        .cache_dtype = PA_DTYPE_FP8_E4M3,
                        .num_seqs = 2,
                        .num_q_heads = 4,
                        .num_kv_heads = 2,
                        .head_size = 32,
                        .page_size = 4,
                        .q_lens = q_lens,
                        .kv_lens = kv_lens};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    const float good_k = pr->k_scale, good_v = pr->v_scale;
    const float bad[5] = {0.0f, -2.0f, NAN, INFINITY, -INFINITY};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 5; i++) {
            pr->k_scale = w == 0 ? bad[i] : good_k;
            pr->v_scale = w == 1 ? bad[i] : good_v;
            expect_error_dev(pr, PA_ERR_INVALID_ARGUMENT, w ? "v_scale" : "k_scale", 1);
        }
    pr->k_scale = good_k;
    pr->v_scale = good_v;
    cr_assert_eq(pa_ref_ragged_paged_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    rg_problem_free(pr);
}

/* ---- workspace, page size ---------------------------------------------------------- */

Test(ragged_api, workspace_size_bounds) {
    rg_problem *pr = small_problem();
    size_t a = 0, b = 0, c2 = 0;
    cr_assert_eq(pa_ragged_workspace_size(&pr->p, &a), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(a > 0);
    pr->p.max_num_seqs = 2;
    pr->p.pages_per_seq = 4000; /* long contexts: room for KV splits */
    cr_assert_eq(pa_ragged_workspace_size(&pr->p, &b), PA_SUCCESS);
    cr_assert(b > a, "%zu vs %zu", b, a);
    pr->p.kv_split_tokens = 64;
    cr_assert_eq(pa_ragged_workspace_size(&pr->p, &c2), PA_SUCCESS);
    cr_assert(c2 > b, "%zu vs %zu", c2, b);
    cr_assert_eq(pa_ragged_workspace_size(&pr->p, NULL), PA_ERR_INVALID_ARGUMENT);
    pr->p.sliding_window = -3;
    cr_assert_eq(pa_ragged_workspace_size(&pr->p, &a), PA_ERR_INVALID_ARGUMENT);
    rg_problem_free(pr);
}

/* The worst batch's work list at sizes whose products pass 2^63: once these
 * wrapped, to 0 items (a 256-byte workspace) or to a negative count that passed
 * the 32-bit refusal. Now each is refused as past the work list, as the same
 * sizes with fewer heads are. Nothing is read through the pointers. */
Test(ragged_api, workspace_size_refuses_sizes_past_int64) {
    static _Alignas(256) char buf[1024];
    int32_t ns = 1;
    const struct {
        int32_t kvh, tokens, seqs;
    } cases[] = {{64, 1 << 29, 1 << 22}, {65536, 1 << 29, 1 << 22}, {512, 1 << 29, 1 << 29}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pa_ragged_params p = {.out = buf,
                              .q = buf,
                              .q_dtype = PA_DTYPE_F32,
                              .kv = {.layout = PA_LAYOUT_COMBINED,
                                     .dtype = PA_DTYPE_F32,
                                     .key = buf,
                                     .num_blocks = 1,
                                     .block_size = 1,
                                     .num_kv_heads = cases[i].kvh,
                                     .head_size = 8},
                              .kv_lens = (int32_t *)buf,
                              .page_indices = (int32_t *)buf,
                              .cu_q_lens = (int32_t *)buf,
                              .num_seqs = &ns,
                              .pages_per_seq = 1 << 30,
                              .max_num_seqs = cases[i].seqs,
                              .max_num_batched_tokens = cases[i].tokens,
                              .num_q_heads = cases[i].kvh,
                              .sm_scale = 1.0f,
                              .kv_split_tokens = 64};
        size_t bytes = 12345;
        pa_status st = pa_ragged_workspace_size(&p, &bytes);
        cr_assert_eq(st, PA_ERR_UNSUPPORTED, "case %zu (%d KV heads): %s, %zu bytes (%s)", i, cases[i].kvh,
                     pa_status_string(st), bytes, pa_last_error());
        cr_assert(strstr(pa_last_error(), "past the 32-bit work list") != NULL, "case %zu: %s", i, pa_last_error());
        cr_assert_eq(bytes, 12345, "case %zu: bytes written on error", i);
        cr_assert_eq(pa_ragged_validate(&p), PA_ERR_UNSUPPORTED, "case %zu: validate", i);
    }
}

Test(ragged_api, preferred_page_size) {
    int32_t a = 0, b = 0;
    cr_assert_eq(pa_ragged_preferred_page_size(32768, &a), PA_SUCCESS);
    cr_assert_eq(pa_get_page_size(32768, &b), PA_SUCCESS);
    cr_assert_eq(a, b);
    cr_assert_eq(a, 256);
    cr_assert_eq(pa_ragged_preferred_page_size(100, &a), PA_SUCCESS);
    cr_assert_eq(a, 16);
    cr_assert_eq(pa_ragged_preferred_page_size(0, &a), PA_ERR_INVALID_ARGUMENT);
}

/* ---- work decomposition policy ----------------------------------------------------- */

typedef struct plan_out {
    pa_rg_item *items;
    pa_rg_merge *merges;
    pa_rg_plan_totals tot;
    pa_rg_ws_layout wl;
} plan_out;

static void plan(const pa_ragged_params *p, const int32_t *kv, const int32_t *cu, int32_t ns, plan_out *o) {
    pa_rg_ws_layout_make(p, &o->wl);
    o->items = malloc(sizeof(pa_rg_item) * (size_t)(o->wl.max_items + 1));
    o->merges = malloc(sizeof(pa_rg_merge) * (size_t)(o->wl.max_merges + 1));
    cr_assert(o->items && o->merges);
    cr_assert_eq(pa_rg_plan_host(p, kv, cu, ns, o->items, o->wl.max_items, o->merges, o->wl.max_merges, &o->tot),
                 PA_SUCCESS, "%s", pa_last_error());
    CHK(o->tot.items <= o->wl.max_items, "items %lld > bound %lld", (long long)o->tot.items,
        (long long)o->wl.max_items);
    CHK(o->tot.merges <= o->wl.max_merges);
    CHK(o->tot.part_rows <= o->wl.max_part_rows, "partial rows %lld > bound %lld", (long long)o->tot.part_rows,
        (long long)o->wl.max_part_rows);
}

static void plan_free(plan_out *o) {
    free(o->items);
    free(o->merges);
}

/* The keys a row range reads, worked by hand (check_plan below holds the planner
 * to this function): a sequence of 10 new tokens after 90 cached (positions
 * 90..99), 2 query heads a KV head, so packed rows 0..3 are positions 90 and
 * 91. Causal: keys [0, 92); a window of 8: [83, 92) (position 90 sees 83..90);
 * a window past the start: from 0; rows 18..19 (position 99): [0, 100) and
 * [92, 100); a soft mask reads every key. A window's lower bound moved to 0
 * would change no output (the kernels mask each key) and only read keys no row
 * sees. */
Test(ragged_plan, key_ranges_by_hand) {
    int32_t lo = -1, hi = -1;
    pa_rg_key_range(10, 100, 2, 0, 1, 0, 4, &lo, &hi);
    cr_assert(lo == 0 && hi == 92, "causal: [%d, %d)", lo, hi);
    pa_rg_key_range(10, 100, 2, 8, 1, 0, 4, &lo, &hi);
    cr_assert(lo == 83 && hi == 92, "window 8: [%d, %d)", lo, hi);
    pa_rg_key_range(10, 100, 2, 95, 1, 0, 4, &lo, &hi);
    cr_assert(lo == 0 && hi == 92, "window 95: [%d, %d)", lo, hi);
    pa_rg_key_range(10, 100, 2, 0, 1, 18, 20, &lo, &hi);
    cr_assert(lo == 0 && hi == 100, "last row, causal: [%d, %d)", lo, hi);
    pa_rg_key_range(10, 100, 2, 8, 1, 18, 20, &lo, &hi);
    cr_assert(lo == 92 && hi == 100, "last row, window 8: [%d, %d)", lo, hi);
    pa_rg_key_range(10, 100, 2, 8, 0, 0, 4, &lo, &hi);
    cr_assert(lo == 0 && hi == 100, "soft mask: [%d, %d)", lo, hi);
}

/* Every live (seq, kv head, row) is covered by tiles whose key ranges are
 * exactly the keys it needs (hard mask: causal/window range of the tile;
 * soft: all keys), split into disjoint consecutive chunks; partial rows of
 * distinct items never overlap; merge tasks match their items. */
static void check_plan(const pa_ragged_params *p, const int32_t *kv, const int32_t *cu, int32_t ns, const plan_out *o) {
    const int nkv = p->kv.num_kv_heads, group = p->num_q_heads / nkv;
    const int hard = pa_rg_hard_mask(p);
    unsigned char *part_used = calloc((size_t)o->tot.part_rows + 1, 1);
    int32_t *merge_seen = calloc((size_t)o->tot.merges + 1, sizeof(int32_t));
    cr_assert(part_used && merge_seen);
    for (int32_t s = 0; s < ns; s++) {
        const int32_t q_len = cu[s + 1] - cu[s];
        const int32_t rows = q_len * group;
        for (int h = 0; h < nkv; h++) {
            /* collect this (seq, head)'s items, tile by tile */
            int32_t covered = 0;
            for (int32_t row0 = 0; row0 < rows;) {
                int32_t lo, hi, nrows = -1, next_k = -1, chunks = 0, merge = -2;
                for (int64_t i = 0; i < o->tot.items; i++) {
                    const pa_rg_item *it = &o->items[i];
                    if (it->seq != s || it->kvh != h || it->row0 != row0)
                        continue;
                    if (nrows < 0) {
                        nrows = it->nrows;
                        pa_rg_key_range(q_len, kv[s], group, p->sliding_window, hard, row0, row0 + nrows, &lo, &hi);
                        next_k = lo;
                    }
                    CHK_EQ(it->nrows, nrows);
                    CHK_EQ(it->k_lo, next_k, "seq %d head %d row0 %d: chunk starts at %d, want %d", s, h, row0,
                           it->k_lo, next_k);
                    CHK(it->k_hi > it->k_lo, "empty item");
                    next_k = it->k_hi;
                    chunks++;
                    if (merge == -2)
                        merge = it->merge;
                    CHK_EQ(it->merge, merge, "one tile, one merge task");
                    if (it->part >= 0) {
                        for (int r = 0; r < nrows; r++) {
                            CHK(!part_used[it->part + r], "partial row %d used twice", it->part + r);
                            part_used[it->part + r] = 1;
                        }
                    }
                }
                cr_assert(nrows > 0, "seq %d head %d: rows from %d not covered (q_len %d kv_len %d ns %d)", s, h, row0,
                          q_len, kv[s], ns);
                CHK_EQ(next_k, hi, "seq %d head %d row0 %d: chunks end at %d, want %d", s, h, row0, next_k, hi);
                /* Tiles as the planner's comment defines them: 16 rows for a decode, else 128 on the
                 * tensor-core kernel up to head 128 and 64 above it or for f32 queries. */
                const int tr = rows <= 16 ? 16 : p->q_dtype != PA_DTYPE_F32 && p->kv.head_size <= 128 ? 128 : 64;
                CHK_EQ(nrows, rows - row0 < tr ? rows - row0 : tr, "seq %d row0 %d of %d: tile rows %d", s, row0, rows,
                       tr);
                if (chunks > 1) {
                    cr_assert(merge >= 0);
                    const pa_rg_merge *m = &o->merges[merge];
                    CHK_EQ(m->seq, s);
                    CHK_EQ(m->kvh, h);
                    CHK_EQ(m->row0, row0);
                    CHK_EQ(m->n_split, chunks);
                    merge_seen[merge]++;
                } else {
                    CHK_EQ(merge, -1, "a one-chunk tile writes directly");
                }
                covered += nrows;
                row0 += nrows;
            }
            CHK_EQ(covered, rows);
        }
    }
    for (int64_t m = 0; m < o->tot.merges; m++)
        CHK_EQ(merge_seen[m], 1, "merge task %lld", (long long)m);
    free(part_used);
    free(merge_seen);
}

static pa_ragged_params plan_params(int S, int T, int qh, int kvh, int ps, int cols, int window, float mask,
                                    int split) {
    pa_ragged_params p;
    memset(&p, 0, sizeof p);
    p.out = pa_test_addr(0); /* each buffer a range of its own (validation alone) */
    p.q = pa_test_addr(1);
    p.q_dtype = PA_DTYPE_BF16;
    p.kv = (pa_kv_cache){.layout = PA_LAYOUT_COMBINED,
                         .dtype = PA_DTYPE_BF16,
                         .key = pa_test_addr(2),
                         .num_blocks = 1,
                         .block_size = ps,
                         .num_kv_heads = kvh,
                         .head_size = 128};
    p.kv_lens = (const int32_t *)pa_test_addr(3);
    p.page_indices = (const int32_t *)pa_test_addr(4);
    p.cu_q_lens = (const int32_t *)pa_test_addr(5);
    p.num_seqs = (const int32_t *)pa_test_addr(6);
    p.pages_per_seq = cols;
    p.max_num_seqs = S;
    p.max_num_batched_tokens = T;
    p.num_q_heads = qh;
    p.sm_scale = 1.0f;
    p.sliding_window = window;
    p.mask_value = mask;
    p.kv_split_tokens = split;
    cr_assert_eq(pa_ragged_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    return p;
}

/* The three tile sizes: bf16 at head 128 (128-row tiles), f32 at head 128 and
 * bf16 at head 256 (64-row tiles). */
static void set_kernel(pa_ragged_params *p, int k) {
    p->q_dtype = p->kv.dtype = k == 1 ? PA_DTYPE_F32 : PA_DTYPE_BF16;
    p->kv.head_size = k == 2 ? 256 : 128;
    cr_assert_eq(pa_ragged_validate(p), PA_SUCCESS, "%s", pa_last_error());
}

Test(ragged_plan, random_batches_cover_and_fit) {
    pa_rng r = pa_rng_make(42);
    static const int heads[][2] = {{32, 8}, {32, 16}, {16, 2}, {4, 4}, {8, 1}, {64, 1}};
    for (int iter = 0; iter < 300; iter++) {
        const int S = pa_rng_int(&r, 1, 24), ps = 1 << pa_rng_int(&r, 0, 8), cols = pa_rng_int(&r, 1, 80);
        const int L = ps * cols;
        const int *hd = heads[pa_rng_int(&r, 0, 5)];
        const int window = pa_rng_int(&r, 0, 2) == 0 ? 0 : pa_rng_int(&r, 1, 3000);
        const float mask = pa_rng_int(&r, 0, 3) == 0 ? -10.0f : 0.0f;
        const int split = pa_rng_int(&r, 0, 3) == 0 ? 64 * pa_rng_int(&r, 1, 8) : 0;
        int32_t kv[25], cu[26];
        int T = 0;
        cu[0] = 0;
        const int ns = pa_rng_int(&r, 0, S);
        for (int s = 0; s < ns; s++) {
            kv[s] = pa_rng_int(&r, 1, L);
            const int kind = pa_rng_int(&r, 0, 3);
            int q = kind == 0 ? 1 : kind == 1 ? pa_rng_int(&r, 1, 4) : pa_rng_int(&r, 1, kv[s]);
            if (q > kv[s])
                q = kv[s];
            if (q > 3000)
                q = 3000;
            cu[s + 1] = cu[s] + q;
            T = cu[s + 1];
        }
        for (int s = ns; s < S; s++) {
            kv[s] = 0;
            cu[s + 1] = cu[ns];
        }
        pa_ragged_params p = plan_params(S, T > 0 ? T : 1, hd[0], hd[1], ps, cols, window, mask, split);
        set_kernel(&p, iter % 3);
        plan_out o;
        plan(&p, kv, cu, ns, &o);
        check_plan(&p, kv, cu, ns, &o);
        plan_free(&o);
    }
}

/* kv_split_tokens up to INT32_MAX - 63 (any positive multiple of 64 is
 * valid): the planner counted chunks as (span + split - 1) / split in int32,
 * a signed overflow there (UBSan, in the ASan build, halts on it). Each
 * sequence's keys are one chunk: no merge. Then a split of 2^30 + 64 over a
 * decode of 2^30 + 200 keys: two chunks, the second's end formed as its start
 * plus the split, past INT32_MAX (wrapped, the chunk was empty and its keys
 * dropped from the merge); it ends at the sequence's last key. */
Test(ragged_plan, split_tokens_near_int32_max) {
    int32_t kv[2] = {100, 5000}, cu[3] = {0, 1, 40};
    pa_ragged_params p = plan_params(2, 40, 8, 2, 16, 400, 0, 0.0f, INT32_MAX - 63);
    plan_out o;
    plan(&p, kv, cu, 2, &o);
    check_plan(&p, kv, cu, 2, &o);
    CHK_EQ(o.tot.merges, 0, "one chunk a sequence: no merge, got %lld", (long long)o.tot.merges);
    for (int64_t i = 0; i < o.tot.items; i++)
        CHK(o.items[i].k_lo == 0 && o.items[i].part < 0, "item %lld: keys from %d, partial rows at %d", (long long)i,
            o.items[i].k_lo, o.items[i].part);
    plan_free(&o);

    const int32_t split = (1 << 30) + 64, big = (1 << 30) + 200;
    int32_t kv2[1] = {big}, cu2[2] = {0, 1};
    p = plan_params(1, 1, 8, 2, 256, big / 256 + 1, 0, 0.0f, split);
    plan(&p, kv2, cu2, 1, &o);
    check_plan(&p, kv2, cu2, 1, &o);
    CHK_EQ(o.tot.items, 4, "2 KV heads x 2 chunks, got %lld items", (long long)o.tot.items);
    for (int64_t i = 0; i < o.tot.items; i++) {
        const int second = o.items[i].k_lo > 0;
        CHK(o.items[i].k_lo == (second ? split : 0) && o.items[i].k_hi == (second ? big : split),
            "item %lld: keys %d..%d", (long long)i, o.items[i].k_lo, o.items[i].k_hi);
    }
    plan_free(&o);
}

/* The worst batches the bound was derived for: every sequence a decode at the
 * longest context, or a small prefill chunk splitting the most. */
Test(ragged_plan, adversarial_batches_fit_the_bound) {
    static const int heads[][2] = {{32, 8}, {8, 1}, {4, 4}, {64, 2}};
    for (int hi = 0; hi < 4; hi++)
        for (int kind = 0; kind < 6; kind++)
            for (int k = 0; k < 3; k++) {
                const int S = 40, cols = 2048, ps = 16, L = cols * ps;
                const int g = heads[hi][0] / heads[hi][1];
                int32_t kv[40], cu[41];
                cu[0] = 0;
                for (int s = 0; s < S; s++) {
                    int q;
                    if (kind == 0)
                        q = 1;
                    else if (kind == 1)
                        q = PA_RG_DEC_ROWS / g > 0 ? PA_RG_DEC_ROWS / g : 1;
                    else if (kind == 2)
                        q = 64 / g + 1;
                    else if (kind == 3)
                        q = 128 / g;
                    else if (kind == 4)
                        q = 128 / g + 1;
                    else
                        q = 256 / g;
                    if (q < 1)
                        q = 1;
                    kv[s] = L;
                    cu[s + 1] = cu[s] + q;
                }
                pa_ragged_params p = plan_params(S, cu[S], heads[hi][0], heads[hi][1], ps, cols, 0, 0.0f, 0);
                set_kernel(&p, k);
                plan_out o;
                plan(&p, kv, cu, S, &o);
                check_plan(&p, kv, cu, S, &o);
                /* A prefill of 3 or more tiles is enough work unsplit (k 1 and 2: 64-row tiles). */
                const int rows = (cu[1] - cu[0]) * g, tiles = rows <= 16 ? 1 : (rows + (k ? 63 : 127)) / (k ? 64 : 128);
                cr_assert(o.tot.part_rows > 0 || tiles > 2, "kind %d heads %d/%d: long contexts must split", kind,
                          heads[hi][0], heads[hi][1]);
                plan_free(&o);
            }
}

/* The decode term of the partial-row bound, reached exactly. Contexts of 2048
 * keys (128 pages of 16) split decode keys automatically into 4 chunks of 512
 * and leave prefill unsplit (one chunk of 2048 at most), so the bound is the
 * decode term alone: 40 decode sequences of 16 rows a KV head (1, 2 or 4
 * tokens at groups 16, 8 and 4), each row stored once a chunk, need
 * kvh x 40 x 16 x 4 partial rows, which is what the workspace holds. In
 * adversarial_batches_fit_the_bound the prefill term's room hid a decode term
 * that was too small. */
Test(ragged_plan, decode_worst_case_fills_the_partial_rows_bound) {
    static const int heads[][2] = {{32, 2}, {16, 2}, {32, 8}};
    for (int hi = 0; hi < 3; hi++)
        for (int k = 0; k < 3; k++) {
            const int S = 40, cols = 128, ps = 16, kvh = heads[hi][1], q = 16 / (heads[hi][0] / kvh);
            int32_t kv[40], cu[41];
            cu[0] = 0;
            for (int s = 0; s < S; s++) {
                kv[s] = cols * ps;
                cu[s + 1] = cu[s] + q;
            }
            pa_ragged_params p = plan_params(S, cu[S], heads[hi][0], kvh, ps, cols, 0, 0.0f, 0);
            set_kernel(&p, k);
            plan_out o;
            plan(&p, kv, cu, S, &o);
            check_plan(&p, kv, cu, S, &o);
            const int64_t want = (int64_t)kvh * S * 16 * 4;
            CHK(o.tot.part_rows == want && o.wl.max_part_rows == want,
                "heads %d/%d kernel %d: %lld partial rows stored, bound %lld, by hand %lld", heads[hi][0], kvh, k,
                (long long)o.tot.part_rows, (long long)o.wl.max_part_rows, (long long)want);
            plan_free(&o);
        }
}

/* A sequence's items do not depend on the rest of the batch: same key ranges,
 * rows and chunk structure alone or beside others (offsets aside). */
Test(ragged_plan, batch_invariant_items) {
    pa_rng r = pa_rng_make(9);
    for (int iter = 0; iter < 50; iter++) {
        const int cols = 64, ps = 32;
        int32_t kv[8], cu[9];
        cu[0] = 0;
        for (int s = 0; s < 8; s++) {
            kv[s] = pa_rng_int(&r, 1, cols * ps);
            cu[s + 1] = cu[s] + pa_rng_int(&r, 1, kv[s] < 200 ? kv[s] : 200);
        }
        pa_ragged_params p = plan_params(8, cu[8], 16, 2, ps, cols, pa_rng_int(&r, 0, 1) * 300, 0.0f, 0);
        plan_out all;
        plan(&p, kv, cu, 8, &all);
        const int s = pa_rng_int(&r, 0, 7);
        int32_t kv1[1] = {kv[s]}, cu1[2] = {0, cu[s + 1] - cu[s]};
        pa_ragged_params p1 = p;
        p1.max_num_seqs = 1;
        plan_out one;
        plan(&p1, kv1, cu1, 1, &one);
        int64_t k = 0;
        for (int64_t i = 0; i < all.tot.items; i++) {
            const pa_rg_item *a = &all.items[i];
            if (a->seq != s)
                continue;
            cr_assert(k < one.tot.items);
            const pa_rg_item *b = &one.items[k++];
            CHK(a->kvh == b->kvh && a->row0 == b->row0 && a->nrows == b->nrows && a->k_lo == b->k_lo &&
                    a->k_hi == b->k_hi && (a->part < 0) == (b->part < 0),
                "item %lld of seq %d differs alone", (long long)i, s);
        }
        CHK_EQ(k, one.tot.items);
        plan_free(&all);
        plan_free(&one);
    }
}

/* Bad device data is skipped by the planner exactly as the header says. */
Test(ragged_plan, skips_bad_sequences) {
    pa_ragged_params p = plan_params(6, 40, 8, 2, 16, 4, 0, 0.0f, 0);
    int32_t kv[6] = {10, 3, 100, 5, 7, 9};
    int32_t cu[7] = {0, 4, 8, 9, 9, 41, 30};
    /* s0 ok; s1 q 4 > kv 3; s2 kv 100 > 64; s3 q 0; s4 rows past 40; s5 decreasing */
    plan_out o;
    plan(&p, kv, cu, 6, &o);
    for (int64_t i = 0; i < o.tot.items; i++)
        CHK_EQ(o.items[i].seq, 0, "item of skipped sequence %d", o.items[i].seq);
    cr_assert(o.tot.items > 0);
    plan_free(&o);
    /* num_seqs is clamped to max_num_seqs */
    plan(&p, kv, cu, 1000, &o);
    plan_free(&o);
    /* rows overlapping an earlier sequence's rows: skipped (they could exceed
     * the workspace bound); here s2 = [0, 10) repeats s0's rows */
    int32_t kv2[6] = {20, 20, 20, 20, 20, 20};
    int32_t cu2[7] = {0, 10, 0, 10, 10, 20, 20};
    plan(&p, kv2, cu2, 6, &o);
    int seen[6] = {0};
    for (int64_t i = 0; i < o.tot.items; i++)
        seen[o.items[i].seq] = 1;
    cr_assert(seen[0] && !seen[1] && !seen[2] && !seen[3] && seen[4] && !seen[5], "%d%d%d%d%d%d", seen[0], seen[1],
              seen[2], seen[3], seen[4], seen[5]);
    plan_free(&o);
}

/* Garbage cu_q_lens that repeats rows cannot push the totals past the bound. */
Test(ragged_plan, overlapping_garbage_stays_within_bound) {
    pa_ragged_params p = plan_params(32, 64, 32, 8, 16, 256, 0, 0.0f, 0);
    int32_t kv[32], cu[33];
    for (int s = 0; s < 32; s++) {
        kv[s] = 4096;
        cu[s] = s % 2 ? 64 : 0;
    }
    cu[32] = 64;
    plan_out o;
    plan(&p, kv, cu, 32, &o); /* plan() asserts the totals fit */
    plan_free(&o);
}

/* Heaviest first: within a causal prefill sequence the work list starts with
 * the tile that sees the most keys, and the keys of its tiles never grow along
 * the list; prefill sequences come before decodes. */
Test(ragged_plan, heaviest_tiles_first) {
    const pa_ragged_params p = plan_params(4, 4096, 8, 2, 16, 256, 0, 0.0f, 0);
    /* a decode, a 2000-token causal prefill over 3000 keys, another decode */
    const int32_t kv[3] = {700, 3000, 40}, cu[4] = {0, 1, 2001, 2002};
    plan_out o;
    plan(&p, kv, cu, 3, &o);
    check_plan(&p, kv, cu, 3, &o);
    int64_t prev = INT64_MAX;
    int prefill_items = 0, saw_decode = 0;
    for (int64_t i = 0; i < o.tot.items; i++) {
        const pa_rg_item *it = &o.items[i];
        if (it->seq != 1) {
            saw_decode = 1;
            continue;
        }
        CHK(!saw_decode, "item %lld: a prefill item after a decode item", (long long)i);
        /* An item takes as long as its key slots: every warp of the CTA walks them, the
         * rows of a partial last tile only leave some warps idle. */
        const int64_t work = it->k_hi - it->k_lo;
        CHK(work <= prev, "item %lld: key work %lld after %lld", (long long)i, (long long)work, (long long)prev);
        prev = work;
        prefill_items++;
    }
    cr_assert(prefill_items > 4, "%d prefill items", prefill_items);
    /* the first item is the last rows' tile: it sees (nearly) every key */
    CHK(o.items[0].seq == 1 && o.items[0].k_hi == 3000, "first item: seq %d keys [%d, %d)", o.items[0].seq,
        o.items[0].k_lo, o.items[0].k_hi);
    plan_free(&o);
}

/* Automatic key splits: whole key tiles per chunk, the chunks cover the span,
 * and none is a sliver. Rounding every chunk up to whole tiles used to leave a
 * last chunk of a few keys (a 4097-key decode: 8 x 512 + 1, a work item and a
 * merge for one key). */
Test(ragged_plan, automatic_splits_leave_no_sliver) {
    const int32_t q_lens[2] = {1, 20}; /* group 4: 4 rows (a decode), 80 rows (a 2-tile prefill) */
    for (int c = 0; c < 2; c++)
        for (int32_t kv = q_lens[c]; kv <= 40000; kv++) {
            const pa_rg_seq_plan sp = pa_rg_plan_seq(q_lens[c], kv, 4, 0, 1, 0, 64);
            int32_t lo, hi;
            pa_rg_key_range(q_lens[c], kv, 4, 0, 1, 0, sp.rows, &lo, &hi);
            const int32_t span = hi - lo, n = sp.n_split;
            const int32_t max_n = c == 0 ? PA_RG_DEC_MAX_SPLITS : PA_RG_PRE_MAX_SPLITS / 2;
            CHK(n >= 1 && n <= max_n, "q %d kv %d: %d chunks", q_lens[c], kv, n);
            if (n == 1)
                continue;
            CHK(sp.chunk % PA_RG_KEY_TILE == 0, "q %d kv %d: chunk %d", q_lens[c], kv, sp.chunk);
            CHK((int64_t)(n - 1) * sp.chunk < span && span <= (int64_t)n * sp.chunk, "q %d kv %d: %d x %d for %d",
                q_lens[c], kv, n, sp.chunk, span);
            CHK(span - (n - 1) * sp.chunk >= PA_RG_KEY_TILE, "q %d kv %d: last chunk of %d keys (%d x %d)", q_lens[c],
                kv, span - (n - 1) * sp.chunk, n, sp.chunk);
        }
    /* 4097 keys hold 8 chunks of at least 512, not 9 */
    const pa_rg_seq_plan d = pa_rg_plan_seq(1, 4097, 4, 0, 1, 0, 128);
    CHK_EQ(d.n_split, 8, "4097-key decode: %d chunks of %d", d.n_split, d.chunk);
}

/* A ragged problem filled by several threads is byte for byte the one a
 * single thread fills (pa_rng_skip per run of tokens): the combined cache,
 * page table and the contiguous copies, over uneven lengths with empty ones,
 * 16-bit and fp8 pages. */
Test(ragged_ref, threaded_fill_is_the_single_thread_fill) {
    const int q_lens[6] = {5, 1, 0, 40, 1, 3}, kv_lens[6] = {70, 0, 33, 300, 17, 3};
    for (int fp8 = 0; fp8 <= 1; fp8++) {
        rg_problem_cfg c = {.seed = 11 + (uint64_t)fp8,
                            .q_dtype = PA_DTYPE_F16,
                            .cache_dtype = fp8 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_F16,
                            .num_seqs = 6,
                            .num_q_heads = 4,
                            .num_kv_heads = 2,
                            .head_size = 32,
                            .page_size = 16,
                            .q_lens = q_lens,
                            .kv_lens = kv_lens,
                            .extra_pages = 2};
        pa_problems_set_threads(1);
        rg_problem *one = rg_problem_make(&c);
        pa_problems_set_threads(4);
        rg_problem *four = rg_problem_make(&c);
        pa_problems_set_threads(0);
        cr_assert(one && four);
        cr_assert_eq(one->cache_bytes, four->cache_bytes);
        cr_assert_eq(memcmp(one->cache, four->cache, one->cache_bytes), 0, "fp8 %d: cache", fp8);
        cr_assert_eq(memcmp(one->q, four->q, one->q_bytes), 0);
        cr_assert_eq(memcmp(one->page_indices, four->page_indices, sizeof(int32_t) * 6 * (size_t)one->p.pages_per_seq),
                     0);
        for (int s = 0; s < 6; s++) {
            const size_t n = (size_t)kv_lens[s] * 2 * 32 * sizeof(float);
            cr_assert_eq(memcmp(one->k_logical[s], four->k_logical[s], n), 0, "fp8 %d seq %d", fp8, s);
            cr_assert_eq(memcmp(one->v_logical[s], four->v_logical[s], n), 0, "fp8 %d seq %d", fp8, s);
        }
        rg_problem_free(one);
        rg_problem_free(four);
    }
}

/* Scales per KV head (scales_per_head) on the ragged reference: query head h
 * reads KV head h / group's pages under that head's k_scale and v_scale. The
 * oracle is the one-scale reference (checked against plain attention above),
 * run once per KV head j with j's scales: head h's output rows must be those
 * of j = h / group's run, byte for byte; e4m3 and e5m2, GQA 2 and 4. */
static pa_status run_ragged_ref(const void *p) { return pa_ref_ragged_paged_attention(p); }

Test(ragged_ref, scales_per_kv_head) {
    for (int v = 0; v < 2; v++) {
        const int kvh = v ? 4 : 2;
        const rg_case k = {.seed = 60 + (uint64_t)v,
                           .q_dtype = v ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                           .cache_dtype = v ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                           .num_seqs = 3,
                           .qh = 8,
                           .kvh = kvh,
                           .hs = 32,
                           .ps = 16,
                           .q_lo = 1,
                           .q_hi = 9,
                           .extra_lo = 0,
                           .extra_hi = 40};
        int q_lens[3], kv_lens[3];
        rg_problem *pr = make_case(&k, q_lens, kv_lens);
        float ks[4], vs[4];
        pa_test_head_scales(pr->k_scale, kvh, 0, ks);
        pa_test_head_scales(pr->v_scale, kvh, 6, vs);
        /* rows past the live ones keep the sentinel in every run */
        const int64_t at = pa_test_scales_per_head_oracle(
            run_ragged_ref, &pr->p, &pr->p.kv, &pr->k_scale, &pr->v_scale, ks, vs, pr->out, pr->q_bytes,
            (size_t)pr->cu_q_lens[pr->num_seqs], 8, 32, pa_dtype_size(k.q_dtype));
        cr_assert_eq(at, -1, "element %lld differs from its KV head's one-scale run (-2: a run failed: %s)",
                     (long long)at, pa_last_error());
        pr->p.kv.k_scale = &pr->k_scale;
        pr->p.kv.v_scale = &pr->v_scale;
        rg_problem_free(pr);
    }
}

/* A ragged problem over addresses only (pa_test_addr: ranges of their own,
 * never read): f32, head 8, one KV head per query head, a page of 16. */
static pa_ragged_params addr_only(int32_t seqs, int32_t tokens, int32_t pages_per_seq) {
    pa_ragged_params p = {.out = pa_test_addr(0),
                          .q = pa_test_addr(1),
                          .q_dtype = PA_DTYPE_F32,
                          .kv = {.layout = PA_LAYOUT_COMBINED,
                                 .dtype = PA_DTYPE_F32,
                                 .key = pa_test_addr(2),
                                 .num_blocks = 1,
                                 .block_size = 16,
                                 .num_kv_heads = 1,
                                 .head_size = 8},
                          .kv_lens = (const int32_t *)pa_test_addr(3),
                          .page_indices = (const int32_t *)pa_test_addr(4),
                          .cu_q_lens = (const int32_t *)pa_test_addr(5),
                          .num_seqs = (const int32_t *)pa_test_addr(6),
                          .pages_per_seq = pages_per_seq,
                          .max_num_seqs = seqs,
                          .max_num_batched_tokens = tokens,
                          .num_q_heads = 1,
                          .sm_scale = 1.0f};
    return p;
}

/* Found by a blind mutation pass (each mutant passed the suite):
 * - a sequence's query rows (tokens x group) are int32 with room to double:
 *   2^30 - 1 rows taken, 2^30 refused;
 * - every live sequence has a query token, so max_num_seqs past
 *   max_num_batched_tokens changes nothing: INT32_MAX sequences over 64 tokens
 *   need the workspace of 64 sequences (sizing for INT32_MAX refused it);
 * - partial rows past the work list are refused even where the items fit:
 *   2^24 decode sequences of 16 tokens (2^28 in all) over 16384 keys split
 *   16 ways (ragged_internal.h: min(16, ceil(16384 / 512))) keep 16 x 16
 *   partial rows each, 2^32 in all, in 2^28 items. */
Test(ragged_api, row_index_max_seqs_and_partial_rows_bounds) {
    pa_ragged_params p = addr_only(1, (1 << 30) - 1, 1);
    cr_assert_eq(pa_ragged_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p.max_num_batched_tokens = 1 << 30;
    cr_assert_eq(pa_ragged_validate(&p), PA_ERR_UNSUPPORTED);
    cr_assert(strstr(pa_last_error(), "exceed the 32-bit row index"), "%s", pa_last_error());

    size_t a = 0, b = 0;
    p = addr_only(64, 64, 4000);
    cr_assert_eq(pa_ragged_workspace_size(&p, &a), PA_SUCCESS, "%s", pa_last_error());
    p.max_num_seqs = INT32_MAX;
    cr_assert_eq(pa_ragged_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(a, b, "%zu vs %zu bytes", a, b);

    p = addr_only(1 << 24, 1 << 28, 1024);
    size_t bytes = 12345;
    cr_assert_eq(pa_ragged_workspace_size(&p, &bytes), PA_ERR_UNSUPPORTED, "%zu bytes", bytes);
    cr_assert(strstr(pa_last_error(), "past the 32-bit work list"), "%s", pa_last_error());
    cr_assert_eq(bytes, 12345);
}
