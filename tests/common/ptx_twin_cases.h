/* Inputs for the PTX twin tests (tests/host/test_ptx_twins.c and
 * tests/gpu/test_ptx_twins.c), drawn from pa_rng. */
#ifndef PA_PTX_TWIN_CASES_H
#define PA_PTX_TWIN_CASES_H

#include <string.h>

#include "pagedattn/pagedattn.h"
#include "problems.h"
#include "ptx_twin_api.h"

/* A shared-memory image of distinct 16-bit words, and 32 distinct 16-byte rows
 * of it in random order (one per lane). */
static inline void twin_ldmatrix_case(pa_rng *r, unsigned char *image, int32_t *row_off) {
    for (int i = 0; i < PA_TWIN_SMEM / 2; i++) {
        const uint16_t w = (uint16_t)(i * 40503u + 17u); /* odd multiplier: distinct mod 2^16 */
        memcpy(image + 2 * i, &w, 2);
    }
    int rows[PA_TWIN_SMEM / 16];
    for (int i = 0; i < PA_TWIN_SMEM / 16; i++)
        rows[i] = i;
    for (int i = PA_TWIN_SMEM / 16 - 1; i > 0; i--) {
        const int j = pa_rng_int(r, 0, i), t = rows[i];
        rows[i] = rows[j];
        rows[j] = t;
    }
    for (int l = 0; l < 32; l++)
        row_off[l] = 16 * rows[l];
}

static inline uint32_t twin_pack(int dt, float lo, float hi) {
    const uint16_t a = dt == 1 ? pa_float_to_half(lo) : pa_float_to_bf16(lo);
    const uint16_t b = dt == 1 ? pa_float_to_half(hi) : pa_float_to_bf16(hi);
    return (uint32_t)a | ((uint32_t)b << 16);
}

/* Fragments for mma m16n8k16. exact: small integers, so every product and sum
 * is an f32 and any correct implementation gives the same bits; otherwise
 * uniform values in [-2, 2). */
static inline void twin_mma_case(pa_rng *r, int dt, int exact, uint32_t *a, uint32_t *b, float *c) {
    for (int i = 0; i < 128; i++) {
        const float x = exact ? (float)pa_rng_int(r, -8, 8) : pa_rng_uniform(r, -2.0f, 2.0f);
        const float y = exact ? (float)pa_rng_int(r, -8, 8) : pa_rng_uniform(r, -2.0f, 2.0f);
        a[i] = twin_pack(dt, x, y);
        c[i] = exact ? (float)pa_rng_int(r, -100, 100) : pa_rng_uniform(r, -4.0f, 4.0f);
    }
    for (int i = 0; i < 64; i++) {
        const float x = exact ? (float)pa_rng_int(r, -8, 8) : pa_rng_uniform(r, -2.0f, 2.0f);
        const float y = exact ? (float)pa_rng_int(r, -8, 8) : pa_rng_uniform(r, -2.0f, 2.0f);
        b[i] = twin_pack(dt, x, y);
    }
}

/* cp.async: each lane its own 64-byte slot of the destination; random unit,
 * aligned offsets, random src_bytes in [0, unit]. */
static inline void twin_cp_async_case(pa_rng *r, unsigned char *src, int32_t *src_off, int32_t *dst_off, int32_t *unit,
                                      int32_t *src_bytes) {
    for (int i = 0; i < PA_TWIN_SMEM; i++)
        src[i] = (unsigned char)pa_rng_int(r, 0, 255);
    for (int l = 0; l < 32; l++) {
        const int u = 4 << pa_rng_int(r, 0, 2);
        unit[l] = u;
        dst_off[l] = 64 * l + u * pa_rng_int(r, 0, 64 / u - 1);
        src_off[l] = u * pa_rng_int(r, 0, PA_TWIN_SMEM / u - 1);
        src_bytes[l] = pa_rng_int(r, 0, 4) == 0 ? 0 : pa_rng_int(r, 1, u);
    }
}

/* cp_async16 / cp_async16_or_zero cases: a random source image, each lane's
 * 16 bytes at a random 16-aligned place of its 64 and of the source, and a
 * random form (0 ignore-src, 1 copy, 2 cp_async16). */
static inline void twin_cp_async16_case(pa_rng *r, unsigned char *src, int32_t *src_off, int32_t *dst_off,
                                        int32_t *form) {
    for (int i = 0; i < PA_TWIN_SMEM; i++)
        src[i] = (unsigned char)pa_rng_int(r, 0, 255);
    for (int l = 0; l < 32; l++) {
        dst_off[l] = 64 * l + 16 * pa_rng_int(r, 0, 3);
        src_off[l] = 16 * pa_rng_int(r, 0, PA_TWIN_SMEM / 16 - 1);
        form[l] = pa_rng_int(r, 0, 2);
    }
}

/* prmt inputs: random bytes (every byte value, signs both ways) and random
 * selectors over all 16 bits the instruction reads, bit 3 of a nibble (sign
 * replication) included; the upper 16 bits set at random too (not read). */
#define PA_TWIN_PRMT_N 4096
static inline void twin_prmt_case(pa_rng *r, uint32_t *a, uint32_t *b, uint32_t *s) {
    for (int i = 0; i < PA_TWIN_PRMT_N; i++) {
        a[i] = (uint32_t)pa_rng_next(r);
        b[i] = (uint32_t)pa_rng_next(r);
        s[i] = (uint32_t)pa_rng_next(r);
        if (i % 2) /* half with every nibble's bit 3 clear, as the kernels' selectors */
            s[i] &= 0x7777u;
    }
}

/* ex2 inputs: the special values (signed zeros, subnormals, infinities, NaN,
 * the ends of the normal range of 2^a) then uniform values over the range the
 * softmax feeds it (mostly [-30, 0]) and beyond it. n >= 32, a multiple of 32. */
#define PA_TWIN_EX2_N 1024
static inline void twin_ex2_case(pa_rng *r, float *a) {
    static const float special[] = {0.0f,  -0.0f,   1e-40f,  -1e-40f, INFINITY, -INFINITY, NAN,    1.0f,
                                    -1.0f, -126.0f, -127.0f, -149.0f, -150.0f,  127.0f,    128.0f, -125.5f};
    const int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < PA_TWIN_EX2_N; i++)
        a[i] = i < ns ? special[i] : i % 4 ? pa_rng_uniform(r, -30.0f, 0.0f) : pa_rng_uniform(r, -140.0f, 130.0f);
}

#endif
