/* The CLI's shared helpers: clock, integer and option parsing, JSON output
 * files, presets, the GPU probe. Every command file (pagedattn.c, cmd_plan.c,
 * bench_*.c, report.c) uses them; none of them calls back into a command. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "problems.h"

/* ---- small utilities ---------------------------------------------------- */

double pa_cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pa_cli_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* pa_cli_parse_int, saying why it refuses a value when `say`. */
static int parse_int(int say, const char *flag, const char *s, long long lo, long long hi, long long *out) {
    if (!s || !*s) {
        if (say)
            fprintf(stderr, "pagedattn: %s needs a value\n", flag);
        return 0;
    }
    /* Digits with an optional '-', nothing else: strtoll alone would take
     * leading blanks and a '+'. */
    const char *d = s[0] == '-' ? s + 1 : s;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*d < '0' || *d > '9' || errno || *end != '\0') {
        if (say)
            fprintf(stderr, "pagedattn: %s: '%s' is not an integer\n", flag, s);
        return 0;
    }
    if (v < lo || v > hi) {
        if (say)
            fprintf(stderr, "pagedattn: %s: %lld outside %lld..%lld\n", flag, v, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int pa_cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out) {
    return parse_int(1, flag, s, lo, hi, out);
}

int pa_cli_peek_int(const char *s, long long lo, long long hi, long long *out) {
    return parse_int(0, "", s, lo, hi, out);
}

int pa_cli_parse_int_list(const char *cmd, const char *flag, const char *s, long long lo, long long hi, int *dst,
                          int max, int *n) {
    *n = 0;
    if (!s || !*s) {
        fprintf(stderr, "pagedattn %s: %s needs at least one value\n", cmd, flag);
        return 0;
    }
    for (const char *c = s;; c++) {
        char tok[32];
        const size_t len = strcspn(c, ",");
        if (len == 0 || len >= sizeof tok) {
            fprintf(stderr, "pagedattn %s: %s: '%.60s%s' has %s value\n", cmd, flag, s, strlen(s) > 60 ? "..." : "",
                    len ? "a too long" : "an empty");
            return 0;
        }
        if (*n == max) {
            fprintf(stderr, "pagedattn %s: %s takes at most %d values\n", cmd, flag, max);
            return 0;
        }
        memcpy(tok, c, len);
        tok[len] = '\0';
        long long v;
        if (!pa_cli_parse_int(flag, tok, lo, hi, &v))
            return 0;
        dst[(*n)++] = (int)v;
        c += len;
        if (!*c)
            return 1;
    }
}

int pa_cli_probe_json(const char *cmd, const char *path) {
    /* Find out now, not after a long sweep, that the rows cannot be written. */
    if (!path || !strcmp(path, "-"))
        return 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "pagedattn %s: --json %s: cannot open for writing: %s\n", cmd, path, strerror(errno));
        return PA_CLI_EXIT_USAGE;
    }
    fclose(f);
    return 0;
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

int pa_cli_have_gpu(char *why, size_t len) {
    pa_device_props p;
    pa_status s = pa_device_info(0, &p);
    if (s != PA_SUCCESS) {
        snprintf(why, len, "%s", pa_last_error());
        return 0;
    }
    return 1;
}

/* ---- shared op options ---------------------------------------------------- */

const pa_preset PA_PRESETS[] = {
    {"llama3-8b", 32, 8, 128, 0, 0.0f, 0, 0},
    {"llama3-70b-tp8", 8, 1, 128, 0, 0.0f, 0, 0},
    {"mistral-7b", 32, 8, 128, 4096, 0.0f, 0, 0},
    {"gemma2-9b", 16, 8, 256, 0, 50.0f, 0, 0},
    /* Llama 4 Scout: 8192-token chunked local attention in three layers of four (local_chunk, for
     * reference only: no op bench reads it, so its rows are the global-attention layers; a chunked
     * layer is a local-attention virtual batch, pa_make_local_attention_virtual_batches) */
    {"llama4-scout", 40, 8, 128, 0, 0.0f, 8192, 0},
    {"qwen2.5-7b", 28, 4, 128, 0, 0.0f, 0, 0},
    {"qwen3-235b", 64, 4, 128, 0, 0.0f, 0, 0},
    {"phi3.5-mini", 32, 32, 96, 0, 0.0f, 0, 0},
    /* Nemotron-4 340B at tensor parallelism 8: 96/8 heads of 192 -> 12/1 a GPU (group 12) */
    {"nemotron4-340b-tp8", 12, 1, 192, 0, 0.0f, 0, 0},
    /* Falcon-40B at tensor parallelism 8: 128/8 heads of 64 -> 16/1 a GPU (group 16); Falcon-7B:
     * multi-query, 71 query heads over one KV head of 64 */
    {"falcon-40b-tp8", 16, 1, 64, 0, 0.0f, 0, 0},
    {"falcon-7b", 71, 1, 64, 0, 0.0f, 0, 0},
    /* gpt-oss-120b and -20b: 64 query heads, 8 KV heads, head 64, attention sinks; every
     * other layer also has a sliding window of 128 (add --window 128) */
    {"gpt-oss", 64, 8, 64, 0, 0.0f, 0, 1},
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
    o->layers = 1;
    o->ctx[0] = 1024;
#ifdef PA_CLI_INTERP
    o->seqs = 2; /* the interpreter runs about 1e5 times slower than a GPU */
    o->ctx[0] = 256;
#endif
    o->num_ctx = 1;
    o->dtype = PA_DTYPE_F16;
    o->cache_auto = 1;
    o->layout = PA_LAYOUT_VLLM;
    o->iters = 20;
    o->warmup = 3;
#ifdef PA_CLI_INTERP
    o->iters = 1; /* bench --interp: the GPU path's launches once each (the simulated clock: every pass the same) */
    o->warmup = 0;
#endif
    o->seed = 1;
}

