/* The decode CPU reference against plain attention over contiguous K/V (no
 * paging), over layouts, dtypes, GQA, alibi, window, soft cap and attention
 * sinks; plus its input checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"
#include "testutil.h"

/* The reference's output and lse (decode.h) against plain attention's; the
 * output with an lse asked for is the output without, bit for bit. */
static void check_against_plain(pa_decode_problem *pr, const char *what) {
    const size_t bytes = pr->out_elems * pa_dtype_size(pr->p.q_dtype), nl = (size_t)pr->p.num_heads * pr->p.num_seqs;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s: %s", what, pa_last_error());
    unsigned char *without = malloc(bytes + 1);
    memcpy(without, pr->out, bytes);
    float *lse = pa_test_nan_floats(nl), *plain_lse = pa_test_nan_floats(nl);
    pr->p.lse = lse;
    const pa_status st = pa_ref_paged_decode(&pr->p);
    pr->p.lse = NULL;
    cr_assert_eq(st, PA_SUCCESS, "%s: %s", what, pa_last_error());
    cr_assert(memcmp(without, pr->out, bytes) == 0, "%s: the output moved with an lse asked for", what);
    cr_assert(isnan(lse[nl]), "%s: written past the lse", what);
    float *ref = malloc(sizeof(float) * pr->out_elems);
    pa_decode_problem_plain_lse(pr, ref, plain_lse);
    pa_compare_result r;
    pa_tolerance tol = pa_tolerance_for(pr->p.q_dtype, pr->p.q_dtype); /* same inputs: only output rounding */
    int ok = pa_compare(pr->out, pr->p.q_dtype, ref, (int64_t)pr->out_elems, tol, &r);
    char buf[512];
    cr_assert(ok, "%s: %s", what, pa_compare_format(&r, tol, buf, sizeof buf));
    pa_test_expect_lse(lse, plain_lse, nl, what);
    free(ref);
    free(without);
    free(lse);
    free(plain_lse);
}

