/* Decode entries without a GPU: parameter validation, the workspace-size
 * queries (against the layout documented in decode.h and vLLM's v2 scratch
 * from pa_decode_make_plan), the v1/v2 choice, the recommended entry's split
 * rule, and the kernel geometry the host derives for every supported shape
 * (pa_dec_kparams_make, csrc/shared/decode_internal.h): what the kernels rely on. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "decode_internal.h"
#include "pagedattn/heuristics.h"
#include "testutil.h"

static _Alignas(16) unsigned char fake[4096];

static pa_decode_params params(int num_seqs, int heads, int kv_heads, int hs, int bs, int max_len) {
    pa_decode_params p;
    memset(&p, 0, sizeof p);
    p.out = pa_test_addr(0); /* each buffer a range of its own (validation alone) */
    p.query = pa_test_addr(1);
    p.q_dtype = PA_DTYPE_F16;
    p.kv.layout = PA_LAYOUT_VLLM;
    p.kv.dtype = PA_DTYPE_F16;
    p.kv.key = pa_test_addr(2);
    p.kv.value = pa_test_addr(3);
    p.kv.num_blocks = 1000;
    p.kv.block_size = bs;
    p.kv.num_kv_heads = kv_heads;
    p.kv.head_size = hs;
    p.block_tables = (const int32_t *)pa_test_addr(4);
    p.block_table_stride = (int32_t)(((int64_t)max_len + bs - 1) / bs);
    p.seq_lens = (const int32_t *)pa_test_addr(5);
    p.num_seqs = num_seqs;
    p.num_heads = heads;
    p.max_seq_len = max_len;
    p.scale = 0.125f;
    return p;
}

static int64_t r256(int64_t v) { return (v + 255) / 256 * 256; }

/* The layout decode.h documents: tmp_out in the output's type (esz bytes an
 * element), then exp_sums and max_logits in f32, each from a multiple of 256. */
static size_t expected_ws_esz(int64_t rows, int hs, int esz) {
    return (size_t)(r256(rows * hs * esz) + 2 * r256(rows * 4));
}
/* params() makes f16 queries */
static size_t expected_ws(int64_t rows, int hs) { return expected_ws_esz(rows, hs, 2); }

/* ---- validation --------------------------------------------------------------- */

Test(decode_validate, accepts_a_good_problem_and_rejects_bad_fields) {
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_decode_validate(NULL), PA_ERR_INVALID_ARGUMENT);

    int n = 0;