const char *PA_OPT_HELP = "  --device cpu|gpu     where to run (default: gpu when present, else cpu)\n"
                          "  --preset NAME        model shape: llama3-8b, llama3-70b-tp8, mistral-7b, gemma2-9b,\n"
                          "                       llama4-scout, qwen2.5-7b, qwen3-235b, phi3.5-mini,\n"
                          "                       nemotron4-340b-tp8, falcon-40b-tp8, falcon-7b, gpt-oss\n"
                          "                       (sets heads, head size, window, soft cap, sinks: those the\n"
                          "                       other options do not give, wherever it stands; llama4-scout's\n"
                          "                       rows are its global layers, not its chunked local ones)\n"
                          "  --seqs N             sequences in the batch (default 8)\n"
                          "  --heads Q/KV         query/KV heads (default 32/8)\n"
                          "  --head-size N        (default 128)\n"
                          "  --ctx N[,N...]       context length(s) per sequence; a list runs a sweep (default 1024)\n"
                          "  --block-size N       tokens per cache block (default 16)\n"
                          "  --qlen N             new query tokens per sequence (prefill --variant context, ragged)\n"
                          "  --decodes N          ragged: decode sequences beside the --seqs prefill chunks\n"
                          "  --layers N           blocks --variant copy: layers copied in one launch (default 1)\n"
                          "  --variant NAME       kernel choice (decode: v1, v2, auto = recommended entry;\n"
                          "                       prefill: prompt, encoder, context, cross;\n"
                          "                       blocks: swap-out, swap-in, copy)\n"
                          "  --dtype f32|f16|bf16 query/output dtype (default f16)\n"
                          "  --cache-dtype auto|f32|f16|bf16|fp8_e4m3|fp8_e5m2 (default auto = dtype)\n"
                          "  --layout vllm|nhd|hnd cache layout (default vllm; cache also combined; ragged reads\n"
                          "                       combined only; prefill: --variant context only)\n"
                          "  --window N           sliding window (0 = off)\n"
                          "  --soft-cap X         logits soft cap (0 = off)\n"
                          "  --alibi              ALiBi slopes on\n"
                          "  --sinks              attention sinks on (gpt-oss; decode, prefill, ragged, and\n"
                          "                       the cuBLAS baseline beside them and in check baseline)\n"
                          "  --scales-per-head    fp8 caches: one k_scale and v_scale per KV head, each head's\n"
                          "                       own (pa_kv_cache.scales_per_head; decode, prefill --variant\n"
                          "                       context, ragged, cache, baseline)\n"
                          "  --iters N            measured iterations (default 20), --warmup N (default 3)\n"
                          "  --seed N             random data seed\n"
                          "  --json FILE          also write one JSON row per measurement ('-' = stdout)\n";

const pa_preset *pa_preset_find(const char *name) {
    for (int p = 0; name && p < PA_NUM_PRESETS; p++)
        if (!strcmp(name, PA_PRESETS[p].name))
            return &PA_PRESETS[p];
    return NULL;
}

void pa_apply_preset(pa_op_opts *o, const pa_preset *p) {
    o->preset = p->name;
    if (!(o->given & PA_OPT_HEADS)) {
        o->heads = p->heads;
        o->kv_heads = p->kv_heads;
    }
    if (!(o->given & PA_OPT_HEAD_SIZE))
        o->head_size = p->head_size;
    if (!(o->given & PA_OPT_WINDOW))
        o->window = p->window;
    if (!(o->given & PA_OPT_SOFT_CAP))
        o->soft_cap = p->soft_cap;
    if (!(o->given & PA_OPT_SINKS))
        o->sinks = p->sinks;
}

