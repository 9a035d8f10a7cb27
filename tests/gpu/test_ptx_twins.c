/* Each PTX wrapper of cuda/ptx.cuh against its interpret-mode twin, on the same
 * inputs: ldmatrix and cp.async bit for bit; mma.sync bit for bit where the
 * exact result is an f32 (integer inputs) and within a few ulp of the sum of
 * |products| otherwise (the ISA leaves the hardware's internal rounding of the
 * sum unspecified). Skips without a GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ptx_twin_cases.h"
#include "testutil.h"

Test(ptx_twins, ldmatrix_x4_and_trans_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(901);
    unsigned char image[PA_TWIN_SMEM];
    int32_t off[32];
    uint32_t dev[128], host[128];
    for (int rep = 0; rep < 8; rep++) {
        twin_ldmatrix_case(&r, image, off);
        for (int trans = 0; trans < 2; trans++) {
            cr_assert_eq(pa_twin_ldmatrix_device(image, off, trans, dev), 0, "launch failed");
            pa_twin_ldmatrix_host(image, off, trans, host);
            for (int i = 0; i < 128; i++)
                cr_assert_eq(dev[i], host[i], "trans %d lane %d reg %d: device %08x twin %08x", trans, i / 4, i % 4,
                             dev[i], host[i]);
        }
    }
}

Test(ptx_twins, movmatrix_trans_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(905);
    for (int rep = 0; rep < 8; rep++) {
        uint32_t in[32], dev[32], host[32];
        for (int t = 0; t < 32; t++)
            in[t] = (uint32_t)pa_rng_int(&r, 0, 65535) | ((uint32_t)pa_rng_int(&r, 0, 65535) << 16);
        cr_assert_eq(pa_twin_movmatrix_device(in, dev), 0, "launch failed");
        pa_twin_movmatrix_host(in, host);
        for (int t = 0; t < 32; t++)
            cr_assert_eq(dev[t], host[t], "lane %d: device %08x twin %08x", t, dev[t], host[t]);
    }
}

static void mma_check(int dt, int exact, uint64_t seed) {
    pa_rng r = pa_rng_make(seed);
    uint32_t a[128], b[64];
    float c[128], dev[128], host[128];
    twin_mma_case(&r, dt, exact, a, b, c);
    cr_assert_eq(pa_twin_mma_device(dt, a, b, c, dev), 0, "launch failed");
    pa_twin_mma_host(dt, a, b, c, host);
    for (int i = 0; i < 128; i++) {
        if (exact) {
            uint32_t x, y;
            memcpy(&x, &dev[i], 4);
            memcpy(&y, &host[i], 4);
            cr_assert_eq(x, y, "dt %d lane %d d%d: device %.9g twin %.9g", dt, i / 4, i % 4, dev[i], host[i]);
        } else {
            /* |sum| of 16 products of values <= 2 plus |c| <= 4 is < 70: a few f32 ulp of that */
            cr_assert(fabsf(dev[i] - host[i]) <= 70.0f * 0x1p-21f, "dt %d lane %d d%d: device %.9g twin %.9g", dt,
                      i / 4, i % 4, dev[i], host[i]);
        }
    }
}

Test(ptx_twins, mma_m16n8k16_f16_and_bf16) {
    PA_SKIP_WITHOUT_GPU();
    for (int dt = 1; dt <= 2; dt++)
        for (int rep = 0; rep < 4; rep++) {
            mma_check(dt, 1, 910u + (uint64_t)(dt * 10 + rep));
            mma_check(dt, 0, 950u + (uint64_t)(dt * 10 + rep));
        }
}

Test(ptx_twins, cp_async_units_and_zero_fill_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(977);
    unsigned char src[PA_TWIN_SMEM], dev[PA_TWIN_SMEM], host[PA_TWIN_SMEM];
    int32_t so[32], dso[32], u[32], sb[32];
    for (int rep = 0; rep < 8; rep++) {
        twin_cp_async_case(&r, src, so, dso, u, sb);
        cr_assert_eq(pa_twin_cp_async_device(src, so, dso, u, sb, 0xA5, dev), 0, "launch failed");
        pa_twin_cp_async_host(src, so, dso, u, sb, 0xA5, host);
        for (int i = 0; i < PA_TWIN_SMEM; i++)
            cr_assert_eq(dev[i], host[i], "byte %d: device %02x twin %02x", i, dev[i], host[i]);
    }
}

/* The 16-byte forms the loaders use, cp_async16 and the ignore-src
 * cp_async16_or_zero (one predicated LDGSTS.ZFILL), against the twin. */
