/* `pagedattn check baseline`: the cuBLAS baseline against the CPU references.
 * The baseline is printed beside every attention figure and serves as a second
 * reference for shapes too large for the CPU, so it is checked like an op:
 *   decode  one query per sequence, the option's layout and dtypes, against
 *           pa_ref_paged_decode (window, soft cap, alibi from the options);
 *   ragged  --qlen query rows per sequence (default 37, bottom-right causal) on
 *           the combined layout, against pa_ref_ragged_paged_attention;
 *   prefill context attention (--qlen new tokens over --ctx cached ones, the
 *           option's layout and cache dtype), causal and encoder prompts of
 *           --qlen tokens, cross-attention of --qlen queries over --ctx keys
 *           (without --window, which it refuses),
 *           against the prefill references (bench_prefill.c builds them).
 * With --sinks every case carries attention sinks (pa_sink_logits), in the
 * references and the baseline alike. The caches come from
 * pa_decode_problem_make and pa_context_problem_make: scattered blocks, unused
 * slots NaN, so a baseline that reads past a sequence's length fails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "baseline.h"
#include "cli.h"
#include "problems.h"

/* Device copy of n bytes of host memory (NULL for n == 0 or failure). */
static void *to_dev(const void *h, size_t n, int *ok) {
    void *d = NULL;
    if (!h || n == 0)
        return NULL;
    if (cudaMalloc(&d, n) != cudaSuccess || cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) != cudaSuccess) {
        *ok = 0;
        cudaFree(d);
        return NULL;
    }
    return d;
}

/* Runs the baseline on the device copies and compares with `want` (host,
 * q_dtype). Prints one line; returns 1 when it passed. The baseline rounds
 * each normalised probability to dt before P V (its GEMM's input type); the
 * decode and prefill references do not, and the ragged one rounds them in
 * double. So an element may be off by 2 u sum_k p_k |v_k| beyond the
 * tolerance (u = pa_prob_rounding_unit(dt), as test_ragged judges the ragged
 * kernel), bounded here by 2 u vmax, vmax >= every |v| the case reads; the
 * allowance is taken only where the plain comparison fails. bf16 needs it:
 * 2 of 909312 elements of a causal prompt 0.0039 off (0.0020 allowed) in a
 * random sweep of check baseline --interp. */
static int compare(const char *what, const pa_baseline_problem *pb, const void *want, pa_dtype dt, pa_dtype cdt,
                   double vmax) {
    const size_t n = (size_t)pb->num_tokens * pb->num_heads * pb->kv.head_size;
    float *got = malloc(n * sizeof(float) + 4), *ref = malloc(n * sizeof(float) + 4);
    char why[256] = "";
    int pass = 0;
    if (got && ref && pa_baseline_run(pb, got, why, sizeof why) == 0) {
        for (size_t i = 0; i < n; i++)
            ref[i] = pa_load_as_float(dt, want, i);
        /* got holds the baseline's q_dtype output as floats: compare as f32
         * values against the reference's rounded output. */
        pa_tolerance tol = pa_tolerance_for(dt, cdt);
        pa_compare_result cr;
        char buf[512];
        pass = pa_compare(got, PA_DTYPE_F32, ref, (int64_t)n, tol, &cr);
        const double u = pa_prob_rounding_unit(dt);
        int allowed = 0;
        if (!pass && u > 0.0 && vmax > 0.0) { /* the same allowance for every element: a wider atol */
            tol.atol += 2.0 * u * vmax;
            allowed = pass = pa_compare(got, PA_DTYPE_F32, ref, (int64_t)n, tol, &cr);
        }
        printf("check baseline %s: %s%s\n", what, pa_compare_format(&cr, tol, buf, sizeof buf),
               allowed ? " (within the probability-rounding allowance, 2 u max|v|)" : "");
        printf("check baseline %s: %s\n", what, pass ? "PASS" : "FAIL");
    } else {
        printf("check baseline %s: could not run: %s\nFAIL\n", what, why[0] ? why : "out of host memory");
    }
    free(got);
    free(ref);
    return pass;
}

/* 1 when it passed, 0 when it failed, -1 when the options describe a problem
 * decode refuses (its reference's validation): a usage error, not a failed
 * check. */