const char *pa_opt_name(unsigned bits) {
    static const char *const names[] = {"--device",      "--seqs",    "--heads",          "--head-size", "--block-size",
                                        "--ctx",         "--qlen",    "--decodes",        "--layers",    "--dtype",
                                        "--cache-dtype", "--layout",  "--window",         "--soft-cap",  "--alibi",
                                        "--sinks",       "--iters",   "--warmup",         "--seed",      "--json",
                                        "--preset",      "--variant", "--scales-per-head"};
    for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++)
        if (bits & (1u << k))
            return names[k];
    return "?";
}

static const struct {
    const char *op;
    const char *names[5]; /* NULL-terminated */
} VARIANTS[] = {
    {"decode", {"v1", "v2", "auto", "all", NULL}},
    {"prefill", {"prompt", "encoder", "context", "cross", NULL}},
    {"blocks", {"swap-out", "swap-in", "copy", NULL}},
};

static int variant_op(const char *op) {
    for (int k = 0; op && k < (int)(sizeof VARIANTS / sizeof VARIANTS[0]); k++)
        if (!strcmp(op, VARIANTS[k].op))
            return k;
    return -1;
}

int pa_variant_index(const char *op, const char *name) {
    const int k = variant_op(op);
    for (int i = 0; k >= 0 && name && VARIANTS[k].names[i]; i++)
        if (!strcmp(name, VARIANTS[k].names[i]))
            return i;
    return -1;
}

const char *pa_variant_name(const char *op, int i) {
    const int k = variant_op(op);
    for (int j = 0; k >= 0 && i >= 0 && VARIANTS[k].names[j]; j++)
        if (j == i)
            return VARIANTS[k].names[j];
    return NULL;
}

const char *pa_variant_list(const char *op) {
    static char lists[sizeof VARIANTS / sizeof VARIANTS[0]][64]; /* joined on first use */
    const int k = variant_op(op);
    if (k < 0)
        return NULL;
    if (!lists[k][0])
        for (int i = 0; VARIANTS[k].names[i]; i++)
            snprintf(lists[k] + strlen(lists[k]), sizeof lists[k] - strlen(lists[k]), "%s%s", i ? ", " : "",
                     VARIANTS[k].names[i]);
    return lists[k];
}