Test(ptx_twins, cp_async16_and_ignore_src_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(983);
    unsigned char src[PA_TWIN_SMEM], dev[PA_TWIN_SMEM], host[PA_TWIN_SMEM];
    int32_t so[32], dso[32], form[32];
    for (int rep = 0; rep < 8; rep++) {
        twin_cp_async16_case(&r, src, so, dso, form);
        cr_assert_eq(pa_twin_cp_async16_device(src, so, dso, form, 0x5A, dev), 0, "launch failed");
        pa_twin_cp_async16_host(src, so, dso, form, 0x5A, host);
        for (int i = 0; i < PA_TWIN_SMEM; i++)
            cr_assert_eq(dev[i], host[i], "byte %d (lane %d, form %d): device %02x twin %02x", i, i / 64, form[i / 64],
                         dev[i], host[i]);
    }
}

/* prmt.b32 against its twin, bit for bit: random bytes and selectors, sign
 * replication (bit 3 of a nibble) and unread upper selector bits included. */
Test(ptx_twins, prmt_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    static uint32_t a[PA_TWIN_PRMT_N], b[PA_TWIN_PRMT_N], s[PA_TWIN_PRMT_N], dev[PA_TWIN_PRMT_N], host[PA_TWIN_PRMT_N];
    pa_rng r = pa_rng_make(4343);
    twin_prmt_case(&r, a, b, s);
    cr_assert_eq(pa_twin_prmt_device(a, b, s, PA_TWIN_PRMT_N, dev), 0, "launch failed");
    pa_twin_prmt_host(a, b, s, PA_TWIN_PRMT_N, host);
    for (int i = 0; i < PA_TWIN_PRMT_N; i++)
        cr_assert_eq(dev[i], host[i], "prmt(0x%08x, 0x%08x, 0x%08x): device 0x%08x, twin 0x%08x", a[i], b[i], s[i],
                     dev[i], host[i]);
}

/* cvt.rn.f16x2.e4m3x2 of a register's upper half against its twin, bit for bit:
 * every pair of bytes 2 and 3 (NaN's 0x7fff included) under random low bytes,
 * which the instruction must not read. */
Test(ptx_twins, cvt_e4m3x2_hi_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    static uint32_t in[65536], dev[65536], host[65536];
    pa_rng r = pa_rng_make(4747);
    for (uint32_t i = 0; i < 65536; i++)
        in[i] = (i << 16) | ((uint32_t)pa_rng_next(&r) & 0xffffu);
    cr_assert_eq(pa_twin_cvt_e4m3_hi_device(in, 65536, dev), 0, "launch failed");
    pa_twin_cvt_e4m3_hi_host(in, 65536, host);
    for (int i = 0; i < 65536; i++)
        cr_assert_eq(dev[i], host[i], "cvt(0x%08x): device 0x%08x, twin 0x%08x", in[i], dev[i], host[i]);
}

/* ex2.approx is an approximation: the twin (2^a rounded once) and the hardware
 * agree to a relative 2^-21, and exactly on the special values. Near 2^-126
 * one may flush where the other does not. */
Test(ptx_twins, ex2_approx_ftz_within_tolerance) {
    PA_SKIP_WITHOUT_GPU();
    float a[PA_TWIN_EX2_N], dev[PA_TWIN_EX2_N], host[PA_TWIN_EX2_N];
    pa_rng r = pa_rng_make(4242);
    twin_ex2_case(&r, a);
    cr_assert_eq(pa_twin_ex2_device(a, PA_TWIN_EX2_N, dev), 0, "launch failed");
    pa_twin_ex2_host(a, PA_TWIN_EX2_N, host);
    for (int i = 0; i < PA_TWIN_EX2_N; i++) {
        if (isnan(host[i]) || isinf(host[i]) || host[i] == 0.0f || fabsf(a[i]) < 0x1p-126f) {
            if (isnan(host[i]))
                cr_assert(isnan(dev[i]), "ex2(%g): device %g, twin NaN", a[i], dev[i]);
            else if (host[i] == 0.0f && a[i] > -127.0f)
                cr_assert(dev[i] <= 0x1p-125f, "ex2(%g): device %g twin 0", a[i], dev[i]);
            else
                cr_assert_eq(dev[i], host[i], "ex2(%g): device %.9g twin %.9g", a[i], dev[i], host[i]);
        } else if (host[i] < 0x1p-125f) {
            cr_assert(dev[i] == 0.0f || fabsf(dev[i] - host[i]) <= 0x1p-21f * host[i], "ex2(%g): device %g twin %g",
                      a[i], dev[i], host[i]);
        } else {
            cr_assert(fabsf(dev[i] - host[i]) <= 0x1p-21f * host[i], "ex2(%g): device %.9g twin %.9g", a[i], dev[i],
                      host[i]);
        }
    }
}