#define CASE(body, st)                                                                                                 \
    do {                                                                                                               \
        pa_decode_params q = p;                                                                                        \
        body;                                                                                                          \
        pa_status got = pa_decode_validate(&q);                                                                        \
        cr_assert_eq(got, st, "%s: got %d (%s)", #body, got, pa_last_error());                                         \
        cr_assert(strlen(pa_last_error()) > 0, "%s: no message", #body);                                               \
        n++;                                                                                                           \
    } while (0)
    CASE(q.num_seqs = -1, PA_ERR_INVALID_ARGUMENT);
    CASE(q.num_heads = 0, PA_ERR_INVALID_ARGUMENT);
    CASE(q.num_heads = 10, PA_ERR_INVALID_ARGUMENT);
    CASE(q.q_dtype = PA_DTYPE_FP8_E4M3, PA_ERR_INVALID_ARGUMENT);
    CASE(q.kv.head_size = 264, PA_ERR_UNSUPPORTED);
    CASE(q.kv.block_size = 24, PA_ERR_UNSUPPORTED);
    CASE(q.kv.dtype = PA_DTYPE_BF16, PA_ERR_UNSUPPORTED);
    CASE((q.kv.layout = PA_LAYOUT_COMBINED, q.kv.value = NULL), PA_ERR_UNSUPPORTED);
    CASE(q.q_stride = 100, PA_ERR_INVALID_ARGUMENT);
    CASE(q.scale = INFINITY, PA_ERR_INVALID_ARGUMENT);
    CASE(q.soft_cap = -1.0f, PA_ERR_INVALID_ARGUMENT);
    CASE(q.sliding_window = -3, PA_ERR_INVALID_ARGUMENT);
    CASE((q.bs_vert_stride = 4, q.bs_block_size = 24), PA_ERR_INVALID_ARGUMENT);
    CASE(q.seq_lens = NULL, PA_ERR_INVALID_ARGUMENT);
    CASE(q.max_seq_len = 0, PA_ERR_INVALID_ARGUMENT);
    CASE(q.max_seq_len = 1000 + 16, PA_ERR_INVALID_ARGUMENT); /* beyond the block-table columns */
#undef CASE
    cr_assert_eq(n, 16);
}

/* A soft cap is 0 (off) or in [FLT_MIN, 2^126]: a subnormal one has no float
 * reciprocal (the kernels' 1 / cap is +inf, and a zero logit times it NaN: an
 * audit saw NaN rows at cap 1e-40, 2026-12-06), and past 2^126 the ragged
 * kernel's __fdividef gives 0. */
Test(decode_validate, soft_cap_range) {
    for (int i = 0; i < PA_TEST_SOFT_CAPS; i++) {
        pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
        p.soft_cap = pa_test_soft_caps[i].cap;
        const pa_status want = pa_test_soft_caps[i].ok ? PA_SUCCESS : PA_ERR_INVALID_ARGUMENT;
        const pa_status got = pa_decode_validate(&p);
        cr_assert_eq(got, want, "soft cap %s: got %s (%s)", pa_test_soft_caps[i].what, pa_status_string(got),
                     pa_last_error());
        if (want != PA_SUCCESS)
            cr_assert(strstr(pa_last_error(), "soft_cap") != NULL, "soft cap %s: message '%s'",
                      pa_test_soft_caps[i].what, pa_last_error());
    }
}

/* The kernels hold key positions and tile bounds in int32: a max_seq_len
 * within a tile of 2^31 wrapped them (v1 then took one split short of the
 * sequence and wrote partials through a NULL workspace). Refused above
 * 2^31 - 257. */
Test(decode_validate, max_seq_len_leaves_room_for_a_tile) {
    const int32_t top = INT32_MAX - 256;
    pa_decode_params p = params(1, 8, 2, 128, 128, top);
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    const int32_t over[3] = {top + 1, top + 128, INT32_MAX - 127}; /* stride + 127 stays in int */
    for (int i = 0; i < 3; i++) {
        const int32_t len = over[i];
        pa_decode_params q = params(1, 8, 2, 128, 128, len);
        cr_assert_eq(pa_decode_validate(&q), PA_ERR_INVALID_ARGUMENT, "max_seq_len %d", len);
        cr_assert(strstr(pa_last_error(), "is above 2147483391"), "%s", pa_last_error());
    }
}

/* Found by the fuzz target: the block-sparse head offset (tp_rank * heads +
 * head) * |sliding_step| + 1 overflowed int in the reference (UBSan) and in
 * the kernels' int32 arithmetic. It must fit in int32 with the largest key
 * block, or the parameters are refused. */
Test(decode_validate, blocksparse_offset_must_fit_int32) {
    pa_decode_params p = params(2, 8, 2, 128, 16, 1000);
    p.bs_vert_stride = 4;
    p.bs_block_size = 64;
    p.bs_local_blocks = 2;
    p.tp_rank = 3;
    p.bs_head_sliding_step = 5;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p.tp_rank = 1 << 20; /* (2^20 * 8 + 7) * 2^12 ~ 2^35 */
    p.bs_head_sliding_step = 1 << 12;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: block-sparse head offset (tp_rank 1048576, 8 heads, "
                                      "bs_head_sliding_step 4096) overflows int32"),
              "%s", pa_last_error());
    p.bs_head_sliding_step = -(1 << 12); /* KV heads: (2^20 * 2 + 1) * 2^12 ~ 2^33 */
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    p.bs_head_sliding_step = INT32_MIN; /* its negation does not fit in int32 */
    p.tp_rank = 0;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    /* the largest offset that fits is accepted: heads 8, tp 0, step s with
     * 7 * s + 1 + 1000 / 64 <= INT32_MAX */
    p.bs_head_sliding_step = (INT32_MAX - 1 - 1000 / 64) / 7;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p.bs_head_sliding_step += 1;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    /* a negative step slides over the 2 KV heads: 1 * s + 1 + 1000 / 64 <= INT32_MAX
     * (a mutation pass that counted the 8 query heads here refused it) */
    p.bs_head_sliding_step = -(INT32_MAX - 1 - 1000 / 64);
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p.bs_head_sliding_step -= 1;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
}

/* Mutation kill (issue 16, item 13): a negative bs_local_blocks and an
 * infinite soft cap (which passes `>= 0` alone) are refused. */
Test(decode_validate, blocksparse_local_blocks_and_infinite_soft_cap) {
    pa_decode_params p = params(2, 8, 2, 128, 16, 1000);
    p.bs_vert_stride = 4;
    p.bs_block_size = 64;
    p.bs_local_blocks = 0;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    p.bs_local_blocks = -1;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    /* the C field's name, and vLLM's for Python callers */
    cr_assert(
        strstr(pa_last_error(), "decode: bs_local_blocks (vLLM's blocksparse_local_blocks) must be >= 0 (got -1)"),
        "%s", pa_last_error());
    p.bs_local_blocks = 0;
    p.bs_block_size = 24;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: bs_block_size (vLLM's blocksparse_block_size) 24 must be a positive "
                                      "multiple of block_size 16"),
              "%s", pa_last_error());
    p.bs_block_size = 64;
    p.tp_rank = -2;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: tp_rank must be >= 0 (got -2)"), "%s", pa_last_error());
    p = params(2, 8, 2, 128, 16, 1000);
    p.soft_cap = INFINITY;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "soft_cap"), "%s", pa_last_error());
    p.soft_cap = 30.0f;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
}

/* A GQA group near INT32_MAX (num_heads over one KV head; validation bounds
 * only num_seqs x num_heads): the CTA geometry overflowed int32 (a negative
 * head-chunk count that the launch check let through, found by review,
 * 2026-12-07). It is 2^27 chunks of 16 heads. */
Test(decode_validate, a_group_near_int32_max) {
    pa_decode_params p = params(1, INT32_MAX - 1, 1, 8, 16, 100);
    pa_dec_kparams kp;
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(kp.head_chunks, 1 << 27);
    cr_assert_eq(kp.hpc, 16);
}