static void preset_names(char *buf, size_t len) {
    buf[0] = '\0';
    for (int p = 0; p < PA_NUM_PRESETS; p++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", p ? ", " : "", PA_PRESETS[p].name);
}

/* Parses op options from argv[i0..]; returns 0 on success, else the exit code. */
int pa_op_opts_parse(const char *cmd, int argc, char **argv, int i0, pa_op_opts *o) {
    long long v;
    const pa_preset *preset = NULL;
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
#define INT_OPT(flag, bit, lo, hi, dst)                                                                                \
    else if (!strcmp(a, flag)) {                                                                                       \
        NEED_VAL();                                                                                                    \
        if (!pa_cli_parse_int(flag, val, lo, hi, &v))                                                                  \
            return PA_CLI_EXIT_USAGE;                                                                                  \
        dst = (int)v;                                                                                                  \
        o->given |= bit;                                                                                               \
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
            o->given |= PA_OPT_DEVICE;
        }
        INT_OPT("--seqs", PA_OPT_SEQS, 1, 65536, o->seqs)
        INT_OPT("--head-size", PA_OPT_HEAD_SIZE, 1, 1024, o->head_size)
        INT_OPT("--block-size", PA_OPT_BLOCK_SIZE, 1, 1024, o->block_size)
        INT_OPT("--window", PA_OPT_WINDOW, 0, 1 << 30, o->window)
        INT_OPT("--qlen", PA_OPT_QLEN, 1, 1 << 20, o->qlen)
        INT_OPT("--decodes", PA_OPT_DECODES, 0, 65536, o->decodes)
        INT_OPT("--layers", PA_OPT_LAYERS, 1, 4096, o->layers)
        INT_OPT("--iters", PA_OPT_ITERS, 1, 100000, o->iters)
        INT_OPT("--warmup", PA_OPT_WARMUP, 0, 10000, o->warmup)
        else if (!strcmp(a, "--seed")) {
            NEED_VAL();
            if (!pa_cli_parse_int("--seed", val, 0, 1LL << 62, &v))
                return PA_CLI_EXIT_USAGE;
            o->seed = (uint64_t)v;
            o->given |= PA_OPT_SEED;
        }
        else if (!strcmp(a, "--heads")) {
            NEED_VAL();
            char buf[64];
            if (snprintf(buf, sizeof buf, "%s", val) >= (int)sizeof buf) {
                fprintf(stderr, "pagedattn %s: --heads: '%.80s...' is too long for Q/KV\n", cmd, val);
                return PA_CLI_EXIT_USAGE;
            }
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
            o->given |= PA_OPT_HEADS;
        }
        else if (!strcmp(a, "--ctx")) {
            NEED_VAL();
            if (!pa_cli_parse_int_list(cmd, "--ctx", val, 1, 1 << 22, o->ctx, PA_MAX_CTX_LIST, &o->num_ctx))
                return PA_CLI_EXIT_USAGE;
            o->given |= PA_OPT_CTX;
        }
        else if (!strcmp(a, "--dtype") || !strcmp(a, "--cache-dtype")) {
            NEED_VAL();
            int cache = !strcmp(a, "--cache-dtype");
            o->given |= cache ? PA_OPT_CACHE_DTYPE : PA_OPT_DTYPE;
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
            o->given |= PA_OPT_LAYOUT;
        }
        else if (!strcmp(a, "--soft-cap")) {
            NEED_VAL();
            char *end = NULL;
            double x = strtod(val, &end);
            /* decimal digits as the integers take them (no blank, sign, hex or
             * inf); a value a float cannot hold (0 < x below its least, or past
             * its greatest) would turn the cap off or make it infinite: refused */
            const int plain = (val[0] >= '0' && val[0] <= '9') || (val[0] == '.' && val[1] >= '0' && val[1] <= '9');
            if (!plain || strpbrk(val, "xXpP") || end == val || *end || !isfinite(x) || x < 0 ||
                (x > 0 && (float)x == 0.0f) || !isfinite((float)x)) {
                fprintf(stderr, "pagedattn %s: --soft-cap must be a number >= 0 that a float holds (got '%s')\n", cmd,
                        val);
                return PA_CLI_EXIT_USAGE;
            }
            o->soft_cap = (float)x;
            o->given |= PA_OPT_SOFT_CAP;
        }
        else if (!strcmp(a, "--variant")) {
            NEED_VAL();
            o->variant = val;
            o->given |= PA_OPT_VARIANT;
        }
        else if (!strcmp(a, "--sinks")) {
            o->sinks = 1;
            o->given |= PA_OPT_SINKS;
        }
        else if (!strcmp(a, "--alibi")) {
            o->alibi = 1;
            o->given |= PA_OPT_ALIBI;
        }
        else if (!strcmp(a, "--scales-per-head")) {
            o->scales_per_head = 1;
            o->given |= PA_OPT_SCALES_PER_HEAD;
        }
        else if (!strcmp(a, "--json")) {
            NEED_VAL();
            o->json = val; /* opened (pa_cli_probe_json) once the options are known to be good */
            o->given |= PA_OPT_JSON;
        }
        else if (!strcmp(a, "--preset")) {
            NEED_VAL();
            preset = pa_preset_find(val);
            if (!preset) {
                char names[256];
                preset_names(names, sizeof names);
                fprintf(stderr, "pagedattn %s: unknown preset '%s'; known: %s\n", cmd, val, names);
                return PA_CLI_EXIT_USAGE;
            }
            o->given |= PA_OPT_PRESET;
        }
        else {
            fprintf(stderr, "pagedattn %s: unknown option '%s' (try --help)\n", cmd, a);
            return PA_CLI_EXIT_USAGE;
        }
#undef INT_OPT
#undef NEED_VAL
    }
    /* After every option, so one given before --preset wins over it as one given after does. */
    if (preset)
        pa_apply_preset(o, preset);
    if (o->cache_auto)
        o->cache_dtype = o->dtype;
#ifdef PA_CLI_INTERP
    /* PAGEDATTN_CLI_SHRINK=1 (scripts/gpu-check-dry.sh): a GPU-sized command
     * at interpret-mode lengths, every shape option (head size, dtypes, layout,
     * variant, features, the query heads per KV head) as given, so each command
     * of the GPU plan is refused or run here as it would be there. The heads
     * shrink to one group (32/8 runs as 4/1; 8x less work, the same kernels):
     * heads that are no multiple of the KV heads stay, to be refused. */
    const char *shrink = getenv("PAGEDATTN_CLI_SHRINK");
    if (shrink && !strcmp(shrink, "1")) {
        o->seqs = o->seqs < 2 ? o->seqs : 2;
        for (int k = 0; k < o->num_ctx; k++)
            o->ctx[k] = o->ctx[k] < 160 ? o->ctx[k] : 160;
        o->qlen = o->qlen < 24 ? o->qlen : 24;
        o->decodes = o->decodes < 2 ? o->decodes : 2;
        o->layers = o->layers < 2 ? o->layers : 2;
        if (o->kv_heads > 1 && o->heads % o->kv_heads == 0) {
            o->heads /= o->kv_heads;
            o->kv_heads = 1;
        }
    }
#endif
    return 0;
}