Test(decode_ref, matches_plain_attention_every_layout_and_dtype) {
    const int lens[5] = {1, 17, 113, 64, 203};
    const pa_kv_layout layouts[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    const pa_dtype qd[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    for (int l = 0; l < 3; l++)
        for (int q = 0; q < 3; q++)
            for (int fp8 = 0; fp8 < 3; fp8++) {
                pa_dtype cd = fp8 == 0 ? qd[q] : fp8 == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
                pa_decode_problem_cfg c = {.seed = 11u + l * 9 + q * 3 + fp8,
                                           .layout = layouts[l],
                                           .q_dtype = qd[q],
                                           .cache_dtype = cd,
                                           .num_seqs = 5,
                                           .num_heads = 8,
                                           .num_kv_heads = 2,
                                           .head_size = 64,
                                           .block_size = 16,
                                           .seq_lens = lens,
                                           .extra_blocks = 3};
                pa_decode_problem *pr = pa_decode_problem_make(&c);
                char what[128];
                snprintf(what, sizeof what, "%s q=%s cache=%s", pa_kv_layout_name(layouts[l]), pa_dtype_name(qd[q]),
                         pa_dtype_name(cd));
                check_against_plain(pr, what);
                pa_decode_problem_free(pr);
            }
}

Test(decode_ref, heads_configurations_and_head_sizes) {
    const int heads[4][2] = {{40, 40}, {64, 8}, {32, 4}, {8, 1}};
    const int hsz[3] = {80, 120, 256};
    const int lens[3] = {33, 7, 96};
    for (int h = 0; h < 4; h++)
        for (int k = 0; k < 3; k++) {
            pa_decode_problem_cfg c = {.seed = 100u + h * 3 + k,
                                       .layout = PA_LAYOUT_VLLM,
                                       .q_dtype = PA_DTYPE_F32,
                                       .cache_dtype = PA_DTYPE_F32,
                                       .num_seqs = 3,
                                       .num_heads = heads[h][0],
                                       .num_kv_heads = heads[h][1],
                                       .head_size = hsz[k],
                                       .block_size = 32,
                                       .seq_lens = lens,
                                       .extra_blocks = 1};
            pa_decode_problem *pr = pa_decode_problem_make(&c);
            check_against_plain(pr, "heads");
            pa_decode_problem_free(pr);
        }
}

Test(decode_ref, alibi_window_and_soft_cap) {
    const int lens[4] = {1, 50, 129, 300};
    for (int variant = 0; variant < 4; variant++) {
        pa_decode_problem_cfg c = {.seed = 7u + variant,
                                   .layout = PA_LAYOUT_FLASH_NHD,
                                   .q_dtype = PA_DTYPE_F32,
                                   .cache_dtype = PA_DTYPE_F32,
                                   .num_seqs = 4,
                                   .num_heads = 4,
                                   .num_kv_heads = 4,
                                   .head_size = 32,
                                   .block_size = 8,
                                   .seq_lens = lens,
                                   .with_alibi = variant & 1};
        pa_decode_problem *pr = pa_decode_problem_make(&c);
        if (variant >= 2)
            pr->p.sliding_window = 37;
        if (variant == 3)
            pr->p.soft_cap = 0.5f; /* small enough that it changes the weights */
        pr->p.scale = 3.0f;        /* sharpen the softmax so masking matters */
        check_against_plain(pr, variant == 0 ? "plain" : variant == 1 ? "alibi" : variant == 2 ? "window" : "cap");
        pa_decode_problem_free(pr);
    }
}

/* Attention sinks against plain attention that appends each head's sink as
 * one more score and drops its column after the softmax (a formulation of its
 * own: the max runs over the sink too). Sinks from below the logits to far
 * above them, and -inf, across GQA heads, with and without a window. */
Test(decode_ref, sinks_as_an_extra_score) {
    const int lens[4] = {1, 50, 129, 300};
    const float sinks[8] = {-INFINITY, -3.0f, 0.0f, 1.5f, 4.0f, 7.0f, 12.0f, -0.5f};
    for (int variant = 0; variant < 3; variant++) {
        pa_decode_problem_cfg c = {.seed = 70u + variant,
                                   .layout = PA_LAYOUT_FLASH_HND,
                                   .q_dtype = variant == 2 ? PA_DTYPE_BF16 : PA_DTYPE_F32,
                                   .cache_dtype = variant == 2 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_F32,
                                   .num_seqs = 4,
                                   .num_heads = 8,
                                   .num_kv_heads = 2,
                                   .head_size = 64,
                                   .block_size = 16,
                                   .seq_lens = lens,
                                   .with_alibi = variant == 1};
        pa_decode_problem *pr = pa_decode_problem_make(&c);
        pr->p.sinks = sinks;
        if (variant == 1)
            pr->p.sliding_window = 40;
        check_against_plain(pr, variant == 0 ? "sinks" : variant == 1 ? "sinks, alibi, window" : "sinks, fp8");
        pa_decode_problem_free(pr);
    }
}

/* One token of logit x and a sink s: out = v e^x / (e^x + e^s), from the
 * definition; a -inf sink is no sink, bit for bit; a NaN sink is refused. */
Test(decode_ref, sink_of_a_single_token) {
    const int lens[1] = {1};
    pa_decode_problem_cfg c = {.seed = 9,
                               .layout = PA_LAYOUT_FLASH_NHD,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 1,
                               .num_heads = 2,
                               .num_kv_heads = 1,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    const float *q = pr->q, *k = pr->k_logical[0], *v = pr->v_logical[0];
    float sinks[2] = {0.25f, -2.0f};
    pr->p.sinks = sinks;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    for (int h = 0; h < 2; h++) {
        double x = 0.0;
        for (int d = 0; d < 32; d++)
            x += (double)q[h * 32 + d] * k[d];
        x *= pr->p.scale;
        const double w = 1.0 / (1.0 + exp((double)sinks[h] - x));
        for (int d = 0; d < 32; d++)
            cr_assert_float_eq(((float *)pr->out)[h * 32 + d], (float)(w * v[d]), 1e-6, "head %d dim %d", h, d);
    }
    float plain[64];
    sinks[0] = sinks[1] = -INFINITY;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    memcpy(plain, pr->out, sizeof plain);
    pr->p.sinks = NULL;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(plain, pr->out, sizeof plain) == 0, "a -inf sink is no sink");
    sinks[1] = NAN;
    pr->p.sinks = sinks;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "sinks[1]") != NULL, "%s", pa_last_error());
    pa_decode_problem_free(pr);
}

Test(decode_ref, sliding_window_equals_truncated_sequence) {
    /* A window of W over a length-L sequence gives the same output as
     * attending to only its last W tokens: compare against the problem with the
     * prefix blanked out (NaN keys before the window must not leak in). */
    const int lens[1] = {100};
    pa_decode_problem_cfg c = {.seed = 5,
                               .layout = PA_LAYOUT_VLLM,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 1,
                               .num_heads = 2,
                               .num_kv_heads = 1,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    pr->p.sliding_window = 20;
    /* poison the first whole block (positions 0..15, all outside the window) */
    int64_t blk = pr->block_tables[0];
    size_t per_block = (size_t)16 * 32; /* one kv head */
    pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->kc + blk * per_block, per_block);
    pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->vc + blk * per_block, per_block);
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS);
    for (size_t i = 0; i < pr->out_elems; i++)
        cr_assert(!isnan(((float *)pr->out)[i]), "NaN leaked from outside the window at %zu", i);
    /* The window holds positions 80..99, blocks 5 and 6 of 16: blocks 0..4 are
     * never read, so ids outside the cache there are not refused (decode.h:
     * the reference checks the ids it reads; the GPU entries never read them)
     * and the output is the same. An id out of range in block 5 is refused. */
    float *before = malloc(sizeof(float) * pr->out_elems);
    memcpy(before, pr->out, sizeof(float) * pr->out_elems);
    pr->block_tables[0] = -1;
    pr->block_tables[4] = pr->p.kv.num_blocks;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(before, pr->out, sizeof(float) * pr->out_elems) == 0, "unread block ids moved the output");
    const int32_t kept = pr->block_tables[5];
    pr->block_tables[5] = pr->p.kv.num_blocks;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "block_tables[0][5]") != NULL, "%s", pa_last_error());
    pr->block_tables[5] = kept;
    free(before);
    pa_decode_problem_free(pr);
}