/* wgmma m64nNk16 against its twin, bit for bit, at each width the Hopper
 * prefill kernel issues (N = 64, 96, 128, 192 and 256: Q K^T at 64 and 128 keys,
 * P V at each padded head): A from registers or shared memory, B K-major or
 * N-major, no swizzle and 128-byte swizzle, with and without the accumulator.
 * Small integers, so every sum is exact and any correct layout gives the same
 * bits (a wrong one does not). Skipped when the build has no sm_90a code (the
 * instruction needs it). */
Test(ptx_twins, wgmma_m64nNk16_against_twin) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(77);
    static unsigned char image[PA_TWIN_WG_SMEM];
    static uint32_t a[512];
    static float acc_dev[128 * 128], acc_host[128 * 128];
    static const int widths[5] = {64, 96, 128, 192, 256};
    for (int wi = 0; wi < 5; wi++)
        for (int dt = 1; dt <= 2; dt++)
            for (int rs = 0; rs <= 1; rs++)
                for (int tb = 0; tb <= 1; tb++)
                    for (int swz = 0; swz <= 128; swz += 128) {
                        const int n = widths[wi], nacc = 128 * (n / 2);
                        for (int i = 0; i < PA_TWIN_WG_SMEM / 2; i++) {
                            const uint32_t w = twin_pack(dt, (float)pa_rng_int(&r, -8, 8), 0.0f);
                            memcpy(image + 2 * i, &w, 2);
                        }
                        for (int i = 0; i < 512; i++)
                            a[i] = twin_pack(dt, (float)pa_rng_int(&r, -8, 8), (float)pa_rng_int(&r, -8, 8));
                        for (int i = 0; i < nacc; i++)
                            acc_dev[i] = acc_host[i] = (float)pa_rng_int(&r, -64, 64);
                        /* A (SS, K-major): core matrices at 0; B at 8 KiB (K-major and
                         * swizzled: n rows of 128 bytes, up to the image's end at n 256). */
                        const uint64_t da = pa_twin_wgmma_desc(0, 128, 256, 0);
                        const uint64_t db = swz ? pa_twin_wgmma_desc(8192, tb ? 4096 : 16, 1024, 128)
                                                : pa_twin_wgmma_desc(8192, tb ? 1024 : 128, tb ? 128 : 256, 0);
                        const int scale_d = (swz + tb + rs) % 2;
                        int ok = 0;
                        cr_assert_eq(
                            pa_twin_wgmma_device(dt, n, rs ? a : NULL, da, db, tb, scale_d, image, acc_dev, &ok), 0);
                        if (!ok)
                            cr_skip_test("built without sm_90a: no wgmma to compare");
                        pa_twin_wgmma_host(dt, n, rs ? a : NULL, da, 0, db, tb, scale_d, image, acc_host);
                        for (int i = 0; i < nacc; i++)
                            cr_assert_eq(memcmp(&acc_dev[i], &acc_host[i], 4), 0,
                                         "n %d dt %d rs %d tb %d swz %d: thread %d element %d: device %a, twin %a", n,
                                         dt, rs, tb, swz, i / (n / 2), i % (n / 2), (double)acc_dev[i],
                                         (double)acc_host[i]);
                    }
}

/* e4m3 bits of a small integer v (|v| <= 15: exact, 3 mantissa bits), built
 * from the format's definition (bias 7), not from the code under test. */
static uint8_t e4m3_int(int v) {
    const uint8_t sign = v < 0 ? 0x80 : 0;
    int m = v < 0 ? -v : v;
    if (m == 0)
        return sign;
    int e = 0;
    while ((m >> e) > 1)
        e++;
    /* m = 2^e (1 + f / 8): e <= 3 here, so f is exact */
    const int f = ((m << 3) >> e) - 8;
    return (uint8_t)(sign | ((e + 7) << 3) | f);
}

/* wgmma m64nNk32 e4m3 against its twin at both widths the Hopper kernel's FP8
 * path issues (N = 128: Q K^T; N = 136: P V with the row-sum block): A from
 * registers or shared memory, no swizzle and the 128-byte swizzle, with and
 * without the accumulator. Integers of at most 8 in magnitude: every product
 * and sum (at most 2^11 + 64) is an integer of at most 13 bits, which the
 * hardware's narrower FP8 accumulator also holds exactly, so the bits must
 * match. */
