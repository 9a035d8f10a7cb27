/* The tolerance helper must catch what it is meant to catch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "pagedattn/pagedattn.h"

Test(check, equal_arrays_pass) {
    float a[4] = {1, 2, 3, 4};
    pa_compare_result r;
    cr_assert(pa_compare(a, PA_DTYPE_F32, a, 4, pa_tolerance_for(PA_DTYPE_F32, PA_DTYPE_F32), &r));
    cr_assert_eq(r.mismatches, 0);
}

Test(check, rule_is_atol_plus_rtol_times_ref) {
    pa_tolerance t = {0.1, 0.5};
    float ref[2] = {2.0f, 2.0f};
    float inside[2] = {3.09f, 0.91f}; /* |err| 1.09 <= 0.1 + 0.5*2 */
    float outside[2] = {3.11f, 2.0f};
    cr_assert(pa_compare(inside, PA_DTYPE_F32, ref, 2, t, NULL));
    pa_compare_result r;
    cr_assert_not(pa_compare(outside, PA_DTYPE_F32, ref, 2, t, &r));
    cr_assert_eq(r.mismatches, 1);
    cr_assert_eq(r.first_bad[0], 0);
}

/* check.h: the largest errors are taken over the finite pairs only, and the
 * relative one leaves out a zero reference (an error of 0.5 there would be
 * infinite); the NaN and the infinity of `got` fail but move neither. */
Test(check, largest_errors_skip_zero_references_and_non_finite_pairs) {
    const pa_tolerance t = {1.0, 0.0};
    const float ref[5] = {0.0f, 0.25f, 4.0f, 1.0f, 2.0f};
    const float got[5] = {0.5f, 0.5f, 4.25f, NAN, INFINITY};
    pa_compare_result r;
    cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 5, t, &r));
    cr_assert_eq(r.mismatches, 2);
    cr_assert_eq(r.nan_count, 2);
    cr_assert_eq(r.max_abs_err, 0.5, "%g", r.max_abs_err);
    cr_assert_eq(r.max_rel_err, 1.0, "%g: 0.25 off 0.25, the zero reference left out", r.max_rel_err);
    cr_assert(pa_compare(got, PA_DTYPE_F32, ref, 1, t, &r));
    cr_assert_eq(r.max_abs_err, 0.5);
    cr_assert_eq(r.max_rel_err, 0.0, "%g: only a zero reference", r.max_rel_err);
}

Test(check, nan_in_output_fails_even_with_huge_tolerance) {
    pa_tolerance t = {1e30, 1e30};
    float ref[3] = {0, 0, 0};
    float got[3] = {0, NAN, 0};
    pa_compare_result r;
    cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 3, t, &r));
    cr_assert_eq(r.nan_count, 1);
    cr_assert_eq(r.first_bad[0], 1);
}

Test(check, reports_first_mismatches) {
    float ref[20], got[20];
    for (int i = 0; i < 20; i++)
        ref[i] = got[i] = (float)i;
    got[5] += 1.0f;
    got[17] -= 1.0f;
    pa_compare_result r;
    pa_tolerance t = pa_tolerance_for(PA_DTYPE_F32, PA_DTYPE_F32);
    cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 20, t, &r));
    char buf[512];
    pa_compare_format(&r, t, buf, sizeof buf);
    cr_assert(strstr(buf, "[5]") && strstr(buf, "[17]"), "%s", buf);
    cr_assert(strstr(buf, "2 of 20") != NULL, "%s", buf);
}

Test(check, tolerances_loosen_with_precision) {
    pa_tolerance f32 = pa_tolerance_for(PA_DTYPE_F32, PA_DTYPE_F32);
    pa_tolerance f16 = pa_tolerance_for(PA_DTYPE_F16, PA_DTYPE_F16);
    pa_tolerance bf16 = pa_tolerance_for(PA_DTYPE_BF16, PA_DTYPE_BF16);
    pa_tolerance f16fp8 = pa_tolerance_for(PA_DTYPE_F16, PA_DTYPE_FP8_E4M3);
    cr_assert(f32.rtol < f16.rtol && f16.rtol < bf16.rtol);
    cr_assert(f16fp8.atol >= f16.atol && f16fp8.rtol >= f16.rtol);
    /* bf16 must accept one output ulp (2^-8 relative) */
    cr_assert(bf16.rtol >= ldexp(1.0, -8));
}