Test(decode_ref, single_token_returns_its_value) {
    const int lens[1] = {1};
    pa_decode_problem_cfg c = {.seed = 3,
                               .layout = PA_LAYOUT_FLASH_HND,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 1,
                               .num_heads = 4,
                               .num_kv_heads = 2,
                               .head_size = 64,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS);
    for (int h = 0; h < 4; h++)
        for (int d = 0; d < 64; d++)
            cr_assert_float_eq(((float *)pr->out)[h * 64 + d], pr->v_logical[0][(h / 2) * 64 + d], 1e-6);
    pa_decode_problem_free(pr);
}

/* The block-sparse problem of check_blocksparse (and of the block id test
 * below): one f32 sequence of seq_len tokens, head 32, blocks of 16. */
static pa_decode_problem *blocksparse_problem(unsigned seed, int seq_len) {
    const int lens[1] = {seq_len};
    pa_decode_problem_cfg c = {.seed = seed,
                               .layout = PA_LAYOUT_FLASH_NHD,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 1,
                               .num_heads = 1,
                               .num_kv_heads = 1,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    cr_assert(pr);
    pr->p.bs_vert_stride = 4;
    pr->p.bs_local_blocks = 1;
    pr->p.bs_block_size = 16;
    return pr;
}

/* Block-sparse decode over one f32 sequence of seq_len tokens (head 32, KV
 * block 16, vert_stride 4, local 1, bs block 16, sliding step 0: offset 1, so
 * the remote blocks are those with (id + 1) % 4 == 0). Every block but
 * `remote` and `local` is poisoned with NaN: the output must equal plain
 * attention over those two blocks' 32 tokens, computed here in double. */
static void check_blocksparse(unsigned seed, int seq_len, int remote, int local) {
    pa_decode_problem *pr = blocksparse_problem(seed, seq_len);
    const size_t per_block = (size_t)16 * 32;
    for (int b = 0; b < seq_len / 16; b++) {
        if (b == remote || b == local)
            continue;
        const int64_t blk = pr->block_tables[b];
        pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->kc + blk * per_block, per_block);
        pa_test_fill_nan(PA_DTYPE_F32, (float *)pr->vc + blk * per_block, per_block);
    }
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    double w[32], mx = -INFINITY, sum = 0;
    for (int i = 0; i < 32; i++) {
        const int t = 16 * (i < 16 ? remote : local) + i % 16;
        double dot = 0;
        for (int d = 0; d < 32; d++)
            dot += (double)((float *)pr->q)[d] * pr->k_logical[0][t * 32 + d];
        w[i] = pr->p.scale * dot;
        mx = fmax(mx, w[i]);
    }
    for (int i = 0; i < 32; i++)
        sum += (w[i] = exp(w[i] - mx));
    for (int d = 0; d < 32; d++) {
        double a = 0;
        for (int i = 0; i < 32; i++)
            a += w[i] * pr->v_logical[0][(16 * (i < 16 ? remote : local) + i % 16) * 32 + d];
        cr_assert_float_eq(((float *)pr->out)[d], a / sum, 1e-5, "seq_len %d d=%d", seq_len, d);
    }
    pa_decode_problem_free(pr);
}

/* A 128-token sequence: the query block is 7, the remote blocks 3 and 7. */
Test(decode_ref, blocksparse_masks_remote_blocks) { check_blocksparse(9, 128, 3, 7); }

/* The query of a decode step is the sequence's last token, position
 * seq_len - 1, so its block-sparse block is (seq_len - 1) / bs_block_size (as
 * vLLM's kernel's q_bs_block_id). At a seq_len that is a multiple of the
 * sparse block size this differs from seq_len / bs_block_size: seq_len 96 puts
 * the query in block 5, attending blocks 3 and 5; seq_len 80 in block 4,
 * attending blocks 3 and 4. */
Test(decode_ref, blocksparse_query_block_is_the_last_tokens) {
    check_blocksparse(19, 96, 3, 5);
    check_blocksparse(20, 80, 3, 4);
}

/* decode.h: the reference checks the block ids block-sparse attention leaves
 * out too (block 0 of a 128-token sequence attends blocks 3 and 7 only); an
 * id out of range there is refused, naming it, with nothing written. */
