/* The prefill CPU references (context, prompt, mixed) against plain attention
 * over contiguous K/V (no paging, masks spelled out in absolute positions),
 * over layouts, dtypes, GQA, head and block sizes, alibi, window and soft cap;
 * plus the input checks (nothing written on bad input). No GPU needed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefill_internal.h"
#include "prefill_problems.h"
#include "prompt_by_hand.h"
#include "testutil.h"

static void expect_close(const void *got, pa_dtype dt, const float *ref, size_t n, const char *what) {
    pa_compare_result r;
    pa_tolerance tol = pa_tolerance_for(dt, dt); /* same inputs on both sides: only output rounding */
    int ok = pa_compare(got, dt, ref, (int64_t)n, tol, &r);
    char buf[512];
    cr_assert(ok, "%s: %s", what, pa_compare_format(&r, tol, buf, sizeof buf));
}

static void context_vs_plain(pa_context_problem *pr, const char *what) {
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s: %s", what, pa_last_error());
    float *ref = malloc(sizeof(float) * (pr->out_elems + 1));
    pa_context_problem_plain(pr, ref);
    expect_close(pr->out, pr->p.q_dtype, ref, pr->out_elems, what);
    free(ref);
}

static pa_context_problem *ctx_problem(uint64_t seed, pa_kv_layout l, pa_dtype qd, pa_dtype cd, int seqs, int heads,
                                       int kv_heads, int hs, int bs, const int *ql, const int *cl, int alibi) {
    pa_context_problem_cfg c = {.seed = seed,
                                .layout = l,
                                .q_dtype = qd,
                                .cache_dtype = cd,
                                .num_seqs = seqs,
                                .num_heads = heads,
                                .num_kv_heads = kv_heads,
                                .head_size = hs,
                                .block_size = bs,
                                .query_lens = ql,
                                .context_lens = cl,
                                .extra_blocks = 2,
                                .with_alibi = alibi};
    pa_context_problem *pr = pa_context_problem_make(&c);
    cr_assert(pr != NULL);
    return pr;
}

/* ---- context attention ------------------------------------------------------------ */

/* The combined layout is the ragged op's: the builder refuses it before it
 * allocates. It used to size the value cache from pa_kv_cache_elements (no V of
 * its own there) and write every token's V into it, out of bounds: `bench
 * prefill --variant context --layout combined` crashed. */
Test(prefill_ref, context_problem_refuses_the_combined_layout) {
    const int ql[2] = {8, 3}, cl[2] = {40, 17};
    pa_context_problem_cfg c = {.seed = 5,
                                .layout = PA_LAYOUT_COMBINED,
                                .q_dtype = PA_DTYPE_F16,
                                .cache_dtype = PA_DTYPE_F16,
                                .num_seqs = 2,
                                .num_heads = 8,
                                .num_kv_heads = 2,
                                .head_size = 64,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl};
    pa_context_problem *pr = pa_context_problem_make(&c);
    cr_assert_null(pr, "the combined layout gave a context problem");
}

Test(prefill_ref, context_every_layout_and_dtype) {
    const int ql[4] = {5, 1, 17, 9}, cl[4] = {0, 23, 40, 16};
    const pa_kv_layout layouts[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    const pa_dtype qd[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    for (int l = 0; l < 3; l++)
        for (int q = 0; q < 3; q++)
            for (int f = 0; f < 3; f++) {
                pa_dtype cd = f == 0 ? qd[q] : f == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
                pa_context_problem *pr =
                    ctx_problem(21u + l * 9 + q * 3 + f, layouts[l], qd[q], cd, 4, 4, 2, 32, 16, ql, cl, 0);
                char what[128];
                snprintf(what, sizeof what, "%s q=%s cache=%s", pa_kv_layout_name(layouts[l]), pa_dtype_name(qd[q]),
                         pa_dtype_name(cd));
                context_vs_plain(pr, what);
                pa_context_problem_free(pr);
            }
}

Test(prefill_ref, context_heads_head_and_block_sizes) {
    const int heads[4][2] = {{8, 8}, {8, 1}, {12, 4}, {6, 2}};
    const int hsz[5] = {24, 40, 80, 120, 256};
    const int bsz[4] = {8, 24, 32, 128}; /* 24: not a power of two */
    const int ql[3] = {7, 1, 13}, cl[3] = {30, 0, 45};
    for (int h = 0; h < 4; h++)
        for (int k = 0; k < 5; k++) {
            const int bs = bsz[(h + k) % 4];
            pa_kv_layout l = k % 2 ? PA_LAYOUT_FLASH_NHD : PA_LAYOUT_VLLM; /* vllm: head % 4 (f32) */
            pa_context_problem *pr = ctx_problem(300u + h * 5 + k, l, PA_DTYPE_F32, PA_DTYPE_F32, 3, heads[h][0],
                                                 heads[h][1], hsz[k], bs, ql, cl, 0);
            char what[128];
            snprintf(what, sizeof what, "heads %d/%d head %d block %d", heads[h][0], heads[h][1], hsz[k], bs);
            context_vs_plain(pr, what);
            pa_context_problem_free(pr);
        }
}

Test(prefill_ref, context_alibi_window_soft_cap) {
    const int ql[3] = {33, 1, 20}, cl[3] = {50, 70, 0};
    const int windows[3] = {0, 16, 2048};
    for (int v = 0; v < 12; v++) {
        pa_context_problem *pr =
            ctx_problem(500u + v, PA_LAYOUT_FLASH_HND, PA_DTYPE_F32, PA_DTYPE_F32, 3, 4, 2, 32, 16, ql, cl, v & 1);
        pr->p.sliding_window = windows[(v >> 1) % 3];
        if (v >= 6)
            pr->p.soft_cap = 0.5f; /* small enough to change the weights */
        pr->p.scale = 2.0f;        /* sharpen the softmax so masks matter */
        char what[96];
        snprintf(what, sizeof what, "alibi %d window %d cap %g", v & 1, pr->p.sliding_window, pr->p.soft_cap);
        context_vs_plain(pr, what);
        pa_context_problem_free(pr);
    }
}

Test(prefill_ref, context_window_ignores_keys_outside_it) {
    /* Keys that every query's window excludes may be NaN without effect. */
    const int ql[1] = {8}, cl[1] = {64};
    pa_context_problem *pr =
        ctx_problem(9, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F32, PA_DTYPE_F32, 1, 2, 1, 32, 16, ql, cl, 0);
    pr->p.sliding_window = 16;               /* first query at position 64 sees keys 49.. */
    const int64_t blk = pr->block_tables[0]; /* positions 0..15 */
    const size_t per_block = (size_t)16 * 1 * 32;
    pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->kc + blk * per_block, per_block);
    pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->vc + blk * per_block, per_block);
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    for (size_t i = 0; i < pr->out_elems; i++)
        CHK(!isnan(((float *)pr->out)[i]), "NaN leaked from outside the window at %zu", i);
    pa_context_problem_free(pr);
}

Test(prefill_ref, context_without_context_is_causal_prompt_attention) {
    /* Two references that must agree: context attention with no cached tokens
     * and causal prompt attention over the same packed Q/K/V. */
    const int ql[3] = {13, 1, 29}, cl[3] = {0, 0, 0};
    pa_context_problem *pr = ctx_problem(77, PA_LAYOUT_VLLM, PA_DTYPE_F32, PA_DTYPE_F32, 3, 6, 2, 40, 16, ql, cl, 1);
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    float *out2 = malloc(sizeof(float) * pr->out_elems);
    pa_prompt_attention_params pp = {.out = out2,
                                     .query = pr->q,
                                     .key = pr->k,
                                     .value = pr->v,
                                     .dtype = PA_DTYPE_F32,
                                     .attn_type = PA_ATTN_DECODER,
                                     .cu_seqlens_q = pr->qsl,
                                     .num_seqs = 3,
                                     .num_heads = 6,
                                     .num_kv_heads = 2,
                                     .head_size = 40,
                                     .num_q_tokens = pr->p.num_tokens,
                                     .max_seqlen_q = 29,
                                     .scale = pr->p.scale,
                                     .alibi_slopes = pr->alibi};
    cr_assert_eq(pa_ref_prompt_attention(&pp), PA_SUCCESS, "%s", pa_last_error());
    for (size_t i = 0; i < pr->out_elems; i++)
        CHK(((float *)pr->out)[i] == out2[i], "element %zu: %g vs %g", i, ((float *)pr->out)[i], out2[i]);
    free(out2);
    pa_context_problem_free(pr);
}

Test(prefill_ref, context_single_query_equals_decode_reference) {
    /* A query of length 1 is a decode step: compare with pa_ref_paged_decode on
     * the same cache once the new token is in it. */
    const int ql[2] = {1, 1}, cl[2] = {37, 64};
    pa_context_problem_cfg c = {.seed = 4,
                                .layout = PA_LAYOUT_VLLM,
                                .q_dtype = PA_DTYPE_F32,
                                .cache_dtype = PA_DTYPE_F32,
                                .num_seqs = 2,
                                .num_heads = 8,
                                .num_kv_heads = 2,
                                .head_size = 64,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl,
                                .with_alibi = 1,
                                .new_in_cache = 1};
    pa_context_problem *pr = pa_context_problem_make(&c);
    pr->p.sliding_window = 20;
    pr->p.soft_cap = 1.0f;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    float *out2 = malloc(sizeof(float) * pr->out_elems);
    pa_decode_params d = {.out = out2,
                          .query = pr->q,
                          .q_dtype = PA_DTYPE_F32,
                          .kv = pr->p.kv,
                          .block_tables = pr->block_tables,
                          .block_table_stride = pr->p.block_table_stride,
                          .seq_lens = pr->seq_lens,
                          .num_seqs = 2,
                          .num_heads = 8,
                          .max_seq_len = pr->p.max_seq_len,
                          .scale = pr->p.scale,
                          .alibi_slopes = pr->alibi,
                          .sliding_window = 20,
                          .soft_cap = 1.0f};
    cr_assert_eq(pa_ref_paged_decode(&d), PA_SUCCESS, "%s", pa_last_error());
    for (size_t i = 0; i < pr->out_elems; i++)
        CHK(fabsf(((float *)pr->out)[i] - out2[i]) <= 1e-6f, "element %zu: %g vs %g", i, ((float *)pr->out)[i],
            out2[i]);
    free(out2);
    pa_context_problem_free(pr);
}

Test(prefill_ref, context_awkward_lengths_strided_query) {
    const int ql[3] = {113, 1, 203}, cl[3] = {1023, 1025, 0};
    pa_context_problem *pr =
        ctx_problem(12, PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, 3, 2, 1, 32, 64, ql, cl, 0);
    context_vs_plain(pr, "awkward lengths");
    /* q_stride wider than a row: the reference reads the strided rows */
    const int64_t row = 2 * 32, stride = row + 8;
    const int tokens = pr->p.num_tokens;
    uint16_t *qs = malloc(sizeof(uint16_t) * (size_t)tokens * stride);
    for (int t = 0; t < tokens; t++)
        memcpy(qs + t * stride, (uint16_t *)pr->q + t * row, sizeof(uint16_t) * row);
    void *out1 = malloc(sizeof(uint16_t) * pr->out_elems);
    memcpy(out1, pr->out, sizeof(uint16_t) * pr->out_elems);
    pr->p.query = qs;
    pr->p.q_stride = stride;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS);
    cr_assert(memcmp(out1, pr->out, sizeof(uint16_t) * pr->out_elems) == 0, "strided query changed the output");
    free(qs);
    free(out1);
    pa_context_problem_free(pr);
}

/* ---- prompt attention -------------------------------------------------------------- */

static void prompt_vs_plain(pa_prompt_problem *pr, const char *what) {
    cr_assert_eq(pa_ref_prompt_attention(&pr->p), PA_SUCCESS, "%s: %s", what, pa_last_error());
    float *ref = malloc(sizeof(float) * (pr->q_elems + 1));
    pa_prompt_problem_plain(pr, ref);
    expect_close(pr->out, pr->p.dtype, ref, pr->q_elems, what);
    free(ref);
}

Test(prefill_ref, prompt_attention_types) {
    const int ql[4] = {17, 1, 64, 33}, kl[4] = {40, 7, 64, 1};
    const pa_dtype dts[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    for (int t = 0; t < 4; t++)
        for (int d = 0; d < 3; d++) {
            const int cross = t == PA_ATTN_ENCODER_DECODER || (t == PA_ATTN_DECODER && d == 2);
            pa_prompt_problem_cfg c = {.seed = 600u + t * 3 + d,
                                       .dtype = dts[d],
                                       .attn_type = (pa_attn_type)t,
                                       .num_seqs = 4,
                                       .num_heads = 6,
                                       .num_kv_heads = 3,
                                       .head_size = 48,
                                       .q_lens = ql,
                                       .k_lens = cross ? kl : NULL,
                                       .with_alibi = d == 1};
            pa_prompt_problem *pr = pa_prompt_problem_make(&c);
            pr->p.sliding_window = d == 2 && t != PA_ATTN_ENCODER_DECODER ? 10 : 0; /* (cross refuses one) */
            pr->p.soft_cap = t == 1 ? 0.7f : 0.0f;
            char what[96];
            snprintf(what, sizeof what, "attn_type %d %s cross %d", t, pa_dtype_name(dts[d]), cross);
            prompt_vs_plain(pr, what);
            pa_prompt_problem_free(pr);
        }
}

/* prefill.h's masks and ALiBi by hand on the reference (tests/common/prompt_by_hand.h). */
Test(prefill_ref, prompt_masks_and_alibi_by_hand) {
    enum { HS = 8 };
    float q[3 * HS] = {0}, k[3 * HS] = {0}, v[3 * HS], out[3 * HS];
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < HS; d++)
            v[j * HS + d] = (float)j;
    const int32_t cu3[2] = {0, 3}, cu2[2] = {0, 2};
    const float slope = 1.0f;
    pa_by_hand cs[PA_BY_HAND_CASES];
    pa_by_hand_cases(cs);
    for (int c = 0; c < PA_BY_HAND_CASES; c++) {
        pa_prompt_attention_params p = pa_by_hand_params(&cs[c], PA_DTYPE_F32, HS, out, q, k, v, cu3, cu2, &slope);
        cr_assert_eq(pa_ref_prompt_attention(&p), PA_SUCCESS, "case %d: %s", c, pa_last_error());
        for (int i = 0; i < cs[c].q_len; i++)
            for (int d = 0; d < HS; d++)
                cr_assert(fabs(out[i * HS + d] - cs[c].want[i]) < 1e-6, "case %d row %d: %f, want %f", c, i,
                          out[i * HS + d], cs[c].want[i]);
    }
}

