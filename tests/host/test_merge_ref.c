/* pa_ref_merge_attn_states (include/pagedattn/merge.h): held to attention's
 * definition (two parts of a softmax over disjoint keys merge into the softmax
 * over all of them, computed here in double from the scores), to hand-worked
 * rows, to the edge cases the header promises, to its layouts, and to its
 * refusals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const pa_dtype dtypes[] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};

/* Unit roundoff of a dtype's significand. */
static double unit(pa_dtype t) { return t == PA_DTYPE_F32 ? 0x1p-24 : t == PA_DTYPE_F16 ? 0x1p-11 : 0x1p-8; }

/* A packed problem: outputs [T, H, hs], lse [H, T]. */
static pa_merge_attn_states_params packed(pa_dtype t, int T, int H, int hs, void *out, const void *a, const void *b,
                                          float *lo, const float *la, const float *lb) {
    return (pa_merge_attn_states_params){.dtype = t,
                                         .num_tokens = T,
                                         .num_heads = H,
                                         .head_size = hs,
                                         .output = out,
                                         .prefix_output = a,
                                         .suffix_output = b,
                                         .output_lse = lo,
                                         .prefix_lse = la,
                                         .suffix_lse = lb};
}

/* Softmax attention of one query row over keys [k0, k1) of one head, from
 * scores s[] and values v[j * hs + d], in double: out[hs] and the natural-log
 * log-sum-exp of the scores. */
static double attend(const double *s, const double *v, int k0, int k1, int hs, double *out) {
    double m = -INFINITY, l = 0.0;
    for (int j = k0; j < k1; j++)
        m = s[j] > m ? s[j] : m;
    for (int d = 0; d < hs; d++)
        out[d] = 0.0;
    for (int j = k0; j < k1; j++) {
        const double p = exp(s[j] - m);
        l += p;
        for (int d = 0; d < hs; d++)
            out[d] += p * v[(size_t)j * hs + d];
    }
    for (int d = 0; d < hs; d++)
        out[d] /= l;
    return m + log(l);
}

/* Attention over N keys, cut at c into a prefix [0, c) and a suffix [c, N):
 * each part's output (rounded to the dtype, as an attention kernel stores
 * it) and lse (f32) merge into the whole's output and lse. */
Test(merge_ref, parts_of_a_softmax_merge_into_the_whole) {
    pa_rng rng = pa_rng_make(7);
    for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
        const pa_dtype t = dtypes[di];
        const size_t es = pa_dtype_size(t);
        const int T = 5, H = 3, hs = 24, N = 40;
        unsigned char *A = malloc((size_t)T * H * hs * es), *B = malloc((size_t)T * H * hs * es),
                      *O = malloc((size_t)T * H * hs * es);
        float *la = malloc(sizeof(float) * T * H), *lb = malloc(sizeof(float) * T * H),
              *lo = malloc(sizeof(float) * T * H);
        double *whole = malloc(sizeof(double) * (size_t)T * H * hs), *lwhole = malloc(sizeof(double) * T * H);
        double s[40], v[40 * 24], pa_[24], pb_[24];
        for (int tk = 0; tk < T; tk++)
            for (int h = 0; h < H; h++) {
                /* scores spread wide so either part may dominate; the cut anywhere, an end included */
                const double spread = pa_rng_uniform(&rng, 0.5f, 12.0f);
                for (int j = 0; j < N; j++)
                    s[j] = spread * pa_rng_uniform(&rng, -1.0f, 1.0f) + (j < N / 2 ? tk - 2.0 : 2.0 - tk);
                for (int j = 0; j < N * hs; j++)
                    v[j] = pa_rng_uniform(&rng, -1.0f, 1.0f);
                const int c = pa_rng_int(&rng, 1, N - 1);
                const size_t row = ((size_t)tk * H + h) * hs;
                const int li = h * T + tk; /* vLLM's [num_heads, num_tokens] */
                la[li] = (float)attend(s, v, 0, c, hs, pa_);
                lb[li] = (float)attend(s, v, c, N, hs, pb_);
                lwhole[li] = attend(s, v, 0, N, hs, whole + row);
                for (int d = 0; d < hs; d++) {
                    pa_store_from_float(t, A, row + d, (float)pa_[d]);
                    pa_store_from_float(t, B, row + d, (float)pb_[d]);
                }
            }
        pa_merge_attn_states_params p = packed(t, T, H, hs, O, A, B, lo, la, lb);
        cr_assert_eq(pa_ref_merge_attn_states(&p), PA_SUCCESS, "%s", pa_last_error());
        for (int tk = 0; tk < T; tk++)
            for (int h = 0; h < H; h++) {
                const size_t row = ((size_t)tk * H + h) * hs;
                const int li = h * T + tk;
                /* the parts' rounding to t (half a unit each, weights summing to 1), the
                 * output's own, and f32 lse and weights (tens of f32 units at |lse| ~ 20) */
                for (int d = 0; d < hs; d++) {
                    const double got = pa_load_as_float(t, O, row + d), want = whole[row + d];
                    const double tol = 3.0 * unit(t) * (fabs(want) + 1.0) + 1e-5;
                    CHK(fabs(got - want) <= tol, "%s token %d head %d dim %d: merged %.8g, whole %.8g",
                        pa_dtype_name(t), tk, h, d, got, want);
                }
                CHK(fabs(lo[li] - lwhole[li]) <= 1e-5 * (1.0 + fabs(lwhole[li])),
                    "%s token %d head %d: merged lse %.8g, whole %.8g", pa_dtype_name(t), tk, h, (double)lo[li],
                    lwhole[li]);
            }
        free(A), free(B), free(O), free(la), free(lb), free(lo), free(whole), free(lwhole);
    }
}