Test(decode_ref, blocksparse_dropped_blocks_are_checked) {
    pa_decode_problem *pr = blocksparse_problem(21, 128);
    pr->block_tables[0] = -1;
    pa_test_fill_nan(PA_DTYPE_F32, pr->out, 32);
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "block_tables[0][0] = -1 outside"), "%s", pa_last_error());
    for (int d = 0; d < 32; d++)
        cr_assert(isnan(((float *)pr->out)[d]), "output written at %d", d);
    pa_decode_problem_free(pr);
}

Test(decode_ref, rejects_bad_input_and_writes_nothing) {
    const int lens[2] = {20, 40};
    pa_decode_problem_cfg c = {.seed = 1,
                               .layout = PA_LAYOUT_VLLM,
                               .q_dtype = PA_DTYPE_F16,
                               .cache_dtype = PA_DTYPE_F16,
                               .num_seqs = 2,
                               .num_heads = 4,
                               .num_kv_heads = 2,
                               .head_size = 64,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    pa_decode_params good = pr->p, p;

    p = good;
    p.num_heads = 3;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_kv_heads") != NULL, "%s", pa_last_error());
    p = good;
    p.kv.head_size = 264; /* a multiple of x, past 256 */
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_UNSUPPORTED);
    cr_assert(strstr(pa_last_error(), "264") != NULL);
    p = good;
    p.kv.block_size = 24;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_UNSUPPORTED);
    p = good;
    p.q_dtype = PA_DTYPE_FP8_E4M3;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_INVALID_ARGUMENT);
    p = good;
    p.kv.dtype = PA_DTYPE_BF16;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_UNSUPPORTED);
    p = good;
    p.max_seq_len = 1000; /* more than the block table can hold */
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_INVALID_ARGUMENT);
    p = good;
    p.sliding_window = -1;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_INVALID_ARGUMENT);
    p = good;
    p.bs_vert_stride = 2;
    p.bs_block_size = 24;
    cr_assert_eq(pa_ref_paged_decode(&p), PA_ERR_INVALID_ARGUMENT);

    /* data errors: a seq_len over max_seq_len and a block id out of the pool */
    pr->seq_lens[1] = 41;
    cr_assert_eq(pa_ref_paged_decode(&good), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "seq_lens[1]") != NULL, "%s", pa_last_error());
    pr->seq_lens[1] = 40;
    int32_t saved = pr->block_tables[1];
    pr->block_tables[1] = good.kv.num_blocks;
    cr_assert_eq(pa_ref_paged_decode(&good), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "block_tables[0][1]") != NULL, "%s", pa_last_error());
    pr->block_tables[1] = saved;
    for (size_t i = 0; i < pr->out_elems; i++)
        cr_assert(isnan(pa_load_as_float(PA_DTYPE_F16, pr->out, i)), "output written on a rejected call");
    pa_decode_problem_free(pr);
}

Test(decode_ref, empty_batch_is_a_no_op) {
    pa_decode_params p;
    memset(&p, 0, sizeof p);
    char k[64], v[64];
    p.q_dtype = PA_DTYPE_F16;
    p.num_heads = 8;
    p.kv = (pa_kv_cache){.layout = PA_LAYOUT_VLLM,
                         .dtype = PA_DTYPE_F16,
                         .key = k,
                         .value = v,
                         .num_blocks = 1,
                         .block_size = 16,
                         .num_kv_heads = 8,
                         .head_size = 128};
    cr_assert_eq(pa_ref_paged_decode(&p), PA_SUCCESS, "%s", pa_last_error());
}

