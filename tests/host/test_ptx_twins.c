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

/* movmatrix.trans against the PTX ISA's statement: an 8x8 matrix M of distinct
 * 16-bit words, lane t giving M[t/4][2(t%4)], M[t/4][2(t%4)+1] (low half
 * first), receives M[2(t%4)][t/4], M[2(t%4)+1][t/4]. Also: ldmatrix of 8 rows
 * then movmatrix gives what ldmatrix.trans gives on the same rows. */
Test(ptx_twins, movmatrix_transposes_the_fragment) {
    pa_rng r = pa_rng_make(33);
    for (int rep = 0; rep < 4; rep++) {
        uint16_t M[8][8];
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++)
                M[i][j] = (uint16_t)(((unsigned)pa_rng_int(&r, 0, 255) << 8) | (unsigned)(8 * i + j));
        uint32_t in[32], out[32];
        for (int t = 0; t < 32; t++)
            in[t] = (uint32_t)M[t / 4][2 * (t % 4)] | ((uint32_t)M[t / 4][2 * (t % 4) + 1] << 16);
        pa_twin_movmatrix_host(in, out);
        for (int t = 0; t < 32; t++) {
            cr_assert_eq(out[t] & 0xffffu, M[2 * (t % 4)][t / 4], "lane %d low half %04x", t, out[t] & 0xffffu);
            cr_assert_eq(out[t] >> 16, M[2 * (t % 4) + 1][t / 4], "lane %d high half %04x", t, out[t] >> 16);
        }
    }
    unsigned char image[PA_TWIN_SMEM];
    int32_t off[32];
    uint32_t plain[128], trans[128];
    for (int rep = 0; rep < 4; rep++) {
        twin_ldmatrix_case(&r, image, off);
        pa_twin_ldmatrix_host(image, off, 0, plain);
        pa_twin_ldmatrix_host(image, off, 1, trans);
        for (int j = 0; j < 4; j++) {
            uint32_t in[32], out[32];
            for (int t = 0; t < 32; t++)
                in[t] = plain[4 * t + j];
            pa_twin_movmatrix_host(in, out);
            for (int t = 0; t < 32; t++)
                cr_assert_eq(out[t], trans[4 * t + j], "matrix %d lane %d: %08x, ldmatrix.trans %08x", j, t, out[t],
                             trans[4 * t + j]);
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

/* Inputs on which the order of a sum shows in its f32 bits: values of the format at
 * most 1 in magnitude (f16: 11 significant bits, down to 2^-14; bf16: 8 bits, down to
 * 2^-40), and at k = 3 and k = 12 a pair of products +-L (L = 2^30 for f16, 2^80 for
 * bf16) that cancel exactly. Summed in double, L holds no bit below L 2^-52, far above
 * the last bit of the f32 result (about the small products' size times 2^-23), so what
 * the small terms lose next to L depends on which of them come before it. */
static float small_value(pa_rng *r, int dt) {
    const int bits = dt == DT_F16 ? 11 : 8, lo = dt == DT_F16 ? -14 : -40;
    const int m = (1 << (bits - 1)) + pa_rng_int(r, 0, (1 << (bits - 1)) - 1);
    const float v = ldexpf((float)m, pa_rng_int(r, lo, -1) - (bits - 1));
    return pa_rng_int(r, 0, 1) ? -v : v;
}
static float large_value(int dt) { return dt == DT_F16 ? 32768.0f : 0x1p40f; }
enum { K_PLUS = 3, K_MINUS = 12 };
/* A[row][k] and B[k][col] of those inputs: +-L's factors at K_PLUS and K_MINUS. */
static float a_value(pa_rng *r, int dt, int k) {
    return k == K_PLUS ? large_value(dt) : k == K_MINUS ? -large_value(dt) : small_value(r, dt);
}
static float b_value(pa_rng *r, int dt, int k) {
    return k == K_PLUS || k == K_MINUS ? large_value(dt) : small_value(r, dt);
}

/* The twin's sum (cuda/ptx.cuh): C, then A[row][k] B[k][col] for k = 0..15, each
 * product exact in double, the sum in double in that order, rounded once to f32; on
 * inputs where the order shows in the bits. Fragments per the PTX ISA's m16n8k16
 * layout: lane t (g = t / 4, c = t % 4) holds A (g, 2c..2c+1), (g+8, 2c..), (g, 2c+8..),
 * (g+8, 2c+8..); B (2c..2c+1, g), (2c+8..2c+9, g); C and D (g, 2c), (g, 2c+1),
 * (g+8, 2c), (g+8, 2c+1). */
Test(ptx_twins, mma_sums_c_then_k_in_order_in_double_and_rounds_once) {
    pa_rng r = pa_rng_make(34);
    int order_shows = 0;
    for (int dt = DT_F16; dt <= DT_BF16; dt++)
        for (int rep = 0; rep < 16; rep++) {
            float A[16][16], B[16][8], C[16][8];
            for (int i = 0; i < 16; i++)
                for (int k = 0; k < 16; k++)
                    A[i][k] = a_value(&r, dt, k);
            for (int k = 0; k < 16; k++)
                for (int j = 0; j < 8; j++)
                    B[k][j] = b_value(&r, dt, k);
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 8; j++)
                    C[i][j] = ldexpf(pa_rng_uniform(&r, -1.0f, 1.0f), pa_rng_int(&r, -20, 0));
            uint32_t a[128], b[64];
            float c[128], d[128];
            for (int t = 0; t < 32; t++) {
                const int g = t / 4, q = 2 * (t % 4);
                a[4 * t + 0] = (uint32_t)enc(dt, A[g][q]) | (uint32_t)enc(dt, A[g][q + 1]) << 16;
                a[4 * t + 1] = (uint32_t)enc(dt, A[g + 8][q]) | (uint32_t)enc(dt, A[g + 8][q + 1]) << 16;
                a[4 * t + 2] = (uint32_t)enc(dt, A[g][q + 8]) | (uint32_t)enc(dt, A[g][q + 9]) << 16;
                a[4 * t + 3] = (uint32_t)enc(dt, A[g + 8][q + 8]) | (uint32_t)enc(dt, A[g + 8][q + 9]) << 16;
                b[2 * t + 0] = (uint32_t)enc(dt, B[q][g]) | (uint32_t)enc(dt, B[q + 1][g]) << 16;
                b[2 * t + 1] = (uint32_t)enc(dt, B[q + 8][g]) | (uint32_t)enc(dt, B[q + 9][g]) << 16;
                c[4 * t + 0] = C[g][q];
                c[4 * t + 1] = C[g][q + 1];
                c[4 * t + 2] = C[g + 8][q];
                c[4 * t + 3] = C[g + 8][q + 1];
            }
            pa_twin_mma_host(dt, a, b, c, d);
            for (int t = 0; t < 32; t++)
                for (int i = 0; i < 4; i++) {
                    const int row = t / 4 + (i >= 2 ? 8 : 0), col = 2 * (t % 4) + (i & 1);
                    double want = C[row][col], reversed = 0.0;
                    for (int k = 0; k < 16; k++)
                        want += (double)A[row][k] * B[k][col];
                    for (int k = 15; k >= 0; k--)
                        reversed += (double)A[row][k] * B[k][col];
                    reversed += C[row][col];
                    order_shows += (float)reversed != (float)want;
                    uint32_t got_bits, want_bits;
                    const float w = (float)want;
                    memcpy(&got_bits, &d[4 * t + i], 4);
                    memcpy(&want_bits, &w, 4);
                    cr_assert_eq(got_bits, want_bits, "dt %d D[%d][%d] = %a, want %a", dt, row, col,
                                 (double)d[4 * t + i], want);
                }
        }
    cr_assert_gt(order_shows, 0, "no output where the order of the sum shows: the inputs test nothing");
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

/* The 16-byte forms against their definition: the source's 16 bytes (copy,
 * cp_async16), or 16 zeros where the source is ignored; the fill elsewhere. */
Test(ptx_twins, cp_async16_copies_or_ignores_the_source) {
    pa_rng r = pa_rng_make(35);
    unsigned char src[PA_TWIN_SMEM], out[PA_TWIN_SMEM];
    int32_t so[32], dso[32], form[32];
    int seen[3] = {0, 0, 0};
    for (int rep = 0; rep < 4; rep++) {
        twin_cp_async16_case(&r, src, so, dso, form);
        pa_twin_cp_async16_host(src, so, dso, form, 0x5A, out);
        for (int l = 0; l < 32; l++) {
            seen[form[l]]++;
            for (int i = 0; i < 64; i++) {
                const int at = 64 * l + i, k = at - dso[l];
                const unsigned char want = k < 0 || k >= 16 ? 0x5A : form[l] == 0 ? 0 : src[so[l] + k];
                cr_assert_eq(out[at], want, "rep %d lane %d form %d byte %d", rep, l, form[l], i);
            }
        }
    }
    cr_assert(seen[0] > 0 && seen[1] > 0 && seen[2] > 0, "every form drawn");
}

/* The prmt twin against the definition: fixed cases worked by hand (the
 * identity selectors, the e5m2-to-f16 placements decode and ragged use, sign
 * replication, unread upper bits), then random ones against the 8 bytes of
 * b:a read as an array (little-endian). */
static uint32_t pa_twin_prmt_host_one(uint32_t a, uint32_t b, uint32_t s) {
    uint32_t out;
    pa_twin_prmt_host(&a, &b, &s, 1, &out);
    return out;
}

Test(ptx_twins, prmt_selects_bytes_and_replicates_signs) {
    const uint32_t a = 0xddccbbaau, b = 0x44332211u;
    cr_assert_eq(pa_twin_prmt_host_one(a, b, 0x3210u), a);
    cr_assert_eq(pa_twin_prmt_host_one(a, b, 0x7654u), b);
    cr_assert_eq(pa_twin_prmt_host_one(a, b, 0x0123u), 0xaabbccddu);
    cr_assert_eq(pa_twin_prmt_host_one(a, 0u, 0x1404u), 0xbb00aa00u); /* e5m2 bytes 0, 1 over zero low bytes */
    cr_assert_eq(pa_twin_prmt_host_one(a, 0u, 0x3424u), 0xdd00cc00u); /* bytes 2, 3 */
    cr_assert_eq(pa_twin_prmt_host_one(0x807f00ffu, 0u, 0xba98u), 0xff0000ffu); /* sign of each byte */
    cr_assert_eq(pa_twin_prmt_host_one(a, b, 0xffff3210u), a);                  /* bits 16-31 not read */
    pa_rng r = pa_rng_make(43);
    for (int i = 0; i < 4096; i++) {
        const uint32_t x = (uint32_t)pa_rng_next(&r), y = (uint32_t)pa_rng_next(&r), sel = (uint32_t)pa_rng_next(&r);
        unsigned char bytes[8];
        for (int k = 0; k < 4; k++) {
            bytes[k] = (unsigned char)(x >> (8 * k));
            bytes[4 + k] = (unsigned char)(y >> (8 * k));
        }
        uint32_t want = 0;
        for (int k = 0; k < 4; k++) {
            const unsigned nib = (sel >> (4 * k)) & 15u;
            const unsigned char v = bytes[nib & 7u];
            want |= (uint32_t)(nib & 8u ? (v >= 0x80 ? 0xffu : 0u) : v) << (8 * k);
        }
        cr_assert_eq(pa_twin_prmt_host_one(x, y, sel), want, "prmt(0x%08x, 0x%08x, 0x%08x)", x, y, sel);
    }
}

/* The e4m3 conversion's twin against the library's own fp8 decoding
 * (pa_load_as_float, csrc/core): every pair of bytes 2 and 3 under random
 * low bytes, each f16 equal to the e4m3 value (exact), NaN (S.1111.111) as
 * 0x7fff; bytes 0 and 1 are not read. */
Test(ptx_twins, cvt_e4m3x2_hi_is_exact) {
    static uint32_t in[65536], out[65536];
    pa_rng r = pa_rng_make(47);
    for (uint32_t i = 0; i < 65536; i++)
        in[i] = (i << 16) | ((uint32_t)pa_rng_next(&r) & 0xffffu);
    pa_twin_cvt_e4m3_hi_host(in, 65536, out);
    for (uint32_t i = 0; i < 65536; i++)
        for (int k = 0; k < 2; k++) {
            const unsigned char b = (unsigned char)(i >> (8 * k));
            const uint16_t h = (uint16_t)(out[i] >> (16 * k));
            const float want = pa_load_as_float(PA_DTYPE_FP8_E4M3, &b, 0);
            if (isnan(want))
                cr_assert_eq(h, 0x7fffu, "byte 0x%02x: 0x%04x, want 0x7fff", b, h);
            else
                cr_assert(pa_half_to_float(h) == want && (h >> 15) == (b >> 7), "byte 0x%02x: f16 0x%04x, want %g", b,
                          h, (double)want);
        }
    uint32_t lo;
    const uint32_t w = 0x0000ffffu; /* NaN bytes below, zeros above */
    pa_twin_cvt_e4m3_hi_host(&w, 1, &lo);
    cr_assert_eq(lo, 0u);
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

/* ---- wgmma m64nNk16 --------------------------------------------------------------------
 * The operand tiles are written here from the layouts as the PTX ISA draws
 * them (core matrices, or rows of a TMA-style swizzled tile: 16-byte chunk c
 * of row r stored at chunk c ^ (r % 8) of its 128-byte row), not through the
 * twin's address function; the products must equal plain matrix products. */

static void put16(unsigned char *image, uint32_t at, int dt, float x) {
    const uint16_t h = enc(dt, x);
    cr_assert(at + 2 <= PA_TWIN_WG_SMEM);
    memcpy(image + at, &h, 2);
}

/* lane t of warp w: mma.m16n8k16 A fragment of rows 16w.. of A (64 x 16, at column k0). */
static void a_fragments(int dt, const float A[64][64], int k0, uint32_t *a) {
    for (int w = 0; w < 4; w++)
        for (int t = 0; t < 32; t++) {
            const int g = t / 4, c = 2 * (t % 4), r = 16 * w + g;
            uint32_t *x = a + (32 * w + t) * 4;
            x[0] = (uint32_t)enc(dt, A[r][k0 + c]) | ((uint32_t)enc(dt, A[r][k0 + c + 1]) << 16);
            x[1] = (uint32_t)enc(dt, A[r + 8][k0 + c]) | ((uint32_t)enc(dt, A[r + 8][k0 + c + 1]) << 16);
            x[2] = (uint32_t)enc(dt, A[r][k0 + c + 8]) | ((uint32_t)enc(dt, A[r][k0 + c + 9]) << 16);
            x[3] = (uint32_t)enc(dt, A[r + 8][k0 + c + 8]) | ((uint32_t)enc(dt, A[r + 8][k0 + c + 9]) << 16);
        }
}

/* acc (warp w, lane t, n8 block j, element i) against the plain product. */
static void check_acc(const char *what, int dt, int n, const float *acc, const float A[64][64], int kdim,
                      float (*B)(int k, int col, const void *ctx), const void *ctx) {
    for (int w = 0; w < 4; w++)
        for (int t = 0; t < 32; t++)
            for (int j = 0; j < n / 8; j++)
                for (int i = 0; i < 4; i++) {
                    const int row = 16 * w + t / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (t % 4) + (i & 1);
                    double want = 0.0;
                    for (int k = 0; k < kdim; k++)
                        want += (double)A[row][k] * B(k, col, ctx);
                    const float got = acc[(32 * w + t) * (n / 2) + 4 * j + i];
                    cr_assert_eq(got, (float)want, "%s dt %d n %d: D[%d][%d] = %g, want %g", what, dt, n, row, col,
                                 (double)got, want);
                }
}

typedef struct kmat {
    float m[128][64];
} kmat;
static float b_from_kt(int k, int col, const void *ctx) { return ((const kmat *)ctx)->m[col][k]; }    /* K[key][dim] */
static float b_from_v(int k, int col, const void *ctx) { return ((const float(*)[128])ctx)[k][col]; } /* V[key][dim] */

/* S = A K^T over 64 keys (n 64) and 64 dims (four k16 steps), K-major B:
 * no swizzle (core matrices: 8 keys x 8 dims in 128 bytes; the two 8-dim
 * halves of a k16 step 128 bytes apart (LBO), 8-key groups 256 bytes apart
 * (SBO), each k16 step its own 4 KiB), and 128-byte swizzle (key rows of 64
 * dims, 128 bytes, 8-row groups 1024 bytes apart (SBO); step kk starts 32 kk
 * bytes into the row). */
Test(ptx_twins, wgmma_k_major_b_computes_q_kt) {
    pa_rng r = pa_rng_make(41);
    for (int dt = DT_F16; dt <= DT_BF16; dt++)
        for (int swz = 0; swz <= 128; swz += 128) {
            static float A[64][64];
            static kmat K;
            for (int i = 0; i < 64; i++)
                for (int k = 0; k < 64; k++) {
                    A[i][k] = (float)pa_rng_int(&r, -4, 4);
                    K.m[i][k] = (float)pa_rng_int(&r, -4, 4);
                }
            static unsigned char image[PA_TWIN_WG_SMEM];
            memset(image, 0xFF, sizeof image);
            for (int key = 0; key < 64; key++)
                for (int d = 0; d < 64; d++) {
                    uint32_t at;
                    if (swz == 0)
                        at = 4096u * (uint32_t)(d / 16) + 128u * (uint32_t)((d % 16) / 8) + 256u * (uint32_t)(key / 8) +
                             16u * (uint32_t)(key % 8) + 2u * (uint32_t)(d % 8);
                    else
                        at = 128u * (uint32_t)key + 16u * (uint32_t)((d / 8) ^ (key % 8)) + 2u * (uint32_t)(d % 8);
                    put16(image, at, dt, K.m[key][d]);
                }
            static float acc[128 * 32];
            static uint32_t a[128 * 4];
            for (int kk = 0; kk < 4; kk++) {
                const uint64_t db = swz == 0 ? pa_twin_wgmma_desc(4096u * (uint32_t)kk, 128, 256, 0)
                                             : pa_twin_wgmma_desc(32u * (uint32_t)kk, 16, 1024, 128);
                a_fragments(dt, A, 16 * kk, a);
                pa_twin_wgmma_host(dt, 64, a, 0, 0, db, 0, kk > 0, image, acc);
            }
            check_acc(swz ? "K-major 128B" : "K-major none", dt, 64, acc, A, 64, b_from_kt, &K);
        }
}

/* The wgmma twin's sums at its widest (n = 256), on the inputs of
 * mma_sums_c_then_k_in_order_in_double_and_rounds_once (small_value): each D = the 16 products in
 * k order, summed in double from 0 (scale_d off), rounded once. A from registers; B
 * K-major without swizzle: core matrices of 8 columns x 8 k in 128 bytes, the two 8-k
 * halves 128 bytes apart (LBO), 8-column groups 256 bytes apart (SBO). D of warp w,
 * lane t, n8 block j, element i: row 16w + t / 4 (+ 8 for i >= 2), column
 * 8j + 2 (t % 4) + (i & 1). */
Test(ptx_twins, wgmma_sums_k_in_order_in_double_and_rounds_once) {
    pa_rng r = pa_rng_make(43);
    int order_shows = 0;
    for (int dt = DT_F16; dt <= DT_BF16; dt++) {
        static float A[64][64], B[16][256], acc[128 * 128];
        static unsigned char image[PA_TWIN_WG_SMEM];
        static uint32_t a[128 * 4];
        for (int i = 0; i < 64; i++)
            for (int k = 0; k < 16; k++)
                A[i][k] = a_value(&r, dt, k);
        memset(image, 0xFF, sizeof image);
        for (int col = 0; col < 256; col++)
            for (int k = 0; k < 16; k++) {
                B[k][col] = b_value(&r, dt, k);
                put16(image,
                      256u * (uint32_t)(col / 8) + 128u * (uint32_t)(k / 8) + 16u * (uint32_t)(col % 8) +
                          2u * (uint32_t)(k % 8),
                      dt, B[k][col]);
            }
        a_fragments(dt, A, 0, a);
        pa_twin_wgmma_host(dt, 256, a, 0, 0, pa_twin_wgmma_desc(0, 128, 256, 0), 0, 0, image, acc);
        for (int w = 0; w < 4; w++)
            for (int t = 0; t < 32; t++)
                for (int j = 0; j < 32; j++)
                    for (int i = 0; i < 4; i++) {
                        const int row = 16 * w + t / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (t % 4) + (i & 1);
                        double want = 0.0, reversed = 0.0;
                        for (int k = 0; k < 16; k++)
                            want += (double)A[row][k] * B[k][col];
                        for (int k = 15; k >= 0; k--)
                            reversed += (double)A[row][k] * B[k][col];
                        order_shows += (float)reversed != (float)want;
                        const float got = acc[(32 * w + t) * 128 + 4 * j + i], w32 = (float)want;
                        cr_assert_eq(memcmp(&got, &w32, 4), 0, "dt %d D[%d][%d] = %a, want %a", dt, row, col,
                                     (double)got, want);
                    }
    }
    cr_assert_gt(order_shows, 0, "no output where the order of the sum shows: the inputs test nothing");
}

/* O = P V with n = 128 dims over 32 keys (two k16 steps), N-major B (V rows
 * of dims): no swizzle (core matrices: 8 dims x 8 keys in 128 bytes; 8-dim
 * groups 128 bytes apart (SBO), 8-key groups 2 KiB apart (LBO)), and 128-byte
 * swizzle (key rows of 64 dims, 128 bytes; 8-key groups 1024 bytes apart
 * (SBO); the second 64 dims 4 KiB on (LBO); step kk starts 2 KiB kk on). */
Test(ptx_twins, wgmma_n_major_b_computes_p_v) {
    pa_rng r = pa_rng_make(42);
    for (int dt = DT_F16; dt <= DT_BF16; dt++)
        for (int swz = 0; swz <= 128; swz += 128) {
            static float P[64][64];
            for (int i = 0; i < 64; i++)
                for (int k = 0; k < 64; k++)
                    P[i][k] = k < 32 ? (float)pa_rng_int(&r, -4, 4) : 0.0f;
            static float Vf[32][128];
            for (int key = 0; key < 32; key++)
                for (int d = 0; d < 128; d++)
                    Vf[key][d] = (float)pa_rng_int(&r, -4, 4);
            static unsigned char image[PA_TWIN_WG_SMEM];
            memset(image, 0xFF, sizeof image);
            for (int key = 0; key < 32; key++)
                for (int d = 0; d < 128; d++) {
                    uint32_t at;
                    if (swz == 0)
                        at = 2048u * (uint32_t)(key / 8) + 128u * (uint32_t)(d / 8) + 16u * (uint32_t)(key % 8) +
                             2u * (uint32_t)(d % 8);
                    else
                        at = 4096u * (uint32_t)(d / 64) + 1024u * (uint32_t)(key / 8) + 128u * (uint32_t)(key % 8) +
                             16u * (uint32_t)(((d % 64) / 8) ^ (key % 8)) + 2u * (uint32_t)(d % 8);
                    put16(image, at, dt, Vf[key][d]);
                }
            static float acc[128 * 64];
            static uint32_t a[128 * 4];
            for (int kk = 0; kk < 2; kk++) {
                const uint64_t db = swz == 0 ? pa_twin_wgmma_desc(4096u * (uint32_t)kk, 2048, 128, 0)
                                             : pa_twin_wgmma_desc(2048u * (uint32_t)kk, 4096, 1024, 128);
                a_fragments(dt, P, 16 * kk, a);
                pa_twin_wgmma_host(dt, 128, a, 0, 0, db, 1, kk > 0, image, acc);
            }
            check_acc(swz ? "N-major 128B" : "N-major none", dt, 128, acc, P, 32, b_from_v, Vf);
        }
}

/* A from shared memory too (SS): Q (64 rows x 16 dims) K-major, no swizzle
 * (core matrices of 8 rows x 8 dims; dims 8.. 128 bytes on (LBO), 8-row
 * groups 256 bytes apart (SBO)); B = K^T over 32 keys, as above. With
 * scale_d = 0 the accumulator's old contents (NaN here) are ignored. */
Test(ptx_twins, wgmma_a_from_shared_memory) {
    pa_rng r = pa_rng_make(43);
    for (int dt = DT_F16; dt <= DT_BF16; dt++) {
        static float A[64][64];
        static kmat K;
        for (int i = 0; i < 64; i++)
            for (int k = 0; k < 16; k++)
                A[i][k] = (float)pa_rng_int(&r, -4, 4);
        for (int key = 0; key < 32; key++)
            for (int d = 0; d < 16; d++)
                K.m[key][d] = (float)pa_rng_int(&r, -4, 4);
        static unsigned char image[PA_TWIN_WG_SMEM];
        memset(image, 0xFF, sizeof image);
        for (int i = 0; i < 64; i++)
            for (int k = 0; k < 16; k++)
                put16(image,
                      256u * (uint32_t)(i / 8) + 128u * (uint32_t)(k / 8) + 16u * (uint32_t)(i % 8) +
                          2u * (uint32_t)(k % 8),
                      dt, A[i][k]);
        for (int key = 0; key < 32; key++)
            for (int d = 0; d < 16; d++)
                put16(image,
                      8192u + 256u * (uint32_t)(key / 8) + 128u * (uint32_t)(d / 8) + 16u * (uint32_t)(key % 8) +
                          2u * (uint32_t)(d % 8),
                      dt, K.m[key][d]);
        static float acc[128 * 16];
        for (int i = 0; i < 128 * 16; i++)
            acc[i] = NAN;
        pa_twin_wgmma_host(dt, 32, NULL, pa_twin_wgmma_desc(0, 128, 256, 0), 0, pa_twin_wgmma_desc(8192, 128, 256, 0),
                           0, 0, image, acc);
        check_acc("SS", dt, 32, acc, A, 16, b_from_kt, &K);
    }
}

/* ---- wgmma m64n128k32 e4m3 --------------------------------------------------------------
 * S = Q K^T over 128 keys and 128 dims (four k32 steps), e4m3 operands (small
 * integers, encoded by pa_store_from_float). A from registers, laid out as
 * CuTe's ALayout_64x32 reads (lane t of warp w: rows g = 16 w + t / 4 and
 * g + 8; register 0 = (g, 4c..4c+3), 1 = (g+8, 4c..), 2 = (g, 16+4c..),
 * 3 = (g+8, 16+4c..), c = t % 4, low byte first), or from shared memory; K
 * and Q tiles as rows of 128 bytes with the 128-byte swizzle (16-byte chunk c
 * of row r at chunk c ^ (r % 8)), step kk 32 bytes into the rows. */
static uint8_t e4m3_of(float x) {
    uint8_t b;
    pa_store_from_float(PA_DTYPE_FP8_E4M3, &b, 0, x);
    return b;
}
Test(ptx_twins, wgmma_e4m3_computes_q_kt) {
    pa_rng r = pa_rng_make(44);
    static float A[64][128], K[128][128];
    for (int i = 0; i < 64; i++)
        for (int k = 0; k < 128; k++)
            A[i][k] = (float)pa_rng_int(&r, -4, 4);
    for (int i = 0; i < 128; i++)
        for (int k = 0; k < 128; k++)
            K[i][k] = (float)pa_rng_int(&r, -4, 4);
    static unsigned char image[PA_TWIN_WG_SMEM];
    memset(image, 0x7F, sizeof image); /* NaN: a read outside the tiles shows */
    for (int key = 0; key < 128; key++)
        for (int d = 0; d < 128; d++)
            image[128 * key + 16 * ((d / 16) ^ (key % 8)) + d % 16] = e4m3_of(K[key][d]);
    for (int i = 0; i < 64; i++)
        for (int d = 0; d < 128; d++)
            image[16384 + 128 * i + 16 * ((d / 16) ^ (i % 8)) + d % 16] = e4m3_of(A[i][d]);
    for (int rs = 0; rs <= 1; rs++) {
        static float acc[128 * 64];
        for (int i = 0; i < 128 * 64; i++)
            acc[i] = NAN; /* scale_d = 0 on the first step */
        for (int kk = 0; kk < 4; kk++) {
            static uint32_t a[128 * 4];
            for (int w = 0; w < 4; w++)
                for (int t = 0; t < 32; t++)
                    for (int reg = 0; reg < 4; reg++) {
                        const int row = 16 * w + t / 4 + 8 * (reg & 1), col = 32 * kk + 4 * (t % 4) + 16 * (reg >> 1);
                        uint32_t v = 0;
                        for (int b = 0; b < 4; b++)
                            v |= (uint32_t)e4m3_of(A[row][col + b]) << (8 * b);
                        a[(32 * w + t) * 4 + reg] = v;
                    }
            const uint64_t db = pa_twin_wgmma_desc(32u * (uint32_t)kk, 16, 1024, 128);
            const uint64_t da = pa_twin_wgmma_desc(16384u + 32u * (uint32_t)kk, 16, 1024, 128);
            pa_twin_wgmma_host(3, 128, rs ? a : NULL, da, 0, db, 0, kk > 0, image, acc);
        }
        for (int w = 0; w < 4; w++)
            for (int t = 0; t < 32; t++)
                for (int j = 0; j < 16; j++)
                    for (int i = 0; i < 4; i++) {
                        const int row = 16 * w + t / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (t % 4) + (i & 1);
                        double want = 0.0;
                        for (int k = 0; k < 128; k++)
                            want += (double)A[row][k] * K[col][k];
                        const float got = acc[(32 * w + t) * 64 + 4 * j + i];
                        cr_assert_eq(got, (float)want, "e4m3 %s: D[%d][%d] = %g, want %g", rs ? "RS" : "SS", row, col,
                                     (double)got, want);
                    }
    }
}

/* mbarrier phases as the PTX ISA describes them, written out by hand: a
 * barrier of count 3; probes of parity 1 succeed on a fresh barrier (the
 * "previous" phase), parity 0 once three arrivals complete phase 0, and so on
 * alternately; the count resets at each completion. */
Test(ptx_twins, mbarrier_phases_alternate_parity) {
    enum { A = 0, P0 = 1, P1 = 2 };
    const int ops[] = {P0, P1, A, P0, A, P0, A, P0, P1, A, A, P1, A, P1, P0, A, A, A, P0, P1};
    const int want[] = {0, 1, -1, 0, -1, 0, -1, 1, 0, -1, -1, 0, -1, 1, 0, -1, -1, -1, 1, 0};
    const int n = (int)(sizeof ops / sizeof ops[0]);
    int out[sizeof ops / sizeof ops[0]];
    pa_twin_mbar_script_host(3, ops, n, out);
    for (int i = 0; i < n; i++)
        cr_assert_eq(out[i], want[i], "op %d: %d, want %d", i, out[i], want[i]);
}