/* One row of head size 2 in f32: merge a = (a0, a1), b = (b0, b1) at lse la, lb. */
static void merge_one(float la, float lb, const float a[2], const float b[2], float out[2], float *lse) {
    pa_merge_attn_states_params p = packed(PA_DTYPE_F32, 1, 1, 2, out, a, b, lse, &la, &lb);
    cr_assert_eq(pa_ref_merge_attn_states(&p), PA_SUCCESS, "%s", pa_last_error());
}

/* Rows worked by hand, and every edge case merge.h lists. */
Test(merge_ref, hand_worked_rows_and_edge_cases) {
    const float a[2] = {4.0f, -2.0f}, b[2] = {8.0f, 6.0f}, nan2[2] = {NAN, NAN};
    float o[2], l;
    /* weights 3/4 and 1/4: lse ln 3 and ln 1, merged ln 4 */
    merge_one(logf(3.0f), 0.0f, a, b, o, &l);
    cr_assert_float_eq(o[0], 5.0f, 1e-5f);
    cr_assert_float_eq(o[1], 0.0f, 1e-5f);
    cr_assert_float_eq(l, logf(4.0f), 1e-6f);
    /* equal lse: the mean, lse + ln 2, at any magnitude */
    merge_one(80.0f, 80.0f, a, b, o, &l);
    cr_assert(o[0] == 6.0f && o[1] == 2.0f, "%g %g", (double)o[0], (double)o[1]);
    cr_assert_float_eq(l, 80.0f + logf(2.0f), 1e-4f);
    /* an empty prefix (-inf, FlashAttention-3; +inf, FlashAttention-2) whose row is NaN: the suffix exactly */
    const float empties[2] = {-INFINITY, INFINITY};
    for (int i = 0; i < 2; i++) {
        merge_one(empties[i], 1.5f, nan2, b, o, &l);
        cr_assert(o[0] == 8.0f && o[1] == 6.0f && l == 1.5f, "empty prefix lse %g: %g %g lse %g", (double)empties[i],
                  (double)o[0], (double)o[1], (double)l);
        merge_one(-2.0f, empties[i], a, nan2, o, &l);
        cr_assert(o[0] == 4.0f && o[1] == -2.0f && l == -2.0f, "empty suffix lse %g: %g %g lse %g", (double)empties[i],
                  (double)o[0], (double)o[1], (double)l);
    }
    /* a weight that underflows: that part's NaN row counts for nothing */
    merge_one(0.0f, -200.0f, a, nan2, o, &l);
    cr_assert(o[0] == 4.0f && o[1] == -2.0f && l == 0.0f, "%g %g lse %g", (double)o[0], (double)o[1], (double)l);
    /* both empty: zeros, lse -inf, whatever the rows hold */
    merge_one(-INFINITY, INFINITY, nan2, nan2, o, &l);
    cr_assert(o[0] == 0.0f && !signbit(o[0]) && o[1] == 0.0f && l == -INFINITY, "%g %g lse %g", (double)o[0],
              (double)o[1], (double)l);
    /* a NaN lse, on either side, with the other finite or empty: NaN */
    const float others[2] = {0.5f, -INFINITY};
    for (int i = 0; i < 2; i++) {
        merge_one(NAN, others[i], a, b, o, &l);
        cr_assert(isnan(o[0]) && isnan(o[1]) && isnan(l), "NaN prefix lse, suffix %g", (double)others[i]);
        merge_one(others[i], NAN, a, b, o, &l);
        cr_assert(isnan(o[0]) && isnan(o[1]) && isnan(l), "NaN suffix lse, prefix %g", (double)others[i]);
    }
}