/* Bounds from above, from each format's precision and not from check.c's table (whose loosening no
 * other test would see: every kernel test is judged by it): atol at most 2^-16 (f32), 2^-9 (f16),
 * 2^-8 (bf16), 2^-6 (an fp8 cache); rtol at most 2^-13 for f32 (2^10 of its ulps: sums of thousands
 * of rounded terms), four output ulps for f16 (2^-8) and bf16 (2^-5), and 2^-5 with an fp8 cache
 * (its quantisation of V, 2^-4 relative for e4m3, averaged over the keys). And an error of 0.03 on an output of 0.1
 * (what a value read from a wrong key tile or head leaves on attention over random V) fails every dtype pair. */
Test(check, tolerances_stay_within_a_few_ulps) {
    static const pa_dtype outs[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    static const double atol_cap[3] = {0x1p-16, 0x1p-9, 0x1p-8}, rtol_cap[3] = {0x1p-13, 0x1p-8, 0x1p-5};
    static const pa_dtype caches[2] = {PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    for (int o = 0; o < 3; o++)
        for (int c = -1; c < 2; c++) {
            const pa_dtype cache = c < 0 ? outs[o] : caches[c];
            const pa_tolerance t = pa_tolerance_for(outs[o], cache);
            const double acap = c < 0 ? atol_cap[o] : fmax(atol_cap[o], 0x1p-6);
            const double rcap = c < 0 ? rtol_cap[o] : fmax(rtol_cap[o], 0x1p-5);
            cr_assert(t.atol > 0 && t.atol <= acap, "%s over %s: atol %g past %g", pa_dtype_name(outs[o]),
                      pa_dtype_name(cache), t.atol, acap);
            cr_assert(t.rtol > 0 && t.rtol <= rcap, "%s over %s: rtol %g past %g", pa_dtype_name(outs[o]),
                      pa_dtype_name(cache), t.rtol, rcap);
            const float ref[2] = {0.1f, -0.1f}, got[2] = {0.13f, -0.1f};
            pa_compare_result r;
            cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 2, t, &r), "%s over %s: 0.03 off 0.1 passed",
                          pa_dtype_name(outs[o]), pa_dtype_name(cache));
            cr_assert_eq(r.mismatches, 1);
        }
}

Test(check, compares_low_precision_outputs) {
    uint16_t got[2] = {pa_float_to_bf16(1.0f), pa_float_to_bf16(3.0f)};
    float ref[2] = {1.001f, 2.0f};
    pa_compare_result r;
    cr_assert_not(pa_compare(got, PA_DTYPE_BF16, ref, 2, pa_tolerance_for(PA_DTYPE_BF16, PA_DTYPE_BF16), &r));
    cr_assert_eq(r.mismatches, 1);
    cr_assert_eq(r.first_bad[0], 1);
}

Test(check, allowance_adds_per_element_slack) {
    const pa_tolerance tol = {.atol = 0.01, .rtol = 0.0};
    const float got[3] = {0.0f, 0.0f, 0.0f};
    const float ref[3] = {0.005f, 0.03f, 0.05f}; /* errors 0.005, 0.03, 0.05 */
    const float extra[3] = {0.0f, 0.25f, 0.25f}; /* with scale 0.1: 0, 0.025, 0.025 more */
    pa_compare_result r;
    cr_assert_not(pa_compare_with_allowance(got, PA_DTYPE_F32, ref, NULL, 0.1, 3, tol, &r));
    cr_assert_eq(r.mismatches, 2);
    cr_assert_not(pa_compare_with_allowance(got, PA_DTYPE_F32, ref, extra, 0.1, 3, tol, &r));
    cr_assert_eq(r.mismatches, 1, "0.03 <= 0.01 + 0.025 passes, 0.05 does not");
    cr_assert_eq(r.first_bad[0], 2);
    const float nan_got[1] = {NAN};
    cr_assert_not(pa_compare_with_allowance(nan_got, PA_DTYPE_F32, ref, extra, 1e9, 1, tol, &r), "NaN never passes");
}

Test(check, probability_rounding_unit_per_dtype) {
    cr_assert_eq(pa_prob_rounding_unit(PA_DTYPE_BF16), ldexp(1.0, -8));
    cr_assert_eq(pa_prob_rounding_unit(PA_DTYPE_F16), ldexp(1.0, -11));
    cr_assert_eq(pa_prob_rounding_unit(PA_DTYPE_F32), 0.0);
}

Test(check, negative_count_fails) {
    float a[2] = {1, 2};
    pa_compare_result r;
    memset(&r, 0, sizeof r);
    cr_assert_not(pa_compare(a, PA_DTYPE_F32, a, -1, pa_tolerance_for(PA_DTYPE_F32, PA_DTYPE_F32), &r));
    cr_assert(r.mismatches != 0 || isnan(r.max_abs_err), "the result must not read as a pass");
    char buf[256];
    pa_compare_format(&r, pa_tolerance_for(PA_DTYPE_F32, PA_DTYPE_F32), buf, sizeof buf);
    cr_assert(strstr(buf, "invalid") != NULL, "%s", buf);
    cr_assert_not(pa_compare_with_allowance(a, PA_DTYPE_F32, a, NULL, 0.0, INT64_MIN, (pa_tolerance){1, 1}, NULL));
}