/* GPU-only checks of pa_dec_kparams_make: alignment, workspace. */
Test(decode_validate, gpu_parameter_block_checks) {
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    pa_dec_kparams kp;
    size_t need = 0;
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, &need), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(need, 0);
    cr_assert_eq(kp.max_splits, 1);
    /* decode.h: a short workspace is PA_ERR_WORKSPACE_TOO_SMALL whatever its
     * pointer, as the mixed and ragged entries have it; one long enough must
     * be non-NULL and aligned. */
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, 0, &kp, &need), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert_eq(need, expected_ws(3 * 16 * 2, 128));
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, fake + 8, need - 1, &kp, NULL), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, need, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, fake, need - 1, &kp, NULL), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, fake + 8, need, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, fake, need, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(kp.max_splits, 2);
    cr_assert_eq((void *)kp.tmp_out, (void *)fake);
    /* f16 queries: the partial rows take 2 bytes an element */
    cr_assert_eq((uintptr_t)kp.exp_sums, (uintptr_t)fake + (uintptr_t)r256(3 * 16 * 2 * 128 * 2));
    cr_assert_eq((uintptr_t)kp.max_logits, (uintptr_t)kp.exp_sums + (uintptr_t)r256(3 * 16 * 2 * 4));
    cr_assert_eq(pa_dec_kparams_make(&p, 7, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    /* kv_cache.h: a cache that is not fp8 reads neither scale, so neither is
     * checked nor reaches the kernel; an fp8 cache's must be float-aligned */
    {
        pa_decode_params s = p;
        s.kv.k_scale = (const float *)(fake + 2);
        s.kv.v_scale = (const float *)(fake + 1);
        cr_assert_eq(pa_dec_kparams_make(&s, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
        cr_assert(kp.k_scale == NULL && kp.v_scale == NULL);
        s.kv.dtype = PA_DTYPE_FP8_E4M3;
        cr_assert_eq(pa_dec_kparams_make(&s, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "kv.k_scale"), "%s", pa_last_error());
        s.kv.k_scale = s.kv.v_scale = (const float *)(fake + 4);
        cr_assert_eq(pa_dec_kparams_make(&s, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
        cr_assert(kp.k_scale == (const float *)(fake + 4) && kp.v_scale == (const float *)(fake + 4));
    }

    pa_decode_params q = p;
    q.out = fake + 1;
    cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    q = p;
    q.seq_lens = (const int32_t *)(fake + 2);
    cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    q = p;
    q.kv.dtype = PA_DTYPE_FP8_E5M2;
    q.kv.value = fake + 1; /* fp8: any byte address */
    cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(kp.unit_v, 1);
    cr_assert_eq(kp.unit_k, 16);
}

/* What a decode launch writes (out, lse, the workspace) shares no byte with
 * what it reads or with each other (decode.h): each output placed over the
 * last byte of each input is refused naming both, and just past it accepted.
 * The inputs' extents worked by hand from decode.h's shapes: 3 sequences of
 * 16 heads of 128 f16 (12288 bytes of query rows), block tables 3 x 63 int32
 * (756 bytes), 3 seq_lens, 16 ALiBi slopes and sinks, and an e4m3 cache in
 * vLLM's layout, 1000 blocks x 4 KV heads x 16 tokens x 128 bytes each for K
 * and V (8192000), with one k_scale and one v_scale. Addresses only:
 * validation reads no device memory. */
Test(decode_validate, outputs_apart_from_inputs) {
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    p.kv.dtype = PA_DTYPE_FP8_E4M3;
    p.kv.k_scale = (const float *)pa_test_addr(6);
    p.kv.v_scale = (const float *)pa_test_addr(7);
    p.alibi_slopes = (const float *)pa_test_addr(8);
    p.sinks = (const float *)pa_test_addr(9);
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    const struct {
        const char *name;
        const void *at;
        int64_t bytes;
    } in[] = {{"query", p.query, 12288},
              {"kv.key", p.kv.key, 8192000},
              {"kv.value", p.kv.value, 8192000},
              {"block_tables", p.block_tables, 756},
              {"seq_lens", p.seq_lens, 12},
              {"alibi_slopes", p.alibi_slopes, 64},
              {"sinks", p.sinks, 64},
              {"kv.k_scale", p.kv.k_scale, 4},
              {"kv.v_scale", p.kv.v_scale, 4}};
    size_t need = 0;
    pa_dec_kparams kp;
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, 0, &kp, &need), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert(need > 0);
    char want[128];
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        const char *end = (const char *)in[i].at + in[i].bytes;
        pa_decode_params q = p;
        q.out = (void *)(end - 2); /* out's first element on the input's last two bytes */
        snprintf(want, sizeof want, "decode: output out overlaps the input %s", in[i].name);
        cr_assert_eq(pa_decode_validate(&q), PA_ERR_INVALID_ARGUMENT, "out over %s accepted", in[i].name);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        q.out = (void *)end;
        cr_assert_eq(pa_decode_validate(&q), PA_SUCCESS, "out just past %s: %s", in[i].name, pa_last_error());
        q = p;
        q.lse = (float *)(void *)(end - 4);
        if (i > 0) { /* lse over the query: decode_validate/lse_refused_misaligned_or_overlapping */
            snprintf(want, sizeof want, "decode: output lse overlaps the input %s", in[i].name);
            cr_assert_eq(pa_decode_validate(&q), PA_ERR_INVALID_ARGUMENT, "lse over %s accepted", in[i].name);
            cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        }
        q.lse = (float *)(void *)end;
        cr_assert_eq(pa_decode_validate(&q), PA_SUCCESS, "lse just past %s: %s", in[i].name, pa_last_error());
        /* the workspace from 16 bytes before the input's end (16-byte aligned) */
        q = p;
        void *ws = (void *)(((uintptr_t)end - 16) & ~(uintptr_t)15);
        snprintf(want, sizeof want, "decode: output workspace overlaps the input %s", in[i].name);
        cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V2, ws, need, &kp, NULL), PA_ERR_INVALID_ARGUMENT,
                     "workspace over %s accepted", in[i].name);
        cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        ws = (void *)(((uintptr_t)end + 15) & ~(uintptr_t)15);
        cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V2, ws, need, &kp, NULL), PA_SUCCESS,
                     "workspace just past %s: %s", in[i].name, pa_last_error());
    }
    /* the outputs apart from each other: the workspace's last byte on out's first */
    pa_decode_params q = p;
    cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V2, (char *)p.out - need + 16, need, &kp, NULL),
                 PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: outputs out and workspace overlap") != NULL, "%s", pa_last_error());
    cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V2, (char *)p.out - ((need + 15) & ~(size_t)15), need, &kp, NULL),
                 PA_SUCCESS, "%s", pa_last_error());
}