Test(prefill_ref, prompt_causal_bottom_right) {
    /* q_len > k_len, causal: query i sits at k_len - q_len + i; the first
     * q_len - k_len rows see no key and are zero; the last row sees every key. */
    const int ql[1] = {10}, kl[1] = {4};
    pa_prompt_problem_cfg c = {.seed = 8,
                               .dtype = PA_DTYPE_F32,
                               .attn_type = PA_ATTN_DECODER,
                               .num_seqs = 1,
                               .num_heads = 1,
                               .num_kv_heads = 1,
                               .head_size = 8,
                               .q_lens = ql,
                               .k_lens = kl};
    pa_prompt_problem *pr = pa_prompt_problem_make(&c);
    prompt_vs_plain(pr, "bottom-right");
    const float *o = pr->out;
    for (int i = 0; i < 6 * 8; i++)
        cr_assert_eq(o[i], 0.0f, "row %d sees no key and must be 0", i / 8);
    /* row 6 (position 0) sees key 0 only: its output is V[0] */
    for (int d = 0; d < 8; d++)
        cr_assert_float_eq(o[6 * 8 + d], ((float *)pr->v)[d], 1e-6);
    pa_prompt_problem_free(pr);
}

/* max_seqlen_q / max_seqlen_k are bounds: a loose one is valid (the GPU entries
 * take it), so the reference sizes its scratch by the lengths present. It once
 * sized it by the bound: 2 x 1 TiB for a 4-token batch at 2^28, "out of host memory". */
Test(prefill_ref, prompt_loose_length_bounds) {
    const int ql[2] = {4, 3}, kl[2] = {5, 2};
    for (int cross = 0; cross < 2; cross++) {
        pa_prompt_problem_cfg c = {.seed = 9u + cross,
                                   .dtype = PA_DTYPE_F32,
                                   .attn_type = cross ? PA_ATTN_ENCODER_DECODER : PA_ATTN_DECODER,
                                   .num_seqs = 2,
                                   .num_heads = 8,
                                   .num_kv_heads = 8,
                                   .head_size = 128,
                                   .q_lens = ql,
                                   .k_lens = cross ? kl : NULL};
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        pr->p.max_seqlen_q = 1 << 28;
        if (cross)
            pr->p.max_seqlen_k = 1 << 28;
        prompt_vs_plain(pr, cross ? "cross, bounds 2^28" : "causal, bound 2^28");
        pa_prompt_problem_free(pr);
    }
}

Test(prefill_ref, prompt_encoder_is_not_causal) {
    /* Encoder attention of a sequence equals the decoder attention of its last
     * token only for that token; for the first token they differ. */
    const int ql[1] = {5};
    pa_prompt_problem_cfg c = {.seed = 2,
                               .dtype = PA_DTYPE_F32,
                               .attn_type = PA_ATTN_ENCODER,
                               .num_seqs = 1,
                               .num_heads = 2,
                               .num_kv_heads = 1,
                               .head_size = 16,
                               .q_lens = ql};
    pa_prompt_problem *enc = pa_prompt_problem_make(&c);
    c.attn_type = PA_ATTN_DECODER;
    pa_prompt_problem *dec = pa_prompt_problem_make(&c);
    cr_assert_eq(pa_ref_prompt_attention(&enc->p), PA_SUCCESS);
    cr_assert_eq(pa_ref_prompt_attention(&dec->p), PA_SUCCESS);
    const float *a = enc->out, *b = dec->out;
    for (int d = 0; d < 32; d++)
        cr_assert_float_eq(a[4 * 32 + d], b[4 * 32 + d], 1e-6, "last token");
    int differ = 0;
    for (int d = 0; d < 32; d++)
        differ |= fabsf(a[d] - b[d]) > 1e-4f;
    cr_assert(differ, "encoder attention of the first token must see later tokens");
    pa_prompt_problem_free(enc);
    pa_prompt_problem_free(dec);
}

/* ---- attention sinks and strided new K/V -------------------------------------------- */

/* Sinks against plain attention (pa_*_problem_plain, benchmarks/problems.c's
 * row), whose softmax takes each head's sink as one more score
 * (pa_sink_logits: -inf, below, among and far above the logits), with
 * ALiBi: ALiBi's bias is slope * (key - query position); a softmax alone
 * cannot tell it from slope * (key - last key), a shift of the whole row, but
 * beside a sink the row's level matters, so only the query-relative bias
 * matches. Context attention (every layout's paging is covered above) and
 * prompt attention (decoder, encoder, cross), with a window and a soft cap. */
Test(prefill_ref, sinks_as_an_extra_score) {
    {
        const int ql[3] = {17, 1, 40}, cl[3] = {30, 64, 0};
        for (int v = 0; v < 2; v++) {
            pa_context_problem_cfg c = {.seed = 5100u + (unsigned)v,
                                        .layout = PA_LAYOUT_FLASH_HND,
                                        .q_dtype = PA_DTYPE_F32,
                                        .cache_dtype = PA_DTYPE_F32,
                                        .num_seqs = 3,
                                        .num_heads = 8,
                                        .num_kv_heads = 2,
                                        .head_size = 32,
                                        .block_size = 16,
                                        .query_lens = ql,
                                        .context_lens = cl,
                                        .extra_blocks = 2,
                                        .with_alibi = 1,
                                        .with_sinks = 1};
            pa_context_problem *pr = pa_context_problem_make(&c);
            cr_assert(pr != NULL);
            pr->p.sliding_window = v ? 25 : 0;
            pr->p.soft_cap = v ? 0.8f : 0.0f;
            cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
            float *ref = malloc(sizeof(float) * (pr->out_elems + 1));
            pa_context_problem_plain(pr, ref);
            expect_close(pr->out, pr->p.q_dtype, ref, pr->out_elems, v ? "context, window, cap" : "context");
            free(ref);
            pa_context_problem_free(pr);
        }
    }
    const int ql[3] = {12, 1, 33}, kl[3] = {20, 9, 33};
    for (int t = 0; t < 3; t++) {
        const pa_attn_type types[3] = {PA_ATTN_DECODER, PA_ATTN_ENCODER, PA_ATTN_ENCODER_DECODER};
        pa_prompt_problem_cfg c = {.seed = 5200u + (unsigned)t,
                                   .dtype = PA_DTYPE_F32,
                                   .attn_type = types[t],
                                   .num_seqs = 3,
                                   .num_heads = 8,
                                   .num_kv_heads = 4,
                                   .head_size = 16,
                                   .q_lens = ql,
                                   .k_lens = types[t] == PA_ATTN_ENCODER_DECODER ? kl : NULL,
                                   .with_alibi = 1,
                                   .with_sinks = 1};
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        cr_assert(pr != NULL);
        pr->p.sliding_window = t == 0 ? 7 : 0;
        cr_assert_eq(pa_ref_prompt_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        float *ref = malloc(sizeof(float) * (pr->q_elems + 1));
        pa_prompt_problem_plain(pr, ref);
        expect_close(pr->out, pr->p.dtype, ref, pr->q_elems, "prompt with sinks");
        free(ref);
        pa_prompt_problem_free(pr);
    }
}

/* Copies n packed rows of `row` elements into rows `stride` apart, the gaps
 * NaN (a reference reading a gap, or a row at the other tensor's stride, is
 * caught). */
static void *restride(const void *src, pa_dtype dt, int64_t n, int64_t row, int64_t stride) {
    const size_t esz = pa_dtype_size(dt);
    void *dst = malloc(esz * (size_t)(n * stride + 1));
    pa_test_fill_nan(dt, dst, (size_t)(n * stride + 1));
    for (int64_t t = 0; t < n; t++)
        memcpy((char *)dst + (size_t)(t * stride) * esz, (const char *)src + (size_t)(t * row) * esz,
               esz * (size_t)row);
    return dst;
}

/* The K/V fields of a context or prompt problem and a run of its reference. */
typedef struct {
    const void **key, **value;
    int64_t *k_stride, *v_stride;
    pa_status (*run)(void *params);
    void *params;
} kv_fields;

static pa_status run_context(void *p) { return pa_ref_context_attention(p); }
static pa_status run_prompt(void *p) { return pa_ref_prompt_attention(p); }

/* Runs the reference over packed K/V (n rows of `row` elements), then over
 * copies of them with rows row + 8 (keys) and row + 40 (values) apart, the
 * gaps NaN: the two outputs must be the same bits. */
static void expect_strided_kv_same(const char *what, kv_fields f, pa_dtype dt, int64_t n, int64_t row, void *out,
                                   size_t obytes) {
    cr_assert_eq(f.run(f.params), PA_SUCCESS, "%s", pa_last_error());
    void *packed_out = malloc(obytes);
    memcpy(packed_out, out, obytes);
    void *ks = restride(*f.key, dt, n, row, row + 8), *vs = restride(*f.value, dt, n, row, row + 40);
    *f.key = ks;
    *f.value = vs;
    *f.k_stride = row + 8;
    *f.v_stride = row + 40;
    memset(out, 0, obytes);
    cr_assert_eq(f.run(f.params), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(out, packed_out, obytes) == 0, "%s: strided K/V changed the output", what);
    free(ks);
    free(vs);
    free(packed_out);
}

/* New keys and values given as views with strides of their own (slices of a
 * fused qkv projection, the values' rows further apart than the keys'): the
 * output is the packed inputs' output, bit for bit, for context and prompt
 * attention. */
Test(prefill_ref, strided_new_keys_and_values) {
    const int ql[2] = {9, 30}, cl[2] = {20, 3};
    pa_context_problem *pr =
        ctx_problem(5300, PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, PA_DTYPE_BF16, 2, 4, 2, 32, 16, ql, cl, 0);
    expect_strided_kv_same(
        "context", (kv_fields){&pr->p.key, &pr->p.value, &pr->p.k_stride, &pr->p.v_stride, run_context, &pr->p},
        pr->p.q_dtype, pr->p.num_tokens, 2 * 32, pr->out, pr->out_elems * pa_dtype_size(pr->p.q_dtype));
    pa_context_problem_free(pr);

    const int pql[2] = {9, 30};
    pa_prompt_problem_cfg c = {.seed = 5301,
                               .dtype = PA_DTYPE_F16,
                               .attn_type = PA_ATTN_DECODER,
                               .num_seqs = 2,
                               .num_heads = 4,
                               .num_kv_heads = 2,
                               .head_size = 32,
                               .q_lens = pql};
    pa_prompt_problem *pp = pa_prompt_problem_make(&c);
    cr_assert(pp != NULL);
    expect_strided_kv_same("prompt",
                           (kv_fields){&pp->p.key, &pp->p.value, &pp->p.k_stride, &pp->p.v_stride, run_prompt, &pp->p},
                           pp->p.dtype, pp->p.num_q_tokens, 2 * 32, pp->out, pp->q_elems * pa_dtype_size(pp->p.dtype));
    pa_prompt_problem_free(pp);
}

/* ---- mixed batch -------------------------------------------------------------------- */

/* Mixed-attention parameters over a context problem's buffers; the caller
 * sets the counts, lengths and features. */
static pa_mixed_attention_params mixed_over(const pa_context_problem *pr, pa_dtype q_dtype) {
    return (pa_mixed_attention_params){.out = pr->out,
                                       .query = pr->q,
                                       .key = pr->k,
                                       .value = pr->v,
                                       .q_dtype = q_dtype,
                                       .kv = pr->p.kv,
                                       .block_tables = pr->block_tables,
                                       .block_table_stride = pr->p.block_table_stride,
                                       .seq_lens = pr->seq_lens,
                                       .query_start_loc = pr->qsl};
}

/* pa_test_lse_run for the references: ctx the params. */
static pa_status run_mixed_ref(void *ctx, float *lse, int64_t hs, int64_t ts) {
    pa_mixed_attention_params q = *(const pa_mixed_attention_params *)ctx;
    q.lse = lse, q.lse_head_stride = hs, q.lse_token_stride = ts;
    return pa_ref_mixed_attention(&q);
}
static pa_status run_context_ref_lse(void *ctx, float *lse, int64_t hs, int64_t ts) {
    pa_context_attention_params q = *(const pa_context_attention_params *)ctx;
    q.lse = lse, q.lse_head_stride = hs, q.lse_token_stride = ts;
    return pa_ref_context_attention(&q);
}
static pa_status run_prompt_ref(void *ctx, float *lse, int64_t hs, int64_t ts) {
    pa_prompt_attention_params q = *(const pa_prompt_attention_params *)ctx;
    q.lse = lse, q.lse_head_stride = hs, q.lse_token_stride = ts;
    return pa_ref_prompt_attention(&q);
}

Test(prefill_ref, mixed_prefill_then_decode) {
    const int ql[5] = {9, 30, 1, 1, 1}, cl[5] = {20, 0, 47, 5, 100};
    pa_context_problem_cfg c = {.seed = 31,
                                .layout = PA_LAYOUT_FLASH_NHD,
                                .q_dtype = PA_DTYPE_F16,
                                .cache_dtype = PA_DTYPE_F16,
                                .num_seqs = 5,
                                .num_heads = 8,
                                .num_kv_heads = 2,
                                .head_size = 64,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl,
                                .with_alibi = 1,
                                .new_in_cache = 1};
    pa_context_problem *pr = pa_context_problem_make(&c);
    pa_mixed_attention_params m = mixed_over(pr, PA_DTYPE_F16);
    m.num_prefills = 2;
    m.num_prefill_tokens = 39;
    m.num_decode_tokens = 3;
    m.num_heads = 8;
    m.max_prefill_query_len = 30;
    m.max_prefill_seq_len = 30;
    m.max_decode_seq_len = 101;
    m.scale = pr->p.scale;
    m.alibi_slopes = pr->alibi;
    m.sliding_window = 64;
    pr->p.sliding_window = 64;
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_SUCCESS, "%s", pa_last_error());
    float *ref = malloc(sizeof(float) * pr->out_elems);
    const size_t nl = (size_t)8 * 42;
    float *want = pa_test_nan_floats(nl);
    pr->p.sliding_window = 64;
    pa_context_problem_plain_lse(pr, ref, 0, want);
    expect_close(pr->out, PA_DTYPE_F16, ref, pr->out_elems, "mixed");
    /* Its lse over all 42 tokens, each test layout: the prefill rows' and the
     * decode rows' each plain attention's, and no float outside the layout
     * written; the output the same with it. */
    const size_t ob = pr->out_elems * 2;
    void *out0 = malloc(ob);
    memcpy(out0, pr->out, ob);
    pa_test_lse_views_match(run_mixed_ref, &m, 0, 8, 42, want, 0, "mixed reference");
    cr_assert(memcmp(out0, pr->out, ob) == 0, "mixed: the output moved");
    /* refused: strides that collide, overflow, or reach out (mixed_attention's whole-lse checks); nothing written */
    static const struct {
        int64_t hs, ts;
        int in_out;
        const char *msg;
    } bad[] = {{1, 1, 0, "on one float"},
               {41, 1, 0, "on one float"}, /* 42 tokens 1 apart need a head stride of 42 */
               {-1, 0, 0, "must be >= 0"},
               {INT64_MAX / 4, 1, 0, "overflows int64"},
               {0, 0, 1, "lse overlaps out"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        float *buf = pa_test_nan_floats(nl);
        pa_mixed_attention_params q = m;
        /* in_out: lse[0] on out's last float, so only the prefill part's lse
         * rows (tokens 0..38 of each head) meet out, and only its decode rows:
         * neither part's own check sees it, the whole's must. Refused before
         * anything is written. */
        q.lse = bad[i].in_out ? (float *)((char *)pr->out + ob - 4) : buf;
        q.lse_head_stride = bad[i].hs;
        q.lse_token_stride = bad[i].ts;
        memcpy(pr->out, out0, ob);
        cr_assert_eq(pa_ref_mixed_attention(&q), PA_ERR_INVALID_ARGUMENT, "case %zu accepted", i);
        cr_assert(strstr(pa_last_error(), bad[i].msg) != NULL, "case %zu: %s", i, pa_last_error());
        cr_assert(memcmp(out0, pr->out, ob) == 0, "case %zu: out written", i);
        for (size_t j = 0; j <= nl; j++)
            CHK(isnan(buf[j]), "case %zu: lse written", i);
        free(buf);
    }
    free(out0), free(want);
    free(ref);
    pa_context_problem_free(pr);
}

/* A mixed batch of prefills alone whose one token's lse row has a token
 * stride of 2^61 floats (one token: the stride places nothing, so the layout
 * is valid). The decode part's lse pointer sits num_prefill_tokens token
 * strides in, 2^63 bytes past lse: it was formed anyway, wrapping the address
 * space (UBSan's pointer overflow, found by tests/fuzz/fuzz_host.c's mixed
 * case), though no decode row uses it. Accepted, the lse as the context
 * attention's with the same layout. */
Test(prefill_ref, mixed_prefills_only_with_a_far_token_stride) {
    const int ql[1] = {1}, cl[1] = {5};
    pa_context_problem_cfg c = {.seed = 32,
                                .layout = PA_LAYOUT_FLASH_NHD,
                                .q_dtype = PA_DTYPE_F32,
                                .cache_dtype = PA_DTYPE_F32,
                                .num_seqs = 1,
                                .num_heads = 2,
                                .num_kv_heads = 1,
                                .head_size = 16,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl};
    pa_context_problem *pr = pa_context_problem_make(&c);
    pa_mixed_attention_params m = mixed_over(pr, PA_DTYPE_F32);
    m.num_prefills = 1;
    m.num_prefill_tokens = 1;
    m.num_heads = 2;
    m.max_prefill_query_len = 1;
    m.max_prefill_seq_len = 6;
    m.scale = pr->p.scale;
    float lse[3] = {NAN, NAN, NAN}, want[3] = {NAN, NAN, NAN};
    m.lse = lse, m.lse_head_stride = 1, m.lse_token_stride = (int64_t)1 << 61;
    cr_assert_eq(pa_mixed_attention_validate(&m), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_SUCCESS, "%s", pa_last_error());
    pr->p.lse = want, pr->p.lse_head_stride = 1, pr->p.lse_token_stride = (int64_t)1 << 61;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(isfinite(lse[0]) && lse[0] == want[0] && lse[1] == want[1] && isnan(lse[2]), "lse %f %f %f, want %f %f",
              lse[0], lse[1], lse[2], want[0], want[1]);
    pa_context_problem_free(pr);
}

/* ---- bad input: a clear error, nothing written ------------------------------------- */

static int out_untouched(const pa_context_problem *pr) {
    for (size_t i = 0; i < pr->out_elems; i++)
        if (!isnan(pa_load_as_float(pr->p.q_dtype, pr->out, i)))
            return 0;
    return 1;
}

Test(prefill_ref, rejects_bad_context_input) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    pa_context_problem *pr =
        ctx_problem(1, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, 0);
    pa_context_attention_params p = pr->p, q;
    struct {
        const char *what;
        pa_status want;
    } cases[] = {
        {"head size 100", PA_ERR_UNSUPPORTED},     {"head size 264", PA_ERR_UNSUPPORTED},
        {"head size 20", PA_ERR_UNSUPPORTED},      {"window -1", PA_ERR_INVALID_ARGUMENT},
        {"q > seq", PA_ERR_INVALID_ARGUMENT},      {"combined", PA_ERR_UNSUPPORTED},
        {"f16 q, bf16 cache", PA_ERR_UNSUPPORTED}, {"heads 5/2", PA_ERR_INVALID_ARGUMENT},
        {"q_stride", PA_ERR_INVALID_ARGUMENT},     {"seqs 70000", PA_ERR_INVALID_ARGUMENT},
        {"NaN scale", PA_ERR_INVALID_ARGUMENT},    {"table", PA_ERR_INVALID_ARGUMENT},
        {"NULL qsl", PA_ERR_INVALID_ARGUMENT},     {"cap -1", PA_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q = p;
        switch (i) {
        case 0: q.kv.head_size = 100; break;
        case 1: q.kv.head_size = 264; break;
        case 2: q.kv.head_size = 20; break;
        case 3: q.sliding_window = -1; break;
        case 4: q.max_query_len = q.max_seq_len + 1; break;
        case 5:
            q.kv.layout = PA_LAYOUT_COMBINED;
            q.kv.value = NULL;
            break;
        case 6: q.kv.dtype = PA_DTYPE_BF16; break;
        case 7: q.num_heads = 5; break;
        case 8: q.q_stride = 16; break;
        case 9: q.num_seqs = 70000; break;
        case 10: q.scale = NAN; break;
        case 11: q.block_table_stride = 0; break;
        case 12: q.query_start_loc = NULL; break;
        case 13: q.soft_cap = -1.0f; break;
        }
        pa_status s = pa_ref_context_attention(&q);
        cr_assert_eq(s, cases[i].want, "%s: got %s (%s)", cases[i].what, pa_status_string(s), pa_last_error());
        cr_assert(strlen(pa_last_error()) > 0, "%s: no message", cases[i].what);
        cr_assert(i != 0 || strncmp(pa_last_error(), "context_attention: head_size 100 unsupported", 44) == 0, "%s: %s",
                  cases[i].what, pa_last_error());
        cr_assert(i != 6 || strncmp(pa_last_error(), "context_attention: cache dtype bf16", 35) == 0, "%s: %s",
                  cases[i].what, pa_last_error());
        cr_assert_eq(pa_context_attention_validate(&q), cases[i].want, "%s: validate disagrees", cases[i].what);
        cr_assert(out_untouched(pr), "%s: output written", cases[i].what);
    }
    pa_context_problem_free(pr);
}

/* decode_validate/soft_cap_range's table, through context and prompt
 * attention's checks (and the references, which must refuse what they do). */
Test(prefill_ref, soft_cap_range) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    const int pql[2] = {5, 9};
    for (int i = 0; i < PA_TEST_SOFT_CAPS; i++) {
        const pa_test_soft_cap *c = &pa_test_soft_caps[i];
        const pa_status want = c->ok ? PA_SUCCESS : PA_ERR_INVALID_ARGUMENT;
        pa_context_problem *pr =
            ctx_problem(31, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F32, PA_DTYPE_F32, 2, 4, 2, 32, 16, ql, cl, 0);
        pr->p.soft_cap = c->cap;
        pa_status got = pa_context_attention_validate(&pr->p);
        cr_assert_eq(got, want, "context, soft cap %s: got %s (%s)", c->what, pa_status_string(got), pa_last_error());
        got = pa_ref_context_attention(&pr->p);
        cr_assert_eq(got, want, "context reference, soft cap %s: got %s (%s)", c->what, pa_status_string(got),
                     pa_last_error());
        if (!c->ok)
            cr_assert(strstr(pa_last_error(), "soft_cap") != NULL, "soft cap %s: message '%s'", c->what,
                      pa_last_error());
        pa_context_problem_free(pr);
        pa_prompt_problem_cfg pc = {.seed = 32,
                                    .dtype = PA_DTYPE_F32,
                                    .attn_type = PA_ATTN_ENCODER,
                                    .num_seqs = 2,
                                    .num_heads = 4,
                                    .num_kv_heads = 2,
                                    .head_size = 32,
                                    .q_lens = pql};
        pa_prompt_problem *pp = pa_prompt_problem_make(&pc);
        cr_assert(pp != NULL);
        pp->p.soft_cap = c->cap;
        got = pa_prompt_attention_validate(&pp->p);
        cr_assert_eq(got, want, "prompt, soft cap %s: got %s (%s)", c->what, pa_status_string(got), pa_last_error());
        got = pa_ref_prompt_attention(&pp->p);
        cr_assert_eq(got, want, "prompt reference, soft cap %s: got %s (%s)", c->what, pa_status_string(got),
                     pa_last_error());
        pa_prompt_problem_free(pp);
    }
}

