/* pa_merge_attn_states' validation and its CPU reference (include/pagedattn/merge.h).
 * The validation lives in the host library, beside the reference, so that the
 * host tests and fuzzers have pa_ref_merge_attn_states whole. */
#include <math.h>

#include "internal.h"

#define WHO "merge_attn_states"

/* Elements spanned by rows >= 1 rows of `row` elements `stride` apart (pa_check_rows_extent
 * has held it to int64). */
static int64_t rows_extent(int64_t rows, int64_t stride, int64_t row) { return (rows - 1) * stride + row; }

pa_status pa_merge_resolve(const pa_merge_attn_states_params *p, pa_merge_attn_states_params *r) {
    PA_REQUIRE(p, WHO ": params must not be NULL");
    PA_REQUIRE(p->dtype == PA_DTYPE_F32 || p->dtype == PA_DTYPE_F16 || p->dtype == PA_DTYPE_BF16,
               WHO ": dtype %d must be f32, f16 or bf16", (int)p->dtype);
    PA_REQUIRE(p->num_tokens >= 0, WHO ": num_tokens = %d must be >= 0", (int)p->num_tokens);
    PA_REQUIRE(p->num_heads >= 1 && p->num_heads <= 65535, WHO ": num_heads = %d must be in 1..65535",
               (int)p->num_heads);
    PA_REQUIRE(p->head_size >= 1 && p->head_size <= 65536, WHO ": head_size = %d must be in 1..65536",
               (int)p->head_size);
    *r = *p;
    const int64_t row = (int64_t)p->num_heads * p->head_size, T = p->num_tokens, H = p->num_heads;
    int64_t *strides[3] = {&r->out_stride, &r->prefix_stride, &r->suffix_stride};
    static const char *const names[3] = {"out_stride", "prefix_stride", "suffix_stride"};
    for (int i = 0; i < 3; i++) {
        PA_REQUIRE(*strides[i] == 0 || *strides[i] >= row,
                   WHO ": %s = %lld must be 0 (packed) or at least num_heads * head_size = %lld", names[i],
                   (long long)*strides[i], (long long)row);
        if (*strides[i] == 0)
            *strides[i] = row;
        PA_TRY(pa_check_rows_extent(WHO, names[i], T, *strides[i], row));
    }
    pa_lse_strides ls;
    PA_TRY(pa_lse_layout(WHO, H, T, p->lse_head_stride, p->lse_token_stride, &ls));
    r->lse_head_stride = ls.head;
    r->lse_token_stride = ls.token;
    if (T == 0) /* nothing is read or written */
        return PA_SUCCESS;
    PA_TRY(pa_check_not_null(WHO, "output", p->output));
    PA_TRY(pa_check_not_null(WHO, "prefix_output", p->prefix_output));
    PA_TRY(pa_check_not_null(WHO, "suffix_output", p->suffix_output));
    PA_TRY(pa_check_not_null(WHO, "prefix_lse", p->prefix_lse));
    PA_TRY(pa_check_not_null(WHO, "suffix_lse", p->suffix_lse));
    const size_t es = pa_dtype_size(p->dtype);
    PA_TRY(pa_check_aligned(WHO, "output", p->output, es));
    PA_TRY(pa_check_aligned(WHO, "prefix_output", p->prefix_output, es));
    PA_TRY(pa_check_aligned(WHO, "suffix_output", p->suffix_output, es));
    PA_TRY(pa_check_aligned(WHO, "output_lse", p->output_lse, sizeof(float)));
    PA_TRY(pa_check_aligned(WHO, "prefix_lse", p->prefix_lse, sizeof(float)));
    PA_TRY(pa_check_aligned(WHO, "suffix_lse", p->suffix_lse, sizeof(float)));
    int64_t ob = 0, pb = 0, sb = 0;
    PA_REQUIRE(pa_mul_i64(rows_extent(T, r->out_stride, row), (int64_t)es, &ob) &&
                   pa_mul_i64(rows_extent(T, r->prefix_stride, row), (int64_t)es, &pb) &&
                   pa_mul_i64(rows_extent(T, r->suffix_stride, row), (int64_t)es, &sb),
               WHO ": the outputs' extents overflow int64 bytes");
    const int64_t lb = ls.bytes;
    const int a_in_place = p->output == p->prefix_output && r->out_stride == r->prefix_stride;
    const int b_in_place = p->output == p->suffix_output && r->out_stride == r->suffix_stride;
    PA_REQUIRE(a_in_place || !pa_ranges_overlap(p->output, ob, p->prefix_output, pb),
               WHO ": output overlaps prefix_output (in place it must be the same pointer and row stride)");
    PA_REQUIRE(b_in_place || !pa_ranges_overlap(p->output, ob, p->suffix_output, sb),
               WHO ": output overlaps suffix_output (in place it must be the same pointer and row stride)");
    PA_REQUIRE(!pa_ranges_overlap(p->output, ob, p->prefix_lse, lb) &&
                   !pa_ranges_overlap(p->output, ob, p->suffix_lse, lb),
               WHO ": output overlaps prefix_lse or suffix_lse");
    if (p->output_lse) {
        const void *others[5] = {p->output, p->prefix_output, p->suffix_output, p->prefix_lse, p->suffix_lse};
        const int64_t bytes[5] = {ob, pb, sb, lb, lb};
        static const char *const other_names[5] = {"output", "prefix_output", "suffix_output", "prefix_lse",
                                                   "suffix_lse"};
        for (int i = 0; i < 5; i++)
            PA_REQUIRE(!pa_ranges_overlap(p->output_lse, lb, others[i], bytes[i]),
                       WHO ": output_lse overlaps %s (it is written while the inputs are read)", other_names[i]);
    }
    return PA_SUCCESS;
}

