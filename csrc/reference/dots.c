/* The references' dot products: one query row against n key rows. */
#include "internal.h"

#include <math.h>

/* Four chains of dependent adds side by side: the CPU overlaps their latency,
 * which a single chain per key leaves idle (the references spent most of their
 * time there). Each sum is still its own, in the same order. */
void pa_ref_dots(const double *q, const float *k, size_t k_stride, int n, int hs, double *out) {
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const float *k0 = k + (size_t)j * k_stride, *k1 = k0 + k_stride, *k2 = k1 + k_stride, *k3 = k2 + k_stride;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int d = 0; d < hs; d++) {
            s0 += q[d] * (double)k0[d];
            s1 += q[d] * (double)k1[d];
            s2 += q[d] * (double)k2[d];
            s3 += q[d] * (double)k3[d];
        }
        out[j] = s0;
        out[j + 1] = s1;
        out[j + 2] = s2;
        out[j + 3] = s3;
    }
    for (; j < n; j++) {
        const float *kr = k + (size_t)j * k_stride;
        double s = 0.0;
        for (int d = 0; d < hs; d++)
            s += q[d] * (double)kr[d];
        out[j] = s;
    }
}

double pa_ref_lse_with_sink(double keys, const float *sink) {
    if (sink == NULL)
        return keys;
    const double s = (double)*sink;
    if (keys == -INFINITY || s == INFINITY)
        return s;
    const double m = s > keys ? s : keys; /* each exponent below is at most 0 */
    return m + log(exp(keys - m) + exp(s - m));
}