/* The lse output: accepted clear of out, the query rows and the workspace
 * (and handed to the kernels); refused misaligned or overlapping any of them. */
Test(decode_validate, lse_refused_misaligned_or_overlapping) {
    enum { ROWS = 3 * 16 * 128 * 2 };
    static _Alignas(16) unsigned char out[ROWS], query[ROWS], lse[3 * 16 * 4 + 16], ws[32768];
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    p.out = out;
    p.query = query;
    p.lse = (float *)lse;
    pa_dec_kparams kp;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq((void *)kp.lse, (void *)lse);
    size_t need = 0;
    (void)pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, 0, &kp, &need);
    cr_assert(need > 0 && need <= sizeof ws);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, ws, need, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    p.lse = (float *)(ws + need); /* just past the workspace */
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, ws, need, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());

    static const struct {
        ptrdiff_t off; /* from the buffer below */
        int buf;       /* 0 lse, 1 out, 2 query, 3 workspace */
        const char *msg;
    } bad[] = {
        {2, 0, "4-byte aligned"}, {ROWS - 4, 1, "overlaps out"},   {-(ptrdiff_t)(3 * 16 * 4) + 4, 1, "overlaps out"},
        {0, 2, "overlaps query"}, {ROWS / 2, 2, "overlaps query"}, {64, 3, "overlaps the workspace"}};
    unsigned char *base[4] = {lse, out, query, ws};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pa_decode_params q = p;
        q.lse = (float *)(void *)(base[bad[i].buf] + bad[i].off);
        const pa_status st =
            bad[i].buf == 3 ? pa_dec_kparams_make(&q, PA_DEC_MODE_V2, ws, need, &kp, NULL) : pa_decode_validate(&q);
        cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "case %zu accepted", i);
        cr_assert(strstr(pa_last_error(), bad[i].msg) != NULL, "case %zu: %s", i, pa_last_error());
    }
}

/* lse strides (decode.h): negative, two (head, sequence) pairs on one float,
 * an extent past int64, and a layout whose padding reaches out (the default
 * layout at the same address would not) are refused; checked with or without
 * lse; the kernels get the strides resolved (0: head num_seqs, token 1). */