Test(decode_ref, head_attending_no_token_gets_zeros) {
    /* Block-sparse with vert_stride 4, no local blocks, head sliding step 0
     * (offset 1): only bs blocks whose id is 3 mod 4 are attended. Sequence 0
     * (16 tokens, bs block 0) attends nothing and must come out as zeros, as
     * decode.h promises; sequence 1 (64 tokens) attends block 3 and stays a
     * normal, finite, non-zero output. */
    const int lens[2] = {16, 64};
    pa_decode_problem_cfg c = {.seed = 21,
                               .layout = PA_LAYOUT_VLLM,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 2,
                               .num_heads = 2,
                               .num_kv_heads = 1,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    pr->p.bs_vert_stride = 4;
    pr->p.bs_local_blocks = 0;
    pr->p.bs_block_size = 16;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    const float *out = pr->out;
    for (int i = 0; i < 2 * 32; i++)
        cr_assert(out[i] == 0.0f, "sequence 0 attends nothing: out[%d] = %g, want 0", i, (double)out[i]);
    int nonzero = 0;
    for (int i = 2 * 32; i < 4 * 32; i++) {
        cr_assert(isfinite(out[i]), "sequence 1: out[%d] = %g", i, (double)out[i]);
        nonzero += out[i] != 0.0f;
    }
    cr_assert(nonzero > 0, "sequence 1 attends block 3 and must not be all zeros");
    /* its lse: -inf (no key, no sink), or the sink; sequence 1's finite, and above the sink's
     * own term where there is one (log(e^s + sum) > s) */
    const float sinks[2] = {0.75f, -INFINITY};
    for (int with_sinks = 0; with_sinks < 2; with_sinks++) {
        float lse[5];
        lse[4] = NAN;
        pr->p.lse = lse;
        pr->p.sinks = with_sinks ? sinks : NULL;
        cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        for (int h = 0; h < 2; h++) {
            const float x = lse[h * 2], y = lse[h * 2 + 1];
            cr_assert(with_sinks ? x == sinks[h] : x == -INFINITY, "sinks %d head %d: lse %g", with_sinks, h, x);
            cr_assert(isfinite(y) && (!with_sinks || y > sinks[h]), "sinks %d head %d: sequence 1's lse %g", with_sinks,
                      h, y);
        }
        cr_assert(isnan(lse[4]), "written past the lse");
    }
    pr->p.lse = NULL;
    pr->p.sinks = NULL;
    pa_decode_problem_free(pr);
}

/* Cascade / context-parallel decode on the reference: each sequence's keys
 * cut after cut[s] tokens (whole blocks), the first part a decode of seq_len
 * cut[s] over the same table (with the sinks), the rest a decode of seq_len L
 * - cut[s] over the table from block cut[s] / bs on, merged by their lse
 * (pa_ref_merge_attn_states) equal one decode over all the keys, output and
 * lse. Without ALiBi and window, whose positions the cut would move. Without
 * sinks, with pa_sink_logits' and with pa_test_sinks' far ones (heads 1 and 2 far
 * above the logits: the first part's lse must be the sink, not +inf, or the
 * merge reads that part as empty and keeps the second's keys, where the whole
 * call's rows are zeros). */
Test(decode_ref, lse_merges_split_keys_into_the_whole) {
    const int lens[4] = {40, 17, 200, 64}, cut[4] = {16, 16, 96, 48};
    for (int sinks = 0; sinks < 3; sinks++) {
        pa_decode_problem_cfg c = {.seed = 8100u + (unsigned)sinks,
                                   .layout = PA_LAYOUT_FLASH_NHD,
                                   .q_dtype = PA_DTYPE_F32,
                                   .cache_dtype = PA_DTYPE_F32,
                                   .num_seqs = 4,
                                   .num_heads = 6,
                                   .num_kv_heads = 2,
                                   .head_size = 32,
                                   .block_size = 16,
                                   .seq_lens = lens,
                                   .extra_blocks = 2};
        pa_decode_problem *pr = pa_decode_problem_make(&c);
        float *sk = pa_test_sinks(6, 77, sinks == 2);
        pr->p.sinks = sinks ? sk : NULL;
        pr->p.soft_cap = 20.0f;
        const int H = 6, hs = 32, n = 4 * H * hs;
        float *whole_lse = pa_test_nan_floats(4 * H), *lse_a = pa_test_nan_floats(4 * H),
              *lse_b = pa_test_nan_floats(4 * H);
        float *whole = malloc(sizeof(float) * n), *out_a = malloc(sizeof(float) * n),
              *out_b = malloc(sizeof(float) * n);
        pr->p.lse = whole_lse;
        cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        memcpy(whole, pr->out, sizeof(float) * n);
        /* part a: the first cut[s] tokens */
        for (int s = 0; s < 4; s++)
            pr->seq_lens[s] = cut[s];
        pr->p.lse = lse_a;
        cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
        memcpy(out_a, pr->out, sizeof(float) * n);
        /* part b: the rest, its table rows moved on by the cut's blocks, no sinks */
        int32_t *tab = pa_test_tables_past(pr->block_tables, 4, pr->p.block_table_stride, cut, 16);
        for (int s = 0; s < 4; s++)
            pr->seq_lens[s] = lens[s] - cut[s];
        pa_decode_params pb = pr->p;
        pb.block_tables = tab;
        pb.sinks = NULL;
        pb.lse = lse_b;
        cr_assert_eq(pa_ref_paged_decode(&pb), PA_SUCCESS, "%s", pa_last_error());
        memcpy(out_b, pr->out, sizeof(float) * n);
        pa_test_expect_merged_is_whole(sinks, 4, H, hs, out_a, lse_a, out_b, lse_b, whole, whole_lse);
        for (int s = 0; s < 4; s++)
            pr->seq_lens[s] = lens[s];
        pr->p.lse = NULL;
        pr->p.sinks = NULL;
        free(tab), free(sk), free(whole), free(out_a), free(out_b);
        free(whole_lse), free(lse_a), free(lse_b);
        pa_decode_problem_free(pr);
    }
}

/* Sinks far above the logits (pa_test_set_far_sinks: 100, past f32's exp, and
 * 800, past double's; 3e38; +inf) give their heads rows of zeros and an lse of
 * exactly the sink, log(e^s + sum_j e^x_j) = s to the float; the other heads
 * (a sink of -inf among them) keep theirs, as with the sinks of those heads
 * alone. A NaN row keeps a NaN lse. */
Test(decode_ref, lse_of_a_sink_far_above_the_logits_is_the_sink) {
    const int lens[3] = {1, 70, 300};
    pa_decode_problem_cfg c = {.seed = 8170u,
                               .layout = PA_LAYOUT_FLASH_NHD,
                               .q_dtype = PA_DTYPE_F32,
                               .cache_dtype = PA_DTYPE_F32,
                               .num_seqs = 3,
                               .num_heads = 8,
                               .num_kv_heads = 2,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    float *sk = pa_test_sinks(8, 5, 1);
    sk[3] = 3e38f;
    sk[4] = INFINITY;
    sk[5] = -INFINITY;
    const int far[8] = {0, 1, 1, 1, 1, 0, 0, 0};
    const size_t n = (size_t)3 * 8 * 32;
    float lse[3 * 8], lse_near[3 * 8], *out = malloc(sizeof(float) * n), *near = malloc(sizeof(float) * n);
    pr->p.sinks = sk;
    pr->p.lse = lse;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    memcpy(out, pr->out, sizeof(float) * n);
    /* the near heads' reference: each far sink replaced by -inf (no sink) */
    float near_sk[8];
    for (int h = 0; h < 8; h++)
        near_sk[h] = far[h] ? -INFINITY : sk[h];
    pr->p.sinks = near_sk;
    pr->p.lse = lse_near;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    memcpy(near, pr->out, sizeof(float) * n);
    for (int h = 0; h < 8; h++)
        for (int s = 0; s < 3; s++) {
            const float x = lse[h * 3 + s];
            if (far[h])
                CHK(x == sk[h], "head %d sequence %d: lse %.9g, want the sink %.9g", h, s, (double)x, (double)sk[h]);
            else
                CHK(x == lse_near[h * 3 + s], "head %d sequence %d: lse %.9g, want %.9g", h, s, (double)x,
                    (double)lse_near[h * 3 + s]);
            for (int d = 0; d < 32; d++) {
                const size_t i = ((size_t)s * 8 + h) * 32 + d;
                CHK(far[h] ? fabsf(out[i]) < 1e-30f : out[i] == near[i], "head %d sequence %d dim %d: %g", h, s, d,
                    (double)out[i]);
            }
        }
    /* A NaN query row (sequence 1, heads 5 and 6: no sink, a finite one) keeps a NaN lse, as
     * the kernels' (decode.h: a NaN stays), not the sink or -inf of a row with no key. */
    float *qf = pr->q;
    qf[(1 * 8 + 5) * 32] = NAN;
    qf[(1 * 8 + 6) * 32] = NAN;
    pr->p.sinks = sk;
    pr->p.lse = lse;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    CHK(isnan(lse[5 * 3 + 1]) && isnan(lse[6 * 3 + 1]), "NaN rows' lse %g and %g", (double)lse[5 * 3 + 1],
        (double)lse[6 * 3 + 1]);
    CHK(isfinite(sk[6]), "head 6's sink is finite (%g)", (double)sk[6]);
    pr->p.lse = NULL;
    pr->p.sinks = NULL;
    free(sk), free(out), free(near);
    pa_decode_problem_free(pr);
}

/* pa_test_lse_run for the decode reference: ctx a pa_decode_params. */
static pa_status run_decode_ref(void *ctx, float *lse, int64_t hs, int64_t ts) {
    pa_decode_params q = *(const pa_decode_params *)ctx;
    q.lse = lse, q.lse_head_stride = hs, q.lse_token_stride = ts;
    return pa_ref_paged_decode(&q);
}

/* The lse in each test layout (pa_test_lse_view_nth: the default,
 * FlashInfer's [num_seqs, num_heads], a padded view): the default's values,
 * bit for bit, at the layout's places and nowhere else; the output the same. */
Test(decode_ref, lse_strides_place_the_same_values) {
    const int lens[5] = {40, 1, 200, 64, 17};
    pa_decode_problem_cfg c = {.seed = 8150u,
                               .layout = PA_LAYOUT_VLLM,
                               .q_dtype = PA_DTYPE_F16,
                               .cache_dtype = PA_DTYPE_FP8_E4M3,
                               .num_seqs = 5,
                               .num_heads = 6,
                               .num_kv_heads = 2,
                               .head_size = 32,
                               .block_size = 16,
                               .seq_lens = lens,
                               .with_alibi = 1};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    float *sk = pa_sink_logits(6, 81);
    pr->p.sinks = sk;
    const size_t n = 5 * 6, ob = pr->out_elems * 2;
    float *want = pa_test_nan_floats(n);
    pr->p.lse = want;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    void *out0 = malloc(ob);
    memcpy(out0, pr->out, ob);
    pa_test_lse_views_match(run_decode_ref, &pr->p, 1, 6, 5, want, 1, "decode reference");
    cr_assert(memcmp(out0, pr->out, ob) == 0, "the output moved");
    for (size_t i = 0; i < n; i++)
        cr_assert(isfinite(want[i]), "every head attends keys: lse %zu = %g", i, (double)want[i]);
    pr->p.lse = NULL;
    pr->p.sinks = NULL;
    free(out0), free(want), free(sk);
    pa_decode_problem_free(pr);
}

Test(decode_ref, rejects_bad_fp8_scales_and_alibi_slopes) {
    /* The reference reads the scales and slopes from host memory: a value that
     * would turn the output into inf/NaN (or silently zero it) is an error,
     * and nothing is written. */
    const int lens[2] = {20, 40};
    pa_decode_problem_cfg c = {.seed = 2,
                               .layout = PA_LAYOUT_FLASH_NHD,
                               .q_dtype = PA_DTYPE_F16,
                               .cache_dtype = PA_DTYPE_FP8_E4M3,
                               .num_seqs = 2,
                               .num_heads = 4,
                               .num_kv_heads = 2,
                               .head_size = 64,
                               .block_size = 16,
                               .seq_lens = lens,
                               .with_alibi = 1};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    const float good_k = pr->k_scale, good_v = pr->v_scale;
    const float bad[5] = {0.0f, -0.5f, NAN, INFINITY, -INFINITY};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 5; i++) {
            pr->k_scale = w == 0 ? bad[i] : good_k;
            pr->v_scale = w == 1 ? bad[i] : good_v;
            pa_status s = pa_ref_paged_decode(&pr->p);
            cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "%s = %g: got %s", w ? "v_scale" : "k_scale", (double)bad[i],
                         pa_status_string(s));
            cr_assert(strstr(pa_last_error(), w ? "v_scale" : "k_scale") != NULL, "%s", pa_last_error());
        }
    pr->k_scale = good_k;
    pr->v_scale = good_v;
    const float bad_slope[2] = {NAN, INFINITY};
    for (int i = 0; i < 2; i++) {
        const float keep = pr->alibi[1];
        pr->alibi[1] = bad_slope[i];
        cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_ERR_INVALID_ARGUMENT, "slope %g", (double)bad_slope[i]);
        cr_assert(strstr(pa_last_error(), "alibi_slopes[1]") != NULL, "%s", pa_last_error());
        pr->alibi[1] = keep;
    }
    for (size_t i = 0; i < pr->out_elems; i++)
        cr_assert(isnan(pa_load_as_float(PA_DTYPE_F16, pr->out, i)), "output written on a rejected call");
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    pa_decode_problem_free(pr);

    /* The scales apply to fp8 caches only: a same-dtype cache ignores them. */
    c.cache_dtype = PA_DTYPE_F16;
    pr = pa_decode_problem_make(&c);
    static const float nan_scale = NAN;
    pr->p.kv.k_scale = pr->p.kv.v_scale = &nan_scale;
    cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_SUCCESS, "%s", pa_last_error());
    pa_decode_problem_free(pr);
}