/* check.h: missing arrays (with n > 0) or an unknown dtype fail, reported as
 * one mismatch with no index and NaN errors; with n == 0 the arrays are not
 * needed. */
Test(check, missing_arrays_or_unknown_dtype_fail) {
    float a[2] = {1, 2};
    const pa_tolerance ok = {0.1, 0.1};
    struct {
        const void *got;
        pa_dtype t;
        const float *ref;
    } bad[3] = {{NULL, PA_DTYPE_F32, a}, {a, PA_DTYPE_F32, NULL}, {a, (pa_dtype)9, a}};
    for (int i = 0; i < 3; i++) {
        pa_compare_result r;
        memset(&r, 0x5a, sizeof r);
        cr_assert_not(pa_compare(bad[i].got, bad[i].t, bad[i].ref, 2, ok, &r), "case %d", i);
        cr_assert_eq(r.mismatches, 1, "case %d", i);
        cr_assert(isnan(r.max_abs_err) && isnan(r.max_rel_err), "case %d", i);
        for (int k = 0; k < 8; k++)
            cr_assert_eq(r.first_bad[k], -1, "case %d: first_bad[%d] = %lld", i, k, (long long)r.first_bad[k]);
        cr_assert_not(pa_compare_with_allowance(bad[i].got, bad[i].t, bad[i].ref, NULL, 0.0, 2, ok, NULL), "case %d",
                      i);
    }
    cr_assert(pa_compare(NULL, PA_DTYPE_F32, NULL, 0, ok, NULL));
    cr_assert_not(pa_compare(NULL, (pa_dtype)9, NULL, 0, ok, NULL));
}

Test(check, nan_or_negative_tolerances_fail) {
    /* Identical arrays, so only the tolerance can make it fail. */
    float a[2] = {1, 2}, inf[2] = {INFINITY, -INFINITY};
    const pa_tolerance bad[4] = {{NAN, 0.1}, {0.1, NAN}, {-1.0, 0.1}, {0.1, -1.0}};
    for (int i = 0; i < 4; i++) {
        cr_assert_not(pa_compare(a, PA_DTYPE_F32, a, 2, bad[i], NULL), "tolerance %d", i);
        /* equal infinities and an empty comparison never consult the tolerance */
        cr_assert_not(pa_compare(inf, PA_DTYPE_F32, inf, 2, bad[i], NULL), "tolerance %d, infinities", i);
        cr_assert_not(pa_compare(a, PA_DTYPE_F32, a, 0, bad[i], NULL), "tolerance %d, n = 0", i);
    }
    /* the allowance scale too, with or without extra */
    const pa_tolerance ok = {0.1, 0.1};
    const float extra[2] = {1, 1};
    cr_assert_not(pa_compare_with_allowance(a, PA_DTYPE_F32, a, extra, NAN, 2, ok, NULL));
    cr_assert_not(pa_compare_with_allowance(a, PA_DTYPE_F32, a, extra, -0.5, 2, ok, NULL));
    cr_assert_not(pa_compare_with_allowance(a, PA_DTYPE_F32, a, NULL, NAN, 2, ok, NULL));
    cr_assert_not(pa_compare_with_allowance(inf, PA_DTYPE_F32, inf, extra, -0.5, 2, ok, NULL));
    /* valid ones still pass */
    cr_assert(pa_compare(a, PA_DTYPE_F32, a, 2, ok, NULL));
    cr_assert(pa_compare(inf, PA_DTYPE_F32, inf, 2, ok, NULL));
    cr_assert(pa_compare_with_allowance(a, PA_DTYPE_F32, a, extra, 0.5, 2, ok, NULL));
}

Test(check, nan_output_fails_even_against_nan_reference) {
    pa_tolerance t = {1e30, 1e30};
    float ref[3] = {0, NAN, 0};
    float got[3] = {0, NAN, 0};
    pa_compare_result r;
    cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 3, t, &r));
    cr_assert_eq(r.mismatches, 1);
    cr_assert_eq(r.nan_count, 1);
    cr_assert_eq(r.first_bad[0], 1);
    const float extra[3] = {1, 1, 1};
    cr_assert_not(pa_compare_with_allowance(got, PA_DTYPE_F32, ref, extra, 1e9, 3, t, &r));
    /* a NaN-poisoned bf16 output against a NaN reference */
    uint16_t g16[1] = {pa_float_to_bf16(NAN)};
    cr_assert_not(pa_compare(g16, PA_DTYPE_BF16, ref + 1, 1, t, NULL));
}