Test(decode_validate, lse_strides_refused_or_resolved) {
    enum { ROWS = 3 * 16 * 128 * 2 };
    static _Alignas(16) unsigned char buf[4096 + ROWS], query[ROWS];
    float *lse = (float *)buf;
    unsigned char *out = buf + 4096;
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    p.out = out;
    p.query = query;
    /* 16 heads, 3 sequences: (h, s) at h * hs + s * ts floats; distinct pairs
     * need hs >= 3 ts or ts >= 16 hs. out starts 1024 floats past lse. */
    static const struct {
        int64_t hs, ts;
        int with_lse;
        const char *msg;
    } bad[] = {{-1, 0, 1, "must be >= 0"},    {0, -3, 0, "must be >= 0"},
               {1, 1, 1, "on one float"},     {2, 1, 1, "on one float"},
               {3, 47, 0, "on one float"},    {0, 16, 1, "on one float"}, /* the default head stride 3 */
               {1, 0, 1, "on one float"},     {INT64_MAX / 8, 1, 1, "overflows int64"},
               {69, 1, 1, "lse overlaps out"}}; /* 15 x 69 + 2 + 1 = 1038 floats */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pa_decode_params q = p;
        q.lse = bad[i].with_lse ? lse : NULL;
        q.lse_head_stride = bad[i].hs;
        q.lse_token_stride = bad[i].ts;
        cr_assert_eq(pa_decode_validate(&q), PA_ERR_INVALID_ARGUMENT, "case %zu accepted", i);
        cr_assert(strstr(pa_last_error(), bad[i].msg) != NULL, "case %zu: %s", i, pa_last_error());
    }
    pa_decode_params none = p; /* with no sequence too */
    none.num_seqs = 0;
    none.lse_token_stride = -1;
    cr_assert_eq(pa_decode_validate(&none), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "must be >= 0") != NULL, "%s", pa_last_error());
    static const struct {
        int64_t hs, ts, want_hs, want_ts;
    } good[] = {{0, 0, 3, 1}, {1, 16, 1, 16}, {7, 2, 7, 2}, {3, 0, 3, 1}, {3, 48, 3, 48}, {68, 0, 68, 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pa_decode_params q = p;
        q.lse = lse;
        q.lse_head_stride = good[i].hs;
        q.lse_token_stride = good[i].ts;
        pa_dec_kparams kp;
        cr_assert_eq(pa_dec_kparams_make(&q, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "case %zu: %s", i,
                     pa_last_error());
        CHK_EQ(kp.lse_hs, good[i].want_hs, "case %zu head stride", i);
        CHK_EQ(kp.lse_ts, good[i].want_ts, "case %zu token stride", i);
    }
}

/* ---- workspace sizes ------------------------------------------------------------- */

Test(decode_workspace, v2_matches_vllm_partitions) {
    const int lens[] = {1, 511, 512, 513, 1024, 1025, 8192, 8193, 33000, 131072};
    const int shapes[][4] = {{1, 8, 1, 128}, {7, 40, 40, 64}, {256, 32, 8, 256}, {3, 64, 8, 80}};
    const pa_dtype qds[] = {PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_F32};
    for (size_t qd = 0; qd < 3; qd++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                const int ns = shapes[s][0], nh = shapes[s][1], nkv = shapes[s][2], hs = shapes[s][3];
                const int esz = qds[qd] == PA_DTYPE_F32 ? 4 : 2;
                pa_decode_params p = params(ns, nh, nkv, hs, 16, lens[i]);
                p.q_dtype = qds[qd];
                size_t got = 1;
                cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &got), PA_SUCCESS, "%s", pa_last_error());
                const int64_t parts = (lens[i] + 511) / 512;
                const size_t want = parts == 1 ? 0 : expected_ws_esz((int64_t)ns * nh * parts, hs, esz);
                CHK_EQ(got, want, "v2 %s ns %d nh %d hs %d len %d: %zu != %zu", pa_dtype_name(qds[qd]), ns, nh, hs,
                       lens[i], got, want);
                /* at least vLLM's scratch (pa_decode_make_plan): tmp_out in the
                 * query's type, exp_sums and max_logits in f32 */
                pa_decode_plan plan;
                cr_assert_eq(pa_decode_make_plan(ns, nh, nkv, hs, 16, lens[i], &plan), PA_SUCCESS);
                CHK_EQ(plan.max_num_partitions, parts);
                if (!plan.use_v1 && parts > 1)
                    CHK(got >= (size_t)plan.tmp_out_elems * (size_t)esz +
                                   (size_t)(plan.exp_sums_elems + plan.max_logits_elems) * 4);

                cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &got), PA_SUCCESS, "%s", pa_last_error());
                int64_t splits = (lens[i] + 255) / 256;
                splits = splits > 64 ? 64 : splits;
                const size_t want_auto = splits == 1 ? 0 : expected_ws_esz((int64_t)ns * nh * splits, hs, esz);
                CHK_EQ(got, want_auto, "auto %s ns %d len %d: %zu != %zu", pa_dtype_name(qds[qd]), ns, lens[i], got,
                       want_auto);
            }
}

Test(decode_workspace, size_queries_check_only_shapes) {
    pa_decode_params p;
    memset(&p, 0, sizeof p); /* no pointers at all */
    p.num_seqs = 2;
    p.num_heads = 8;
    p.kv.num_kv_heads = 2;
    p.kv.head_size = 64;
    p.max_seq_len = 2000;
    size_t b = 0;
    /* a zeroed q_dtype is f32: partial rows of 4 bytes an element, enough for any dtype */
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b, expected_ws_esz(2 * 8 * 4, 64, 4));
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b, expected_ws_esz(2 * 8 * 8, 64, 4));
    p.q_dtype = PA_DTYPE_BF16; /* 16-bit partial rows */
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b, expected_ws_esz(2 * 8 * 8, 64, 2));
    p.q_dtype = (pa_dtype)PA_DTYPE_COUNT; /* not a query dtype: the launch refuses it; sized for f32 */
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b, expected_ws_esz(2 * 8 * 8, 64, 4));
    p.q_dtype = PA_DTYPE_F32;
    p.kv.head_size = 100;
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_ERR_UNSUPPORTED);
    /* a head size of 0 or below is bad input, as pa_decode_validate says, not an unsupported size */
    for (int hs = 0; hs >= -8; hs -= 8) {
        p.kv.head_size = hs;
        cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT, "head_size %d", hs);
        cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT, "head_size %d", hs);
        cr_assert(strstr(pa_last_error(), "kv.head_size must be > 0") != NULL, "%s", pa_last_error());
    }
    p.kv.head_size = 64;
    p.kv.num_kv_heads = 3;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    p.kv.num_kv_heads = 2;
    p.max_seq_len = 0;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    p.num_seqs = 0;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS);
    cr_assert_eq(b, 0);
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_paged_attention_v2_workspace_size(NULL, &b), PA_ERR_INVALID_ARGUMENT);
    /* sizes that would overflow are refused, not wrapped */
    p.num_seqs = 1 << 30;
    p.num_heads = 1 << 20;
    p.kv.num_kv_heads = 1;
    p.max_seq_len = 1 << 30;
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
}

/* ---- the v1/v2 choice stays vLLM's ----------------------------------------------------------- */