Test(prefill_ref, rejects_bad_context_device_data) {
    /* Data the GPU entry cannot see: the reference reads it and refuses. */
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    for (int v = 0; v < 5; v++) {
        pa_context_problem *pr = ctx_problem(2, PA_LAYOUT_VLLM, PA_DTYPE_F32, PA_DTYPE_F32, 2, 4, 2, 32, 16, ql, cl, 0);
        switch (v) {
        case 0: pr->seq_lens[1] = 2; break;                       /* q_len 3 > seq_len 2 */
        case 1: pr->qsl[1] = 5, pr->qsl[2] = 4; break;            /* decreasing */
        case 2: pr->qsl[2] = pr->p.num_tokens + 1; break;         /* past the tokens */
        case 3: pr->block_tables[0] = pr->p.kv.num_blocks; break; /* block id out of range */
        case 4: pr->seq_lens[0] = pr->p.max_seq_len + 1; break;   /* beyond the bound */
        }
        pa_status s = pa_ref_context_attention(&pr->p);
        cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "case %d: got %s", v, pa_status_string(s));
        cr_assert(out_untouched(pr), "case %d: output written", v);
        pa_context_problem_free(pr);
    }
}

/* Blocks of nearly 2^31 tokens (any positive block size is allowed): the count
 * of a sequence's context blocks was (ctx + block_size - 1) / block_size in int,
 * which wraps negative there, so no block id was checked and a bad one was read
 * (a crash). The cache buffers are the small problem's: the reference must
 * refuse before it reads any block. */
Test(prefill_ref, block_ids_checked_at_block_sizes_near_int32_max) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    pa_context_problem *pr =
        ctx_problem(3, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F32, PA_DTYPE_F32, 2, 4, 2, 32, 16, ql, cl, 0);
    pr->p.kv.block_size = INT32_MAX - 5; /* 10 context tokens + block_size - 1 passes INT32_MAX */
    pr->p.kv.num_blocks = 1;
    pr->p.kv.key = pa_test_addr(0); /* a block of 2^31 tokens: ranges of their own, never read */
    pr->p.kv.value = pa_test_addr(1);
    pr->p.block_table_stride = 1; /* max_seq_len <= stride * block_size */
    pr->block_tables[0] = 3;      /* sequence 0's one context block: past the cache */
    pr->block_tables[1] = 0;
    pa_status s = pa_ref_context_attention(&pr->p);
    cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "got %s (%s)", pa_status_string(s), pa_last_error());
    cr_assert(strstr(pa_last_error(), "block_tables[0][0] = 3 outside 0..0") != NULL, "message: %s", pa_last_error());
    cr_assert(out_untouched(pr), "output written");
    pa_context_problem_free(pr);
}

/* Two f16 cross-attention (encoder/decoder) sequences, heads 4/4, head 32. */
static pa_prompt_problem_cfg cross_cfg(const int *q_lens, const int *k_lens) {
    return (pa_prompt_problem_cfg){.seed = 3,
                                   .dtype = PA_DTYPE_F16,
                                   .attn_type = PA_ATTN_ENCODER_DECODER,
                                   .num_seqs = 2,
                                   .num_heads = 4,
                                   .num_kv_heads = 4,
                                   .head_size = 32,
                                   .q_lens = q_lens,
                                   .k_lens = k_lens};
}

Test(prefill_ref, rejects_bad_prompt_input) {
    const int ql[2] = {4, 6}, kl[2] = {3, 9};
    pa_prompt_problem_cfg c = cross_cfg(ql, kl);
    for (int v = 0; v < 12; v++) {
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        pa_status want = PA_ERR_INVALID_ARGUMENT;
        switch (v) {
        case 0: pr->p.head_size = 36, want = PA_ERR_UNSUPPORTED; break;
        case 10: pr->p.head_size = 0; break; /* bad input, not an unsupported size (core.h) */
        case 11: pr->p.head_size = -8; break;
        case 1: pr->p.cu_seqlens_k = NULL; break; /* cross-attention needs key lengths */
        case 2: pr->p.attn_type = (pa_attn_type)7; break;
        case 3: pr->p.sliding_window = -5; break;
        case 4: pr->cu_k[0] = 5; break;         /* decreasing key offsets */
        case 5: pr->p.max_seqlen_q = 5; break;  /* a query length 6 beyond the bound */
        case 6: pr->p.num_k_tokens = 11; break; /* cu_seqlens_k[2] = 12 > 11 */
        case 7: pr->p.num_q_tokens = -1; break;
        case 8: pr->p.dtype = PA_DTYPE_FP8_E4M3; break;
        case 9: pr->p.sliding_window = 4, want = PA_ERR_UNSUPPORTED; break; /* cross-attention takes no window */
        }
        pa_status s = pa_ref_prompt_attention(&pr->p);
        cr_assert_eq(s, want, "case %d: got %s (%s)", v, pa_status_string(s), pa_last_error());
        cr_assert(v != 9 || strstr(pa_last_error(), "takes no sliding window") != NULL, "message: %s", pa_last_error());
        cr_assert(v < 10 || strstr(pa_last_error(), "prompt_attention: head_size must be > 0") != NULL, "message: %s",
                  pa_last_error());
        /* the entry's name, as its other refusals have it (they said "prefill:" before 2026-12-07) */
        cr_assert(v != 0 || strncmp(pa_last_error(), "prompt_attention: head_size 36 unsupported", 42) == 0,
                  "message: %s", pa_last_error());
        for (size_t i = 0; i < pr->q_elems; i++)
            CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pr->out, i)), "case %d: output written", v);
        pa_prompt_problem_free(pr);
    }
}

/* Each buffer of a context problem at an address of its own (validation
 * alone): for sizes no buffer of the test backs, which would otherwise put
 * one pointer inside another's claimed range. */
static void spread_context(pa_context_attention_params *b) {
    b->out = pa_test_addr(0);
    b->query = pa_test_addr(1);
    b->key = pa_test_addr(2);
    b->value = pa_test_addr(3);
    b->kv.key = pa_test_addr(4);
    b->kv.value = pa_test_addr(5);
    b->block_tables = pa_test_addr(6);
    b->seq_lens = pa_test_addr(7);
    b->query_start_loc = pa_test_addr(8);
    b->lse = NULL;
}

/* ---- what the prefill entries write shares no byte with what they read ----
 * (prefill.h.) Each input's extent worked by hand from prefill.h's shapes;
 * out's first element placed on an input's last two bytes is refused naming
 * both, just past the input accepted; lse likewise (from input lse_from on:
 * lse over the query, key and value rows has its own message, tested above).
 * Addresses only (pa_test_addr): validation reads no device memory. */