/* pa_rng_skip(r, n) is where n draws leave the stream, a random buffer and a decode problem
 * filled by several threads (each from the stream skipped to its tokens) is
 * byte for byte the one a single thread fills: caches, block tables, query and
 * the contiguous copies, over uneven lengths (empty sequences among them) on
 * every layout. */
Test(decode_ref, threaded_fill_is_the_single_thread_fill) {
    pa_rng a = pa_rng_make(99);
    for (uint64_t n = 0; n < 1000; n += 37) {
        pa_rng b = a;
        for (uint64_t i = 0; i < n; i++)
            pa_rng_next(&b);
        const pa_rng c = pa_rng_skip(a, n);
        cr_assert_eq(pa_rng_next(&b), pa_rng_next(&(pa_rng){c.s}), "skip %llu", (unsigned long long)n);
    }
    /* pa_random_buffer: element i takes draw i, whatever the threads, and
     * the stream ends n draws on. */
    for (int nt = 1; nt <= 3; nt += 2) {
        pa_problems_set_threads(nt);
        pa_rng r = pa_rng_make(3), seq = pa_rng_make(3);
        uint16_t *buf = pa_random_buffer(&r, PA_DTYPE_F16, 1001, -2.0f, 2.0f);
        for (int i = 0; i < 1001; i++) {
            uint16_t want;
            pa_store_from_float(PA_DTYPE_F16, &want, 0, pa_rng_uniform(&seq, -2.0f, 2.0f));
            cr_assert_eq(buf[i], want, "%d threads: element %d", nt, i);
        }
        cr_assert_eq(r.s, seq.s, "%d threads: the stream after the buffer", nt);
        free(buf);
    }
    pa_problems_set_threads(0);
    const int lens[7] = {37, 0, 300, 1, 129, 0, 64};
    for (int layout = 0; layout < 4; layout++) {
        const pa_dtype cd = layout % 2 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_BF16;
        pa_decode_problem_cfg c = {.seed = 5 + (uint64_t)layout,
                                   .layout = (pa_kv_layout)layout,
                                   .q_dtype = PA_DTYPE_BF16,
                                   .cache_dtype = cd,
                                   .num_seqs = 7,
                                   .num_heads = 4,
                                   .num_kv_heads = 2,
                                   .head_size = 64,
                                   .block_size = 16,
                                   .seq_lens = lens,
                                   .extra_blocks = 3};
        pa_problems_set_threads(1);
        pa_decode_problem *one = pa_decode_problem_make(&c);
        pa_problems_set_threads(5);
        pa_decode_problem *five = pa_decode_problem_make(&c);
        pa_problems_set_threads(0);
        cr_assert(one && five);
        const size_t esz = pa_dtype_size(cd);
        cr_assert_eq(memcmp(one->kc, five->kc, one->k_elems * esz), 0, "layout %d: keys", layout);
        if (one->vc)
            cr_assert_eq(memcmp(one->vc, five->vc, one->v_elems * esz), 0, "layout %d: values", layout);
        cr_assert_eq(
            memcmp(one->block_tables, five->block_tables, sizeof(int32_t) * 7 * (size_t)one->p.block_table_stride), 0);
        for (int s = 0; s < 7; s++) {
            const size_t n = (size_t)lens[s] * 2 * 64 * sizeof(float);
            cr_assert_eq(memcmp(one->k_logical[s], five->k_logical[s], n), 0, "layout %d seq %d", layout, s);
            cr_assert_eq(memcmp(one->v_logical[s], five->v_logical[s], n), 0, "layout %d seq %d", layout, s);
        }
        pa_decode_problem_free(one);
        pa_decode_problem_free(five);
    }
}