Test(decode_choice, v1_v2_rule_is_vllms) {
    for (int len = 1; len <= 20000; len += 37)
        for (int ns = 1; ns <= 64; ns *= 2)
            for (int nh = 1; nh <= 64; nh *= 4) {
                const int parts = (len + 511) / 512;
                const int want = len <= 8192 && (parts == 1 || ns * nh > 512);
                CHK_EQ(pa_decode_use_v1(len, ns, nh), want, "len %d ns %d nh %d", len, ns, nh);
            }
}

/* ---- the recommended entry's split rule ------------------------------------------------------ */

Test(decode_choice, auto_splits_depend_on_length_only_and_fit_the_workspace) {
    for (int min = PA_DEC_AUTO_MIN_PART; min <= PA_DEC_AUTO_MIN_PART_MAX; min *= 2)
        for (int len = 1; len < 3000000; len += (len < 70000 ? (min == PA_DEC_AUTO_MIN_PART ? 1 : 61) : 997)) {
            const int part = pa_dec_auto_part(len, min), n = pa_dec_num_splits(PA_DEC_MODE_AUTO, min, len);
            CHK(part >= min && (part & (part - 1)) == 0, "len %d min %d part %d", len, min, part);
            CHK(part % PA_DEC_MAX_TILE == 0);
            CHK((int64_t)(n - 1) * part < len && (int64_t)n * part >= len, "len %d: %d splits of %d", len, n, part);
            CHK(n >= 1 && n <= PA_DEC_AUTO_MAX_SPLITS, "len %d: %d splits", len, n);
            /* the workspace sized for any max_seq_len >= len (at the default smallest split) holds them */
            CHK(n <= (len + PA_DEC_AUTO_MIN_PART - 1) / PA_DEC_AUTO_MIN_PART, "len %d", len);
            if (len <= min)
                CHK_EQ(n, 1);
        }
    CHK_EQ(pa_dec_num_splits(PA_DEC_MODE_V2, 512, 1025), 3);
    CHK_EQ(pa_dec_num_splits(PA_DEC_MODE_V1, 1 << 20, 1025), 1);
}

/* PAGEDATTN_DECODE_MIN_SPLIT: a power of two from 256 to 8192 sets the
 * recommended entry's smallest split (the kernel's part, and the grid's
 * splits); anything else is the default 256. The workspace query does not
 * depend on it (sized for 256, the most splits). */
Test(decode_choice, min_split_from_the_environment) {
    const struct {
        const char *env;
        int part;
    } cases[] = {{NULL, 256},
                 {"256", 256},
                 {"512", 512},
                 {"1024", 1024},
                 {"8192", 8192},
                 {"16384", 256},
                 {"128", 256},
                 {"300", 256},
                 {"-512", 256},
                 {"abc", 256},
                 {"", 256},
                 /* a number with more after it is not a number (until 2026-12-07 its digits counted) */
                 {"512abc", 256},
                 {"1024.0", 256},
                 {"512 ", 256}};
    pa_decode_params p = params(4, 32, 8, 128, 16, 4096);
    static _Alignas(256) unsigned char ws[4 * 32 * 16 * (128 * 4 + 8) + 4096];
    size_t need_default = 0;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &need_default), PA_SUCCESS);
    cr_assert(need_default <= sizeof ws);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env)
            setenv("PAGEDATTN_DECODE_MIN_SPLIT", cases[i].env, 1);
        else
            unsetenv("PAGEDATTN_DECODE_MIN_SPLIT");
        CHK_EQ(pa_dec_auto_min_part(), cases[i].part, "env %s", cases[i].env ? cases[i].env : "(unset)");
        size_t need = 0;
        cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &need), PA_SUCCESS);
        CHK_EQ(need, need_default, "env %s: the workspace query moved", cases[i].env ? cases[i].env : "(unset)");
        pa_dec_kparams kp;
        cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_AUTO, ws, sizeof ws, &kp, NULL), PA_SUCCESS, "%s",
                     pa_last_error());
        CHK_EQ(kp.part, cases[i].part);
        /* 4096 tokens: 16 splits of 256, 8 of 512, 4 of 1024, one of 8192; the
         * workspace rows keep the documented 16 per (seq, head) */
        CHK_EQ(kp.grid_splits, (4096 + cases[i].part - 1) / cases[i].part, "env %s", cases[i].env ? cases[i].env : "");
        CHK_EQ(kp.max_splits, 16);
        CHK_EQ(pa_dec_num_splits(PA_DEC_MODE_AUTO, kp.part, 4096), kp.grid_splits);
    }
    unsetenv("PAGEDATTN_DECODE_MIN_SPLIT");
}

/* ---- geometry for every shape the kernels accept -------------------------------------------- */

