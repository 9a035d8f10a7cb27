/* `pagedattn`: info, check, bench and plan.
 *
 * Every error is one line on stderr and a non-zero exit: 2 for usage, 3 when a
 * GPU is needed and there is none, 1 when a check or an op fails. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "bench_gpu.h"
#include "cli.h"
#include "problems.h"

/* ---- small utilities ---------------------------------------------------- */

double pa_cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int pa_cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out) {
    if (!s || !*s) {
        fprintf(stderr, "pagedattn: %s needs a value\n", flag);
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end != '\0') {
        fprintf(stderr, "pagedattn: %s: '%s' is not an integer\n", flag, s);
        return 0;
    }
    if (v < lo || v > hi) {
        fprintf(stderr, "pagedattn: %s: %lld outside %lld..%lld\n", flag, v, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

FILE *pa_cli_open_json(const char *path) {
    if (!path)
        return NULL;
    if (!strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "a");
    if (!f)
        fprintf(stderr, "pagedattn: cannot open %s: %s\n", path, strerror(errno));
    return f;
}

void pa_cli_close_json(FILE *f) {
    if (f && f != stdout)
        fclose(f);
}

static int want_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

int pa_cli_have_gpu(char *why, size_t len) {
    pa_device_props p;
    pa_status s = pa_device_info(0, &p);
    if (s != PA_SUCCESS) {
        snprintf(why, len, "%s", pa_last_error());
        return 0;
    }
    return 1;
}

/* ---- info --------------------------------------------------------------- */

static const char *INFO_HELP = "usage: pagedattn info [--json]\n"
                               "  Library version, build, and the CUDA device (or a plain 'no CUDA device').\n";

static int cmd_info(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(INFO_HELP, stdout);
            return 0;
        } else {
            fprintf(stderr, "pagedattn info: unknown option '%s' (try --help)\n", argv[i]);
            return PA_CLI_EXIT_USAGE;
        }
    }
    pa_device_props p;
    pa_status s = pa_device_info(0, &p);
    if (json) {
        printf("{\"version\": \"%s\", \"commit\": \"%s\", \"device\": ", pa_version(), PA_GIT_COMMIT);
        if (s == PA_SUCCESS)
            printf("{\"name\": \"%s\", \"sm_count\": %d, \"cc\": \"%d.%d\", \"smem_per_block_optin\": %zu, "
                   "\"l2_bytes\": %zu, \"total_mem_bytes\": %zu, \"driver\": %d, \"runtime\": %d}}\n",
                   p.name, p.sm_count, p.cc_major, p.cc_minor, p.smem_per_block_optin, p.l2_bytes, p.total_mem_bytes,
                   p.driver_version, p.runtime_version);
        else
            printf("null, \"no_device_reason\": \"%s\"}\n", pa_last_error());
        return 0;
    }
    printf("libpagedattn %s (commit %s)\n", pa_version(), PA_GIT_COMMIT);
    if (s != PA_SUCCESS) {
        printf("%s\n", pa_last_error());
        printf("GPU commands (check, bench --device gpu) need one; the CPU reference runs with --device cpu.\n");
        return 0;
    }
    printf("device 0: %s, compute capability %d.%d, %d SMs\n", p.name, p.cc_major, p.cc_minor, p.sm_count);
    printf("  memory %.1f GiB, L2 %.1f MiB, shared memory per block (opt-in) %zu KiB\n",
           (double)p.total_mem_bytes / (1 << 30), (double)p.l2_bytes / (1 << 20), p.smem_per_block_optin / 1024);
    printf("  driver %d, runtime %d\n", p.driver_version, p.runtime_version);
    return 0;
}

/* ---- shared op options ---------------------------------------------------- */

const pa_preset PA_PRESETS[] = {
    {"llama3-8b", 32, 8, 128, 0, 0.0f, 0},       {"llama3-70b-tp8", 8, 1, 128, 0, 0.0f, 0},
    {"mistral-7b", 32, 8, 128, 4096, 0.0f, 0},   {"gemma2-9b", 16, 8, 256, 0, 50.0f, 0},
    {"llama4-scout", 40, 8, 128, 0, 0.0f, 8192}, {"qwen2.5-7b", 28, 4, 128, 0, 0.0f, 0},
};
const int PA_NUM_PRESETS = (int)(sizeof PA_PRESETS / sizeof PA_PRESETS[0]);

void pa_op_opts_default(pa_op_opts *o) {
    memset(o, 0, sizeof *o);
    o->device_gpu = -1;
    o->seqs = 8;
    o->heads = 32;
    o->kv_heads = 8;
    o->head_size = 128;
    o->block_size = 16;
    o->ctx[0] = 1024;
    o->num_ctx = 1;
    o->dtype = PA_DTYPE_F16;
    o->cache_auto = 1;
    o->layout = PA_LAYOUT_VLLM;
    o->iters = 20;
    o->warmup = 3;
    o->seed = 1;
}

const char *PA_OPT_HELP = "  --device cpu|gpu     where to run (default: gpu when present, else cpu)\n"
                          "  --preset NAME        model shape: llama3-8b, llama3-70b-tp8, mistral-7b, gemma2-9b,\n"
                          "                       llama4-scout, qwen2.5-7b (sets heads, head size, window, soft cap)\n"
                          "  --seqs N             sequences in the batch (default 8)\n"
                          "  --heads Q/KV         query/KV heads (default 32/8)\n"
                          "  --head-size N        (default 128)\n"
                          "  --ctx N[,N...]       context length(s) per sequence; a list runs a sweep (default 1024)\n"
                          "  --block-size N       tokens per cache block (default 16)\n"
                          "  --qlen N             new query tokens per sequence (prefill, ragged)\n"
                          "  --decodes N          ragged: decode sequences beside the --seqs prefill chunks\n"
                          "  --variant NAME       kernel choice (decode: v1, v2, auto = recommended entry)\n"
                          "  --dtype f32|f16|bf16 query/output dtype (default f16)\n"
                          "  --cache-dtype auto|f32|f16|bf16|fp8_e4m3|fp8_e5m2 (default auto = dtype)\n"
                          "  --layout vllm|nhd|hnd cache layout (default vllm)\n"
                          "  --window N           sliding window (0 = off)\n"
                          "  --soft-cap X         logits soft cap (0 = off)\n"
                          "  --alibi              ALiBi slopes on\n"
                          "  --iters N            measured iterations (default 20), --warmup N (default 3)\n"
                          "  --seed N             random data seed\n"
                          "  --json FILE          also write one JSON row per measurement ('-' = stdout)\n";

/* Parses op options from argv[i0..]; returns 0 on success, else the exit code. */
static int parse_pa_op_opts(const char *cmd, int argc, char **argv, int i0, pa_op_opts *o) {
    long long v;
    for (int i = i0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL()                                                                                                     \
    do {                                                                                                               \
        if (!val) {                                                                                                    \
            fprintf(stderr, "pagedattn %s: %s needs a value\n", cmd, a);                                               \
            return PA_CLI_EXIT_USAGE;                                                                                  \
        }                                                                                                              \
        i++;                                                                                                           \
    } while (0)
#define INT_OPT(flag, lo, hi, dst)                                                                                     \
    else if (!strcmp(a, flag)) {                                                                                       \
        NEED_VAL();                                                                                                    \
        if (!pa_cli_parse_int(flag, val, lo, hi, &v))                                                                  \
            return PA_CLI_EXIT_USAGE;                                                                                  \
        dst = (int)v;                                                                                                  \
    }
        if (!strcmp(a, "--device")) {
            NEED_VAL();
            if (!strcmp(val, "cpu"))
                o->device_gpu = 0;
            else if (!strcmp(val, "gpu"))
                o->device_gpu = 1;
            else {
                fprintf(stderr, "pagedattn %s: --device must be cpu or gpu, not '%s'\n", cmd, val);
                return PA_CLI_EXIT_USAGE;
            }
        }
        INT_OPT("--seqs", 1, 65536, o->seqs)
        INT_OPT("--head-size", 1, 1024, o->head_size)
        INT_OPT("--block-size", 1, 1024, o->block_size)
        INT_OPT("--window", 0, 1 << 30, o->window)
        INT_OPT("--qlen", 1, 1 << 20, o->qlen)
        INT_OPT("--decodes", 0, 65536, o->decodes)
        INT_OPT("--iters", 1, 100000, o->iters)
        INT_OPT("--warmup", 0, 10000, o->warmup)
        else if (!strcmp(a, "--seed")) {
            NEED_VAL();
            if (!pa_cli_parse_int("--seed", val, 0, 1LL << 62, &v))
                return PA_CLI_EXIT_USAGE;
            o->seed = (uint64_t)v;
        }
        else if (!strcmp(a, "--heads")) {
            NEED_VAL();
            char buf[64];
            snprintf(buf, sizeof buf, "%s", val);
            char *slash = strchr(buf, '/');
            if (!slash) {
                fprintf(stderr, "pagedattn %s: --heads takes Q/KV, e.g. 32/8 (got '%s')\n", cmd, val);
                return PA_CLI_EXIT_USAGE;
            }
            *slash = '\0';
            long long q, k;
            if (!pa_cli_parse_int("--heads (query)", buf, 1, 4096, &q) ||
                !pa_cli_parse_int("--heads (kv)", slash + 1, 1, 4096, &k))
                return PA_CLI_EXIT_USAGE;
            o->heads = (int)q;
            o->kv_heads = (int)k;
        }
        else if (!strcmp(a, "--ctx")) {
            NEED_VAL();
            char buf[512];
            snprintf(buf, sizeof buf, "%s", val);
            o->num_ctx = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (o->num_ctx == PA_MAX_CTX_LIST) {
                    fprintf(stderr, "pagedattn %s: --ctx takes at most %d lengths\n", cmd, PA_MAX_CTX_LIST);
                    return PA_CLI_EXIT_USAGE;
                }
                if (!pa_cli_parse_int("--ctx", tok, 1, 1 << 22, &v))
                    return PA_CLI_EXIT_USAGE;
                o->ctx[o->num_ctx++] = (int)v;
            }
            if (o->num_ctx == 0) {
                fprintf(stderr, "pagedattn %s: --ctx needs at least one length\n", cmd);
                return PA_CLI_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--dtype") || !strcmp(a, "--cache-dtype")) {
            NEED_VAL();
            int cache = !strcmp(a, "--cache-dtype");
            if (cache && !strcmp(val, "auto")) {
                o->cache_auto = 1;
                continue;
            }
            pa_dtype t;
            if (pa_dtype_from_name(val, &t) != PA_SUCCESS) {
                fprintf(stderr, "pagedattn %s: %s: %s\n", cmd, a, pa_last_error());
                return PA_CLI_EXIT_USAGE;
            }
            if (cache) {
                o->cache_dtype = t;
                o->cache_auto = 0;
            } else {
                o->dtype = t;
            }
        }
        else if (!strcmp(a, "--layout")) {
            NEED_VAL();
            if (pa_kv_layout_from_name(val, &o->layout) != PA_SUCCESS) {
                fprintf(stderr, "pagedattn %s: --layout: %s\n", cmd, pa_last_error());
                return PA_CLI_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--soft-cap")) {
            NEED_VAL();
            char *end = NULL;
            double x = strtod(val, &end);
            if (*end || !isfinite(x) || x < 0) {
                fprintf(stderr, "pagedattn %s: --soft-cap must be a number >= 0 (got '%s')\n", cmd, val);
                return PA_CLI_EXIT_USAGE;
            }
            o->soft_cap = (float)x;
        }
        else if (!strcmp(a, "--variant")) {
            NEED_VAL();
            o->variant = val;
        }
        else if (!strcmp(a, "--alibi")) {
            o->alibi = 1;
        }
        else if (!strcmp(a, "--json")) {
            NEED_VAL();
            o->json = val;
        }
        else if (!strcmp(a, "--preset")) {
            NEED_VAL();
            int found = 0;
            for (int p = 0; p < PA_NUM_PRESETS; p++)
                if (!strcmp(val, PA_PRESETS[p].name)) {
                    o->preset = PA_PRESETS[p].name;
                    o->heads = PA_PRESETS[p].heads;
                    o->kv_heads = PA_PRESETS[p].kv_heads;
                    o->head_size = PA_PRESETS[p].head_size;
                    o->window = PA_PRESETS[p].window;
                    o->soft_cap = PA_PRESETS[p].soft_cap;
                    found = 1;
                }
            if (!found) {
                fprintf(stderr, "pagedattn %s: unknown preset '%s' (see --help)\n", cmd, val);
                return PA_CLI_EXIT_USAGE;
            }
        }
        else {
            fprintf(stderr, "pagedattn %s: unknown option '%s' (try --help)\n", cmd, a);
            return PA_CLI_EXIT_USAGE;
        }
#undef INT_OPT
#undef NEED_VAL
    }
    if (o->cache_auto)
        o->cache_dtype = o->dtype;
    return 0;
}

/* ---- convert (the first GPU op) ---------------------------------------------- */

typedef struct convert_ctx {
    void *dst;
    const void *src;
    pa_dtype dt, st;
    int64_t n;
} convert_ctx;

static int run_convert(void *ctx) {
    convert_ctx *c = ctx;
    return pa_convert(c->dst, c->dt, c->src, c->st, c->n, NULL, NULL) != PA_SUCCESS;
}

static int run_ref_convert(void *ctx) {
    convert_ctx *c = ctx;
    return pa_ref_convert(c->dst, c->dt, c->src, c->st, c->n, NULL) != PA_SUCCESS;
}

static int bench_convert(const pa_op_opts *o, int gpu) {
    const int64_t n = gpu ? (int64_t)64 << 20 : (int64_t)4 << 20;
    pa_rng rng = pa_rng_make(o->seed);
    void *src = pa_random_buffer(&rng, PA_DTYPE_F32, (size_t)n, -4.0f, 4.0f);
    void *dst = malloc((size_t)n * pa_dtype_size(o->dtype));
    int rc = PA_CLI_EXIT_FAIL;
    if (!dst) {
        free(src);
        return rc;
    }
    pa_timing t;
    double roof = 0.0;
    double bytes = (double)n * (4.0 + (double)pa_dtype_size(o->dtype));
    if (!gpu) {
        convert_ctx c = {dst, src, o->dtype, PA_DTYPE_F32, n};
        if (pa_bench_time_cpu(run_ref_convert, &c, o->warmup, o->iters, &t) == 0)
            rc = 0;
    } else {
        void *dsrc = NULL, *ddst = NULL;
        if (cudaMalloc(&dsrc, (size_t)n * 4) != cudaSuccess ||
            cudaMalloc(&ddst, (size_t)n * pa_dtype_size(o->dtype)) != cudaSuccess ||
            cudaMemcpy(dsrc, src, (size_t)n * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "pagedattn bench convert: device allocation failed\n");
        } else {
            roof = pa_bench_copy_bandwidth();
            convert_ctx c = {ddst, dsrc, o->dtype, PA_DTYPE_F32, n};
            if (pa_bench_time_gpu("convert", run_convert, &c, o->warmup, o->iters, &t) == 0)
                rc = 0;
        }
        cudaFree(dsrc);
        cudaFree(ddst);
    }
    if (rc == 0) {
        double gbps = bytes / (t.median_us * 1e-6) / 1e9;
        printf("convert  %s  n=%lld f32->%s  median %.1f us (min %.1f, max %.1f, n=%d)  %.1f GB/s",
               gpu ? "gpu" : "cpu-ref", (long long)n, pa_dtype_name(o->dtype), t.median_us, t.min_us, t.max_us, t.iters,
               gbps);
        if (roof > 0)
            printf("  roof %.1f GB/s (%.0f%%)", roof, 100.0 * gbps / roof);
        printf("\n");
    }
    free(src);
    free(dst);
    return rc;
}

/* ---- check --------------------------------------------------------------- */

static int check_convert(const pa_op_opts *o) {
    const int64_t n = 1 << 20;
    pa_rng rng = pa_rng_make(o->seed);
    float *src = pa_random_buffer(&rng, PA_DTYPE_F32, (size_t)n, -600.0f, 600.0f);
    size_t es = pa_dtype_size(o->dtype);
    unsigned char *got = malloc((size_t)n * es), *want = malloc((size_t)n * es);
    void *dsrc = NULL, *ddst = NULL;
    int rc = PA_CLI_EXIT_FAIL;
    if (!got || !want)
        goto done;
    if (cudaMalloc(&dsrc, (size_t)n * 4) != cudaSuccess || cudaMalloc(&ddst, (size_t)n * es) != cudaSuccess ||
        cudaMemcpy(dsrc, src, (size_t)n * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "pagedattn check convert: device allocation failed\n");
        goto done;
    }
    if (pa_convert(ddst, o->dtype, dsrc, PA_DTYPE_F32, n, NULL, NULL) != PA_SUCCESS ||
        cudaMemcpy(got, ddst, (size_t)n * es, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "pagedattn check convert: %s\n", pa_last_error());
        goto done;
    }
    pa_ref_convert(want, o->dtype, src, PA_DTYPE_F32, n, NULL);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += memcmp(got + i * es, want + i * es, es) != 0;
    printf("check convert f32->%s: %lld elements, %lld differ from the CPU reference: %s\n", pa_dtype_name(o->dtype),
           (long long)n, (long long)bad, bad ? "FAIL" : "PASS");
    rc = bad ? PA_CLI_EXIT_FAIL : 0;
done:
    cudaFree(dsrc);
    cudaFree(ddst);
    free(src);
    free(got);
    free(want);
    return rc;
}

static const char *CHECK_HELP = "usage: pagedattn check OP [options]\n"
                                "  Runs the CUDA op on generated inputs and compares it with the CPU reference.\n"
                                "  Needs a GPU (exit 3 without one).\n"
                                "  OP: convert, decode, prefill, ragged\n";

static int cmd_check(int argc, char **argv) {
    if (want_help(argc, argv) || argc < 2) {
        fputs(CHECK_HELP, argc < 2 ? stderr : stdout);
        fputs(PA_OPT_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? PA_CLI_EXIT_USAGE : 0;
    }
    const char *op = argv[1];
    if (strcmp(op, "convert") && strcmp(op, "decode") && strcmp(op, "prefill") && strcmp(op, "ragged")) {
        fprintf(stderr, "pagedattn check: unknown op '%s'; known: convert, decode, prefill, ragged\n", op);
        return PA_CLI_EXIT_USAGE;
    }
    pa_op_opts o;
    pa_op_opts_default(&o);
    int e = parse_pa_op_opts("check", argc, argv, 2, &o);
    if (e)
        return e;
    char why[512];
    if (!pa_cli_have_gpu(why, sizeof why)) {
        fprintf(stderr,
                "pagedattn check %s: needs a CUDA GPU and there is none (%s); "
                "the CPU reference runs with: pagedattn bench %s --device cpu\n",
                op, why, op);
        return PA_CLI_EXIT_NO_DEVICE;
    }
    if (!strcmp(op, "convert"))
        return check_convert(&o);
    if (!strcmp(op, "decode"))
        return pa_run_decode(&o, 1, 1);
    if (!strcmp(op, "prefill"))
        return pa_run_prefill(&o, 1, 1);
    return pa_run_ragged(&o, 1, 1);
}

/* ---- bench --------------------------------------------------------------- */

static const char *BENCH_HELP =
    "usage: pagedattn bench OP [options]\n"
    "  Times OP: CUDA events, warm-up, L2 flushed between iterations, the device's copy\n"
    "  bandwidth measured in the same run as the roof. --device cpu times the CPU reference\n"
    "  (the default where there is no GPU).\n"
    "  OP: decode, prefill, ragged, convert, plan\n";

static int cmd_bench(int argc, char **argv) {
    if (argc < 2 || ((!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
        fputs(BENCH_HELP, argc < 2 ? stderr : stdout);
        fputs(PA_OPT_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? PA_CLI_EXIT_USAGE : 0;
    }
    const char *op = argv[1];
    if (!strcmp(op, "plan"))
        return pa_bench_plan(argc - 1, argv + 1);
    if (strcmp(op, "decode") && strcmp(op, "convert") && strcmp(op, "prefill") && strcmp(op, "ragged")) {
        fprintf(stderr, "pagedattn bench: unknown op '%s'; known: decode, prefill, ragged, convert, plan\n", op);
        return PA_CLI_EXIT_USAGE;
    }
    if (want_help(argc, argv)) {
        fputs(BENCH_HELP, stdout);
        fputs(PA_OPT_HELP, stdout);
        return 0;
    }
    pa_op_opts o;
    pa_op_opts_default(&o);
    int e = parse_pa_op_opts("bench", argc, argv, 2, &o);
    if (e)
        return e;
    char why[512];
    int gpu = pa_cli_have_gpu(why, sizeof why);
    if (o.device_gpu == 1 && !gpu) {
        fprintf(stderr, "pagedattn bench %s --device gpu: no CUDA device (%s)\n", op, why);
        return PA_CLI_EXIT_NO_DEVICE;
    }
    if (o.device_gpu == -1 && !gpu)
        fprintf(stderr, "pagedattn bench %s: no CUDA device (%s); timing the CPU reference\n", op, why);
    int use_gpu = o.device_gpu == -1 ? gpu : o.device_gpu;
    if (!strcmp(op, "decode"))
        return pa_run_decode(&o, 0, use_gpu);
    if (!strcmp(op, "prefill"))
        return pa_run_prefill(&o, 0, use_gpu);
    if (!strcmp(op, "ragged"))
        return pa_run_ragged(&o, 0, use_gpu);
    return bench_convert(&o, use_gpu);
}

/* ---- main ---------------------------------------------------------------- */

static const char *MAIN_HELP =
    "usage: pagedattn COMMAND [options]\n"
    "  info                 library and device information\n"
    "  check OP             run a CUDA op and compare it with the CPU reference (needs a GPU)\n"
    "  bench OP             time an op (GPU, or the CPU reference with --device cpu)\n"
    "  plan                 lay out a scheduler batch: print every metadata array as JSON\n"
    "  --version, --help\n"
    "Each command takes --help. Exit codes: 0 ok, 1 check/op failed, 2 usage, 3 no GPU.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return PA_CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(MAIN_HELP, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("pagedattn %s (commit %s)\n", pa_version(), PA_GIT_COMMIT);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "plan"))
        return pa_cmd_plan(argc - 1, argv + 1);
    fprintf(stderr, "pagedattn: unknown command '%s' (try --help)\n", cmd);
    return PA_CLI_EXIT_USAGE;
}