/* A packed problem, then the same rows at strided token rows and in FlashInfer's
 * lse layout: the same bytes, and nothing between the rows written. */
Test(merge_ref, strided_rows_lse_layouts_and_in_place) {
    pa_rng rng = pa_rng_make(11);
    const int T = 4, H = 3, hs = 5, row = H * hs, pad = 7;
    for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
        const pa_dtype t = dtypes[di];
        const size_t es = pa_dtype_size(t), n = (size_t)T * row;
        unsigned char *A = pa_test_random_buffer(&rng, t, n, -2.0f, 2.0f);
        unsigned char *B = pa_test_random_buffer(&rng, t, n, -2.0f, 2.0f);
        float la[12], lb[12], lo[12];
        for (int i = 0; i < T * H; i++) {
            la[i] = pa_rng_uniform(&rng, -3.0f, 3.0f);
            lb[i] = pa_rng_uniform(&rng, -3.0f, 3.0f);
        }
        unsigned char *O = malloc(n * es);
        pa_merge_attn_states_params p = packed(t, T, H, hs, O, A, B, lo, la, lb);
        cr_assert_eq(pa_ref_merge_attn_states(&p), PA_SUCCESS, "%s", pa_last_error());

        /* strided: rows row + pad elements apart, a different pad for each buffer; lse [T, H] padded to H + 1 */
        const int64_t so = row + pad, sa = row + 2 * pad, sb = row + 3;
        unsigned char *As = calloc((size_t)(T * sa), es), *Bs = calloc((size_t)(T * sb), es),
                      *Os = malloc((size_t)(T * so) * es);
        memset(Os, 0xA5, (size_t)(T * so) * es);
        float las[4 * 4], lbs[4 * 4], los[4 * 4];
        for (int i = 0; i < 16; i++)
            los[i] = 77.0f;
        for (int tk = 0; tk < T; tk++) {
            memcpy(As + tk * sa * es, A + (size_t)tk * row * es, row * es);
            memcpy(Bs + tk * sb * es, B + (size_t)tk * row * es, row * es);
            for (int h = 0; h < H; h++) {
                las[tk * (H + 1) + h] = la[h * T + tk];
                lbs[tk * (H + 1) + h] = lb[h * T + tk];
            }
        }
        pa_merge_attn_states_params q = p;
        q.output = Os, q.prefix_output = As, q.suffix_output = Bs, q.out_stride = so, q.prefix_stride = sa,
        q.suffix_stride = sb, q.output_lse = los, q.prefix_lse = las, q.suffix_lse = lbs, q.lse_head_stride = 1,
        q.lse_token_stride = H + 1;
        cr_assert_eq(pa_ref_merge_attn_states(&q), PA_SUCCESS, "%s", pa_last_error());
        for (int tk = 0; tk < T; tk++) {
            cr_assert(memcmp(Os + tk * so * es, O + (size_t)tk * row * es, row * es) == 0, "%s strided token %d",
                      pa_dtype_name(t), tk);
            for (size_t b = (size_t)row * es; tk < T - 1 && b < (size_t)so * es; b++)
                cr_assert_eq(Os[tk * so * es + b], 0xA5, "%s: byte %zu past token %d's row written", pa_dtype_name(t),
                             b, tk);
            for (int h = 0; h < H; h++)
                cr_assert(los[tk * (H + 1) + h] == lo[h * T + tk], "%s lse token %d head %d", pa_dtype_name(t), tk, h);
            cr_assert(los[tk * (H + 1) + H] == 77.0f, "%s: lse padding of token %d written", pa_dtype_name(t), tk);
        }

        /* in place, output = prefix_output and output = suffix_output: the same bytes */
        for (int side = 0; side < 2; side++) {
            unsigned char *X = malloc(n * es);
            memcpy(X, side ? B : A, n * es);
            pa_merge_attn_states_params r = p;
            r.output = X;
            if (side)
                r.suffix_output = X;
            else
                r.prefix_output = X;
            r.output_lse = NULL;
            cr_assert_eq(pa_ref_merge_attn_states(&r), PA_SUCCESS, "%s", pa_last_error());
            cr_assert(memcmp(X, O, n * es) == 0, "%s in place (side %d)", pa_dtype_name(t), side);
            free(X);
        }
        free(A), free(B), free(O), free(As), free(Bs), free(Os);
    }
}

