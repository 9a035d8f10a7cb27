/* Benchmark rows: one line of a table on the terminal and, with --json, one
 * JSON object per line (appended to the file, so several runs can share one).
 *
 * Every row carries what a reader needs to trust it: the device and driver it
 * ran on, the commit, the median with min/max over n iterations, the achieved
 * GB/s or TFLOP/s with the roof measured in the same run and the percentage of
 * it, and the cuBLAS baseline on the same problem beside it. */
#include <stdarg.h>
#include <string.h>

#include "baseline.h"
#include "cli.h"
#include "pa_commit.h" /* PA_GIT_COMMIT: generated at each build (benchmarks/meson.build) */

static int g_rows, g_json_errors, g_header_done;

int pa_bench_rows_emitted(void) { return g_rows; }
int pa_bench_json_errors(void) { return g_json_errors; }

/* A GPU row unless the implementation is a CPU reference ("cpu-ref", ...). */
static int is_gpu_row(const pa_bench_row *r) { return r->impl && strncmp(r->impl, "cpu", 3) != 0; }

/* Numbers derived from a row (and its baseline) against the roofs. */
typedef struct row_numbers {
    double gbps, tflops, pct_mem, pct_compute, pct, base_pct, speedup;
    const char *bound;
} row_numbers;

static double pct_of(double work, double us, double roof, double unit) {
    if (work <= 0 || us <= 0 || roof <= 0)
        return 0.0;
    return 100.0 * (work / (us * 1e-6) / unit) / roof;
}

static row_numbers numbers(const pa_bench_row *r, double roof_gbps, double roof_tflops) {
    row_numbers n = {0};
    const double us = r->t.median_us;
    n.gbps = r->bytes > 0 && us > 0 ? r->bytes / (us * 1e-6) / 1e9 : 0.0;
    n.tflops = r->flops > 0 && us > 0 ? r->flops / (us * 1e-6) / 1e12 : 0.0;
    n.pct_mem = pct_of(r->bytes, us, roof_gbps, 1e9);
    n.pct_compute = pct_of(r->flops, us, roof_tflops, 1e12);
    /* The binding roof is the one the op comes closest to (roofline). */
    n.bound = "";
    if (n.pct_mem > 0 || n.pct_compute > 0) {
        n.bound = n.pct_mem >= n.pct_compute ? "memory" : "compute";
        n.pct = n.pct_mem >= n.pct_compute ? n.pct_mem : n.pct_compute;
    }
    if (r->baseline_us > 0) {
        const double bm = pct_of(r->bytes, r->baseline_us, roof_gbps, 1e9);
        const double bc = pct_of(r->flops, r->baseline_us, roof_tflops, 1e12);
        n.base_pct = bm >= bc ? bm : bc;
        n.speedup = us > 0 ? r->baseline_us / us : 0.0;
    }
    return n;
}

static void shape_of(const pa_bench_row *r, char *buf, size_t len) {
    snprintf(buf, len, "b=%d h=%d/%dx%d ctx=%d q=%d bs=%d", r->seqs, r->heads, r->kv_heads, r->head_size, r->ctx,
             r->qlen, r->block_size);
}

static void print_header(FILE *f) {
    fprintf(f, "%-18s %-12s %-14s %-40s %-20s %10s %19s %8s %8s %6s %11s %6s\n", "op", "impl", "preset", "shape",
            "dtype/cache layout", "median us", "min..max us (n)", "GB/s", "TFLOP/s", "%roof", "baseline us", "x");
}

