/* `pagedattn check|bench ragged`: ragged paged attention (one launch for a
 * mixed batch over the combined K/V cache).
 *
 * The batch: --seqs sequences of --qlen new tokens each (--qlen 1 or unset:
 * decodes; more: prefill chunks) plus --decodes decode sequences, every one
 * with --ctx tokens already cached (kv_len = ctx + q_len). So
 *   decode-only   --seqs N --qlen 1
 *   prefill-only  --seqs N --qlen Q
 *   mixed         --seqs N --qlen Q --decodes D
 * Bytes: K and V of the keys some query row of a sequence sees (all of them,
 * or under a window its last q_len + window - 1; read once per KV head), Q and
 * O. FLOPs: 4 * head_size * num_heads * (visible query-key pairs), counted
 * exactly over the causal and window masks. Roofs: read bandwidth and a cuBLAS GEMM, both
 * measured in the same run; the baseline is the cuBLAS attention
 * (benchmarks/baseline.h) on the same batch.
 *
 * Without a GPU (or --device cpu) the CPU reference is timed; the default shape
 * is then reduced (4 sequences, 8/2 heads, 256 context) so it takes seconds.
 * `check` runs the CUDA op once and compares it with the CPU reference under
 * pa_tolerance_for (the same reduced default shape). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ragged_problem.h"
#include "baseline.h"
#include "cli.h"

typedef struct rg_shape {
    int prefill, decodes, qlen, ctx;
    int heads, kv_heads, head_size, page_size;
} rg_shape;

/* No shape option (and no preset) given: the default, GPU-sized shape, which
 * the CPU reference swaps for a small one; a shape the user asked for is run
 * as given. */
static int is_default_shape(const pa_op_opts *o) {
    return !(o->given & (PA_OPT_SEQS | PA_OPT_HEADS | PA_OPT_HEAD_SIZE | PA_OPT_CTX | PA_OPT_QLEN | PA_OPT_DECODES)) &&
           !o->preset;
}

static rg_shape shape_of(const pa_op_opts *o, int ctx, int small) {
    rg_shape s = {o->seqs,      o->decodes,   o->qlen > 0 ? o->qlen : 1, ctx, o->heads, o->kv_heads,
                  o->head_size, o->block_size};
    if (small) {
        s.prefill = 4;
        s.heads = 8;
        s.kv_heads = 2;
        s.ctx = 256;
    }
    return s;
}

static void pairs_and_bytes(const rg_problem *pr, double *pairs, double *bytes) {
    const pa_ragged_params *p = &pr->p;
    double pr_sum = 0, kv_tok = 0;
    for (int s = 0; s < pr->num_seqs; s++) {
        const int q = pr->cu_q_lens[s + 1] - pr->cu_q_lens[s], L = pr->kv_lens[s];
        /* the keys some row sees: under a window W, the last q + W - 1 (rows L - q .. L - 1
         * each see their last W), as decode_bytes counts a decode's */
        const int64_t seen = p->sliding_window > 0 ? (int64_t)q + p->sliding_window - 1 : L;
        kv_tok += seen < L ? (double)seen : L;
        for (int i = 0; i < q; i++) {
            const int pos = L - q + i;
            const int lo = p->sliding_window > 0 && pos - p->sliding_window + 1 > 0 ? pos - p->sliding_window + 1 : 0;
            pr_sum += pos - lo + 1;
        }
    }
    *pairs = pr_sum;
    const double kv = kv_tok * 2.0 * p->kv.num_kv_heads * p->kv.head_size * pa_dtype_size(p->kv.dtype);
    const double qo = 2.0 * pr->total_rows * p->num_q_heads * p->kv.head_size * pa_dtype_size(p->q_dtype);
    *bytes = kv + qo;
}

