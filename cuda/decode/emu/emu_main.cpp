// Runs the decode kernels (the real kernel source, emulated on the host by
// emu.h) against the CPU reference over a sampled grid of configurations.
// Build and run: see cuda/decode/emu/README.
#define PA_DECODE_EMU 1
#include "../decode_kernel.cuh"

#include <stdio.h>
#include <stdlib.h>

#include "pagedattn/pagedattn.h"
extern "C" {
#include "problems.h"
}

namespace {

template <int QT, int CT> void body_split(void *a) {
    pa_dec::decode_split_kernel<QT, CT>(*static_cast<const pa_dec_kparams *>(a));
}
template <int QT> void body_merge(void *a) { pa_dec::decode_merge_kernel<QT>(*static_cast<const pa_dec_kparams *>(a)); }

typedef void (*body_fn)(void *);

body_fn pick_split(int q, int c) {
#define PA_DEC_PAIR(Q, C)                                                                                              \
    if (q == Q && c == C)                                                                                              \
        return body_split<Q, C>;
#include "../instances/list.inc"
#undef PA_DEC_PAIR
    return nullptr;
}

body_fn pick_merge(int q) { return q == 0 ? body_merge<0> : q == 1 ? body_merge<1> : body_merge<2>; }

void *dup(const void *src, size_t bytes) {
    void *p = pa_emu::guarded_alloc(bytes);
    if (bytes)
        memcpy(p, src, bytes);
    return p;
}

struct Dev {
    pa_decode_params p;
    void *bufs[10];
    int n = 0;
    void *keep(void *b) {
        bufs[n++] = b;
        return b;
    }
    ~Dev() {
        for (int i = 0; i < n; i++)
            pa_emu::guarded_free(bufs[i]);
    }
};

// Device-like copies of a problem's buffers (guarded allocations).
void upload(const pa_decode_problem *pr, Dev &d) {
    d.p = pr->p;
    const size_t qs = pa_dtype_size(pr->p.q_dtype), es = pa_dtype_size(pr->p.kv.dtype);
    const int64_t qstride = pr->p.q_stride ? pr->p.q_stride : (int64_t)pr->p.num_heads * pr->p.kv.head_size;
    const size_t qelems = (size_t)(qstride * (pr->p.num_seqs - 1) + (int64_t)pr->p.num_heads * pr->p.kv.head_size);
    d.p.query = d.keep(dup(pr->p.query, qelems * qs));
    d.p.out = d.keep(pa_emu::guarded_alloc(pr->out_elems * qs));
    pa_fill_nan(pr->p.q_dtype, d.p.out, pr->out_elems);
    int64_t ke = 0, ve = 0;
    pa_kv_cache_elements(&pr->p.kv, &ke, &ve);
    d.p.kv.key = d.keep(dup(pr->p.kv.key, (size_t)ke * es));
    d.p.kv.value = d.keep(dup(pr->p.kv.value, (size_t)ve * es));
    d.p.block_tables = (int32_t *)d.keep(
        dup(pr->p.block_tables, sizeof(int32_t) * (size_t)pr->p.num_seqs * (size_t)pr->p.block_table_stride));
    d.p.seq_lens = (int32_t *)d.keep(dup(pr->p.seq_lens, sizeof(int32_t) * (size_t)pr->p.num_seqs));
    if (pr->p.alibi_slopes)
        d.p.alibi_slopes = (float *)d.keep(dup(pr->p.alibi_slopes, sizeof(float) * (size_t)pr->p.num_heads));
    if (pr->p.kv.k_scale) {
        d.p.kv.k_scale = (float *)d.keep(dup(pr->p.kv.k_scale, 4));
        d.p.kv.v_scale = (float *)d.keep(dup(pr->p.kv.v_scale, 4));
    }
}

const char *mode_name(int m) { return m == PA_DEC_MODE_V1 ? "v1" : m == PA_DEC_MODE_V2 ? "v2" : "auto"; }

// Runs one entry in emulation; returns the output (q dtype, caller frees).
void *emulate(const pa_decode_problem *pr, int mode) {
    Dev d;
    upload(pr, d);
    size_t need = 0;
    if (pa_dec_workspace_size(&d.p, mode, &need) != PA_SUCCESS) {
        fprintf(stderr, "workspace size: %s\n", pa_last_error());
        exit(1);
    }
    void *ws = need ? d.keep(pa_emu::guarded_alloc(need)) : nullptr;
    if (need)
        memset(ws, 0xFF, need); // NaN: a read of an unwritten slot shows
    pa_dec_kparams kp;
    if (pa_dec_kparams_make(&d.p, mode, ws, need, &kp, nullptr) != PA_SUCCESS) {
        fprintf(stderr, "kparams: %s\n", pa_last_error());
        exit(1);
    }
    pa_emu::launch(
        pa_emu::dim3e{(unsigned)(kp.num_seqs * kp.num_kv_heads * kp.head_chunks), (unsigned)kp.max_splits, 1},
        PA_DEC_THREADS, (size_t)kp.smem_bytes, pick_split(kp.q_dtype, kp.cache_dtype), &kp);
    if (kp.max_splits > 1)
        pa_emu::launch(pa_emu::dim3e{(unsigned)(kp.num_seqs * kp.num_heads), 1, 1}, PA_DEC_THREADS, 16,
                       pick_merge(kp.q_dtype), &kp);
    const size_t bytes = pr->out_elems * pa_dtype_size(pr->p.q_dtype);
    void *out = malloc(bytes);
    memcpy(out, d.p.out, bytes);
    return out;
}

struct Cfg {
    pa_kv_layout layout;
    pa_dtype q, c;
    int heads, kv_heads, hs, bs;
    int alibi, window, sparse;
    float cap;
    int nseq;
    int lens[8];
};

int failures = 0, cases = 0;

void run_cfg(const Cfg &cf, uint64_t seed) {
    pa_decode_problem_cfg c = {};
    c.seed = seed;
    c.layout = cf.layout;
    c.q_dtype = cf.q;
    c.cache_dtype = cf.c;
    c.num_seqs = cf.nseq;
    c.num_heads = cf.heads;
    c.num_kv_heads = cf.kv_heads;
    c.head_size = cf.hs;
    c.block_size = cf.bs;
    c.seq_lens = cf.lens;
    c.extra_blocks = 3;
    c.with_alibi = cf.alibi;
    c.skip_logical = 1;
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    if (!pr)
        exit(1);
    pr->p.sliding_window = cf.window;
    pr->p.soft_cap = cf.cap;
    if (cf.sparse) {
        pr->p.bs_vert_stride = 3;
        pr->p.bs_local_blocks = 2;
        pr->p.bs_block_size = cf.bs * 2;
        pr->p.bs_head_sliding_step = cf.sparse == 2 ? -1 : 1;
        pr->p.tp_rank = 1;
    }
    if (pa_ref_paged_decode(&pr->p) != PA_SUCCESS) {
        fprintf(stderr, "reference: %s\n", pa_last_error());
        exit(1);
    }
    float *ref = (float *)malloc(sizeof(float) * pr->out_elems);
    for (size_t i = 0; i < pr->out_elems; i++)
        ref[i] = pa_load_as_float(pr->p.q_dtype, pr->out, i);
    const pa_tolerance tol = pa_tolerance_for(pr->p.q_dtype, pr->p.kv.dtype);
    for (int mode = 0; mode < 3; mode++) {
        void *got = emulate(pr, mode);
        pa_compare_result r;
        const int ok = pa_compare(got, pr->p.q_dtype, ref, (int64_t)pr->out_elems, tol, &r);
        char buf[512];
        cases++;
        if (!ok)
            failures++;
        printf("%s %-4s %s q=%s c=%s h=%d/%d hs=%d bs=%d alibi=%d win=%d cap=%g sparse=%d: %s\n", ok ? "ok  " : "FAIL",
               mode_name(mode), pa_kv_layout_name(cf.layout), pa_dtype_name(cf.q), pa_dtype_name(cf.c), cf.heads,
               cf.kv_heads, cf.hs, cf.bs, cf.alibi, cf.window, (double)cf.cap, cf.sparse,
               ok ? "" : pa_compare_format(&r, tol, buf, sizeof buf));
        fflush(stdout);
        free(got);
    }
    free(ref);
    pa_decode_problem_free(pr);
}

} // namespace

