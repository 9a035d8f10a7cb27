/* The interpret-mode twins of cuda/ptx.cuh on the CPU. The strongest check is
 * end to end: Q K^T and P V computed the way the attention tiles do it
 * (ldmatrix of row-major tiles in shared memory, then mma.sync) must equal the
 * plain matrix products; a wrong fragment layout in either twin breaks it.
 * tests/gpu/test_ptx_twins.c compares the twins with the real instructions. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ptx_twin_cases.h"

enum { DT_F16 = 1, DT_BF16 = 2 };

static uint16_t enc(int dt, float x) { return dt == DT_F16 ? pa_float_to_half(x) : pa_float_to_bf16(x); }

/* Writes a rows x 16 matrix of small integers row-major (32-byte rows) at off. */
static void put_matrix(unsigned char *image, int off, int dt, const float m[16][16], int rows) {
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < 16; k++) {
            const uint16_t h = enc(dt, m[i][k]);
            memcpy(image + off + 32 * i + 2 * k, &h, 2);
        }
}

/* Two mma.sync (n = 0..7 and 8..15): A fragments ra, B fragments of both
 * halves in rb (registers 0-1 and 2-3 of each lane, as one ldmatrix.x4 gives
 * them); the 16x16 f32 result into D. */
static void mma_16x16(int dt, const uint32_t *ra, const uint32_t *rb, float D[16][16]) {
    for (int half = 0; half < 2; half++) {
        uint32_t b[64];
        float c[128] = {0}, d[128];
        for (int l = 0; l < 32; l++) {
            b[2 * l] = rb[4 * l + 2 * half];
            b[2 * l + 1] = rb[4 * l + 2 * half + 1];
        }
        pa_twin_mma_host(dt, ra, b, c, d);
        for (int l = 0; l < 32; l++) {
            const int g = l / 4, q = 2 * (l % 4);
            D[g][8 * half + q] = d[4 * l];
            D[g][8 * half + q + 1] = d[4 * l + 1];
            D[g + 8][8 * half + q] = d[4 * l + 2];
            D[g + 8][8 * half + q + 1] = d[4 * l + 3];
        }
    }
}

/* S = A K^T (A 16x16 queries x dims, K 16x16 keys x dims): A through
 * ldmatrix.x4 (lane l -> row l % 16, columns 8 (l / 16)), K through
 * ldmatrix.x4 (lane l -> key 8 (l / 16) + l % 8, columns 8 ((l / 8) % 2)),
 * two mma.sync for the two 8-key halves. */
static void qk_through_twins(int dt, const float A[16][16], const float K[16][16], float S[16][16]) {
    unsigned char image[PA_TWIN_SMEM] = {0};
    put_matrix(image, 0, dt, A, 16);
    put_matrix(image, 512, dt, K, 16);
    int32_t offa[32], offk[32];
    for (int l = 0; l < 32; l++) {
        offa[l] = 32 * (l % 16) + 16 * (l / 16);
        offk[l] = 512 + 32 * (8 * (l / 16) + l % 8) + 16 * ((l / 8) % 2);
    }
    uint32_t ra[128], rk[128];
    pa_twin_ldmatrix_host(image, offa, 0, ra);
    pa_twin_ldmatrix_host(image, offk, 0, rk);
    mma_16x16(dt, ra, rk, S);
}

/* O = P V (P 16x16 rows x keys, V 16x16 keys x dims, row-major): P as the A
 * operand, V through ldmatrix.x4.trans (lane l -> key 8 ((l / 8) % 2) + l % 8,
 * columns 8 (l / 16)). */
static void pv_through_twins(int dt, const float P[16][16], const float V[16][16], float O[16][16]) {
    unsigned char image[PA_TWIN_SMEM] = {0};
    put_matrix(image, 0, dt, P, 16);
    put_matrix(image, 512, dt, V, 16);
    int32_t offp[32], offv[32];
    for (int l = 0; l < 32; l++) {
        offp[l] = 32 * (l % 16) + 16 * (l / 16);
        offv[l] = 512 + 32 * (8 * ((l / 8) % 2) + l % 8) + 16 * (l / 16);
    }
    uint32_t rp[128], rv[128];
    pa_twin_ldmatrix_host(image, offp, 0, rp);
    pa_twin_ldmatrix_host(image, offv, 1, rv);
    mma_16x16(dt, rp, rv, O);
}

static void random_ints(pa_rng *r, float m[16][16]) {
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 16; k++)
            m[i][k] = (float)pa_rng_int(r, -9, 9);
}

Test(ptx_twins, ldmatrix_then_mma_computes_q_kt) {
    pa_rng r = pa_rng_make(31);
    for (int dt = DT_F16; dt <= DT_BF16; dt++)
        for (int rep = 0; rep < 4; rep++) {
            float A[16][16], K[16][16], S[16][16];
            random_ints(&r, A);
            random_ints(&r, K);
            qk_through_twins(dt, A, K, S);
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) {
                    float want = 0.0f;
                    for (int k = 0; k < 16; k++)
                        want += A[i][k] * K[j][k];
                    cr_assert_eq(S[i][j], want, "dt %d S[%d][%d] = %g, want %g", dt, i, j, S[i][j], want);
                }
        }
}