/* Scales per KV head (scales_per_head): query head h reads KV head h / group
 * under that head's k_scale and v_scale. The oracle is the one-scale
 * reference (itself checked against plain attention above), run once per KV
 * head j with j's scales: head h's output rows must be those of j = h /
 * group's run, byte for byte. Every layout, e4m3 and e5m2, GQA 2 and 4. */
static pa_status run_ref(const void *p) { return pa_ref_paged_decode(p); }

Test(decode_ref, scales_per_kv_head) {
    static const pa_kv_layout lay[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    const int lens[3] = {5, 40, 77};
    for (int l = 0; l < 3; l++) {
        const int kvh = l == 1 ? 2 : 4;
        pa_decode_problem_cfg c = {.seed = 30 + (uint64_t)l,
                                   .layout = lay[l],
                                   .q_dtype = l == 2 ? PA_DTYPE_F32 : PA_DTYPE_BF16,
                                   .cache_dtype = l == 1 ? PA_DTYPE_FP8_E5M2 : PA_DTYPE_FP8_E4M3,
                                   .num_seqs = 3,
                                   .num_heads = 8,
                                   .num_kv_heads = kvh,
                                   .head_size = 32,
                                   .block_size = 16,
                                   .seq_lens = lens,
                                   .with_alibi = l == 0};
        pa_decode_problem *pr = pa_decode_problem_make(&c);
        cr_assert(pr != NULL);
        float ks[4], vs[4];
        pa_test_head_scales(pr->k_scale, kvh, 1, ks);
        pa_test_head_scales(pr->v_scale, kvh, 5, vs);
        const int64_t at = pa_test_scales_per_head_oracle(run_ref, &pr->p, &pr->p.kv, &pr->k_scale, &pr->v_scale, ks,
                                                          vs, pr->out, pr->out_elems * pa_dtype_size(c.q_dtype),
                                                          (size_t)c.num_seqs, 8, 32, pa_dtype_size(c.q_dtype));
        cr_assert_eq(at, -1, "%s: element %lld differs from its KV head's one-scale run (-2: a run failed: %s)",
                     pa_kv_layout_name(lay[l]), (long long)at, pa_last_error());
        ks[kvh - 1] = NAN; /* a bad scale is named by its head */
        cr_assert_eq(pa_ref_paged_decode(&pr->p), PA_ERR_INVALID_ARGUMENT);
        char want[32];
        snprintf(want, sizeof want, "k_scale[%d]", kvh - 1);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        pr->p.kv.k_scale = &pr->k_scale; /* the problem's own, as it was made */
        pr->p.kv.v_scale = &pr->v_scale;
        pa_decode_problem_free(pr);
    }
}