Test(check, format_without_result) {
    char buf[128];
    memset(buf, 'x', sizeof buf);
    const char *s = pa_compare_format(NULL, (pa_tolerance){0.1, 0.1}, buf, sizeof buf);
    cr_assert_eq(s, buf);
    cr_assert(memchr(buf, '\0', sizeof buf) != NULL, "not terminated");
    cr_assert(strstr(buf, "no result") != NULL, "%s", buf);
}

/* The rule's edges, from check.h (found by a blind mutation pass: each was
 * off by one comparison without a test failing): an error exactly atol + rtol
 * |ref| passes (<=, not <); an infinity in `got` passes only against the same
 * infinity, and counts as a failing non-finite value otherwise; a finite `got`
 * against an infinite or NaN reference fails (|got - ref| is not finite); the
 * allowance is extra_scale |extra[i]|, so a negative extra[i] widens it as its
 * magnitude does. Values exactly representable, so the sums are exact. */
Test(check, rule_edges_from_the_header) {
    const pa_tolerance t = {0.5, 0.25};
    const float ref2[1] = {2.0f}, got3[1] = {3.0f}, got3b[1] = {3.0078125f}; /* |err| 1 = 0.5 + 0.25 * 2 */
    cr_assert(pa_compare(got3, PA_DTYPE_F32, ref2, 1, t, NULL), "an error equal to the bound passes");
    cr_assert_not(pa_compare(got3b, PA_DTYPE_F32, ref2, 1, t, NULL), "an error past the bound fails");

    const pa_tolerance wide = {1e30, 1e30};
    const float inf_got[2] = {INFINITY, -INFINITY}, finite_ref[2] = {1.0f, 1.0f}, flipped[2] = {-INFINITY, INFINITY};
    pa_compare_result r;
    cr_assert_not(pa_compare(inf_got, PA_DTYPE_F32, finite_ref, 2, wide, &r), "an infinity against 1 passed");
    cr_assert_eq(r.mismatches, 2);
    cr_assert_eq(r.nan_count, 2, "an infinity the reference lacks is a failing non-finite value");
    cr_assert_not(pa_compare(inf_got, PA_DTYPE_F32, flipped, 2, wide, &r), "an infinity against its opposite passed");
    cr_assert_eq(r.mismatches, 2);

    const float ones[2] = {1.0f, 1.0f}, bad_ref[2] = {INFINITY, NAN};
    cr_assert_not(pa_compare(ones, PA_DTYPE_F32, bad_ref, 2, wide, &r), "finite against inf or NaN passed");
    cr_assert_eq(r.mismatches, 2);
    cr_assert_eq(r.first_bad[0], 0);
    cr_assert_eq(r.first_bad[1], 1);

    const pa_tolerance tight = {0.01, 0.0};
    const float zero[1] = {0.0f}, ref_half[1] = {0.25f}, neg_extra[1] = {-0.5f}; /* 0.25 <= 0.01 + 0.5 * |-0.5| */
    cr_assert(pa_compare_with_allowance(zero, PA_DTYPE_F32, ref_half, neg_extra, 0.5, 1, tight, NULL),
              "a negative extra[i] counts by its magnitude");
}

/* check.h: first_bad holds the indices of the first 8 mismatches, and
 * first_got / first_ref their values; a ninth and later mismatch is counted
 * only (writing a ninth index once overwrote first_got[0]). */
Test(check, more_than_eight_mismatches_keep_the_first_eight) {
    float ref[12], got[12];
    for (int i = 0; i < 12; i++) {
        ref[i] = (float)i;
        got[i] = (float)(i + 100); /* all 12 fail */
    }
    pa_compare_result r;
    memset(&r, 0, sizeof r);
    cr_assert_not(pa_compare(got, PA_DTYPE_F32, ref, 12, (pa_tolerance){0.1, 0.0}, &r));
    cr_assert_eq(r.mismatches, 12);
    for (int k = 0; k < 8; k++) {
        cr_assert_eq(r.first_bad[k], k, "first_bad[%d] = %lld", k, (long long)r.first_bad[k]);
        cr_assert_eq(r.first_got[k], (double)(k + 100), "first_got[%d] = %g", k, r.first_got[k]);
        cr_assert_eq(r.first_ref[k], (double)k, "first_ref[%d] = %g", k, r.first_ref[k]);
    }
}