void pa_bench_emit(const pa_op_opts *o, const pa_bench_row *r) {
    const int gpu = is_gpu_row(r);
    /* Roofs an op did not fill in come from the cached per-run measurement, so
     * every GPU row is judged against the same numbers. */
    double roof_gbps = r->roof_gbps, roof_tflops = r->roof_tflops;
    const char *roof_name = r->roof_name && roof_gbps > 0 ? r->roof_name : "copy";
    if (gpu && r->bytes > 0 && roof_gbps <= 0)
        roof_gbps = pa_bench_copy_bandwidth();
    /* No memory roof measured (a CPU row, a row without bytes, a failed measurement): the JSON names
     * none, where it said "copy" beside a roof of 0. */
    if (roof_gbps <= 0)
        roof_name = "none";
    if (gpu && r->flops > 0 && roof_tflops <= 0)
        roof_tflops = pa_bench_gemm_tflops(r->dtype);
    const row_numbers n = numbers(r, roof_gbps, roof_tflops);
    /* --scales-per-head where the row's op read it: an fp8 cache's scales, one per KV head */
    const int sph = o->scales_per_head && !r->no_cache && pa_dtype_is_fp8(r->cache_dtype);
    const char *preset = o->preset ? o->preset : "custom";
    char shape[128], dt[64], range[64];
    shape_of(r, shape, sizeof shape);
    snprintf(dt, sizeof dt, "%s/%s %s", pa_dtype_name(r->dtype), pa_dtype_name(r->cache_dtype),
             r->no_cache ? "-" : pa_kv_layout_name(r->layout));
    snprintf(range, sizeof range, "%.1f..%.1f (%d)", r->t.min_us, r->t.max_us, r->t.iters);

    /* With --json - the rows own stdout; the table goes to stderr. */
    FILE *tf = o->json && !strcmp(o->json, "-") ? stderr : stdout;
    if (!g_header_done) {
        print_header(tf);
        g_header_done = 1;
    }
    fprintf(tf, "%-18s %-12s %-14s %-40s %-20s %10.1f %19s", r->op, r->impl, preset, shape, dt, r->t.median_us, range);
    if (n.gbps > 0)
        fprintf(tf, n.gbps < 10 ? " %8.3f" : " %8.1f", n.gbps);
    else
        fprintf(tf, " %8s", "-");
    if (n.tflops > 0)
        fprintf(tf, n.tflops < 1 ? " %8.4f" : " %8.2f", n.tflops);
    else
        fprintf(tf, " %8s", "-");
    if (n.pct > 0)
        fprintf(tf, " %5.0f%%", n.pct);
    else
        fprintf(tf, " %6s", "-");
    if (r->baseline_us > 0)
        fprintf(tf, " %11.1f %5.2fx", r->baseline_us, n.speedup);
    else
        fprintf(tf, " %11s %6s", "-", "");
    if (r->note)
        fprintf(tf, "  %s", r->note);
    if (sph)
        fprintf(tf, "  (fp8 scales per KV head)");
    fputc('\n', tf);
    fflush(tf);
    g_rows++;

    if (!o->json)
        return;
    FILE *jf = pa_cli_open_json(o->json);
    if (!jf) {
        g_json_errors++;
        return;
    }
    fprintf(jf, "{\"op\": ");
    pa_cli_json_str(jf, r->op);
    fprintf(jf, ", \"impl\": ");
    pa_cli_json_str(jf, r->impl);
    fprintf(jf, ", \"preset\": ");
    pa_cli_json_str(jf, preset);
    fprintf(jf, ", \"shape\": ");
    pa_cli_json_str(jf, shape);
    fprintf(jf,
            ", \"seqs\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_size\": %d, \"ctx\": %d, \"qlen\": %d, "
            "\"block_size\": %d, \"layout\": \"%s\", \"dtype\": \"%s\", \"cache_dtype\": \"%s\", \"window\": %d, "
            "\"soft_cap\": %g, \"alibi\": %d, \"sinks\": %d, \"scales_per_head\": %s, \"variant\": ",
            r->seqs, r->heads, r->kv_heads, r->head_size, r->ctx, r->qlen, r->block_size,
            r->no_cache ? "none" : pa_kv_layout_name(r->layout), pa_dtype_name(r->dtype), pa_dtype_name(r->cache_dtype),
            o->window, (double)o->soft_cap, o->alibi, o->sinks, sph ? "true" : "false");
    pa_cli_json_str(jf, o->variant ? o->variant : "");
    fprintf(jf, ", \"device\": ");
    pa_cli_json_str(jf, pa_bench_device_name(gpu));
    fprintf(jf,
            ", \"driver\": %d, \"commit\": \"%s\", \"version\": \"%s\", \"us_median\": %.3f, \"us_min\": %.3f, "
            "\"us_max\": %.3f, \"iters\": %d, \"bytes\": %.0f, \"flops\": %.0f, \"gbps\": %.6g, \"tflops\": %.6g, "
            "\"roof_gbps\": %.3f, \"roof_gbps_kind\": \"%s\", \"roof_tflops\": %.3f, \"pct_roof\": %.3f, \"bound\": "
            "\"%s\", \"baseline_us\": %.3f, "
            "\"baseline_pct_roof\": %.3f, \"speedup_vs_baseline\": %.4f, \"note\": ",
            gpu ? pa_bench_driver_version() : 0, PA_GIT_COMMIT, pa_version(), r->t.median_us, r->t.min_us, r->t.max_us,
            r->t.iters, r->bytes, r->flops, n.gbps, n.tflops, roof_gbps, roof_name, roof_tflops, n.pct, n.bound,
            r->baseline_us > 0 ? r->baseline_us : 0.0, n.base_pct, n.speedup);
    pa_cli_json_str(jf, r->note ? r->note : "");
    fprintf(jf, "}\n");
    /* A row is written once it has left the stdio buffer: stdout's is flushed
     * here (a full disk or a closed pipe shows only then), a file's closed. */
    int bad = ferror(jf) != 0;
    bad |= (jf == stdout ? fflush(jf) : fclose(jf)) != 0;
    if (bad) {
        fprintf(stderr, "pagedattn: writing a JSON row to %s failed\n", o->json);
        g_json_errors++;
    }
}

int pa_bench_baseline(const pa_baseline_problem *pb, int warmup, int iters, pa_bench_row *r) {
    static char why[4][256];
    static int slot;
    pa_timing t;
    char *w = why[slot++ % 4]; /* a few rows may keep their notes alive at once */
    if (pa_baseline_time(pb, warmup, iters, &t, w, sizeof why[0]) == 0) {
        r->baseline_us = t.median_us;
        return 0;
    }
    r->baseline_us = 0;
    r->note = w;
    return 1;
}