pa_status pa_merge_attn_states_validate(const pa_merge_attn_states_params *p) {
    pa_merge_attn_states_params r;
    PA_TRY(pa_merge_resolve(p, &r));
    pa_clear_error();
    return PA_SUCCESS;
}

/* Row (t, h)'s weights and merged lse, as the kernel forms them (cuda/merge_states.cu). */
static void weights(float la, float lb, float *wa, float *wb, float *lse) {
    la = la == INFINITY ? -INFINITY : la;
    lb = lb == INFINITY ? -INFINITY : lb;
    const float m = isnan(la) || isnan(lb) ? NAN : fmaxf(la, lb);
    *wa = *wb = 0.0f;
    *lse = -INFINITY;
    if (m != -INFINITY) {
        const float ea = expf(la - m), eb = expf(lb - m), s = ea + eb;
        *wa = ea / s;
        *wb = eb / s;
        *lse = m + logf(s);
    }
}

pa_status pa_ref_merge_attn_states(const pa_merge_attn_states_params *p) {
    pa_merge_attn_states_params r;
    PA_TRY(pa_merge_resolve(p, &r));
    for (int64_t t = 0; t < r.num_tokens; t++)
        for (int32_t h = 0; h < r.num_heads; h++) {
            const int64_t li = h * r.lse_head_stride + t * r.lse_token_stride;
            float wa, wb, lse;
            weights(r.prefix_lse[li], r.suffix_lse[li], &wa, &wb, &lse);
            const int64_t col = (int64_t)h * r.head_size;
            for (int32_t d = 0; d < r.head_size; d++) {
                const float a = pa_load_as_float(r.dtype, r.prefix_output, (size_t)(t * r.prefix_stride + col + d));
                const float b = pa_load_as_float(r.dtype, r.suffix_output, (size_t)(t * r.suffix_stride + col + d));
                const float x = wa != 0.0f ? wa * a : 0.0f;
                pa_store_from_float(r.dtype, r.output, (size_t)(t * r.out_stride + col + d),
                                    wb != 0.0f ? fmaf(wb, b, x) : x);
            }
            if (r.output_lse)
                r.output_lse[li] = lse;
        }
    pa_clear_error();
    return PA_SUCCESS;
}