typedef struct in_span {
    const char *name;
    const void *at;
    int64_t bytes;
} in_span;

static void outputs_apart(const char *op, pa_status (*check)(const void *params, void *out, float *lse),
                          const void *params, const in_span *in, int n, int lse_from) {
    char want[160];
    for (int i = 0; i < n; i++) {
        const char *end = (const char *)in[i].at + in[i].bytes;
        snprintf(want, sizeof want, "%s: output out overlaps the input %s", op, in[i].name);
        cr_assert_eq(check(params, (void *)(end - 2), NULL), PA_ERR_INVALID_ARGUMENT, "%s: out over %s accepted", op,
                     in[i].name);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        cr_assert_eq(check(params, (void *)end, NULL), PA_SUCCESS, "%s: out just past %s: %s", op, in[i].name,
                     pa_last_error());
        if (i >= lse_from) {
            snprintf(want, sizeof want, "%s: output lse overlaps the input %s", op, in[i].name);
            cr_assert_eq(check(params, NULL, (float *)(void *)(end - 4)), PA_ERR_INVALID_ARGUMENT,
                         "%s: lse over %s accepted", op, in[i].name);
            cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        }
        cr_assert_eq(check(params, NULL, (float *)(void *)end), PA_SUCCESS, "%s: lse just past %s: %s", op, in[i].name,
                     pa_last_error());
    }
}

/* out NULL: the params' own (lse likewise, which the params leave NULL) */
static pa_status check_context(const void *params, void *out, float *lse) {
    pa_context_attention_params q = *(const pa_context_attention_params *)params;
    q.out = out ? out : q.out;
    q.lse = lse;
    return pa_context_attention_validate(&q);
}
static pa_status check_prompt(const void *params, void *out, float *lse) {
    pa_prompt_attention_params q = *(const pa_prompt_attention_params *)params;
    q.out = out ? out : q.out;
    q.lse = lse;
    return pa_prompt_attention_validate(&q);
}
static pa_status check_mixed(const void *params, void *out, float *lse) {
    pa_mixed_attention_params q = *(const pa_mixed_attention_params *)params;
    q.out = out ? out : q.out;
    q.lse = lse;
    return pa_mixed_attention_validate(&q);
}

/* An e4m3 NHD cache of 100 blocks x 16 tokens x 2 KV heads x 64 (204800
 * bytes each for K and V), one k_scale and one v_scale, at addresses 4-7. */
static pa_kv_cache apart_cache(void) {
    return (pa_kv_cache){.layout = PA_LAYOUT_FLASH_NHD,
                         .dtype = PA_DTYPE_FP8_E4M3,
                         .key = pa_test_addr(4),
                         .value = pa_test_addr(5),
                         .k_scale = (const float *)pa_test_addr(6),
                         .v_scale = (const float *)pa_test_addr(7),
                         .num_blocks = 100,
                         .block_size = 16,
                         .num_kv_heads = 2,
                         .head_size = 64};
}

/* Context attention: 3 sequences, 10 new tokens of 8 f16 heads of 64 (10240
 * bytes of query rows; K and V rows of 2 heads: 2560), block tables 3 x 8
 * int32 (96 bytes), query_start_loc 4 int32, seq_lens 3, ALiBi slopes and
 * sinks 8 floats. Prompt attention (cross): 10 query rows, 12 key rows (3072
 * bytes each for K and V), cu_seqlens_q and _k 4 int32, ALiBi and sinks.
 * Mixed: 2 prefills of 10 tokens and 3 decodes (13 query rows: 13312 bytes;
 * K and V of the prefills' 10), block tables 5 x 8 (160 bytes), seq_lens 5,
 * query_start_loc 3 int32. */
Test(prefill_ref, outputs_apart_from_inputs) {
    pa_context_attention_params c = {0};
    c.out = pa_test_addr(0);
    c.query = pa_test_addr(1);
    c.key = pa_test_addr(2);
    c.value = pa_test_addr(3);
    c.q_dtype = PA_DTYPE_F16;
    c.kv = apart_cache();
    c.block_tables = (const int32_t *)pa_test_addr(8);
    c.block_table_stride = 8;
    c.query_start_loc = (const int32_t *)pa_test_addr(9);
    c.seq_lens = (const int32_t *)pa_test_addr(10);
    c.num_seqs = 3;
    c.num_heads = 8;
    c.num_tokens = 10;
    c.max_query_len = 10;
    c.max_seq_len = 128;
    c.scale = 0.125f;
    c.alibi_slopes = (const float *)pa_test_addr(11);
    c.sinks = (const float *)pa_test_addr(12);
    cr_assert_eq(pa_context_attention_validate(&c), PA_SUCCESS, "%s", pa_last_error());
    const in_span ci[] = {{"query", c.query, 10240},
                          {"key", c.key, 2560},
                          {"value", c.value, 2560},
                          {"kv.key", c.kv.key, 204800},
                          {"kv.value", c.kv.value, 204800},
                          {"kv.k_scale", c.kv.k_scale, 4},
                          {"kv.v_scale", c.kv.v_scale, 4},
                          {"block_tables", c.block_tables, 96},
                          {"query_start_loc", c.query_start_loc, 16},
                          {"seq_lens", c.seq_lens, 12},
                          {"alibi_slopes", c.alibi_slopes, 32},
                          {"sinks", c.sinks, 32}};
    outputs_apart("context_attention", check_context, &c, ci, (int)(sizeof ci / sizeof ci[0]), 3);
    /* the outputs apart from each other: lse over out's last bytes */
    c.lse = (float *)(void *)((char *)c.out + 10240 - 4);
    cr_assert_eq(pa_context_attention_validate(&c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "lse overlaps out") != NULL, "%s", pa_last_error());

    pa_prompt_attention_params pp = {.out = pa_test_addr(0),
                                     .query = pa_test_addr(1),
                                     .key = pa_test_addr(2),
                                     .value = pa_test_addr(3),
                                     .dtype = PA_DTYPE_F16,
                                     .attn_type = PA_ATTN_ENCODER_DECODER,
                                     .cu_seqlens_q = (const int32_t *)pa_test_addr(4),
                                     .cu_seqlens_k = (const int32_t *)pa_test_addr(5),
                                     .num_seqs = 3,
                                     .num_heads = 8,
                                     .num_kv_heads = 2,
                                     .head_size = 64,
                                     .num_q_tokens = 10,
                                     .num_k_tokens = 12,
                                     .max_seqlen_q = 10,
                                     .max_seqlen_k = 12,
                                     .scale = 0.125f,
                                     .alibi_slopes = (const float *)pa_test_addr(6),
                                     .sinks = (const float *)pa_test_addr(7)};
    cr_assert_eq(pa_prompt_attention_validate(&pp), PA_SUCCESS, "%s", pa_last_error());
    const in_span pi[] = {{"query", pp.query, 10240},
                          {"key", pp.key, 3072},
                          {"value", pp.value, 3072},
                          {"cu_seqlens_q", pp.cu_seqlens_q, 16},
                          {"cu_seqlens_k", pp.cu_seqlens_k, 16},
                          {"alibi_slopes", pp.alibi_slopes, 32},
                          {"sinks", pp.sinks, 32}};
    outputs_apart("prompt_attention", check_prompt, &pp, pi, (int)(sizeof pi / sizeof pi[0]), 3);

    pa_mixed_attention_params m = {.out = pa_test_addr(0),
                                   .query = pa_test_addr(1),
                                   .key = pa_test_addr(2),
                                   .value = pa_test_addr(3),
                                   .q_dtype = PA_DTYPE_F16,
                                   .kv = apart_cache(),
                                   .block_tables = (const int32_t *)pa_test_addr(8),
                                   .block_table_stride = 8,
                                   .seq_lens = (const int32_t *)pa_test_addr(9),
                                   .query_start_loc = (const int32_t *)pa_test_addr(10),
                                   .num_prefills = 2,
                                   .num_prefill_tokens = 10,
                                   .num_decode_tokens = 3,
                                   .num_heads = 8,
                                   .max_prefill_query_len = 10,
                                   .max_prefill_seq_len = 128,
                                   .max_decode_seq_len = 128,
                                   .scale = 0.125f,
                                   .alibi_slopes = (const float *)pa_test_addr(11),
                                   .sinks = (const float *)pa_test_addr(12)};
    cr_assert_eq(pa_mixed_attention_validate(&m), PA_SUCCESS, "%s", pa_last_error());
    const in_span mi[] = {{"query", m.query, 13312},
                          {"key", m.key, 2560},
                          {"value", m.value, 2560},
                          {"kv.key", m.kv.key, 204800},
                          {"kv.value", m.kv.value, 204800},
                          {"kv.k_scale", m.kv.k_scale, 4},
                          {"kv.v_scale", m.kv.v_scale, 4},
                          {"block_tables", m.block_tables, 160},
                          {"query_start_loc", m.query_start_loc, 12},
                          {"seq_lens", m.seq_lens, 20},
                          {"alibi_slopes", m.alibi_slopes, 32},
                          {"sinks", m.sinks, 32}};
    outputs_apart("mixed_attention", check_mixed, &m, mi, (int)(sizeof mi / sizeof mi[0]), 3);
    /* lse [8 heads, 13 tokens] whose decode rows alone reach the prefill key
     * rows: the key starts at head 7's first decode row (7 x 13 + 10 = 101
     * floats in), past every prefill row (the last at 100), so neither part's
     * own check sees it; the whole's does. 3 floats earlier (its last, 103,
     * just before the key): apart. */
    for (int off = 0; off < 2; off++) {
        pa_mixed_attention_params b = m;
        b.lse = (float *)(void *)((char *)m.key - 4 * (off ? 104 : 101));
        const pa_status st = pa_mixed_attention_validate(&b);
        if (off) {
            cr_assert_eq(st, PA_SUCCESS, "%s", pa_last_error());
        } else {
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT);
            cr_assert(strstr(pa_last_error(), "mixed_attention: lse overlaps key or value") != NULL, "%s",
                      pa_last_error());
        }
    }
}

/* Mutation kill (issue 16, item 13): four checks of the prefill validation,
 * each shown to matter on an otherwise valid problem: num_heads <= 65535 (the
 * grid's y limit), k_stride >= num_kv_heads * head_size, num_tokens >= 0, and
 * cu_seqlens_k == cu_seqlens_q only with equal token counts. Nothing written. */
Test(prefill_ref, validation_limits_each_matter) {
    const int ql[2] = {4, 3}, cl[2] = {5, 0};
    pa_context_problem *pr =
        ctx_problem(71, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, 0);
    cr_assert_eq(pa_context_attention_validate(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    pa_context_attention_params b = pr->p;
    b.num_heads = 65536; /* a multiple of 2 KV heads, one past the limit */
    cr_assert_eq(pa_ref_context_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_heads must be in 1..65535"), "%s", pa_last_error());
    b.num_heads = 65534;
    spread_context(&b); /* rows of 65534 heads */
    cr_assert_eq(pa_context_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    b = pr->p;
    b.k_stride = 2 * 32 - 1;
    cr_assert_eq(pa_ref_context_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "k_stride 63 smaller than num_kv_heads*head_size 64"), "%s", pa_last_error());
    b = pr->p;          /* key positions are int32 in the kernels: a tile of room below 2^31 */
    spread_context(&b); /* a block table of 2^27 columns */
    b.block_table_stride = INT32_MAX / 16 + 1;
    b.max_seq_len = INT32_MAX - 256;
    cr_assert_eq(pa_context_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    b.max_seq_len = INT32_MAX - 255;
    cr_assert_eq(pa_ref_context_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "max_seq_len 2147483392 is above 2147483391"), "%s", pa_last_error());
    b = pr->p;
    b.num_tokens = -1;
    b.num_seqs = 0; /* nothing else to catch it */
    cr_assert_eq(pa_context_attention_validate(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_tokens must be >= 0"), "%s", pa_last_error());
    cr_assert(out_untouched(pr), "output written on bad input");
    pa_context_problem_free(pr);

    const int qlp[2] = {4, 6};
    pa_prompt_problem_cfg c = {.seed = 72,
                               .dtype = PA_DTYPE_F16,
                               .attn_type = PA_ATTN_DECODER,
                               .num_seqs = 2,
                               .num_heads = 4,
                               .num_kv_heads = 2,
                               .head_size = 32,
                               .q_lens = qlp};
    pa_prompt_problem *pp = pa_prompt_problem_make(&c);
    pa_prompt_attention_params q = pp->p;
    q.cu_seqlens_k = q.cu_seqlens_q; /* the same array: the key count must be the query count */
    q.num_k_tokens = q.num_q_tokens;
    q.max_seqlen_k = q.max_seqlen_q;
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_SUCCESS, "%s", pa_last_error());
    q.max_seqlen_k = INT32_MAX - 256; /* a bound: the kernels' int32 key positions need a tile of room */
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_SUCCESS, "%s", pa_last_error());
    q.max_seqlen_k = INT32_MAX;
    cr_assert_eq(pa_ref_prompt_attention(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "max_seqlen_k 2147483647 is above 2147483391"), "%s", pa_last_error());
    q.max_seqlen_k = q.max_seqlen_q;
    q.num_k_tokens = q.num_q_tokens + 1;
    cr_assert_eq(pa_ref_prompt_attention(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "cu_seqlens_k is cu_seqlens_q but num_k_tokens 11 != num_q_tokens 10"), "%s",
              pa_last_error());
    for (size_t i = 0; i < pp->q_elems; i++)
        CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pp->out, i)), "output written");
    pa_prompt_problem_free(pp);
}

/* One prefill (5 new tokens over 3 cached) then two decodes (contexts 9 and
 * 20), f32, 4 heads of 32, HND pages of 16; *m gets its mixed parameters. */
static pa_context_problem *mixed_problem(int with_alibi, pa_mixed_attention_params *m) {
    static const int ql[3] = {5, 1, 1}, cl[3] = {3, 9, 20};
    pa_context_problem_cfg c = {.seed = 5,
                                .layout = PA_LAYOUT_FLASH_HND,
                                .q_dtype = PA_DTYPE_F32,
                                .cache_dtype = PA_DTYPE_F32,
                                .num_seqs = 3,
                                .num_heads = 4,
                                .num_kv_heads = 4,
                                .head_size = 32,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl,
                                .with_alibi = with_alibi,
                                .new_in_cache = 1};
    pa_context_problem *pr = pa_context_problem_make(&c);
    *m = mixed_over(pr, PA_DTYPE_F32);
    m->num_prefills = 1;
    m->num_prefill_tokens = 5;
    m->num_decode_tokens = 2;
    m->num_heads = 4;
    m->max_prefill_query_len = 5;
    m->max_prefill_seq_len = 8;
    m->max_decode_seq_len = 21;
    m->scale = 0.2f;
    m->alibi_slopes = with_alibi ? pr->alibi : NULL;
    return pr;
}

