/* libpagedattn: the one tolerance rule used by the tests and `pagedattn check`.
 *
 *   |got - ref| <= atol + rtol * |ref|; any NaN in `got` fails (even where ref
 *   is NaN: outputs are poisoned with NaN before a kernel runs), an infinity in
 *   `got` fails unless ref is the same infinity, and a finite `got` fails
 *   against a NaN or infinite ref.
 */
#ifndef PAGEDATTN_CHECK_H
#define PAGEDATTN_CHECK_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pa_tolerance {
    double atol;
    double rtol;
} pa_tolerance;

typedef struct pa_compare_result {
    int64_t n;            /* elements compared */
    int64_t mismatches;   /* elements outside the tolerance (NaN included) */
    int64_t nan_count;    /* failing non-finite values of `got`: NaN, or an infinity the reference lacks */
    double max_abs_err;   /* over the pairs with both values finite (0 when there are none) */
    double max_rel_err;   /* |got - ref| / |ref| over those pairs whose ref is not 0 */
    int64_t first_bad[8]; /* indices of the first mismatches, -1 if unused */
    double first_got[8];
    double first_ref[8];
} pa_compare_result;

/* Tolerance written down once per output dtype (and cache dtype, since an fp8
 * cache loses more than the output rounding). */
PA_API pa_tolerance pa_tolerance_for(pa_dtype out_dtype, pa_dtype cache_dtype);
/* The tolerance of PA_PREFILL_PATH_HOPPER_FP8's FP8 kernel (prefill.h) over an
 * e4m3 cache: Q and P are rounded to e4m3 too, so it is wider. */
PA_API pa_tolerance pa_tolerance_fp8_path(pa_dtype out_dtype);

/* Compares n elements of `got` (dtype got_dtype) with `ref` (f32). Returns 1
 * when every element is within tolerance, 0 otherwise, and fills *res. A
 * comparison that cannot be made fails (returns 0, res->mismatches 1 with no
 * index, res->max_abs_err and max_rel_err NaN): n < 0, a NaN or negative atol
 * or rtol, got or ref NULL with n > 0, an unknown got_dtype. */
PA_API int pa_compare(const void *got, pa_dtype got_dtype, const float *ref, int64_t n, pa_tolerance tol,
                      pa_compare_result *res);

/* pa_compare with a per-element allowance on top of the tolerance: element i
 * passes when |got - ref| <= atol + rtol |ref| + extra_scale |extra[i]| (extra
 * may be NULL: pa_compare). For attention whose specification rounds the
 * probabilities to the value dtype (the ragged op, as JAX does) while a kernel
 * rounds the unnormalised ones of its online softmax (as FlashAttention does):
 * extra[i] = sum_k p_k |v_k| for that output element and extra_scale =
 * 2 * pa_prob_rounding_unit(value dtype), since each rounding moves p_k by at
 * most u p_k. A NaN or negative extra_scale fails as pa_compare's invalid
 * arguments do (whether or not extra is NULL). */
PA_API int pa_compare_with_allowance(const void *got, pa_dtype got_dtype, const float *ref, const float *extra,
                                     double extra_scale, int64_t n, pa_tolerance tol, pa_compare_result *res);

/* Unit roundoff u of a value dtype as probabilities are rounded to it: 2^-8
 * for bf16, 2^-11 for f16, 0 for f32. */
PA_API double pa_prob_rounding_unit(pa_dtype value_dtype);

/* One-paragraph report of a comparison into buf ("12 of 4096 outside atol ...,
 * first: [17] got 0.51 ref 0.48"); a short "no result" text when res is NULL,
 * and "invalid comparison ..." for one that could not be made. Returns buf. */
PA_API const char *pa_compare_format(const pa_compare_result *res, pa_tolerance tol, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