Test(ptx_twins, wgmma_m64nNk32_e4m3_against_twin) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(78);
    static unsigned char image[PA_TWIN_WG_SMEM];
    static uint32_t a[512];
    static float acc_dev[128 * 68], acc_host[128 * 68];
    static const int widths[2] = {128, 136};
    for (int wi = 0; wi < 2; wi++)
        for (int rs = 0; rs <= 1; rs++)
            for (int swz = 0; swz <= 128; swz += 128) {
                const int n = widths[wi], nacc = 128 * (n / 2);
                for (int i = 0; i < PA_TWIN_WG_SMEM; i++)
                    image[i] = e4m3_int(pa_rng_int(&r, -8, 8));
                for (int i = 0; i < 512; i++)
                    a[i] = (uint32_t)e4m3_int(pa_rng_int(&r, -8, 8)) | (uint32_t)e4m3_int(pa_rng_int(&r, -8, 8)) << 8 |
                           (uint32_t)e4m3_int(pa_rng_int(&r, -8, 8)) << 16 |
                           (uint32_t)e4m3_int(pa_rng_int(&r, -8, 8)) << 24;
                for (int i = 0; i < nacc; i++)
                    acc_dev[i] = acc_host[i] = (float)pa_rng_int(&r, -64, 64);
                /* A at 0 (64 rows), B at 8 KiB (n rows): unswizzled core matrices
                 * of 8 rows x 16 bytes (next 16 bytes of k LBO = 128 on, next 8
                 * rows SBO = 256 on), or rows of 128 bytes in 1024-byte groups
                 * (n 136: 17 groups, to 25 KiB of the 40 KiB image). */
                const uint64_t da = swz ? pa_twin_wgmma_desc(0, 16, 1024, 128) : pa_twin_wgmma_desc(0, 128, 256, 0);
                const uint64_t db =
                    swz ? pa_twin_wgmma_desc(8192, 16, 1024, 128) : pa_twin_wgmma_desc(8192, 128, 256, 0);
                const int scale_d = (swz / 128 + rs + wi) % 2 == 0;
                int ok = 0;
                cr_assert_eq(pa_twin_wgmma_e4m3_device(n, rs ? a : NULL, da, db, scale_d, image, acc_dev, &ok), 0);
                if (!ok)
                    cr_skip_test("built without sm_90a: no wgmma to compare");
                pa_twin_wgmma_host(3, n, rs ? a : NULL, da, 0, db, 0, scale_d, image, acc_host);
                for (int i = 0; i < nacc; i++)
                    cr_assert_eq(memcmp(&acc_dev[i], &acc_host[i], 4), 0,
                                 "n %d rs %d swz %d: lane %d element %d: device %a, twin %a", n, rs, swz, i / (n / 2),
                                 i % (n / 2), (double)acc_dev[i], (double)acc_host[i]);
            }
}

/* mbarrier: a script of arrivals and parity probes on the device against the
 * twin, then 32 cp.async copies tracked by cp.async.mbarrier.arrive.noinc:
 * the phase completes (the arrivals count against the initial 32) and the
 * bytes are in place. */
Test(ptx_twins, mbarrier_phases_and_cp_async_arrive) {
    PA_SKIP_WITHOUT_GPU();
    int ops[64], dev_out[64], host_out[64];
    pa_rng r = pa_rng_make(77);
    for (int count = 1; count <= 4; count++) {
        for (int i = 0; i < 64; i++)
            ops[i] = pa_rng_int(&r, 0, 2);
        cr_assert_eq(pa_twin_mbar_script_device(count, ops, 64, dev_out), 0);
        if (dev_out[0] == -2)
            cr_skip_test("built without sm_90 code: no mbarrier probes to compare");
        pa_twin_mbar_script_host(count, ops, 64, host_out);
        for (int i = 0; i < 64; i++)
            cr_assert_eq(dev_out[i], host_out[i], "count %d op %d (%d): device %d, twin %d", count, i, ops[i],
                         dev_out[i], host_out[i]);
    }
    unsigned char src[512], out[512];
    for (int i = 0; i < 512; i++)
        src[i] = (unsigned char)(i * 13 + 5);
    int completed = 0;
    cr_assert_eq(pa_twin_mbar_cp_device(src, out, &completed), 0);
    cr_assert_eq(completed, 1, "the cp.async arrivals did not complete the phase");
    cr_assert_eq(memcmp(src, out, 512), 0);
}