static int check_decode_case(const pa_op_opts *o) {
    int *lens = malloc(sizeof(int) * (size_t)o->seqs);
    if (!lens)
        return 0;
    for (int s = 0; s < o->seqs; s++) /* awkward, different lengths; the last one --ctx */
        lens[s] =
            s == o->seqs - 1 ? o->ctx[0] : 1 + (int)(((long long)o->ctx[0] * (s + 1) / o->seqs + 13LL * s) % o->ctx[0]);
    pa_decode_problem_cfg cfg = {.seed = o->seed,
                                 .layout = o->layout,
                                 .q_dtype = o->dtype,
                                 .cache_dtype = o->cache_dtype,
                                 .num_seqs = o->seqs,
                                 .num_heads = o->heads,
                                 .num_kv_heads = o->kv_heads,
                                 .head_size = o->head_size,
                                 .block_size = o->block_size,
                                 .seq_lens = lens,
                                 .extra_blocks = 3,
                                 .with_alibi = o->alibi,
                                 .with_sinks = o->sinks,
                                 .scales_per_head = o->scales_per_head};
    pa_decode_problem *pr = pa_decode_problem_make(&cfg);
    free(lens);
    if (!pr)
        return 0;
    pr->p.sliding_window = o->window;
    pr->p.soft_cap = o->soft_cap;
    if (pa_ref_paged_decode(&pr->p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn check baseline: decode: %s\n", pa_last_error());
        pa_decode_problem_free(pr);
        return -1;
    }
    const size_t es = pa_dtype_size(o->dtype), ces = pa_dtype_size(o->cache_dtype);
    int ok = 1;
    pa_decode_params d = pr->p;
    /* the one scale, or one per KV head (scales_per_head): the whole array */
    d.kv.k_scale = to_dev(pr->p.kv.k_scale, pa_kv_scale_bytes(&pr->p.kv), &ok);
    d.kv.v_scale = to_dev(pr->p.kv.v_scale, pa_kv_scale_bytes(&pr->p.kv), &ok);
    d.query = to_dev(pr->q, pr->q_elems * es, &ok);
    d.out = NULL;
    d.kv.key = to_dev(pr->kc, pr->k_elems * ces, &ok);
    d.kv.value = to_dev(pr->vc, pr->vc ? pr->v_elems * ces : 0, &ok);
    d.block_tables = to_dev(pr->block_tables, sizeof(int32_t) * (size_t)o->seqs * pr->p.block_table_stride, &ok);
    d.seq_lens = to_dev(pr->seq_lens, sizeof(int32_t) * (size_t)o->seqs, &ok);
    d.alibi_slopes = to_dev(pr->alibi, pr->alibi ? sizeof(float) * (size_t)o->heads : 0, &ok);
    d.sinks = to_dev(pr->sinks, pr->sinks ? sizeof(float) * (size_t)o->heads : 0, &ok);
    int pass = 0;
    if (ok) {
        pa_baseline_problem pb;
        pa_baseline_from_decode(&d, &pb);
        char what[160];
        snprintf(what, sizeof what, "decode (%s %s/%s, %d seqs, heads %d/%d x %d, max ctx %d%s%s)",
                 pa_kv_layout_name(o->layout), pa_dtype_name(o->dtype), pa_dtype_name(o->cache_dtype), o->seqs,
                 o->heads, o->kv_heads, o->head_size, pr->p.max_seq_len, pr->sinks ? ", sinks" : "",
                 pr->p.kv.scales_per_head ? ", scales per KV head" : "");
        const int f8 = pa_dtype_is_fp8(o->cache_dtype);
        pass = compare(
            what, &pb, pr->out, o->dtype, o->cache_dtype,
            pa_abs_max(o->cache_dtype, pr->vc, pr->v_elems, f8 ? pa_kv_scale_max(&pr->p.kv, pr->p.kv.v_scale) : 1.0f));
    } else {
        fprintf(stderr, "pagedattn check baseline: device allocation failed\n");
    }
    cudaFree((void *)d.kv.k_scale);
    cudaFree((void *)d.kv.v_scale);
    cudaFree((void *)d.query);
    cudaFree(d.kv.key);
    cudaFree(d.kv.value);
    cudaFree((void *)d.block_tables);
    cudaFree((void *)d.seq_lens);
    cudaFree((void *)d.alibi_slopes);
    cudaFree((void *)d.sinks);
    pa_decode_problem_free(pr);
    return pass;
}

static int check_ragged_case(const pa_op_opts *o) {
    const int qlen = o->qlen > 0 ? o->qlen : 37, ns = o->seqs;
    int *lens = malloc(sizeof(int) * (size_t)ns);
    int32_t *cu = malloc(sizeof(int32_t) * (size_t)(ns + 1));
    if (!lens || !cu) {
        free(lens);
        free(cu);
        return 0;
    }
    cu[0] = 0;
    int max_q = 1;
    for (int s = 0; s < ns; s++) { /* a full chunk, a decode, a short chunk, ...; the last over --ctx cached */
        const int ql = s % 3 == 0 ? qlen : s % 3 == 1 ? 1 : 1 + qlen / 3;
        lens[s] = ql + (int)((long long)o->ctx[0] * (s + 1) / ns);
        cu[s + 1] = cu[s] + ql;
        max_q = ql > max_q ? ql : max_q;
    }
    const pa_dtype cdt = pa_dtype_is_fp8(o->cache_dtype) ? o->cache_dtype : o->dtype;
    pa_decode_problem_cfg cfg = {.seed = o->seed + 1,
                                 .layout = PA_LAYOUT_COMBINED,
                                 .q_dtype = o->dtype,
                                 .cache_dtype = cdt,
                                 .num_seqs = ns,
                                 .num_heads = o->heads,
                                 .num_kv_heads = o->kv_heads,
                                 .head_size = o->head_size,
                                 .block_size = o->block_size,
                                 .seq_lens = lens,
                                 .extra_blocks = 3,
                                 .scales_per_head = o->scales_per_head};
    pa_decode_problem *pr = pa_decode_problem_make(&cfg);
    free(lens);
    if (!pr) {
        free(cu);
        return 0;
    }
    const int tokens = cu[ns];
    const size_t row = (size_t)o->heads * o->head_size, es = pa_dtype_size(o->dtype);
    pa_rng rng = pa_rng_make(o->seed + 2);
    void *q = pa_random_buffer(&rng, o->dtype, (size_t)tokens * row, -1.0f, 1.0f);
    void *out = malloc((size_t)tokens * row * es + 16);
    float *sinks = o->sinks ? pa_sink_logits(o->heads, o->seed + 3) : NULL;
    const int32_t ns32 = ns;
    pa_ragged_params p = {.out = out,
                          .q = q,
                          .q_dtype = o->dtype,
                          .kv = pr->p.kv,
                          .kv_lens = pr->seq_lens,
                          .page_indices = pr->block_tables,
                          .pages_per_seq = pr->p.block_table_stride,
                          .cu_q_lens = cu,
                          .num_seqs = &ns32,
                          .max_num_seqs = ns,
                          .max_num_batched_tokens = tokens,
                          .num_q_heads = o->heads,
                          .sm_scale = pr->p.scale,
                          .sliding_window = o->window,
                          .soft_cap = o->soft_cap,
                          .sinks = sinks};
    int pass = 0, ok = out != NULL;
    if (ok && pa_ref_ragged_paged_attention(&p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn check baseline: ragged reference: %s\n", pa_last_error());
        ok = 0;
    }
    pa_ragged_params d = p;
    d.q = d.out = NULL;
    d.kv.key = NULL;
    d.kv_lens = d.page_indices = d.cu_q_lens = NULL;
    d.sinks = NULL;
    d.kv.k_scale = d.kv.v_scale = NULL;
    if (ok) {
        /* the one scale, or one per KV head (scales_per_head): the whole array */
        d.kv.k_scale = to_dev(pr->p.kv.k_scale, pa_kv_scale_bytes(&pr->p.kv), &ok);
        d.kv.v_scale = to_dev(pr->p.kv.v_scale, pa_kv_scale_bytes(&pr->p.kv), &ok);
        d.q = to_dev(q, (size_t)tokens * row * es, &ok);
        d.out = NULL;
        d.kv.key = to_dev(pr->kc, pr->k_elems * pa_dtype_size(cdt), &ok);
        d.kv_lens = to_dev(pr->seq_lens, sizeof(int32_t) * (size_t)ns, &ok);
        d.page_indices = to_dev(pr->block_tables, sizeof(int32_t) * (size_t)ns * pr->p.block_table_stride, &ok);
        d.cu_q_lens = to_dev(cu, sizeof(int32_t) * (size_t)(ns + 1), &ok);
        d.sinks = to_dev(sinks, sinks ? sizeof(float) * (size_t)o->heads : 0, &ok);
        if (ok) {
            pa_baseline_problem pb;
            pa_baseline_from_ragged(&d, ns, tokens, max_q, pr->p.max_seq_len, &pb);
            char what[160];
            snprintf(what, sizeof what, "ragged (combined %s/%s, %d seqs, %d query rows, heads %d/%d x %d%s%s)",
                     pa_dtype_name(o->dtype), pa_dtype_name(cdt), ns, tokens, o->heads, o->kv_heads, o->head_size,
                     sinks ? ", sinks" : "", pr->p.kv.scales_per_head ? ", scales per KV head" : "");
            /* the combined cache interleaves K and V: a bound over both (each one's largest head) */
            const int f8 = pa_dtype_is_fp8(cdt);
            const float ks = pa_kv_scale_max(&pr->p.kv, pr->p.kv.k_scale),
                        vs = pa_kv_scale_max(&pr->p.kv, pr->p.kv.v_scale);
            const float sc = !f8 ? 1.0f : ks > vs ? ks : vs;
            pass = compare(what, &pb, out, o->dtype, cdt, pa_abs_max(cdt, pr->kc, pr->k_elems, sc));
        } else {
            fprintf(stderr, "pagedattn check baseline: device allocation failed\n");
        }
    }
    cudaFree((void *)d.kv.k_scale);
    cudaFree((void *)d.kv.v_scale);
    cudaFree((void *)d.q);
    cudaFree(d.kv.key);
    cudaFree((void *)d.kv_lens);
    cudaFree((void *)d.page_indices);
    cudaFree((void *)d.cu_q_lens);
    cudaFree((void *)d.sinks);
    free(sinks);
    free(q);
    free(out);
    free(cu);
    pa_decode_problem_free(pr);
    return pass;
}

/* Host bytes of the largest case, bounded as the benches bound theirs: every
 * sequence's --ctx + --qlen tokens of K and V (in whole blocks, 3 spare) in
 * the cache, as new tokens and as floats (the references' logical copies),
 * its query rows' Q and O, the reference's O, the baseline's float output and
 * the float reference beside it. */
static double host_bytes(const pa_op_opts *o) {
    const double qlen = o->qlen > 0 ? o->qlen : 37, bs = o->block_size;
    const double tokens = bs * (ceil((o->ctx[0] + qlen) / bs) + 3);
    const double cs = pa_dtype_size(o->cache_dtype) > pa_dtype_size(o->dtype) ? pa_dtype_size(o->cache_dtype)
                                                                              : pa_dtype_size(o->dtype);
    const double kv = (double)o->seqs * tokens * 2.0 * o->kv_heads * o->head_size * (2.0 * cs + 4.0);
    const double rows = (double)o->seqs * qlen; /* decode's one a sequence, the others' --qlen */
    return kv + rows * o->heads * o->head_size * (3.0 * pa_dtype_size(o->dtype) + 8.0);
}

int pa_check_baseline_usage(const pa_op_opts *o) {
    if (o->layout == PA_LAYOUT_COMBINED) {
        fprintf(stderr, "pagedattn check baseline: --layout is the decode and context caches' (vllm, nhd, hnd); the "
                        "ragged case always runs on the combined layout\n");
        return PA_CLI_EXIT_USAGE;
    }
    if (host_bytes(o) > 8e9) {
        fprintf(stderr, "pagedattn check baseline: the cases need %.1f GB of host memory; at most 8 GB\n",
                host_bytes(o) / 1e9);
        return PA_CLI_EXIT_USAGE;
    }
    return 0;
}

int pa_check_baseline(const pa_op_opts *o) {
    const int e = pa_check_baseline_usage(o);
    if (e)
        return e;
    const int a = check_decode_case(o);
    if (a < 0)
        return PA_CLI_EXIT_USAGE;
    const int b = check_ragged_case(o);
    const int bad = pa_prefill_baseline_check(o, compare);
    if (bad < 0)
        return PA_CLI_EXIT_USAGE;
    return a && b && bad == 0 ? 0 : PA_CLI_EXIT_FAIL;
}
