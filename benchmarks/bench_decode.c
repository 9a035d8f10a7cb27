/* `pagedattn check|bench decode`: paged decode attention (CPU reference; the
 * CUDA entries land with the decode kernels). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "problems.h"

/* ---- decode on the CPU reference -------------------------------------------- */

typedef struct decode_ctx {
    pa_decode_problem *pr;
} decode_ctx;

static int run_ref_decode(void *ctx) {
    decode_ctx *c = ctx;
    if (pa_ref_paged_decode(&c->pr->p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench decode: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static pa_decode_problem *make_decode_problem(const pa_op_opts *o, int ctx_len, const char *cmd) {
    int *lens = malloc(sizeof(int) * (size_t)o->seqs);
    if (!lens)
        return NULL;
    for (int s = 0; s < o->seqs; s++)
        lens[s] = ctx_len;
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
                                 .with_alibi = o->alibi,
                                 .skip_logical = 1};
    /* Validate the shape before allocating anything large. */
    pa_decode_params probe;
    memset(&probe, 0, sizeof probe);
    char dummy[16];
    probe.q_dtype = o->dtype;
    probe.num_heads = o->heads;
    probe.kv = (pa_kv_cache){.layout = o->layout,
                             .dtype = o->cache_dtype,
                             .key = dummy,
                             .value = dummy,
                             .num_blocks = 1,
                             .block_size = o->block_size,
                             .num_kv_heads = o->kv_heads,
                             .head_size = o->head_size};
    probe.scale = 1.0f;
    probe.soft_cap = o->soft_cap;
    probe.sliding_window = o->window;
    if (pa_decode_validate(&probe) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn %s decode: %s\n", cmd, pa_last_error());
        free(lens);
        return NULL;
    }
    double cache_bytes = 2.0 * o->seqs * (double)ctx_len * o->kv_heads * o->head_size * pa_dtype_size(o->cache_dtype);
    if (cache_bytes > 8e9) {
        fprintf(stderr, "pagedattn %s decode: the problem needs %.1f GB of host cache; at most 8 GB\n", cmd,
                cache_bytes / 1e9);
        free(lens);
        return NULL;
    }
    pa_decode_problem *pr = pa_decode_problem_make(&cfg);
    free(lens);
    if (pr) {
        pr->p.sliding_window = o->window;
        pr->p.soft_cap = o->soft_cap;
    }
    return pr;
}

static double decode_bytes(const pa_op_opts *o, int ctx_len) {
    double kv = 2.0 * o->seqs * (double)ctx_len * o->kv_heads * o->head_size * pa_dtype_size(o->cache_dtype);
    double qo = 2.0 * o->seqs * (double)o->heads * o->head_size * pa_dtype_size(o->dtype);
    return kv + qo;
}

static int bench_decode(const pa_op_opts *o, int gpu) {
    if (gpu) {
        fprintf(stderr, "pagedattn bench decode: this build has no CUDA decode kernel yet; "
                        "use --device cpu for the CPU reference\n");
        return PA_CLI_EXIT_USAGE;
    }
    int rc = 0;
    for (int k = 0; k < o->num_ctx; k++) {
        if (o->num_ctx > 1)
            fprintf(stderr, "[%d/%d] decode ctx=%d ...\n", k + 1, o->num_ctx, o->ctx[k]);
        pa_decode_problem *pr = make_decode_problem(o, o->ctx[k], "bench");
        if (!pr) {
            rc = PA_CLI_EXIT_USAGE;
            break;
        }
        decode_ctx c = {pr};
        pa_bench_row r = {.op = "decode",
                          .impl = "cpu-ref",
                          .seqs = o->seqs,
                          .heads = o->heads,
                          .kv_heads = o->kv_heads,
                          .head_size = o->head_size,
                          .ctx = o->ctx[k],
                          .qlen = 1,
                          .block_size = o->block_size,
                          .dtype = o->dtype,
                          .cache_dtype = o->cache_dtype,
                          .layout = o->layout,
                          .bytes = decode_bytes(o, o->ctx[k])};
        if (pa_bench_time_cpu(run_ref_decode, &c, o->warmup, o->iters, &r.t) != 0) {
            pa_decode_problem_free(pr);
            rc = PA_CLI_EXIT_FAIL;
            break;
        }
        pa_bench_emit(o, &r);
        pa_decode_problem_free(pr);
    }
    return rc;
}

int pa_run_decode(const pa_op_opts *o, int check, int gpu) {
    if (check) {
        fprintf(stderr, "pagedattn check decode: this build has no CUDA decode kernel yet\n");
        return PA_CLI_EXIT_USAGE;
    }
    return bench_decode(o, gpu);
}
