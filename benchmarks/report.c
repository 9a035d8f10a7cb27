/* Benchmark rows: one terminal line and, with --json, one JSON object per line. */
#include <string.h>

#include "cli.h"

void pa_bench_emit(const pa_op_opts *o, const pa_bench_row *r) {
    const double s = r->t.median_us * 1e-6;
    const double gbps = r->bytes > 0 && s > 0 ? r->bytes / s / 1e9 : 0.0;
    const double tflops = r->flops > 0 && s > 0 ? r->flops / s / 1e12 : 0.0;
    printf("%-8s %-10s %s seqs=%d heads=%d/%d hd=%d ctx=%d q=%d bs=%d %s %s/%s  median %.1f us (min %.1f, max %.1f, "
           "n=%d)",
           r->op, r->impl, o->preset ? o->preset : "custom", r->seqs, r->heads, r->kv_heads, r->head_size, r->ctx,
           r->qlen, r->block_size, pa_kv_layout_name(r->layout), pa_dtype_name(r->dtype), pa_dtype_name(r->cache_dtype),
           r->t.median_us, r->t.min_us, r->t.max_us, r->t.iters);
    if (gbps > 0) {
        printf("  %.1f GB/s", gbps);
        if (r->roof_gbps > 0)
            printf(" (%.0f%% of %.0f)", 100.0 * gbps / r->roof_gbps, r->roof_gbps);
    }
    if (tflops > 0) {
        printf("  %.1f TFLOP/s", tflops);
        if (r->roof_tflops > 0)
            printf(" (%.0f%% of %.0f)", 100.0 * tflops / r->roof_tflops, r->roof_tflops);
    }
    if (r->baseline_us > 0)
        printf("  baseline %.1f us", r->baseline_us);
    if (r->note)
        printf("  %s", r->note);
    printf("\n");
    FILE *jf = pa_cli_open_json(o->json);
    if (!jf)
        return;
    fprintf(jf,
            "{\"op\": \"%s\", \"impl\": \"%s\", \"preset\": \"%s\", \"seqs\": %d, \"heads\": %d, \"kv_heads\": %d, "
            "\"head_size\": %d, \"ctx\": %d, \"qlen\": %d, \"block_size\": %d, \"layout\": \"%s\", \"dtype\": \"%s\", "
            "\"cache_dtype\": \"%s\", \"us_median\": %.3f, \"us_min\": %.3f, \"us_max\": %.3f, \"gbps\": %.3f, "
            "\"roof_gbps\": %.3f, \"tflops\": %.3f, \"roof_tflops\": %.3f, \"baseline_us\": %.3f, \"commit\": \"%s\", "
            "\"version\": \"%s\"}\n",
            r->op, r->impl, o->preset ? o->preset : "custom", r->seqs, r->heads, r->kv_heads, r->head_size, r->ctx,
            r->qlen, r->block_size, pa_kv_layout_name(r->layout), pa_dtype_name(r->dtype),
            pa_dtype_name(r->cache_dtype), r->t.median_us, r->t.min_us, r->t.max_us, gbps, r->roof_gbps, tflops,
            r->roof_tflops, r->baseline_us > 0 ? r->baseline_us : 0.0, PA_GIT_COMMIT, pa_version());
    pa_cli_close_json(jf);
}