static rg_problem *make(const pa_op_opts *o, const rg_shape *sh, const char *cmd, int ref) {
    const int n = sh->prefill + sh->decodes;
    if (n < 1) {
        fprintf(stderr, "pagedattn %s ragged: the batch is empty (--seqs 0 and --decodes 0)\n", cmd);
        return NULL;
    }
    const pa_dtype cache = o->cache_auto ? o->dtype : o->cache_dtype;
    /* Host memory: the cache (whole pages; and check's float copies of K and
     * V), Q and O (and check's copy of the GPU's O and its float reference)
     * and, where the CPU reference runs (`ref`), its scratch: every KV head
     * of the longest sequence's keys and values in f32 and a double logit a
     * key (csrc/reference/ragged.c). */
    const int check = strcmp(cmd, "check") == 0;
    const double ps = sh->page_size, kv_tokens = (double)sh->prefill * ps * ceil((sh->ctx + sh->qlen) / ps) +
                                                 (double)sh->decodes * ps * ceil((sh->ctx + 1) / ps);
    const double rows = (double)sh->prefill * sh->qlen + sh->decodes;
    const double host =
        kv_tokens * 2.0 * sh->kv_heads * sh->head_size * (pa_dtype_size(cache) + (check ? 4.0 : 0.0)) +
        rows * sh->heads * sh->head_size * (2.0 * pa_dtype_size(o->dtype) + (check ? 6.0 : 0.0)) +
        (ref ? ((double)sh->ctx + (sh->prefill > 0 ? sh->qlen : 1)) * (2.0 * 4.0 * sh->kv_heads * sh->head_size + 8.0)
             : 0.0);
    if (host > 8e9) {
        fprintf(stderr, "pagedattn %s ragged: the batch needs %.1f GB of host memory (cache, Q, O%s); at most 8 GB\n",
                cmd, host / 1e9, ref ? ", the reference's scratch" : "");
        return NULL;
    }
    int *ql = malloc(sizeof(int) * (size_t)n), *kl = malloc(sizeof(int) * (size_t)n);
    if (!ql || !kl) {
        free(ql);
        free(kl);
        return NULL;
    }
    for (int s = 0; s < n; s++) {
        ql[s] = s < sh->prefill ? sh->qlen : 1;
        kl[s] = sh->ctx + ql[s];
    }
    /* The shape first, on one sequence of a few tokens: a shape the op
     * refuses is refused at once, not after building a large batch. */
    if (n > 1 || sh->ctx > 4 || ql[0] > 4) {
        const int tq[1] = {ql[0] < 4 ? ql[0] : 4}, tk[1] = {tq[0] + (sh->ctx < 4 ? sh->ctx : 4)};
        rg_problem_cfg t = {.seed = o->seed,
                            .q_dtype = o->dtype,
                            .cache_dtype = cache,
                            .num_seqs = 1,
                            .num_q_heads = sh->heads,
                            .num_kv_heads = sh->kv_heads,
                            .head_size = sh->head_size,
                            .page_size = sh->page_size,
                            .q_lens = tq,
                            .kv_lens = tk,
                            .window = o->window,
                            .soft_cap = o->soft_cap,
                            .skip_logical = 1,
                            .with_sinks = o->sinks,
                            .scales_per_head = o->scales_per_head};
        rg_problem *tp = rg_problem_make(&t);
        const int bad = !tp || pa_ragged_validate(&tp->p) != PA_SUCCESS;
        if (bad)
            fprintf(stderr, "pagedattn %s ragged: %s\n", cmd, tp ? pa_last_error() : "out of host memory");
        rg_problem_free(tp);
        if (bad) {
            free(ql);
            free(kl);
            return NULL;
        }
    }
    rg_problem_cfg c = {.seed = o->seed,
                        .q_dtype = o->dtype,
                        .cache_dtype = cache,
                        .num_seqs = n,
                        .num_q_heads = sh->heads,
                        .num_kv_heads = sh->kv_heads,
                        .head_size = sh->head_size,
                        .page_size = sh->page_size,
                        .q_lens = ql,
                        .kv_lens = kl,
                        .window = o->window,
                        .soft_cap = o->soft_cap,
                        /* check: the logical K/V, for the probability-rounding allowance */
                        .skip_logical = strcmp(cmd, "check") != 0,
                        .with_sinks = o->sinks,
                        .scales_per_head = o->scales_per_head};
    rg_problem *pr = rg_problem_make(&c);
    free(ql);
    free(kl);
    if (!pr) {
        fprintf(stderr, "pagedattn %s ragged: out of host memory\n", cmd);
        return NULL;
    }
    if (pa_ragged_validate(&pr->p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn %s ragged: %s\n", cmd, pa_last_error());
        rg_problem_free(pr);
        return NULL;
    }
    return pr;
}

/* ---- device copies --------------------------------------------------------------- */

typedef struct rg_dev {
    pa_ragged_params p;
    void *bufs[10];
    void *ws;
    size_t ws_bytes;
} rg_dev;

static void *up(rg_dev *d, int slot, const void *src, size_t bytes) {
    void *x = NULL;
    if (cudaMalloc(&x, bytes ? bytes : 1) != cudaSuccess)
        return NULL;
    d->bufs[slot] = x;
    if (src && cudaMemcpy(x, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        return NULL;
    return x;
}

static void dev_free(rg_dev *d) {
    for (int i = 0; i < (int)(sizeof d->bufs / sizeof d->bufs[0]); i++)
        cudaFree(d->bufs[i]);
    cudaFree(d->ws);
}

static int dev_make(const rg_problem *pr, rg_dev *d, const char *cmd) {
    memset(d, 0, sizeof *d);
    const pa_ragged_params *h = &pr->p;
    d->p = *h;
    /* the one scale, or one per KV head (scales_per_head): the whole array; K's and V's on their own */
    const size_t sb = pa_kv_scale_bytes(&h->kv);
    const float one_k = pr->k_scale, one_v = pr->v_scale;
    float *dks, *dvs;
    int ok = (d->p.q = up(d, 0, pr->q, pr->q_bytes)) && (d->p.out = up(d, 1, pr->out, pr->q_bytes)) &&
             (d->p.kv.key = up(d, 2, pr->cache, pr->cache_bytes)) &&
             (d->p.kv_lens = up(d, 3, pr->kv_lens, sizeof(int32_t) * (size_t)h->max_num_seqs)) &&
             (d->p.page_indices =
                  up(d, 4, pr->page_indices, sizeof(int32_t) * (size_t)h->max_num_seqs * (size_t)h->pages_per_seq)) &&
             (d->p.cu_q_lens = up(d, 5, pr->cu_q_lens, sizeof(int32_t) * ((size_t)h->max_num_seqs + 1))) &&
             (d->p.num_seqs = up(d, 6, &pr->num_seqs, sizeof(int32_t))) &&
             (dks = up(d, 7, h->kv.k_scale ? (const void *)h->kv.k_scale : &one_k, sb)) &&
             (dvs = up(d, 9, h->kv.v_scale ? (const void *)h->kv.v_scale : &one_v, sb)) &&
             (!h->sinks || (d->p.sinks = up(d, 8, h->sinks, sizeof(float) * (size_t)h->num_q_heads)));
    if (ok) {
        d->p.kv.k_scale = h->kv.k_scale ? dks : NULL;
        d->p.kv.v_scale = h->kv.v_scale ? dvs : NULL;
        ok = pa_ragged_workspace_size(&d->p, &d->ws_bytes) == PA_SUCCESS &&
             cudaMalloc(&d->ws, d->ws_bytes) == cudaSuccess;
    }
    if (!ok) {
        fprintf(stderr, "pagedattn %s ragged: device allocation failed (%s)\n", cmd, pa_last_error());
        dev_free(d);
        return 1;
    }
    return 0;
}

static int run_gpu(void *ctx) {
    rg_dev *d = ctx;
    if (pa_ragged_paged_attention(&d->p, d->ws, d->ws_bytes, NULL) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench ragged: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static int run_ref(void *ctx) {
    rg_problem *pr = ctx;
    if (pa_ref_ragged_paged_attention(&pr->p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench ragged: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static const char *kind_note(const rg_shape *sh) {
    if (sh->qlen <= 1)
        return "decode-only";
    return sh->decodes > 0 ? "mixed" : "prefill-only";
}

static int max_q(const rg_shape *sh) { return sh->prefill > 0 ? sh->qlen : 1; }

static int bench(const pa_op_opts *o, int gpu) {
    const int small = !gpu && is_default_shape(o);
    if (small)
        fprintf(stderr,
                "pagedattn bench ragged: no shape given: the CPU reference runs a small one (4 seqs, heads 8/2, "
                "256 context); --seqs, --heads, --head-size, --ctx, --qlen or --decodes set it\n");
    int rc = 0;
    for (int k = 0; k < o->num_ctx && rc == 0; k++) {
        if (o->num_ctx > 1)
            pa_bench_progress(k + 1, o->num_ctx, "ragged ctx=%d", o->ctx[k]);
        const rg_shape sh = shape_of(o, o->ctx[k], small);
        rg_problem *pr = make(o, &sh, "bench", !gpu);
        if (!pr)
            return PA_CLI_EXIT_USAGE;
        double pairs, bytes;
        pairs_and_bytes(pr, &pairs, &bytes);
        pa_bench_row r = {.op = "ragged",
                          .impl = gpu ? "pa-ragged" : "cpu-ref",
                          .seqs = sh.prefill + sh.decodes,
                          .heads = sh.heads,
                          .kv_heads = sh.kv_heads,
                          .head_size = sh.head_size,
                          .ctx = sh.ctx,
                          .qlen = sh.qlen,
                          .block_size = sh.page_size,
                          .dtype = pr->p.q_dtype,
                          .cache_dtype = pr->p.kv.dtype,
                          .layout = PA_LAYOUT_COMBINED,
                          .bytes = bytes,
                          .flops = 4.0 * sh.head_size * sh.heads * pairs,
                          .note = kind_note(&sh)};
        if (!gpu) {
            if (pa_bench_time_cpu(run_ref, pr, o->warmup, o->iters, &r.t) != 0)
                rc = PA_CLI_EXIT_FAIL;
            else
                pa_bench_emit(o, &r);
            rg_problem_free(pr);
            continue;
        }
        rg_dev d;
        if (dev_make(pr, &d, "bench")) {
            rg_problem_free(pr);
            return PA_CLI_EXIT_FAIL;
        }
        r.roof_gbps = pa_bench_read_bandwidth();
        r.roof_name = "read";
        r.roof_tflops = pa_bench_gemm_tflops(pr->p.q_dtype);
        if (pa_bench_time_gpu("ragged", run_gpu, &d, o->warmup, o->iters, &r.t) != 0) {
            rc = PA_CLI_EXIT_FAIL;
        } else {
            pa_baseline_problem pb;
            pa_baseline_from_ragged(&d.p, pr->num_seqs, pr->total_rows, max_q(&sh), sh.ctx + max_q(&sh), &pb);
            pa_bench_baseline(&pb, o->warmup, o->iters, &r);
            if (!r.note || r.baseline_us > 0)
                r.note = kind_note(&sh);
            pa_bench_emit(o, &r);
        }
        dev_free(&d);
        rg_problem_free(pr);
    }
    return rc;
}

static int check(const pa_op_opts *o) {
    const int small = is_default_shape(o);
    int rc = PA_CLI_EXIT_OK;
    for (int k = 0; k < o->num_ctx; k++) {
        const rg_shape sh = shape_of(o, o->ctx[k], small);
        rg_problem *pr = make(o, &sh, "check", 1);
        if (!pr)
            return PA_CLI_EXIT_USAGE;
        rg_dev d;
        if (dev_make(pr, &d, "check")) {
            rg_problem_free(pr);
            return PA_CLI_EXIT_FAIL;
        }
        void *got = malloc(pr->q_bytes);
        int ok = got && run_gpu(&d) == 0 && cudaDeviceSynchronize() == cudaSuccess &&
                 cudaMemcpy(got, d.p.out, pr->q_bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
                 pa_ref_ragged_paged_attention(&pr->p) == PA_SUCCESS;
        if (!ok) {
            fprintf(stderr, "pagedattn check ragged: run failed: %s\n", pa_last_error());
            rc = PA_CLI_EXIT_FAIL;
        } else {
            const int64_t n = (int64_t)pr->total_rows * sh.heads * sh.head_size;
            float *ref = malloc(sizeof(float) * (size_t)n + 4);
            for (int64_t i = 0; ref && i < n; i++)
                ref[i] = pa_load_as_float(pr->p.q_dtype, pr->out, (size_t)i);
            pa_tolerance tol = pa_tolerance_for(pr->p.q_dtype, pr->p.kv.dtype);
            pa_compare_result res;
            char buf[512];
            /* As test_ragged judges it: the probability-rounding allowance where
             * the plain comparison fails (one bf16 element of 40960 needed it in a
             * sweep of check --interp). */
            int same = ref && pa_compare(got, pr->p.q_dtype, ref, n, tol, &res);
            if (ref && !same)
                same = rg_problem_within_p_rounding(pr, got, 0, pr->total_rows, ref, tol, &res);
            printf("check ragged %s ctx=%d seqs=%d decodes=%d qlen=%d heads=%d/%d hs=%d %s/%s%s: %s\n", kind_note(&sh),
                   sh.ctx, sh.prefill, sh.decodes, sh.qlen, sh.heads, sh.kv_heads, sh.head_size,
                   pa_dtype_name(pr->p.q_dtype), pa_dtype_name(pr->p.kv.dtype),
                   pr->p.kv.scales_per_head ? " scales/head" : "",
                   same ? "ok" : (ref ? pa_compare_format(&res, tol, buf, sizeof buf) : "out of memory"));
            if (!same)
                rc = PA_CLI_EXIT_FAIL;
            free(ref);
        }
        free(got);
        dev_free(&d);
        rg_problem_free(pr);
    }
    return rc;
}

int pa_run_ragged(const pa_op_opts *o, int check_only, int gpu) {
    /* A --layout other than combined is refused before this (pagedattn.c,
     * op_reads); ALiBi here too, for the preset sweeps' ragged points. */
    if (o->alibi) { /* JAX's ragged paged attention has no ALiBi */
        fprintf(stderr, "pagedattn %s ragged: ragged attention has no ALiBi; --alibi is not taken\n",
                check_only ? "check" : "bench");
        return PA_CLI_EXIT_USAGE;
    }
    if (check_only) {
        if (!gpu) {
            fprintf(stderr, "pagedattn check ragged: needs a CUDA GPU\n");
            return PA_CLI_EXIT_NO_DEVICE;
        }
        return check(o);
    }
    return bench(o, gpu);
}