int main(int argc, char **argv) {
    const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const pa_kv_layout layouts[3] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND};
    const pa_dtype qd[3] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16};
    const int hsz[9] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
    const int bsz[5] = {8, 16, 32, 64, 128};
    const int heads[4][2] = {{4, 4}, {16, 2}, {8, 1}, {24, 1}};
    int n = 0;
    for (int h = 0; h < 9; h++)
        for (int q = 0; q < 3; q++)
            for (int ck = 0; ck < 3; ck++, n++) {
                if (quick && n % 9 != 0)
                    continue;
                Cfg cf = {};
                cf.q = qd[q];
                cf.c = ck == 0 ? qd[q] : ck == 1 ? PA_DTYPE_FP8_E4M3 : PA_DTYPE_FP8_E5M2;
                cf.hs = hsz[h];
                cf.layout = layouts[(n / 2) % 3];
                if (cf.layout == PA_LAYOUT_VLLM && cf.hs % (int)(16 / pa_dtype_size(cf.c)) != 0)
                    cf.layout = PA_LAYOUT_FLASH_NHD;
                cf.bs = bsz[n % 5];
                cf.heads = heads[n % 4][0];
                cf.kv_heads = heads[n % 4][1];
                cf.alibi = n % 2;
                cf.window = n % 7 == 3 ? 77 : n % 7 == 5 ? 1 : n % 13 == 6 ? 9 : 0;
                cf.cap = n % 5 == 2 ? 30.0f : 0.0f;
                cf.sparse = n % 11 == 4 ? 1 : n % 11 == 9 ? 2 : 0;
                cf.nseq = 5;
                const int lens[5] = {1, 113, 600 + n, 37, 5};
                memcpy(cf.lens, lens, sizeof lens);
                run_cfg(cf, 1000u + (uint64_t)n);
            }
    // Large groups (several CTAs per KV head), long sequences (table-window
    // refills, many splits), block 128 with small tiles.
    if (!quick) {
        const Cfg extra[] = {
            {PA_LAYOUT_VLLM, PA_DTYPE_F16, PA_DTYPE_F16, 64, 1, 256, 16, 1, 0, 0, 0.0f, 3, {5000, 1, 300}},
            {PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, 17, 1, 64, 8, 0, 1000, 0, 0.0f, 3, {4100, 77, 2}},
            {PA_LAYOUT_FLASH_HND, PA_DTYPE_F32, PA_DTYPE_F32, 128, 2, 128, 128, 0, 0, 1, 10.0f, 2, {2500, 129}},
            {PA_LAYOUT_VLLM, PA_DTYPE_BF16, PA_DTYPE_FP8_E5M2, 8, 8, 112, 128, 1, 9, 2, 0.0f, 3, {3000, 9, 1030}},
        };
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            run_cfg(extra[i], 5000u + i);
    }
    printf("%d of %d cases failed\n", failures, cases);
    return failures != 0;
}
