/* pagedattn-interp has no cuBLAS: the baseline's entry points say so, and the
 * benches and checks that would run it report it as skipped. */
#include <stdio.h>
#include <string.h>

#include "baseline.h"
#include "cli.h"

static int none(char *why, size_t why_len) {
    if (why && why_len)
        snprintf(why, why_len, "the cuBLAS baseline does not run in interpret mode");
    return 1;
}

int pa_baseline_time(const pa_baseline_problem *pb, int warmup, int iters, pa_timing *t, char *why, size_t why_len) {
    (void)pb, (void)warmup, (void)iters, (void)t;
    return none(why, why_len);
}
int pa_baseline_run(const pa_baseline_problem *pb, float *out_host, char *why, size_t why_len) {
    (void)pb, (void)out_host;
    return none(why, why_len);
}
int pa_check_baseline(const struct pa_op_opts *o) {
    (void)o;
    fprintf(stderr, "pagedattn check baseline: the cuBLAS baseline does not run in interpret mode\n");
    return PA_CLI_EXIT_USAGE;
}
void pa_baseline_from_decode(const pa_decode_params *dev, pa_baseline_problem *pb) {
    (void)dev;
    memset(pb, 0, sizeof *pb);
}
void pa_baseline_from_ragged(const pa_ragged_params *dev, int32_t num_seqs, int32_t num_tokens, int32_t max_q_len,
                             int32_t max_kv_len, pa_baseline_problem *pb) {
    (void)dev, (void)num_seqs, (void)num_tokens, (void)max_q_len, (void)max_kv_len;
    memset(pb, 0, sizeof *pb);
}
void pa_baseline_from_context(const pa_context_attention_params *dev, pa_baseline_problem *pb) {
    (void)dev;
    memset(pb, 0, sizeof *pb);
}
void pa_baseline_from_prompt(const pa_prompt_attention_params *dev, pa_baseline_problem *pb) {
    (void)dev;
    memset(pb, 0, sizeof *pb);
}