Test(prefill_ref, rejects_bad_mixed_input) {
    pa_mixed_attention_params m;
    pa_context_problem *pr = mixed_problem(0, &m);
    pa_mixed_attention_params b = m;
    b.num_decode_tokens = -1;
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    b = m;
    b.max_decode_seq_len = 20; /* decode 2 has seq_len 21 */
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    b = m;
    b.max_prefill_query_len = 9; /* > max_prefill_seq_len */
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    /* A q_stride the prefill rows fit ((num_prefill_tokens - 1) x q_stride does)
     * while the decode part's start, num_prefill_tokens x q_stride, passes
     * int64: refused by name, where the split once wrapped the offset. */
    b = m;
    b.q_stride = INT64_MAX / b.num_prefill_tokens + 1;
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode part's offsets") != NULL, "%s", pa_last_error());
    cr_assert_eq(pa_mixed_attention_validate(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(out_untouched(pr), "output written on bad input");
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_SUCCESS, "%s", pa_last_error());
    pa_context_problem_free(pr);
}

/* The mixed reference's data errors name the caller's fields and rows: the
 * decode part's rows follow the prefills' (they were counted from the first
 * decode, under the decode op's field names), and the prefill part's say
 * which mixed fields context attention's names stand for. Nothing written. */
Test(prefill_ref, mixed_data_errors_name_the_callers_fields) {
    pa_mixed_attention_params m;
    pa_context_problem *pr = mixed_problem(1, &m);
    pa_mixed_attention_params b = m;
    b.max_decode_seq_len = 20; /* row 2, the second decode, has seq_len 21 */
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strcmp(pa_last_error(), "mixed_attention: seq_lens[2] = 21 outside 1..max_decode_seq_len 20") == 0, "%s",
              pa_last_error());
    /* row 2's second block (keys 16..20) outside the cache */
    int32_t *bt = (int32_t *)m.block_tables + 2 * (int64_t)m.block_table_stride + 1;
    const int32_t kept = *bt;
    *bt = m.kv.num_blocks;
    char want[160];
    snprintf(want, sizeof want, "mixed_attention: block_tables[2][1] = %d outside 0..%d", m.kv.num_blocks,
             m.kv.num_blocks - 1);
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strcmp(pa_last_error(), want) == 0, "%s", pa_last_error());
    *bt = kept;
    b = m;
    b.max_prefill_query_len = 4; /* the prefill has 5 new tokens */
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strncmp(pa_last_error(), "mixed_attention (its prefill part, where", 40) == 0, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "max_query_len max_prefill_query_len") != NULL, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "query_len 5 > max_query_len 4") != NULL, "%s", pa_last_error());
    /* decodes only: the slopes are checked by the decode part, under the mixed entry's name */
    b = m;
    b.num_prefills = 0;
    b.num_prefill_tokens = 0;
    b.max_prefill_query_len = 0;
    b.max_prefill_seq_len = 0;
    pr->alibi[1] = NAN;
    cr_assert_eq(pa_ref_mixed_attention(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strncmp(pa_last_error(), "mixed_attention (its decode part", 32) == 0, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "alibi_slopes[1]") != NULL, "%s", pa_last_error());
    cr_assert(out_untouched(pr), "output written on bad input");
    pa_context_problem_free(pr);
}

/* The mixed entry validates everything before launching anything: the decode
 * part's launch limit (num_decode_tokens x num_heads <= INT32_MAX) is part of
 * pa_mixed_attention_validate, and with no decodes the decode part is not
 * validated at all, so a block size the prefill accepts and the decode op does
 * not (24) works as it does in pa_context_attention. */
Test(prefill_ref, mixed_validates_decode_part_only_with_decodes) {
    pa_mixed_attention_params m;
    pa_context_problem *pr = mixed_problem(0, &m);
    pa_mixed_attention_params b = m;
    b.num_decode_tokens = 1 << 29; /* x 4 heads = 2^31 decode CTAs */
    cr_assert_eq(pa_mixed_attention_validate(&b), PA_ERR_INVALID_ARGUMENT, "decode CTA limit not checked");
    cr_assert(strstr(pa_last_error(), "too large for one decode launch"), "%s", pa_last_error());
    b.num_decode_tokens = (1 << 29) - 1; /* 2^29 rows, which no buffer here has */
    b.out = pa_test_addr(0);
    b.query = pa_test_addr(1);
    b.key = pa_test_addr(2);
    b.value = pa_test_addr(3);
    b.kv.key = pa_test_addr(4);
    b.kv.value = pa_test_addr(5);
    b.block_tables = pa_test_addr(6);
    b.seq_lens = pa_test_addr(7);
    b.query_start_loc = pa_test_addr(8);
    cr_assert_eq(pa_mixed_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    pa_context_problem_free(pr);

    const int ql[1] = {5}, cl[1] = {3};
    pa_context_problem_cfg c = {.seed = 24,
                                .layout = PA_LAYOUT_FLASH_NHD,
                                .q_dtype = PA_DTYPE_F32,
                                .cache_dtype = PA_DTYPE_F32,
                                .num_seqs = 1,
                                .num_heads = 2,
                                .num_kv_heads = 1,
                                .head_size = 24,
                                .block_size = 24,
                                .query_lens = ql,
                                .context_lens = cl,
                                .new_in_cache = 1};
    pr = pa_context_problem_make(&c);
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "block 24 context: %s", pa_last_error());
    for (size_t i = 0; i < pr->out_elems; i++)
        ((float *)pr->out)[i] = NAN;
    m = mixed_over(pr, PA_DTYPE_F32);
    m.num_prefills = 1;
    m.num_prefill_tokens = 5;
    m.num_decode_tokens = 0;
    m.num_heads = 2;
    m.max_prefill_query_len = 5;
    m.max_prefill_seq_len = 8;
    m.scale = pr->p.scale;
    cr_assert_eq(pa_mixed_attention_validate(&m), PA_SUCCESS, "block 24 without decodes: %s", pa_last_error());
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_SUCCESS, "%s", pa_last_error());
    float *ref = malloc(sizeof(float) * pr->out_elems);
    pa_context_problem_plain(pr, ref);
    expect_close(pr->out, PA_DTYPE_F32, ref, pr->out_elems, "mixed block 24, no decodes");
    free(ref);
    /* with a decode, the decode op's block sizes apply */
    m.num_decode_tokens = 1;
    m.max_decode_seq_len = 8;
    cr_assert_eq(pa_mixed_attention_validate(&m), PA_ERR_UNSUPPORTED);
    cr_assert(strstr(pa_last_error(), "block_size 24"), "%s", pa_last_error());
    pa_context_problem_free(pr);
}

Test(prefill_ref, rejects_bad_fp8_scales_and_alibi_slopes) {
    /* Host values the references read: an fp8 scale that is 0, negative, NaN
     * or infinite, or a non-finite ALiBi slope, is an error, nothing written. */
    const int ql[2] = {4, 3}, cl[2] = {10, 5};
    pa_context_problem *pr =
        ctx_problem(7, PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, PA_DTYPE_FP8_E5M2, 2, 4, 2, 32, 16, ql, cl, 1);
    const float good_k = pr->k_scale, good_v = pr->v_scale;
    const float bad[5] = {0.0f, -1.0f, NAN, INFINITY, -INFINITY};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 5; i++) {
            pr->k_scale = w == 0 ? bad[i] : good_k;
            pr->v_scale = w == 1 ? bad[i] : good_v;
            pa_status s = pa_ref_context_attention(&pr->p);
            cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "%s = %g: got %s", w ? "v_scale" : "k_scale", (double)bad[i],
                         pa_status_string(s));
            cr_assert(strstr(pa_last_error(), w ? "v_scale" : "k_scale") != NULL, "%s", pa_last_error());
            cr_assert(out_untouched(pr), "%s = %g: output written", w ? "v_scale" : "k_scale", (double)bad[i]);
        }
    pr->k_scale = good_k;
    pr->v_scale = good_v;
    pr->alibi[2] = NAN;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "alibi_slopes[2]") != NULL, "%s", pa_last_error());
    cr_assert(out_untouched(pr), "NaN slope: output written");
    pa_context_problem_free(pr);

    /* prompt attention: its slopes */
    const int pql[2] = {4, 6};
    pa_prompt_problem_cfg pc = {.seed = 8,
                                .dtype = PA_DTYPE_F32,
                                .attn_type = PA_ATTN_DECODER,
                                .num_seqs = 2,
                                .num_heads = 4,
                                .num_kv_heads = 2,
                                .head_size = 32,
                                .q_lens = pql,
                                .with_alibi = 1};
    pa_prompt_problem *pp = pa_prompt_problem_make(&pc);
    pp->alibi[0] = NAN;
    cr_assert_eq(pa_ref_prompt_attention(&pp->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "alibi_slopes[0]") != NULL, "%s", pa_last_error());
    for (size_t i = 0; i < pp->q_elems; i++)
        CHK(isnan(((const float *)pp->out)[i]), "prompt: output written at %zu", i);
    pa_prompt_problem_free(pp);

    /* mixed: a NaN slope must stop the call before the prefill part writes */
    pa_mixed_attention_params m;
    pr = mixed_problem(1, &m);
    pr->alibi[3] = NAN;
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "alibi_slopes[3]") != NULL, "%s", pa_last_error());
    cr_assert(out_untouched(pr), "mixed: output written");
    pa_context_problem_free(pr);
}

Test(prefill_ref, empty_batches_succeed) {
    pa_context_attention_params p = {0};
    p.q_dtype = PA_DTYPE_F16;
    char dummy[32];
    p.kv = (pa_kv_cache){.layout = PA_LAYOUT_FLASH_NHD,
                         .dtype = PA_DTYPE_F16,
                         .key = dummy,
                         .value = dummy,
                         .num_blocks = 1,
                         .block_size = 16,
                         .num_kv_heads = 1,
                         .head_size = 64};
    p.num_heads = 1;
    p.scale = 1.0f;
    cr_assert_eq(pa_ref_context_attention(&p), PA_SUCCESS, "%s", pa_last_error());
    pa_prompt_attention_params q = {.dtype = PA_DTYPE_BF16, .num_heads = 2, .num_kv_heads = 1, .head_size = 8};
    cr_assert_eq(pa_ref_prompt_attention(&q), PA_SUCCESS, "%s", pa_last_error());
}

/* ---- the prefill path setting and the Hopper kernel's shape rules ----------------- */

Test(prefill_path, set_get_and_bad_values) {
    cr_assert_eq(pa_set_prefill_path(PA_PREFILL_PATH_HOPPER), PA_SUCCESS);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_HOPPER);
    cr_assert_eq(pa_set_prefill_path(PA_PREFILL_PATH_HOPPER_FP8), PA_SUCCESS);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_HOPPER_FP8);
    cr_assert_eq(pa_set_prefill_path(PA_PREFILL_PATH_MMA), PA_SUCCESS);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_MMA);
    cr_assert_eq(pa_set_prefill_path((pa_prefill_path)4), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "prefill path 4") != NULL, "message: %s", pa_last_error());
    cr_assert_eq(pa_set_prefill_path((pa_prefill_path)-1), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_MMA, "a refused value changes nothing");
}

/* Each test runs in its own process: here nothing called pa_set_prefill_path. */
Test(prefill_path, environment_decides_until_set) {
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_AUTO);
    setenv("PAGEDATTN_PREFILL_PATH", "hopper", 1);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_HOPPER);
    setenv("PAGEDATTN_PREFILL_PATH", "mma", 1);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_MMA);
    setenv("PAGEDATTN_PREFILL_PATH", "hopper-fp8", 1);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_HOPPER_FP8);
    setenv("PAGEDATTN_PREFILL_PATH", "hopper_fp8", 1);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_AUTO, "only the documented spelling");
    setenv("PAGEDATTN_PREFILL_PATH", "warp-specialised", 1);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_AUTO);
    setenv("PAGEDATTN_PREFILL_PATH", "hopper", 1);
    cr_assert_eq(pa_set_prefill_path(PA_PREFILL_PATH_AUTO), PA_SUCCESS);
    cr_assert_eq(pa_get_prefill_path(), PA_PREFILL_PATH_AUTO, "a set value wins over the environment");
}

/* pa_prefill_hopper_head: f16/bf16, head sizes up to 64 (HP 64), 65..96 (HP
 * 96), 97..128 (HP 128), 129..192 (HP 192) and 193..256 (HP 256), 16-byte
 * aligned query and new K/V rows, a 4-byte aligned output, and in context mode a cache on the cp.async
 * paths (flash or vLLM, of the query dtype or fp8; at HP 192 and 256 flash, of
 * the query dtype or fp8); 0 for everything else. */
