/* Shared pieces of the `pagedattn` CLI: exit codes, the options every op
 * takes, the result row every benchmark prints, and the per-op entries. */
#ifndef PA_CLI_H
#define PA_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "bench_gpu.h"
#include "pagedattn/pagedattn.h"

/* Exit codes: stable, documented in `pagedattn --help`. */
enum {
    PA_CLI_EXIT_OK = 0,
    PA_CLI_EXIT_FAIL = 1,      /* a check found mismatches, or an op failed */
    PA_CLI_EXIT_USAGE = 2,     /* bad flags or values */
    PA_CLI_EXIT_NO_DEVICE = 3, /* the command needs a GPU and there is none */
};

/* Model presets (benchmarks/pagedattn.c). */
typedef struct pa_preset {
    const char *name;
    int heads, kv_heads, head_size, window;
    float soft_cap;
    int local_chunk;
    int sinks; /* attention sinks (gpt-oss) */
} pa_preset;
extern const pa_preset PA_PRESETS[];
extern const int PA_NUM_PRESETS;

#define PA_MAX_CTX_LIST 32

/* The options given on the command line (pa_op_opts.given), one bit each: an
 * option an op would not read is refused (exit 2), and a --preset sets only
 * what was not given (so the order of the options does not matter). */
enum {
    PA_OPT_DEVICE = 1u << 0,
    PA_OPT_SEQS = 1u << 1,
    PA_OPT_HEADS = 1u << 2,
    PA_OPT_HEAD_SIZE = 1u << 3,
    PA_OPT_BLOCK_SIZE = 1u << 4,
    PA_OPT_CTX = 1u << 5,
    PA_OPT_QLEN = 1u << 6,
    PA_OPT_DECODES = 1u << 7,
    PA_OPT_LAYERS = 1u << 8,
    PA_OPT_DTYPE = 1u << 9,
    PA_OPT_CACHE_DTYPE = 1u << 10,
    PA_OPT_LAYOUT = 1u << 11,
    PA_OPT_WINDOW = 1u << 12,
    PA_OPT_SOFT_CAP = 1u << 13,
    PA_OPT_ALIBI = 1u << 14,
    PA_OPT_SINKS = 1u << 15,
    PA_OPT_ITERS = 1u << 16,
    PA_OPT_WARMUP = 1u << 17,
    PA_OPT_SEED = 1u << 18,
    PA_OPT_JSON = 1u << 19,
    PA_OPT_PRESET = 1u << 20,
    PA_OPT_VARIANT = 1u << 21,
    PA_OPT_SCALES_PER_HEAD = 1u << 22,
};
/* "--seqs" for PA_OPT_SEQS, ... (the lowest bit set in `bits`). */
const char *pa_opt_name(unsigned bits);

/* The --variant names of the ops that take one (decode, prefill, blocks), one table for the CLI's
 * check (pagedattn.c) and each op's parser, in the order of the op's own enum (bench_decode.c,
 * bench_prefill.c, bench_blocks.c; decode's last, "all", runs the others). pa_variant_index: the
 * name's place, or -1 (an unknown name, or an op without variants); pa_variant_name: the i-th name;
 * pa_variant_list: "v1, v2, auto, all" for messages, or NULL for an op without variants. */
int pa_variant_index(const char *op, const char *name);
const char *pa_variant_name(const char *op, int i);
const char *pa_variant_list(const char *op);

/* Options shared by `check OP` and `bench OP` (parsed by pa_op_opts_parse). */
typedef struct pa_op_opts {
    const char *op;
    int device_gpu; /* -1 = auto, 0 = cpu, 1 = gpu */
    int seqs, heads, kv_heads, head_size, block_size;
    int ctx[PA_MAX_CTX_LIST], num_ctx; /* context (cached) lengths; a list is a sweep */
    int qlen;                          /* new query tokens per sequence (prefill, ragged); 0 = op default */
    int decodes;                       /* ragged: decode sequences beside `seqs` prefill chunks */
    int layers;                        /* blocks --variant copy: layers copied in one launch (default 1) */
    pa_dtype dtype, cache_dtype;
    int cache_auto;
    pa_kv_layout layout;
    int window;
    float soft_cap;
    int alibi;
    int sinks;           /* attention sinks, one per query head (pa_sink_logits) */
    int scales_per_head; /* fp8 caches: one k_scale and v_scale per KV head (pa_kv_cache.scales_per_head) */
    int iters, warmup;
    const char *json;
    const char *preset;
    const char *variant; /* op-specific kernel choice (decode: v1, v2, auto; ...); NULL = default */
    uint64_t seed;
    unsigned given; /* PA_OPT_* of the options on the command line (a preset's values are not given) */
} pa_op_opts;

extern const char *PA_OPT_HELP;
void pa_op_opts_default(pa_op_opts *o);
/* Parses options from argv[i0..]; returns 0 on success, else the exit code
 * (after one error line on stderr). */
int pa_op_opts_parse(const char *cmd, int argc, char **argv, int i0, pa_op_opts *o);