Test(ptx_twins, ldmatrix_trans_then_mma_computes_p_v) {
    pa_rng r = pa_rng_make(32);
    for (int dt = DT_F16; dt <= DT_BF16; dt++)
        for (int rep = 0; rep < 4; rep++) {
            float P[16][16], V[16][16], O[16][16];
            random_ints(&r, P);
            random_ints(&r, V);
            pv_through_twins(dt, P, V, O);
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) {
                    float want = 0.0f;
                    for (int k = 0; k < 16; k++)
                        want += P[i][k] * V[k][j];
                    cr_assert_eq(O[i][j], want, "dt %d O[%d][%d] = %g, want %g", dt, i, j, O[i][j], want);
                }
        }
}

Test(ptx_twins, mma_adds_the_accumulator_and_decodes_both_halves) {
    /* one nonzero element at a time: A[i][k] = 1, B[k][j] = 2 (b col j), C = 0.5 */
    for (int dt = DT_F16; dt <= DT_BF16; dt++) {
        uint32_t a[128] = {0}, b[64] = {0};
        float c[128], d[128];
        for (int i = 0; i < 128; i++)
            c[i] = 0.5f;
        /* lane 5: g = 1, c = 1 -> a0 holds A[1][2] (low) and A[1][3] (high) */
        a[4 * 5 + 0] = (uint32_t)enc(dt, 1.0f) << 16;  /* A[1][3] = 1 */
        b[2 * 14 + 0] = (uint32_t)enc(dt, 2.0f) << 16; /* lane 14: g = 3, c = 2 -> b0 = B[4..5][3]; B[5][3] = 2 */
        b[2 * 6 + 0] = (uint32_t)enc(dt, 3.0f) << 16;  /* lane 6: g = 1, c = 2 -> B[5][1] = 3 */
        b[2 * 7 + 0] = (uint32_t)enc(dt, 4.0f) << 16 | enc(dt, 0.0f); /* lane 7: c = 3 -> B[7][1] = 4 */
        a[4 * 7 + 0] = (uint32_t)enc(dt, 5.0f);                       /* lane 7: g = 1, c = 3 -> A[1][6] = 5 */
        a[4 * 6 + 0] = (uint32_t)enc(dt, 7.0f) << 16;                 /* lane 6: g = 1, c = 2 -> A[1][5] = 7 */
        pa_twin_mma_host(dt, a, b, c, d);
        /* row 1: A[1][3] = 1, A[1][5] = 7, A[1][6] = 5; B[5][1] = 3, B[5][3] = 2, B[7][1] = 4 */
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 4; i++) {
                const int row = l / 4 + (i >= 2 ? 8 : 0), col = 2 * (l % 4) + (i & 1);
                float want = 0.5f;
                if (row == 1 && col == 1)
                    want += 7.0f * 3.0f; /* A[1][5] B[5][1]; A[1][7] = 0 so B[7][1] adds nothing */
                if (row == 1 && col == 3)
                    want += 7.0f * 2.0f;
                cr_assert_eq(d[4 * l + i], want, "dt %d D[%d][%d] = %g, want %g", dt, row, col, d[4 * l + i], want);
            }
    }
}

Test(ptx_twins, cp_async_copies_and_zero_fills) {
    pa_rng r = pa_rng_make(33);
    unsigned char src[PA_TWIN_SMEM], out[PA_TWIN_SMEM];
    int32_t so[32], dso[32], u[32], sb[32];
    twin_cp_async_case(&r, src, so, dso, u, sb);
    pa_twin_cp_async_host(src, so, dso, u, sb, 0xA5, out);
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < 64; i++) {
            const int at = 64 * l + i, in = at >= dso[l] && at < dso[l] + u[l];
            const unsigned char want = !in ? 0xA5 : at - dso[l] < sb[l] ? src[so[l] + at - dso[l]] : 0;
            cr_assert_eq(out[at], want, "lane %d byte %d", l, i);
        }
}

/* The ex2 twin against the definition: 2^a exact at integers, C's exp2f within
 * an ulp elsewhere, and .ftz: subnormal inputs count as 0, results below
 * 2^-126 are +0. */
Test(ptx_twins, ex2_is_two_to_the_a_with_flush_to_zero) {
    float a[PA_TWIN_EX2_N], d[PA_TWIN_EX2_N];
    pa_rng r = pa_rng_make(41);
    twin_ex2_case(&r, a);
    pa_twin_ex2_host(a, PA_TWIN_EX2_N, d);
    for (int i = 0; i < PA_TWIN_EX2_N; i++) {
        const float x = a[i];
        if (isnan(x)) {
            cr_assert(isnan(d[i]), "ex2(NaN) = %g", d[i]);
        } else if (fabsf(x) < 0x1p-126f) {
            cr_assert_eq(d[i], 1.0f, "ex2(%g) (subnormal or zero input) = %g", x, d[i]);
        } else if (x == floorf(x) && x >= -126.0f && x <= 127.0f) {
            cr_assert_eq(d[i], ldexpf(1.0f, (int)x), "ex2(%g) = %g", x, d[i]);
        } else if (x < -126.0f) {
            cr_assert_eq(d[i], 0.0f, "ex2(%g) = %g: a subnormal result flushes to +0", x, d[i]);
            cr_assert(!signbit(d[i]), "ex2(%g): +0", x);
        } else if (x >= 128.0f) {
            cr_assert(isinf(d[i]) && d[i] > 0.0f, "ex2(%g) = %g", x, d[i]);
        } else {
            const float want = exp2f(x);
            cr_assert(fabsf(d[i] - want) <= 0x1p-23f * want, "ex2(%g) = %.9g, exp2f %.9g", x, d[i], want);
        }
    }
}