Test(prefill_path, hopper_shape_rules) {
    _Alignas(16) static char buf[256];
    pa_prompt_attention_params q = {.out = buf,
                                    .query = buf,
                                    .key = buf,
                                    .value = buf,
                                    .dtype = PA_DTYPE_BF16,
                                    .attn_type = PA_ATTN_DECODER,
                                    .cu_seqlens_q = (const int32_t *)buf,
                                    .num_seqs = 1,
                                    .num_heads = 4,
                                    .num_kv_heads = 2,
                                    .num_q_tokens = 1,
                                    .max_seqlen_q = 1,
                                    .scale = 1.0f};
    static const struct {
        int hs, hp;
    } heads[] = {{8, 64},    {40, 64},   {64, 64},   {72, 96},   {80, 96},   {96, 96},   {104, 128}, {128, 128},
                 {136, 192}, {160, 192}, {192, 192}, {200, 256}, {224, 256}, {232, 256}, {256, 256}, {264, 0}};
    pa_prefill_kparams k;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        q.head_size = heads[i].hs;
        pa_prefill_kparams_from_prompt(&k, &q);
        cr_assert_eq(pa_prefill_hopper_head(&k), heads[i].hp, "head %d", heads[i].hs);
    }
    q.head_size = 128;
    q.dtype = PA_DTYPE_F32;
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "f32");
    q.dtype = PA_DTYPE_F16;
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 128, "f16");
    q.query = buf + 2; /* element-aligned, not 16-byte aligned */
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "unaligned query rows");
    q.query = buf;
    q.k_stride = 2 * 128 + 4; /* rows 8 bytes off 16 */
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "unaligned key rows");
    q.k_stride = 0;
    q.out = buf + 2; /* the epilogue's 4-byte stores */
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "an output 2 bytes off 4");
    q.out = buf + 4;
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 128, "an output 4-byte aligned");
    q.out = buf;
    /* Work items (128 GQA-packed query rows of a sequence and KV head; group 2
     * here): fewer than 2^30 of them; from 2^30, mma.sync. The Hopper
     * launcher refuses items + CTAs past 2^31 - 1, so at exactly 2^30, one CTA
     * an item, it refused what this had sent it (found by review, 2026-12-07). */
    q.k_stride = 0;
    q.max_seqlen_q = 65536; /* 1024 items a sequence and KV head */
    q.num_seqs = (1 << 19) - 1;
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 128, "2^30 - 2048 work items");
    q.num_seqs = 1 << 19;
    pa_prefill_kparams_from_prompt(&k, &q);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "2^30 work items");
    q.num_seqs = 1;
    q.max_seqlen_q = 1;

    /* Context mode: the cache's layout and dtype decide. */
    pa_context_attention_params c = {.out = buf,
                                     .query = buf,
                                     .key = buf,
                                     .value = buf,
                                     .q_dtype = PA_DTYPE_BF16,
                                     .num_seqs = 1,
                                     .num_heads = 4,
                                     .num_tokens = 1,
                                     .max_query_len = 1,
                                     .max_seq_len = 1,
                                     .scale = 1.0f};
    c.kv = (pa_kv_cache){.layout = PA_LAYOUT_FLASH_NHD,
                         .dtype = PA_DTYPE_BF16,
                         .key = buf,
                         .value = buf,
                         .num_blocks = 1,
                         .block_size = 16,
                         .num_kv_heads = 2,
                         .head_size = 128};
    /* vLLM's layout goes through V^T tiles of 16-byte chunks of one block, so
     * its block size must be a multiple of 8 (16-bit) or 16 (fp8). fp8 caches
     * are copied raw and converted; a 16-bit cache of the other dtype is not
     * served at all. */
    static const struct {
        pa_kv_layout layout;
        pa_dtype cd;
        int bs, hp;
    } caches[] = {
        {PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, 16, 128},
        {PA_LAYOUT_FLASH_HND, PA_DTYPE_BF16, 16, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_BF16, 16, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_BF16, 24, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_BF16, 12, 0},
        {PA_LAYOUT_VLLM, PA_DTYPE_F16, 16, 0},
        {PA_LAYOUT_FLASH_NHD, PA_DTYPE_FP8_E4M3, 16, 128},
        {PA_LAYOUT_FLASH_HND, PA_DTYPE_FP8_E5M2, 16, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, 16, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_FP8_E5M2, 32, 128},
        {PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, 8, 0},
        {PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, 24, 0},
    };
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        c.kv.layout = caches[i].layout;
        c.kv.dtype = caches[i].cd;
        c.kv.block_size = caches[i].bs;
        pa_prefill_kparams_from_context(&k, &c);
        cr_assert_eq(pa_prefill_hopper_head(&k), caches[i].hp, "cache %s %s", pa_kv_layout_name(caches[i].layout),
                     pa_dtype_name(caches[i].cd));
    }
    /* Heads 192 and 256: flash caches, of the query dtype or fp8 (at 256 one
     * staging pair); vLLM's layout (its V^T loop) leaves too few registers at
     * 256, and its V^T tiles are two 64-key panels, not HP 192's 64-key tile. */
    static const struct {
        pa_kv_layout layout;
        pa_dtype cd;
        int served;
    } wide[] = {
        {PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, 1}, {PA_LAYOUT_FLASH_HND, PA_DTYPE_BF16, 1},
        {PA_LAYOUT_VLLM, PA_DTYPE_BF16, 0},      {PA_LAYOUT_FLASH_NHD, PA_DTYPE_FP8_E4M3, 1},
        {PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, 0},  {PA_LAYOUT_FLASH_HND, PA_DTYPE_FP8_E5M2, 1},
    };
    c.kv.block_size = 16;
    for (int hs = 192; hs <= 256; hs += 64) {
        c.kv.head_size = hs;
        for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
            c.kv.layout = wide[i].layout;
            c.kv.dtype = wide[i].cd;
            pa_prefill_kparams_from_context(&k, &c);
            cr_assert_eq(pa_prefill_hopper_head(&k), wide[i].served ? hs : 0, "head %d, cache %s %s", hs,
                         pa_kv_layout_name(wide[i].layout), pa_dtype_name(wide[i].cd));
        }
    }
    c.kv.head_size = 128;
    c.kv.layout = PA_LAYOUT_FLASH_NHD;
    c.kv.dtype = PA_DTYPE_BF16;
    c.kv.block_size = 16;
    c.kv.key = buf + 8; /* the cache base off 16 bytes: the register path */
    pa_prefill_kparams_from_context(&k, &c);
    cr_assert_eq(pa_prefill_hopper_head(&k), 0, "unaligned cache");
}

/* A context problem filled by several threads (each run of context tokens
 * from the stream skipped to its first draw) is byte for byte the one a
 * single thread fills: caches, packed Q/K/V and the contiguous copies, with
 * empty contexts and the new tokens written into the cache too. */
Test(prefill_ref, threaded_fill_is_the_single_thread_fill) {
    const int q_lens[5] = {3, 0, 17, 1, 9}, ctx_lens[5] = {40, 33, 0, 200, 1};
    for (int layout = 0; layout < 3; layout++) {
        pa_context_problem_cfg c = {.seed = 21 + (uint64_t)layout,
                                    .layout = (pa_kv_layout)layout,
                                    .q_dtype = PA_DTYPE_F16,
                                    .cache_dtype = layout == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_F16,
                                    .num_seqs = 5,
                                    .num_heads = 4,
                                    .num_kv_heads = 2,
                                    .head_size = 32,
                                    .block_size = 16,
                                    .query_lens = q_lens,
                                    .context_lens = ctx_lens,
                                    .extra_blocks = 2,
                                    .new_in_cache = layout != 1};
        pa_problems_set_threads(1);
        pa_context_problem *one = pa_context_problem_make(&c);
        pa_problems_set_threads(3);
        pa_context_problem *three = pa_context_problem_make(&c);
        pa_problems_set_threads(0);
        cr_assert(one && three);
        const size_t esz = pa_dtype_size(c.cache_dtype);
        cr_assert_eq(memcmp(one->kc, three->kc, one->kc_elems * esz), 0, "layout %d: keys", layout);
        cr_assert_eq(memcmp(one->vc, three->vc, one->vc_elems * esz), 0, "layout %d: values", layout);
        cr_assert_eq(memcmp(one->q, three->q, one->q_elems * 2), 0);
        cr_assert_eq(memcmp(one->k, three->k, one->kv_elems * 2), 0);
        for (int s = 0; s < 5; s++) {
            const size_t n = (size_t)(ctx_lens[s] + q_lens[s]) * 2 * 32 * sizeof(float);
            cr_assert_eq(memcmp(one->k_logical[s], three->k_logical[s], n), 0, "layout %d seq %d", layout, s);
            cr_assert_eq(memcmp(one->v_logical[s], three->v_logical[s], n), 0, "layout %d seq %d", layout, s);
        }
        pa_context_problem_free(one);
        pa_context_problem_free(three);
    }
}

/* The prefill ops' refusals no other test reached (scripts/refusal-coverage.py),
 * each on an otherwise valid problem with its own message, nothing written. */
Test(prefill_ref, each_remaining_refusal_names_its_field) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    pa_context_problem *pr =
        ctx_problem(1, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, 0);
    const pa_context_attention_params p = pr->p;
    cr_assert_eq(pa_context_attention_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    for (int k = 0; k < 6; k++) {
        pa_context_attention_params q = p;
        const char *want;
        switch (k) {
        case 0: q.v_stride = 2 * 32 - 1, want = "v_stride 63 smaller than num_kv_heads*head_size 64"; break;
        /* 2^30 query rows times the group 2 */
        case 1:
            q.max_query_len = q.max_seq_len = 1 << 30;
            want = "max query length 1073741824 times the GQA group 2 overflows the row index";
            break;
        case 2: q.max_query_len = -1, want = "max_query_len must be >= 0 (got -1)"; break;
        case 3: q.max_query_len = q.max_seq_len = 0, want = "max_seq_len must be > 0 (got 0)"; break;
        case 4:
            q.block_table_stride = 1;
            q.kv.block_size = 8;
            want = "max_seq_len 14 needs 2 blocks but the block table has 1 columns";
            break;
        default: want = "context_attention: params is NULL"; break;
        }
        const pa_context_attention_params *qp = k == 5 ? NULL : &q;
        cr_assert_eq(pa_ref_context_attention(qp), PA_ERR_INVALID_ARGUMENT, "context case %d accepted", k);
        cr_assert(strstr(pa_last_error(), want) != NULL, "context case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert_eq(pa_context_attention_validate(qp), PA_ERR_INVALID_ARGUMENT, "context case %d", k);
        cr_assert(out_untouched(pr), "context case %d: output written", k);
    }

    const int pql[2] = {4, 6}, pkl[2] = {3, 9};
    pa_prompt_problem_cfg c = cross_cfg(pql, pkl);
    for (int k = 0; k < 6; k++) {
        pa_prompt_problem *pp = pa_prompt_problem_make(&c);
        cr_assert_eq(pa_prompt_attention_validate(&pp->p), PA_SUCCESS, "%s", pa_last_error());
        const char *want;
        switch (k) {
        case 0: pp->p.num_kv_heads = 0, want = "num_kv_heads must be > 0 (got 0)"; break;
        case 1: pp->p.max_seqlen_q = -1, want = "max_seqlen_q must be >= 0 (got -1)"; break;
        case 2: pp->p.num_k_tokens = -1, want = "num_k_tokens must be >= 0 (got -1)"; break;
        case 3: pp->p.max_seqlen_k = -1, want = "max_seqlen_k must be >= 0 (got -1)"; break;
        case 4: pp->p.cu_seqlens_q = NULL, want = "cu_seqlens_q must not be NULL"; break;
        default: want = "prompt_attention: params is NULL"; break;
        }
        const pa_prompt_attention_params *qp = k == 5 ? NULL : &pp->p;
        cr_assert_eq(pa_ref_prompt_attention(qp), PA_ERR_INVALID_ARGUMENT, "prompt case %d accepted", k);
        cr_assert(strstr(pa_last_error(), want) != NULL, "prompt case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert_eq(pa_prompt_attention_validate(qp), PA_ERR_INVALID_ARGUMENT, "prompt case %d", k);
        for (size_t i = 0; i < pp->q_elems; i++)
            CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pp->out, i)), "prompt case %d: output written", k);
        pa_prompt_problem_free(pp);
    }
    pa_context_problem_free(pr);

    pa_mixed_attention_params m;
    pr = mixed_problem(0, &m);
    for (int k = 0; k < 3; k++) {
        pa_mixed_attention_params b = m;
        const char *want;
        if (k == 0)
            b.num_prefill_tokens = INT32_MAX, want = "num_prefill_tokens + num_decode_tokens overflows int32";
        else if (k == 1)
            b.num_prefills = 0, want = "mixed_attention: 5 prefill tokens but num_prefills is 0";
        else
            want = "mixed_attention: params is NULL";
        const pa_mixed_attention_params *bp = k == 2 ? NULL : &b;
        cr_assert_eq(pa_ref_mixed_attention(bp), PA_ERR_INVALID_ARGUMENT, "mixed case %d accepted", k);
        cr_assert(strstr(pa_last_error(), want) != NULL, "mixed case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert_eq(pa_mixed_attention_validate(bp), PA_ERR_INVALID_ARGUMENT, "mixed case %d", k);
    }
    /* a total of exactly INT32_MAX tokens is not an overflow (something else refuses it) */
    pa_mixed_attention_params e = m;
    cr_assert_gt(e.num_decode_tokens, 0);
    e.num_prefill_tokens = INT32_MAX - e.num_decode_tokens;
    cr_assert_neq(pa_mixed_attention_validate(&e), PA_SUCCESS);
    cr_assert(strstr(pa_last_error(), "overflows int32") == NULL, "%s", pa_last_error());
    cr_assert(out_untouched(pr), "mixed: output written");
    pa_context_problem_free(pr);
}

/* The references' own checks of device data (found unreached by
 * scripts/refusal-coverage.py): offsets starting below 0 or falling, and a
 * mixed batch's decode block id past the pool. Nothing written. */
/* Context attention's reference checks every block id of a sequence's context,
 * those wholly before a sliding window too (prefill.h): the GPU entry skips a
 * sequence with any out of range, read or not, where decode reads (and its
 * reference checks) only the window's blocks. 40 cached keys in blocks of 16,
 * 4 new tokens, a window of 8: keys 33..43 are attended, block 0 never. */
Test(prefill_ref, context_reference_checks_blocks_before_the_window) {
    const int ql[1] = {4}, cl[1] = {40};
    pa_context_problem *pr =
        ctx_problem(3, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F32, PA_DTYPE_F32, 1, 2, 1, 32, 16, ql, cl, 0);
    pr->p.sliding_window = 8;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    for (size_t i = 0; i < pr->out_elems; i++)
        ((float *)pr->out)[i] = NAN;
    pr->block_tables[0] = -1;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "context_attention: block_tables[0][0] = -1 outside"), "%s", pa_last_error());
    cr_assert(out_untouched(pr), "output written");
    pa_context_problem_free(pr);
}

Test(prefill_ref, references_check_offsets_and_decode_blocks) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    pa_context_problem *pr =
        ctx_problem(1, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, 0);
    const int32_t q0 = pr->qsl[0], q1 = pr->qsl[1], q2 = pr->qsl[2];
    pr->qsl[0] = -1;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "context_attention: query_start_loc[0] = -1 < 0"), "%s", pa_last_error());
    pr->qsl[0] = q0;
    pr->qsl[2] = 3; /* below qsl[1] = 4 */
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "context_attention: query_start_loc decreases at 1 (4 -> 3)"), "%s",
              pa_last_error());
    /* a fall to INT32_MIN: refused the same way, the length never formed from
     * the two (4 - INT32_MIN overflowed int; UBSan stops the sanitized run) */
    pr->qsl[2] = INT32_MIN;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "context_attention: query_start_loc decreases at 1"), "%s", pa_last_error());
    pr->qsl[1] = q1, pr->qsl[2] = q2;
    cr_assert(out_untouched(pr), "context: output written");
    pa_context_problem_free(pr);

    const int pql[2] = {4, 6}, pkl[2] = {3, 9};
    pa_prompt_problem_cfg c = cross_cfg(pql, pkl);
    pa_prompt_problem *pp = pa_prompt_problem_make(&c);
    pp->cu_q[0] = -1;
    cr_assert_eq(pa_ref_prompt_attention(&pp->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "prompt_attention: cu_seqlens_q[0] = -1 < 0"), "%s", pa_last_error());
    for (size_t i = 0; i < pp->q_elems; i++)
        CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pp->out, i)), "prompt: output written");
    pa_prompt_problem_free(pp);

    pa_mixed_attention_params m;
    pr = mixed_problem(0, &m);
    /* the first decode (request 1, 10 keys of blocks of 16): its one block */
    const int64_t at = 1 * (int64_t)m.block_table_stride;
    const int32_t keep = pr->block_tables[at];
    pr->block_tables[at] = pr->p.kv.num_blocks;
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "mixed_attention: block_tables[1][0]"), "%s",
              pa_last_error()); /* the caller's row */
    cr_assert(out_untouched(pr), "mixed: output written");
    pr->block_tables[at] = keep;
    cr_assert_eq(pa_ref_mixed_attention(&m), PA_SUCCESS, "%s", pa_last_error());
    pa_context_problem_free(pr);
}