Test(decode_geometry, every_shape_fits_the_kernel_contract) {
    const int hsz[9] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
    const int bsz[5] = {8, 16, 32, 64, 128};
    const int groups[10] = {1, 2, 3, 4, 5, 8, 12, 16, 17, 64};
    const pa_dtype qd[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    const pa_kv_layout layouts[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    int checked = 0, max_smem = 0;
    for (int h = 0; h < 9; h++)
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++)
                    for (int b = 0; b < 5; b++)
                        for (int gi = 0; gi < 10; gi++) {
                            const pa_dtype cd = k == 0 ? qd[q] : k == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
                            const int hs = hsz[h], es = (int)pa_dtype_size(cd);
                            if (layouts[l] == PA_LAYOUT_VLLM && hs % (16 / es) != 0)
                                continue;
                            pa_decode_params p = params(2, 2 * groups[gi], 2, hs, bsz[b], 700);
                            p.q_dtype = qd[q];
                            p.kv.dtype = cd;
                            p.kv.layout = layouts[l];
                            pa_dec_kparams kp;
                            const pa_status st = pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, NULL);
                            CHK_EQ(st, PA_SUCCESS, "%s", pa_last_error());
                            const int T = kp.tile, c8 = hs / 8;
                            char w[128];
                            snprintf(w, sizeof w, "hs %d %s %s bs %d group %d", hs, pa_dtype_name(cd),
                                     pa_kv_layout_name(layouts[l]), bsz[b], groups[gi]);
                            CHK(T >= 8 && T <= PA_DEC_MAX_TILE && (T & (T - 1)) == 0, "%s: tile %d", w, T);
                            CHK(kp.ds >= 1 && kp.ds <= 32 && (kp.ds & (kp.ds - 1)) == 0, "%s: ds %d", w, kp.ds);
                            CHK(T * kp.ds >= 32, "%s: a warp must cover whole dot products", w);
                            CHK(kp.kchunks * 16 >= hs * es && kp.headq * es == kp.kchunks * 16, "%s", w);
                            CHK(kp.hpc >= 1 && kp.hpc <= PA_DEC_MAX_HPC && kp.hpc * kp.head_chunks >= kp.group,
                                "%s: hpc %d chunks %d", w, kp.hpc, kp.head_chunks);
                            CHK(kp.pv_groups * PA_DEC_GB >= kp.hpc, "%s", w);
                            CHK(kp.pv_slices >= 1 && kp.pv_slices * kp.pv_groups * c8 <= PA_DEC_THREADS,
                                "%s: P.V threads", w);
                            /* Shapes the tensor-core kernel serves (include/pagedattn/decode.h): a 16-bit
                             * query, every head size here (120: a 16-bit cache only), 16-byte copies (all
                             * these shapes but fp8 head 120's 120-byte rows), CTAs of up to 8 query heads
                             * (groups up to 8 here; 12, 16, 17 and 64 take CTAs of 12, 16, 9 and 16), or 16
                             * at heads 64, 128 and 192. Only that kernel runs them, so they have no
                             * split-kernel regions (the launcher refuses such a geometry otherwise). The
                             * long tile (decode.c dec_long_tile): those over fp8 at heads 64 and 32 on a
                             * flash layout; its K rows are unpadded (hs bytes). */
                            const int tc = qd[q] != PA_DTYPE_F32 && (hs != 120 || k == 0) &&
                                           (groups[gi] <= 8 || hs == 64 || hs == 128 || hs == 192);
                            const int lt = tc && k != 0 && (hs == 64 || hs == 32) && layouts[l] != PA_LAYOUT_VLLM;
                            const int tiles = PA_DEC_STAGES * (kp.stage_k_bytes + kp.stage_v_bytes);
                            if (lt)
                                CHK(T == 128 && kp.pitch_k == hs && kp.stage_k_bytes == 128 * hs, "%s: long tile", w);
                            else
                                CHK(T <= 64 && T % 8 == 0, "%s: softmax covers 64 tokens per warp", w);
                            if (tc) {
                                CHK(kp.off_q == tiles && kp.off_tok == tiles, "%s: no split-kernel regions", w);
                            } else {
                                CHK(kp.off_logit >= kp.off_q + kp.hpc * kp.headq * 4, "%s", w);
                                CHK(kp.off_stat >= kp.off_logit + kp.hpc * T * 4, "%s", w);
                                CHK(kp.off_tok >= kp.off_stat + 3 * 16 * 4, "%s", w);
                                CHK(kp.pv_slices * kp.hpc * hs * 4 <= kp.off_q, "%s: reduction fits", w);
                            }
                            CHK(kp.pitch_k % 16 == 0 && kp.pitch_k >= kp.kchunks * 16, "%s", w);
                            if (kp.vllm_v) {
                                CHK(kp.sbs >= 8 && T % kp.sbs == 0 && kp.block_size % kp.sbs == 0, "%s", w);
                                /* V^T: a row of T tokens per dim, unpadded, 32..256 bytes */
                                CHK(kp.pitch_v == T * es && kp.stage_v_bytes == hs * T * es, "%s", w);
                                CHK(kp.pitch_v >= 32 && kp.pitch_v <= 256 && 1 << kp.vt_rs == kp.pitch_v, "%s", w);
                                CHK((kp.sbs * es) % kp.unit_v == 0, "%s: V unit %d", w, kp.unit_v);
                            } else {
                                CHK(kp.pitch_v >= hs * es && kp.pitch_v % 16 == 0, "%s", w);
                                CHK((hs * es) % kp.unit_v == 0, "%s", w);
                            }
                            CHK((hs * es) % kp.unit_k == 0, "%s: K unit %d", w, kp.unit_k);
                            CHK(kp.off_v == PA_DEC_STAGES * kp.stage_k_bytes, "%s", w);
                            CHK(kp.zero_bytes <= kp.off_q && kp.zero_bytes % 16 == 0, "%s", w);
                            CHK(kp.off_q % 16 == 0 && kp.off_logit % 16 == 0 && kp.off_stat % 16 == 0 &&
                                    kp.off_tok % 16 == 0 && kp.off_tab % 16 == 0,
                                "%s: offsets aligned", w);
                            CHK(kp.off_q >= tiles && kp.off_tab >= kp.off_tok + PA_DEC_STAGES * T, "%s", w);
                            CHK(kp.smem_bytes >= kp.off_tab + PA_DEC_TABLE_WIN * 4, "%s", w);
                            /* within the one attribute value every decode kernel is given (whose 96 KiB
                             * and 1 KiB of static bytes fit the 99 KiB of every sm_80+ device) */
                            CHK(kp.smem_bytes <= 96 * 1024, "%s: %d bytes of shared memory", w, kp.smem_bytes);
                            if (kp.smem_bytes > max_smem)
                                max_smem = kp.smem_bytes;
                            checked++;
                        }
    cr_assert(checked > 3000, "%d shapes", checked);
    cr_log_info("%d shapes, at most %d bytes of shared memory", checked, max_smem);
}