/* Each refusal names its cause and writes nothing. */
Test(merge_ref, refusals) {
    float A[64], B[64], O[64], la[8], lb[8], lo[8];
    for (int i = 0; i < 64; i++)
        A[i] = B[i] = 1.0f, O[i] = 99.0f;
    for (int i = 0; i < 8; i++)
        la[i] = lb[i] = 0.0f, lo[i] = 99.0f;
    const pa_merge_attn_states_params ok = {.dtype = PA_DTYPE_F32,
                                            .num_tokens = 2,
                                            .num_heads = 2,
                                            .head_size = 4,
                                            .output = O,
                                            .prefix_output = A,
                                            .suffix_output = B,
                                            .output_lse = lo,
                                            .prefix_lse = la,
                                            .suffix_lse = lb};
    struct {
        pa_merge_attn_states_params p;
        const char *why;
    } bad[32];
    int n = 0;
#define BAD(field_assign, text)                                                                                        \
    do {                                                                                                               \
        bad[n].p = ok;                                                                                                 \
        bad[n].p.field_assign;                                                                                         \
        bad[n++].why = text;                                                                                           \
    } while (0)
    BAD(dtype = PA_DTYPE_FP8_E4M3, "must be f32, f16 or bf16");
    BAD(dtype = (pa_dtype)9, "must be f32, f16 or bf16");
    BAD(num_tokens = -1, "num_tokens");
    BAD(num_heads = 0, "num_heads");
    BAD(num_heads = 65536, "num_heads");
    BAD(head_size = 0, "head_size");
    BAD(head_size = 65537, "head_size");
    BAD(out_stride = 7, "out_stride");
    BAD(prefix_stride = -8, "prefix_stride");
    BAD(suffix_stride = 3, "suffix_stride");
    BAD(lse_head_stride = -1, ">= 0");
    BAD(lse_head_stride = 1, "on one float");                   /* token stride 1 too: (h 1, t 0) and (h 0, t 1) */
    BAD(out_stride = INT64_MAX, "out_stride");                  /* rows past int64 elements */
    BAD(suffix_stride = INT64_MAX / 3, "overflow int64 bytes"); /* elements fit, bytes do not */
    BAD(lse_head_stride = INT64_MAX / 2, "overflows int64");
    BAD(output = NULL, "output");
    BAD(prefix_output = NULL, "prefix_output");
    BAD(suffix_lse = NULL, "suffix_lse");
    BAD(prefix_output = (const char *)A + 2, "prefix_output (");
    BAD(output_lse = (float *)((char *)lo + 1), "output_lse (");
    BAD(output = A + 1, "output overlaps prefix_output");
    BAD(output = B + 4, "output overlaps suffix_output");
    BAD(output_lse = la + 2, "output_lse overlaps prefix_lse");
    BAD(output_lse = (float *)O + 3, "output_lse overlaps output");
    BAD(output = (float *)lb, "output overlaps prefix_lse or suffix_lse");
#undef BAD
    for (int i = 0; i < n; i++) {
        cr_assert_eq(pa_ref_merge_attn_states(&bad[i].p), PA_ERR_INVALID_ARGUMENT, "case %d (%s) accepted", i,
                     bad[i].why);
        cr_assert(strstr(pa_last_error(), bad[i].why), "case %d: '%s' lacks '%s'", i, pa_last_error(), bad[i].why);
        cr_assert_eq(pa_merge_attn_states_validate(&bad[i].p), PA_ERR_INVALID_ARGUMENT, "case %d validate", i);
    }
    for (int i = 0; i < 64; i++)
        cr_assert(O[i] == 99.0f && A[i] == 1.0f && B[i] == 1.0f, "element %d written", i);
    for (int i = 0; i < 8; i++)
        cr_assert(lo[i] == 99.0f && la[i] == 0.0f && lb[i] == 0.0f, "lse %d written", i);
    cr_assert_eq(pa_ref_merge_attn_states(NULL), PA_ERR_INVALID_ARGUMENT);
    /* accepted: no tokens with no buffers; output = prefix_output in place; one token with any lse token stride */
    pa_merge_attn_states_params e = {.dtype = PA_DTYPE_BF16, .num_tokens = 0, .num_heads = 1, .head_size = 1};
    cr_assert_eq(pa_ref_merge_attn_states(&e), PA_SUCCESS, "%s", pa_last_error());
    e.num_heads = 8, e.lse_head_stride = INT64_MAX; /* no tokens: no lse element to place (the fuzzer's find) */
    cr_assert_eq(pa_merge_attn_states_validate(&e), PA_SUCCESS, "%s", pa_last_error());
    pa_merge_attn_states_params in = ok;
    in.output = A;
    cr_assert_eq(pa_ref_merge_attn_states(&in), PA_SUCCESS, "%s", pa_last_error());
    pa_merge_attn_states_params one = ok;
    one.num_tokens = 1, one.lse_head_stride = 1, one.lse_token_stride = 5;
    cr_assert_eq(pa_merge_attn_states_validate(&one), PA_SUCCESS, "%s", pa_last_error());
}