/* Scales per KV head (scales_per_head) in context attention: query head h
 * reads KV head h / group's cached rows under that head's k_scale and
 * v_scale. The oracle is the one-scale reference (checked against plain
 * attention above), run once per KV head j with j's scales: head h's output
 * rows must be those of j = h / group's run, byte for byte. vLLM's layout and
 * the flash ones, e4m3 and e5m2, GQA 2 and 4, f32 and 16-bit queries. */
static pa_status run_context_ref(const void *p) { return pa_ref_context_attention(p); }

Test(prefill_ref, context_scales_per_kv_head) {
    static const pa_kv_layout lay[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    const int ql[3] = {7, 1, 20}, cl[3] = {30, 50, 0};
    for (int l = 0; l < 3; l++) {
        const int kvh = l == 1 ? 2 : 4;
        const pa_dtype qd = l == 2 ? PA_DTYPE_F32 : PA_DTYPE_F16;
        pa_context_problem *pr =
            ctx_problem(40u + (uint64_t)l, lay[l], qd, l == 1 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3, 3, 8, kvh, 32,
                        16, ql, cl, l == 0);
        float ks[4], vs[4];
        pa_test_head_scales(pr->k_scale, kvh, 2, ks);
        pa_test_head_scales(pr->v_scale, kvh, 4, vs);
        const int64_t at = pa_test_scales_per_head_oracle(
            run_context_ref, &pr->p, &pr->p.kv, &pr->k_scale, &pr->v_scale, ks, vs, pr->out,
            pr->out_elems * pa_dtype_size(qd), (size_t)pr->p.num_tokens, 8, 32, pa_dtype_size(qd));
        cr_assert_eq(at, -1, "%s: element %lld differs from its KV head's one-scale run (-2: a run failed: %s)",
                     pa_kv_layout_name(lay[l]), (long long)at, pa_last_error());
        vs[kvh - 1] = 0.0f; /* a bad scale is named by its head */
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT);
        char want[32];
        snprintf(want, sizeof want, "v_scale[%d]", kvh - 1);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        pr->p.kv.k_scale = &pr->k_scale;
        pr->p.kv.v_scale = &pr->v_scale;
        pa_context_problem_free(pr);
    }
}

/* ---- log-sum-exp output (prefill.h) ------------------------------------------------- */

/* Every row's lse, context and prompt attention: with ALiBi, a window and a
 * soft cap, with sinks (pa_sink_logits: -inf, below, among and far above the
 * logits; in the last context variant and the last two prompt ones, heads 1
 * and 2 take 100 and 800, past f32's and double's exp at the logits' max:
 * pa_test_set_far_sinks), and causal prompts whose first rows see no key (-inf, or the
 * sink). The output with lse asked is the output without it, bit for bit. */
Test(prefill_ref, lse_is_the_log_of_each_rows_denominator) {
    const int ql[3] = {17, 1, 40}, cl[3] = {30, 64, 0};
    for (int v = 0; v < 4; v++) {
        pa_context_problem_cfg c = {.seed = 7300u + (unsigned)v,
                                    .layout = v & 1 ? PA_LAYOUT_VLLM : PA_LAYOUT_FLASH_NHD,
                                    .q_dtype = v < 2 ? PA_DTYPE_F32 : PA_DTYPE_F16,
                                    .cache_dtype = v == 3  ? PA_DTYPE_FP8_E4M3
                                                   : v < 2 ? PA_DTYPE_F32
                                                           : PA_DTYPE_F16,
                                    .num_seqs = 3,
                                    .num_heads = 8,
                                    .num_kv_heads = 2,
                                    .head_size = 32,
                                    .block_size = 16,
                                    .query_lens = ql,
                                    .context_lens = cl,
                                    .extra_blocks = 2,
                                    .with_alibi = v != 1,
                                    .with_sinks = v >= 1};
        pa_context_problem *pr = pa_context_problem_make(&c);
        cr_assert(pr != NULL);
        if (v == 3)
            pa_test_set_far_sinks(pr->sinks, 8);
        pr->p.sliding_window = v == 2 ? 25 : 0;
        pr->p.soft_cap = v == 1 ? 0.8f : 0.0f;
        const size_t n = (size_t)pr->p.num_heads * (size_t)pr->p.num_tokens,
                     ob = pr->out_elems * pa_dtype_size(pr->p.q_dtype);
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        void *plain_out = malloc(ob);
        memcpy(plain_out, pr->out, ob);
        float *lse = pa_test_nan_floats(n), *want = pa_test_nan_floats(n),
              *ref = malloc(sizeof(float) * (pr->out_elems + 1));
        pr->p.lse = lse;
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        cr_assert(memcmp(plain_out, pr->out, ob) == 0, "variant %d: asking for lse changed the output", v);
        pa_context_problem_plain_lse(pr, ref, 0, want);
        pa_test_expect_lse(lse, want, n, "context");
        cr_assert(isnan(lse[n]), "written past the lse array");
        free(plain_out);
        free(lse);
        free(want);
        free(ref);
        pa_context_problem_free(pr);
    }
    /* Prompts: decoder self-attention, encoder, cross-attention, and decoder
     * queries longer than their keys (rows before the first key). */
    const int pql[3] = {12, 1, 33}, pkl[3] = {20, 9, 33}, short_k[3] = {5, 1, 30};
    for (int t = 0; t < 8; t++) {
        const pa_attn_type types[4] = {PA_ATTN_DECODER, PA_ATTN_ENCODER, PA_ATTN_ENCODER_DECODER, PA_ATTN_DECODER};
        const int ty = t % 4, sinks = t >= 4;
        pa_prompt_problem_cfg c = {.seed = 7400u + (unsigned)t,
                                   .dtype = ty == 1 ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                                   .attn_type = types[ty],
                                   .num_seqs = 3,
                                   .num_heads = 8,
                                   .num_kv_heads = 4,
                                   .head_size = 16,
                                   .q_lens = pql,
                                   .k_lens = ty == 2   ? pkl
                                             : ty == 3 ? short_k
                                                       : NULL,
                                   .with_alibi = ty != 1,
                                   .with_sinks = sinks};
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        cr_assert(pr != NULL);
        if (t >= 6)
            pa_test_set_far_sinks(pr->sinks, 8);
        pr->p.sliding_window = ty == 0 ? 7 : 0;
        pr->p.soft_cap = ty == 2 ? 1.5f : 0.0f;
        const size_t n = (size_t)pr->p.num_heads * (size_t)pr->p.num_q_tokens;
        float *lse = pa_test_nan_floats(n), *want = pa_test_nan_floats(n),
              *ref = malloc(sizeof(float) * (pr->q_elems + 1));
        pr->p.lse = lse;
        cr_assert_eq(pa_ref_prompt_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        pa_prompt_problem_plain_lse(pr, ref, 0, want);
        pa_test_expect_lse(lse, want, n, "prompt");
        cr_assert(isnan(lse[n]), "written past the lse array");
        if (ty == 3) {
            /* Sequence 0: 12 queries over 5 keys; rows 0..6 see none. */
            for (int h = 0; h < 8; h++)
                for (int i = 0; i < 7; i++) {
                    const float x = lse[(size_t)h * pr->p.num_q_tokens + (size_t)i];
                    CHK(sinks ? x == pr->sinks[h] : x == -INFINITY, "row %d head %d: lse %g without a key", i, h, x);
                }
        }
        free(lse);
        free(want);
        free(ref);
        pa_prompt_problem_free(pr);
    }
}

/* The lse in each test layout (pa_test_lse_view_nth: the default,
 * FlashInfer's [tokens, heads], a padded view), context and prompt
 * attention: the default's values, bit for bit, at the layout's places and
 * nowhere else; the output the same. Strides that collide are refused. */
Test(prefill_ref, lse_strides_place_the_same_values) {
    const int ql[3] = {17, 1, 40}, cl[3] = {30, 64, 0};
    pa_context_problem_cfg c = {.seed = 7350u,
                                .layout = PA_LAYOUT_FLASH_HND,
                                .q_dtype = PA_DTYPE_BF16,
                                .cache_dtype = PA_DTYPE_BF16,
                                .num_seqs = 3,
                                .num_heads = 8,
                                .num_kv_heads = 2,
                                .head_size = 32,
                                .block_size = 16,
                                .query_lens = ql,
                                .context_lens = cl,
                                .with_alibi = 1,
                                .with_sinks = 1};
    pa_context_problem *pr = pa_context_problem_make(&c);
    const int H = 8, T = pr->p.num_tokens;
    const size_t n = (size_t)H * (size_t)T, ob = pr->out_elems * 2;
    float *want = pa_test_nan_floats(n);
    pr->p.lse = want;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    void *out0 = malloc(ob);
    memcpy(out0, pr->out, ob);
    pa_test_lse_views_match(run_context_ref_lse, &pr->p, 1, H, T, want, 1, "context reference");
    cr_assert(memcmp(out0, pr->out, ob) == 0, "context: the output moved");
    /* T tokens 1 apart need a head stride of T */
    cr_assert_eq(run_context_ref_lse(&pr->p, want, T - 1, 0), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "context_attention: lse strides") != NULL, "%s", pa_last_error());
    /* a negative stride is refused with no lse and no sequence too (the fuzzer's find) */
    pa_context_attention_params q = pr->p;
    q.lse = NULL;
    q.num_seqs = 0;
    q.lse_head_stride = -3;
    cr_assert_eq(pa_context_attention_validate(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "must be >= 0") != NULL, "%s", pa_last_error());
    pr->p.lse = NULL;
    free(out0), free(want);
    pa_context_problem_free(pr);

    const int pql[3] = {12, 1, 33}, pkl[3] = {20, 9, 33};
    pa_prompt_problem_cfg pc = {.seed = 7450u,
                                .dtype = PA_DTYPE_F32,
                                .attn_type = PA_ATTN_ENCODER_DECODER,
                                .num_seqs = 3,
                                .num_heads = 4,
                                .num_kv_heads = 4,
                                .head_size = 16,
                                .q_lens = pql,
                                .k_lens = pkl,
                                .with_sinks = 1};
    pa_prompt_problem *pp = pa_prompt_problem_make(&pc);
    const int PT = pp->p.num_q_tokens;
    const size_t pn = (size_t)4 * (size_t)PT;
    float *pwant = pa_test_nan_floats(pn);
    pp->p.lse = pwant;
    cr_assert_eq(pa_ref_prompt_attention(&pp->p), PA_SUCCESS, "%s", pa_last_error());
    pa_test_lse_views_match(run_prompt_ref, &pp->p, 1, 4, PT, pwant, 1, "prompt reference");
    /* token stride 2 with the default head stride PT: two pairs on one float */
    cr_assert_eq(run_prompt_ref(&pp->p, pwant, 0, 2), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "prompt_attention: lse strides") != NULL, "%s", pa_last_error());
    pa_prompt_attention_params q2 = pp->p;
    q2.lse = NULL;
    q2.num_seqs = 0;
    q2.lse_token_stride = -1;
    cr_assert_eq(pa_prompt_attention_validate(&q2), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "must be >= 0") != NULL, "%s", pa_last_error());
    pp->p.lse = NULL;
    free(pwant);
    pa_prompt_problem_free(pp);
}

/* Cascade attention on the references: each sequence's keys cut at a[s]
 * (<= k_len - q_len: every query sees the whole first part), the first part
 * as encoder attention (no mask) with the sinks, the rest as causal decoder
 * attention, merged by their lse (pa_ref_merge_attn_states) equal one causal
 * call over all the keys, output and lse; without sinks, with them, and with
 * heads 1 and 2's far above the logits. A sequence cut at 0 has an empty
 * first part: its rows carry only the sink (or -inf) there. */
Test(prefill_ref, lse_merges_split_keys_into_the_whole) {
    const int ql[4] = {5, 1, 12, 3}, kl[4] = {40, 17, 12, 9}, cut[4] = {16, 0, 0, 6}, zero[4] = {0};
    for (int sinks = 0; sinks < 3; sinks++) {
        pa_prompt_problem_cfg c = {.seed = 7500u + (unsigned)sinks,
                                   .dtype = PA_DTYPE_F32,
                                   .attn_type = PA_ATTN_DECODER,
                                   .num_seqs = 4,
                                   .num_heads = 6,
                                   .num_kv_heads = 2,
                                   .head_size = 24,
                                   .q_lens = ql,
                                   .k_lens = kl,
                                   .with_sinks = sinks > 0};
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        cr_assert(pr != NULL);
        if (sinks == 2) /* the first part's lse must be the sink, not +inf: the merge reads +inf as empty */
            pa_test_set_far_sinks(pr->sinks, 6);
        pr->p.soft_cap = 2.0f;
        const int nq = pr->p.num_q_tokens;
        const size_t n = (size_t)pr->p.num_heads * (size_t)nq, ne = pr->q_elems;
        float *whole_lse = pa_test_nan_floats(n), *lse_a = pa_test_nan_floats(n), *lse_b = pa_test_nan_floats(n);
        float *out_a = pa_test_nan_floats(ne), *out_b = pa_test_nan_floats(ne);
        pr->p.lse = whole_lse;
        cr_assert_eq(pa_ref_prompt_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());

        int32_t cu_a[5], cu_b[5];
        void *ka, *va, *kb, *vb;
        pa_prompt_problem_key_part(pr, zero, cut, &ka, &va, cu_a);
        pa_prompt_problem_key_part(pr, cut, kl, &kb, &vb, cu_b);
        pa_prompt_attention_params a = pr->p, b = pr->p;
        a.attn_type = PA_ATTN_ENCODER;
        a.key = ka, a.value = va, a.cu_seqlens_k = cu_a, a.num_k_tokens = cu_a[4];
        a.out = out_a, a.lse = lse_a;
        b.sinks = NULL;
        b.key = kb, b.value = vb, b.cu_seqlens_k = cu_b, b.num_k_tokens = cu_b[4];
        b.out = out_b, b.lse = lse_b;
        cr_assert_eq(pa_ref_prompt_attention(&a), PA_SUCCESS, "%s", pa_last_error());
        cr_assert_eq(pa_ref_prompt_attention(&b), PA_SUCCESS, "%s", pa_last_error());
        pa_test_expect_merged_is_whole(sinks, nq, pr->p.num_heads, pr->p.head_size, out_a, lse_a, out_b, lse_b, pr->out,
                                       whole_lse);
        /* Sequence 1 (one query, cut at 0): its first part saw no key. */
        for (int h = 0; h < 6; h++) {
            const float x = lse_a[(size_t)h * nq + 5];
            CHK(sinks ? x == pr->sinks[h] : x == -INFINITY, "head %d: empty part's lse %g", h, x);
        }
        free(ka), free(va), free(kb), free(vb);
        free(whole_lse), free(lse_a), free(lse_b), free(out_a), free(out_b);
        pa_prompt_problem_free(pr);
    }
}

/* lse refused when misaligned or overlapping out, query, key or value (each
 * written or read while the rows' lse are stored), for both entries; nothing
 * is written. A valid lse beside them passes. */