/* Decode's refusals no other test reached (scripts/refusal-coverage.py), each
 * with its own message: a negative tensor-parallel rank under block-sparse, a
 * block table stride of 0, the size queries' sequence and head counts, a NULL
 * parameter block, v2's grid of more than 65535 partitions, and a launch of
 * more than 2^31 sequence heads. */
Test(decode_validate, each_remaining_refusal_names_its_field) {
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    p.bs_vert_stride = 2;
    p.bs_block_size = 64;
    p.tp_rank = -1;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: tp_rank must be >= 0"), "%s", pa_last_error());
    p.tp_rank = 0;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());

    p = params(3, 16, 4, 128, 16, 1000);
    p.block_table_stride = 0;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: block_table_stride must be > 0 (got 0)"), "%s", pa_last_error());

    p = params(3, 16, 4, 128, 16, 1000);
    size_t b = 7;
    p.num_seqs = -1;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_seqs must be >= 0 (got -1)"), "%s", pa_last_error());
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    p.num_seqs = 3;
    p.num_heads = 0;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_heads must be > 0 (got 0)"), "%s", pa_last_error());
    cr_assert_eq(b, 7);

    p = params(3, 16, 4, 128, 16, 1000);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: kernel params is NULL"), "%s", pa_last_error());

    /* v2: 512-token partitions, 65536 of them at 2^25 tokens (65535 at 2^25 - 512) */
    pa_dec_kparams kp;
    size_t need = 0;
    p = params(1, 8, 8, 128, 16, 1 << 25);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, 0, &kp, &need), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "needs 65536 splits; at most 65535 (grid y)"), "%s", pa_last_error());
    /* the size query refuses what the launch would (decode.h's max_seq_len);
     * the recommended entry's splits are capped, so it sizes any length */
    b = 7;
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "needs 65536 splits; at most 65535 (grid y)"), "%s", pa_last_error());
    cr_assert_eq(b, 7);
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    p.max_seq_len = INT32_MAX - 256;
    cr_assert_eq(pa_paged_attention_decode_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    p = params(1, 8, 8, 128, 16, (1 << 25) - 512);
    cr_assert_eq(pa_paged_attention_v2_workspace_size(&p, &b), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, 0, &kp, &need), PA_ERR_WORKSPACE_TOO_SMALL);
    cr_assert_eq(need, b);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V2, NULL, need, &kp, &need), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "workspace is NULL"), "%s", pa_last_error());

    /* 2^17 sequences x 2^14 heads: 2^31 (sequence, head) pairs */
    p = params(1 << 17, 1 << 14, 1 << 11, 128, 16, 1000);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "decode: num_seqs 131072 x num_heads 16384 is too large for one launch"), "%s",
              pa_last_error());
    p = params((1 << 17) - 1, 1 << 14, 1 << 11, 128, 16, 1000);
    cr_assert_eq(pa_dec_kparams_make(&p, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
}

/* Found by a blind mutation pass: out inside the query's strided rows (decode.h:
 * out shares no byte with an input), past what contiguous rows would cover:
 * 3 rows of 16 x 128 f16 (4096 bytes) 8192 bytes apart span 20480 bytes, so out
 * 16384 bytes on is on the last row; 20480 on it is apart. And the cache's
 * pointers are aligned to the cache's element, not the query's: an fp8 key at
 * an odd byte is taken, an f16 one refused. */
Test(decode_validate, out_within_strided_query_rows_and_cache_alignment) {
    pa_decode_params p = params(3, 16, 4, 128, 16, 1000);
    p.q_stride = 4096;
    p.out = (char *)pa_test_addr(1) + 16384;
    cr_assert_eq(pa_decode_validate(&p), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "out overlaps the input query"), "%s", pa_last_error());
    p.out = (char *)pa_test_addr(1) + 20480;
    cr_assert_eq(pa_decode_validate(&p), PA_SUCCESS, "%s", pa_last_error());

    pa_decode_params c = params(3, 16, 4, 128, 16, 1000);
    pa_dec_kparams kp;
    c.kv.dtype = PA_DTYPE_FP8_E4M3;
    c.kv.key = (char *)pa_test_addr(2) + 1;
    cr_assert_eq(pa_dec_kparams_make(&c, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_SUCCESS, "%s", pa_last_error());
    c.kv.dtype = PA_DTYPE_F16;
    cr_assert_eq(pa_dec_kparams_make(&c, PA_DEC_MODE_V1, NULL, 0, &kp, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "kv.key"), "%s", pa_last_error());
}