/* One measurement, printed as a terminal line and (with --json) a JSON row. */
typedef struct pa_bench_row {
    const char *op;   /* "decode", "prefill", "prompt", "ragged", "reshape_and_cache", ... */
    const char *impl; /* "pa-v1", "pa-v2", "pa-decode", "cpu-ref", ... */
    int seqs, heads, kv_heads, head_size, ctx, qlen, block_size;
    pa_dtype dtype, cache_dtype;
    pa_kv_layout layout;
    int no_cache; /* the op reads no cache: layout printed as "-", "none" in JSON */
    pa_timing t;
    double bytes;          /* HBM bytes touched (memory-bound ops), 0 if not meaningful */
    double flops;          /* FLOPs (compute-bound ops), 0 if not meaningful */
    double roof_gbps;      /* measured memory roof (roof_name's), 0 = not measured: the copy roof */
    const char *roof_name; /* "read" (pa_bench_read_bandwidth), "pinned-h2d" / "pinned-d2h"
                              (pa_bench_host_bandwidth) or NULL: "copy" (pa_bench_copy_bandwidth); the JSON
                              says "none" where no memory roof was measured */
    double roof_tflops;    /* measured cuBLAS GEMM TFLOP/s, 0 = not measured */
    double baseline_us;    /* cuBLAS-based attention on the same problem, <= 0 = none */
    const char *note;      /* extra words for the terminal line, or NULL */
} pa_bench_row;
void pa_bench_emit(const pa_op_opts *o, const pa_bench_row *r);
/* Sorts n > 0 timings ascending and returns their median (the mean of the middle two when n is
 * even); t[n / 10] and t[n * 9 / 10] are then the 10th and 90th percentiles' samples. */
double pa_bench_sort_median(double *t, int n);

/* Per-op check/bench entries: check != 0 compares the CUDA op with the CPU
 * reference (needs gpu), else times it (on the GPU, or the CPU reference when
 * gpu == 0). Return a PA_CLI_EXIT_* code. */
int pa_run_decode(const pa_op_opts *o, int check, int gpu);  /* benchmarks/bench_decode.c */
int pa_run_prefill(const pa_op_opts *o, int check, int gpu); /* benchmarks/bench_prefill.c */
int pa_run_ragged(const pa_op_opts *o, int check, int gpu);  /* benchmarks/bench_ragged.c */

/* `check baseline`'s comparison: runs the baseline problem, compares its output
 * with `want` (host, dt) under pa_tolerance_for(dt, cdt), prints one line;
 * 1 when it passed. And the prefill cases it runs (bench_prefill.c): the
 * number that failed, or -1 when the options describe a problem prefill
 * refuses (a usage error; nothing is run after it). */
struct pa_baseline_problem;
typedef int (*pa_baseline_compare_fn)(const char *what, const struct pa_baseline_problem *pb, const void *want,
                                      pa_dtype dt, pa_dtype cdt, double vmax);
int pa_prefill_baseline_check(const pa_op_opts *o, pa_baseline_compare_fn cmp);

/* Subcommands implemented in other files. */
int pa_cmd_plan(int argc, char **argv);   /* benchmarks/cmd_plan.c */
int pa_bench_plan(int argc, char **argv); /* `bench plan`, benchmarks/cmd_plan.c */

/* Strict integer parsing for flags: whole string, range-checked. Prints one
 * error line naming the flag and returns 0 on failure. */
int pa_cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out);
/* The same parse, silent: for a first look at a value that a later parse
 * reports on (one line per bad value). */
int pa_cli_peek_int(const char *s, long long lo, long long hi, long long *out);
/* "N[,N...]" into dst (at most max values, each lo..hi): no empty value, at
 * least one. Prints one error line and returns 0 on failure. */
int pa_cli_parse_int_list(const char *cmd, const char *flag, const char *s, long long lo, long long hi, int *dst,
                          int max, int *n);
/* A JSON string (quoted; quotes, backslashes and control characters escaped;
 * NULL as ""). */
void pa_cli_json_str(FILE *f, const char *s);
/* Monotonic wall clock in seconds. */
double pa_cli_now(void);
/* Whether the JSON-rows file `path` can be opened for appending (creates it):
 * 0, or one line on stderr and PA_CLI_EXIT_USAGE. Called once the options are
 * known to be good, so a refused command leaves no file behind. */
int pa_cli_probe_json(const char *cmd, const char *path);
/* Opens a JSON-rows file for appending ("-" = stdout); NULL + message on failure. */
FILE *pa_cli_open_json(const char *path);
void pa_cli_close_json(FILE *f);
/* 1 if device 0 is usable, else 0 with the reason in why. */
int pa_cli_have_gpu(char *why, size_t len);

/* ---- harness additions (issue 8) ---------------------------------------- */

/* reshape_and_cache: `bench cache` and `check cache` (benchmarks/bench_cache.c). */
int pa_run_cache(const pa_op_opts *o, int check, int gpu);
/* swap_blocks and copy_blocks: `bench blocks` and `check blocks` (benchmarks/bench_blocks.c). */
int pa_run_blocks(const pa_op_opts *o, int check, int gpu);
/* Rows pa_bench_emit printed so far, and JSON rows it failed to write (the CLI
 * exits 1 when there were any). */
int pa_bench_rows_emitted(void);
int pa_bench_json_errors(void);
/* The preset called `name`, or NULL (local_chunk, which pa_op_opts does not
 * carry, is the model's record only: no op bench applies it). */
const pa_preset *pa_preset_find(const char *name);
/* Sets the preset's model shape (heads, head size, window, soft cap, sinks) in
 * o, each one the command line did not give (o->given). */
void pa_apply_preset(pa_op_opts *o, const pa_preset *p);

#endif