Test(prefill_ref, lse_refused_misaligned_or_overlapping) {
    const int ql[2] = {4, 6}, kl[2] = {3, 9};
    pa_prompt_problem_cfg c = cross_cfg(ql, kl);
    for (int v = 0; v < 6; v++) {
        pa_prompt_problem *pr = pa_prompt_problem_make(&c);
        const size_t n = (size_t)pr->p.num_heads * (size_t)pr->p.num_q_tokens;
        float *lse = pa_test_nan_floats(n + 1);
        const char *want = NULL;
        switch (v) {
        case 0: pr->p.lse = (float *)((char *)lse + 2), want = "lse must be 4-byte aligned"; break;
        /* Inside the buffer (each far larger than the lse array), so that no
         * neighbour in the heap is met first. */
        case 1: pr->p.lse = (float *)pr->out + 3, want = "lse overlaps out"; break;
        case 2: pr->p.lse = (float *)pr->q, want = "lse overlaps query"; break;
        case 3: pr->p.lse = (float *)pr->k + 1, want = "lse overlaps key"; break;
        case 4: pr->p.lse = (float *)pr->v + 2, want = "lse overlaps value"; break;
        default: pr->p.lse = lse; break;
        }
        const pa_status s = pa_ref_prompt_attention(&pr->p);
        if (!want) {
            cr_assert_eq(s, PA_SUCCESS, "%s", pa_last_error());
        } else {
            cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "case %d: got %s", v, pa_status_string(s));
            cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s'", v, pa_last_error());
            for (size_t i = 0; i < pr->q_elems; i++)
                CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pr->out, i)), "case %d: output written", v);
            for (size_t i = 0; i <= n; i++)
                CHK(isnan(lse[i]), "case %d: lse written", v);
        }
        free(lse);
        pa_prompt_problem_free(pr);
    }
    const int cql[2] = {4, 3}, ccl[2] = {10, 0};
    pa_context_problem *pr =
        ctx_problem(1, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, cql, ccl, 0);
    for (int v = 0; v < 3; v++) {
        pa_context_attention_params q = pr->p;
        q.lse = v == 0 ? (float *)pr->out + 1 : v == 1 ? (float *)((const char *)q.key + 2) : (float *)q.value + 1;
        const char *want = v == 0   ? "context_attention: lse overlaps out"
                           : v == 1 ? "lse must be 4-byte aligned"
                                    : "lse overlaps value";
        cr_assert_eq(pa_ref_context_attention(&q), PA_ERR_INVALID_ARGUMENT, "case %d", v);
        cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s'", v, pa_last_error());
    }
    pa_context_problem_free(pr);
}

/* ---- cache only: cascade attention's shared prefix (prefill.h) ------------------------ */

/* A context problem turned cache-only: each sequence's seq_len becomes its
 * context length (the keys its cache holds), key and value NULL. */
static void make_cache_only(pa_context_problem *pr, const int *cl) {
    for (int s = 0; s < pr->p.num_seqs; s++)
        pr->seq_lens[s] = cl[s];
    pr->p.cache_only = 1;
    pr->p.key = pr->p.value = NULL;
}

/* With cache_only the queries see their sequence's cached tokens alone, none
 * masked, against plain attention over those keys: more queries than keys, a
 * sequence with no keys at all (zeros, lse -inf or the sink), max_query_len
 * above max_seq_len; every layout, f32/f16/fp8, GQA, soft cap, sinks. */
Test(prefill_ref, cache_only_attends_to_the_cache_alone) {
    const int ql[4] = {17, 40, 3, 1}, cl[4] = {30, 5, 0, 64};
    for (int v = 0; v < 4; v++) {
        pa_context_problem_cfg c = {.seed = 7900u + (unsigned)v,
                                    .layout = v == 0   ? PA_LAYOUT_VLLM
                                              : v == 1 ? PA_LAYOUT_FLASH_HND
                                                       : PA_LAYOUT_FLASH_NHD,
                                    .q_dtype = v < 2 ? PA_DTYPE_F32 : PA_DTYPE_F16,
                                    .cache_dtype = v == 3  ? PA_DTYPE_FP8_E5M2
                                                   : v < 2 ? PA_DTYPE_F32
                                                           : PA_DTYPE_F16,
                                    .num_seqs = 4,
                                    .num_heads = 8,
                                    .num_kv_heads = 2,
                                    .head_size = 32,
                                    .block_size = 16,
                                    .query_lens = ql,
                                    .context_lens = cl,
                                    .extra_blocks = 2,
                                    .with_sinks = v & 1};
        pa_context_problem *pr = pa_context_problem_make(&c);
        cr_assert(pr != NULL);
        make_cache_only(pr, cl);
        pr->p.soft_cap = v == 2 ? 1.2f : 0.0f;
        const size_t n = (size_t)pr->p.num_heads * (size_t)pr->p.num_tokens;
        float *lse = pa_test_nan_floats(n), *want = pa_test_nan_floats(n);
        float *ref = malloc(sizeof(float) * (pr->out_elems + 1));
        pr->p.lse = lse;
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "variant %d: %s", v, pa_last_error());
        pa_context_problem_plain_lse(pr, ref, 0, want);
        expect_close(pr->out, pr->p.q_dtype, ref, pr->out_elems, "cache only");
        pa_test_expect_lse(lse, want, n, "cache only");
        /* Sequence 2 has no key: zeros, and -inf or its head's sink. */
        const int t0 = pr->qsl[2];
        for (int h = 0; h < 8; h++)
            for (int t = t0; t < t0 + 3; t++) {
                const float x = lse[(size_t)h * pr->p.num_tokens + (size_t)t];
                CHK(pr->sinks ? x == pr->sinks[h] : x == -INFINITY, "head %d token %d: lse %g without a key", h, t, x);
                CHK(pa_load_as_float(pr->p.q_dtype, pr->out, ((size_t)t * 8 + (size_t)h) * 32) == 0.0f,
                    "head %d token %d: output without a key", h, t);
            }
        free(lse), free(want), free(ref);
        pa_context_problem_free(pr);
    }
    /* max_query_len above max_seq_len passes with cache_only alone. */
    pa_context_problem_cfg c = {.seed = 7950,
                                .layout = PA_LAYOUT_FLASH_NHD,
                                .q_dtype = PA_DTYPE_F32,
                                .cache_dtype = PA_DTYPE_F32,
                                .num_seqs = 4,
                                .num_heads = 4,
                                .num_kv_heads = 4,
                                .head_size = 16,
                                .block_size = 8,
                                .query_lens = ql,
                                .context_lens = cl,
                                .extra_blocks = 1};
    pa_context_problem *pr = pa_context_problem_make(&c);
    make_cache_only(pr, cl);
    pr->p.max_seq_len = 64;
    pr->p.max_query_len = 400;
    cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    pr->p.cache_only = 0;
    pr->p.key = pr->k;
    pr->p.value = pr->v;
    cr_assert_eq(pa_context_attention_validate(&pr->p), PA_ERR_INVALID_ARGUMENT);
    pa_context_problem_free(pr);
}

/* cache_only's refusals: a value other than 0 or 1, ALiBi, a sliding window;
 * without it key and value are still required. Nothing written. */
Test(prefill_ref, cache_only_refusals) {
    const int ql[2] = {4, 3}, cl[2] = {10, 0};
    for (int v = 0; v < 4; v++) {
        pa_context_problem *pr =
            ctx_problem(2, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, v == 1);
        make_cache_only(pr, cl);
        const char *want;
        switch (v) {
        case 0: pr->p.cache_only = 2, want = "cache_only must be 0 or 1 (got 2)"; break;
        case 1: want = "cache_only takes no ALiBi or sliding window"; break;
        case 2: pr->p.sliding_window = 4, want = "cache_only takes no ALiBi or sliding window"; break;
        default: pr->p.cache_only = 0, want = "key must not be NULL"; break;
        }
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_ERR_INVALID_ARGUMENT, "case %d", v);
        cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s'", v, pa_last_error());
        for (size_t i = 0; i < pr->out_elems; i++)
            CHK(isnan(pa_load_as_float(PA_DTYPE_F16, pr->out, i)), "case %d: output written", v);
        pa_context_problem_free(pr);
    }
}

/* Cascade attention over the paged cache, as vLLM runs it: every sequence's
 * first P tokens are one shared prefix (its block table's first P / bs
 * entries point at sequence 0's blocks). The prefix runs once, cache only,
 * as one sequence of all the batch's query tokens over those blocks, with
 * the sinks; each sequence's own keys run as context attention with its
 * block table row past the prefix and seq_len less P; merged by their lse,
 * they equal context attention of each whole sequence (output and lse). */
Test(prefill_ref, cascade_over_a_shared_prefix) {
    const int ql[3] = {9, 1, 20}, cl[3] = {48, 40, 32}, P = 32, bs = 16;
    for (int sinks = 0; sinks < 2; sinks++) {
        pa_context_problem_cfg c = {.seed = 8000u + (unsigned)sinks,
                                    .layout = sinks ? PA_LAYOUT_VLLM : PA_LAYOUT_FLASH_NHD,
                                    .q_dtype = PA_DTYPE_F32,
                                    .cache_dtype = PA_DTYPE_F32,
                                    .num_seqs = 3,
                                    .num_heads = 6,
                                    .num_kv_heads = 3,
                                    .head_size = 32,
                                    .block_size = bs,
                                    .query_lens = ql,
                                    .context_lens = cl,
                                    .extra_blocks = 2,
                                    .with_sinks = sinks};
        pa_context_problem *pr = pa_context_problem_make(&c);
        cr_assert(pr != NULL);
        pr->p.soft_cap = 3.0f;
        const int stride = pr->p.block_table_stride, T = pr->p.num_tokens, H = pr->p.num_heads;
        for (int s = 1; s < 3; s++) /* the shared prefix: sequence 0's blocks */
            for (int b = 0; b < P / bs; b++)
                pr->block_tables[s * stride + b] = pr->block_tables[b];
        const size_t n = (size_t)H * (size_t)T, ne = pr->out_elems;
        float *whole_lse = pa_test_nan_floats(n), *lse_a = pa_test_nan_floats(n), *lse_b = pa_test_nan_floats(n);
        float *out_a = pa_test_nan_floats(ne), *out_b = pa_test_nan_floats(ne);
        pr->p.lse = whole_lse;
        cr_assert_eq(pa_ref_context_attention(&pr->p), PA_SUCCESS, "%s", pa_last_error());

        /* the prefix: one sequence of all T queries over P cached keys */
        const int32_t qsl_a[2] = {0, T}, len_a[1] = {P};
        pa_context_attention_params a = pr->p;
        a.cache_only = 1;
        a.key = a.value = NULL;
        a.num_seqs = 1;
        a.query_start_loc = qsl_a;
        a.seq_lens = len_a;
        a.max_query_len = T;
        a.out = out_a, a.lse = lse_a;
        cr_assert_eq(pa_ref_context_attention(&a), PA_SUCCESS, "%s", pa_last_error());
        /* each sequence's own keys: its table past the prefix */
        int32_t len_b[3], *table_b = malloc(sizeof(int32_t) * (size_t)(3 * stride));
        for (int s = 0; s < 3; s++) {
            len_b[s] = pr->seq_lens[s] - P;
            for (int b = 0; b < stride; b++)
                table_b[s * stride + b] = b + P / bs < stride ? pr->block_tables[s * stride + b + P / bs] : 0;
        }
        pa_context_attention_params b = pr->p;
        b.sinks = NULL;
        b.seq_lens = len_b;
        b.block_tables = table_b;
        b.out = out_b, b.lse = lse_b;
        cr_assert_eq(pa_ref_context_attention(&b), PA_SUCCESS, "%s", pa_last_error());
        pa_test_expect_merged_is_whole(sinks, T, H, 32, out_a, lse_a, out_b, lse_b, pr->out, whole_lse);
        free(table_b);
        free(whole_lse), free(lse_a), free(lse_b), free(out_a), free(out_b);
        pa_context_problem_free(pr);
    }
}

/* Bounds and rules of prefill.h that a blind mutation pass found untested
 * (each mutant passed the suite): num_seqs up to 65535 taken, 65536 refused;
 * attn_type past encoder/decoder (4) refused; prompt attention's row index,
 * max_seqlen_q times the GQA group (2 here) up to 2^31 - 257 (a tile of room
 * below 2^31, as the context op's), counted with the group; cross-attention's
 * key rows (num_k_tokens, not num_q_tokens) within int64; and cache_only's key
 * and value, unread, not counted as inputs (here on out itself). Addresses
 * only: validation reads no memory. */
Test(prefill_ref, limits_and_rules_found_by_mutation) {
    const int ql[2] = {4, 3}, cl[2] = {5, 0};
    pa_context_problem *pr =
        ctx_problem(73, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_DTYPE_F16, 2, 4, 2, 32, 16, ql, cl, 0);
    pa_context_attention_params b = pr->p;
    spread_context(&b);
    b.num_seqs = 65535;
    cr_assert_eq(pa_context_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    b.num_seqs = 65536;
    cr_assert_eq(pa_context_attention_validate(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_seqs must be in 0..65535"), "%s", pa_last_error());

    b = pr->p;
    spread_context(&b);
    b.cache_only = 1;
    cr_assert_eq(pa_context_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    b.key = b.value = b.out; /* unread with cache_only (prefill.h) */
    cr_assert_eq(pa_context_attention_validate(&b), PA_SUCCESS, "%s", pa_last_error());
    pa_context_problem_free(pr);

    pa_prompt_attention_params q = {.out = pa_test_addr(0),
                                    .query = pa_test_addr(1),
                                    .key = pa_test_addr(2),
                                    .value = pa_test_addr(3),
                                    .dtype = PA_DTYPE_F16,
                                    .attn_type = PA_ATTN_DECODER,
                                    .cu_seqlens_q = (const int32_t *)pa_test_addr(4),
                                    .num_seqs = 1,
                                    .num_heads = 4,
                                    .num_kv_heads = 2,
                                    .head_size = 32,
                                    .num_q_tokens = 8,
                                    .max_seqlen_q = 8,
                                    .scale = 1.0f};
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_SUCCESS, "%s", pa_last_error());
    q.attn_type = (pa_attn_type)4;
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "attn_type 4 unknown"), "%s", pa_last_error());
    q.attn_type = PA_ATTN_DECODER;
    q.max_seqlen_q = 1073741695; /* x 2 = 2^31 - 258 */
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_SUCCESS, "%s", pa_last_error());
    q.max_seqlen_q = 1073741696; /* x 2 = 2^31 - 256 */
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "overflows the row index"), "%s", pa_last_error());

    q.max_seqlen_q = 1;
    q.num_q_tokens = 1;
    q.attn_type = PA_ATTN_ENCODER_DECODER;
    q.cu_seqlens_k = (const int32_t *)pa_test_addr(5);
    q.num_k_tokens = 3;
    q.max_seqlen_k = 3;
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_SUCCESS, "%s", pa_last_error());
    q.k_stride = (int64_t)1 << 62; /* 3 key rows 2^62 apart pass int64; 1 query row would not */
    cr_assert_eq(pa_prompt_attention_validate(&q), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "key of 3 rows"), "%s", pa_last_error());
}
