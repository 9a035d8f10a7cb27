/* `pagedattn plan` and `pagedattn bench plan`: the host metadata of one batch
 * as JSON, and how long building it takes.
 *
 * The batch comes from flags or from a flat JSON file (format in PLAN_HELP;
 * its reader is plan_json.c, a fuzz target of its own). Sizes are capped so
 * absurd input is a usage error, never a crash or a giant allocation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pagedattn/batch.h"
#include "pagedattn/metadata.h"
#include "plan_json.h"

static const char *PLAN_HELP =
    "usage: pagedattn plan [options]\n"
    "  Builds the host metadata of one batch (common metadata, decode/prompt builder,\n"
    "  ragged builder with KV-update slices) and prints every array as JSON on stdout.\n"
    "  --block-size N        tokens per cache block (default 16)\n"
    "  --computed LIST       tokens already cached per request, e.g. 0,5,17\n"
    "  --scheduled LIST      new tokens per request, e.g. 4,1,3\n"
    "  --block-table T       rows separated by ';', e.g. \"0,1;2,3;4,5\" (rows are padded\n"
    "                        with 0 to the widest, an empty row too, as --json's []);\n"
    "                        default: contiguous blocks per request\n"
    "  --prefills N          requests [0, N) are prefills (default: the leading requests\n"
    "                        with more than one new token)\n"
    "  --padded N            padded token count of the slot mapping (default: no padding)\n"
    "  --slices-per-block N  KV-update kernel's slices per block (default 8)\n"
    "  --encoder-lens LIST   encoder tokens per request (adds the cross-attention fields;\n"
    "                        cross blocks are allocated contiguously after the decoder's)\n"
    "  --chunk N             local-attention chunk size: adds the virtual batches\n"
    "  --json FILE           read the batch from FILE instead, a flat JSON object:\n"
    "                        {\"block_size\": 16, \"computed\": [0,5,17], \"scheduled\": [4,1,3],\n"
    "                         \"block_table\": [[0,1],[2,3],[4,5]], \"prefills\": 1, \"padded\": 0,\n"
    "                         \"slices_per_block\": 8, \"encoder_lens\": [...], \"chunk\": 4}\n"
    "                        (only computed and scheduled are required; flags given after\n"
    "                        --json override the file)\n"
    "  Exit codes: 0 ok, 2 bad flags, values or batch (one line on stderr).\n";

static const char *BENCH_PLAN_HELP =
    "usage: pagedattn bench plan [--reps N] [--seed S]\n"
    "  Times building all host metadata of one step (common metadata + decode/prompt\n"
    "  builder + ragged builder with KV-update slices) for 8, 256 and 4096 requests of\n"
    "  mixed lengths (90% decodes, 10% prefill chunks of 16..512 tokens, contexts\n"
    "  0..3999, block size 16). Prints the median microseconds per step. The batches\n"
    "  are the ones scripts/numpy_plan_baseline.py builds with the same seed.\n"
    "  A second table times vLLM's builder steps for chunked local attention on the\n"
    "  same batches: reorder (decodes first), common metadata with the slot mapping,\n"
    "  and the local virtual batches (attn_chunk_size 8192, their block table), twice\n"
    "  per size, one after the other: table 'full' writes vLLM's whole virtual\n"
    "  block table (PA_LOCAL_TABLE_FULL), 'used' only the columns the kernels read\n"
    "  (PA_LOCAL_TABLE_USED); table_KiB is what each writes into that table.\n";

static int usage_error(const char *msg) {
    fprintf(stderr, "pagedattn plan: %s\n", msg);
    return PA_CLI_EXIT_USAGE;
}

/* Parses "a,b,c" into a new array; returns 0 and prints on error. */
static int parse_list(const char *flag, const char *s, int32_t **out, int *n) {
    if (!s || !*s) {
        fprintf(stderr, "pagedattn plan: %s needs a value\n", flag);
        return 0;
    }
    long long count = 1;
    for (const char *c = s; *c; c++)
        count += *c == ',';
    if (count > PLAN_MAX_REQS) {
        fprintf(stderr, "pagedattn plan: %s: %lld values, at most %d\n", flag, count, PLAN_MAX_REQS);
        return 0;
    }
    int32_t *v = malloc(sizeof(int32_t) * (size_t)count);
    if (!v) {
        fprintf(stderr, "pagedattn plan: out of memory\n");
        return 0;
    }
    const char *c = s;
    for (long long i = 0; i < count; i++) {
        char tok[32];
        size_t len = strcspn(c, ",");
        if (len == 0 || len >= sizeof tok) {
            fprintf(stderr, "pagedattn plan: %s: value %lld is %s\n", flag, i, len ? "too long" : "empty");
            free(v);
            return 0;
        }
        memcpy(tok, c, len);
        tok[len] = '\0';
        long long x;
        char name[64];
        snprintf(name, sizeof name, "%s value %lld", flag, i);
        if (!pa_cli_parse_int(name, tok, INT32_MIN, INT32_MAX, &x)) {
            free(v);
            return 0;
        }
        v[i] = (int32_t)x;
        c += len + (c[len] == ',');
    }
    free(*out);
    *out = v;
    *n = (int)count;
    return 1;
}

/* "0,1;2,3;4" -> rows padded with 0 to the widest. */
static int parse_table(const char *s, plan_in *p) {
    long long rows = 1, entries = 1;
    for (const char *c = s; *c; c++) {
        rows += *c == ';';
        entries += *c == ',' || *c == ';';
    }
    if (rows > PLAN_MAX_REQS || entries > PLAN_MAX_BLOCKS)
        return usage_error("--block-table: too many rows or entries");
    int32_t **row_vals = calloc((size_t)rows, sizeof(int32_t *));
    int *row_n = calloc((size_t)rows, sizeof(int));
    int ok = row_vals && row_n, width = 1;
    const char *c = s;
    char name[48];
    for (long long r = 0; ok && r < rows; r++) {
        size_t len = strcspn(c, ";");
        char *tmp = malloc(len + 1);
        if (!tmp) {
            ok = 0;
            break;
        }
        memcpy(tmp, c, len);
        tmp[len] = '\0';
        snprintf(name, sizeof name, "--block-table row %lld", r);
        /* an empty row ("0,1;" or "0,1;;2") is padded like a short one, as --json's [] */
        ok = len == 0 || parse_list(name, tmp, &row_vals[r], &row_n[r]);
        free(tmp);
        width = ok && row_n[r] > width ? row_n[r] : width;
        c += len + (c[len] == ';');
    }
    if (ok && (long long)rows * width > PLAN_MAX_BLOCKS) {
        fprintf(stderr, "pagedattn plan: --block-table: %lld x %d entries, at most %d\n", rows, width, PLAN_MAX_BLOCKS);
        ok = 0;
    }
    if (ok) {
        free(p->bt);
        p->bt = calloc((size_t)rows * (size_t)width, sizeof(int32_t));
        ok = p->bt != NULL;
        for (long long r = 0; ok && r < rows; r++)
            if (row_n[r] > 0) /* an empty row has no array (row_vals[r] NULL) */
                memcpy(p->bt + r * width, row_vals[r], sizeof(int32_t) * (size_t)row_n[r]);
        p->bt_rows = (int)rows;
        p->bt_width = width;
    }
    for (long long r = 0; row_vals && r < rows; r++)
        free(row_vals[r]);
    free(row_vals);
    free(row_n);
    return ok ? 0 : PA_CLI_EXIT_USAGE;
}

static int read_json(const char *path, plan_in *p) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "pagedattn plan: --json %s: %s\n", path, strerror(errno));
        return PA_CLI_EXIT_USAGE;
    }
    char *buf = malloc(PLAN_MAX_JSON_BYTES + 1);
    errno = 0;
    size_t n = buf ? fread(buf, 1, PLAN_MAX_JSON_BYTES + 1, f) : 0;
    /* A directory opens but does not read (EISDIR): say so, not "expected '{'". */
    const int read_errno = buf && ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (!buf)
        return usage_error("out of memory");
    if (read_errno) {
        free(buf);
        fprintf(stderr, "pagedattn plan: --json %s: %s\n", path, strerror(read_errno));
        return PA_CLI_EXIT_USAGE;
    }
    if (n > PLAN_MAX_JSON_BYTES) {
        free(buf);
        fprintf(stderr, "pagedattn plan: --json %s: larger than %d bytes\n", path, PLAN_MAX_JSON_BYTES);
        return PA_CLI_EXIT_USAGE;
    }
    char err[160];
    int ok = plan_json_parse(buf, n, p, err, sizeof err);
    free(buf);
    if (!ok) {
        fprintf(stderr, "pagedattn plan: --json %s: %s\n", path, err);
        return PA_CLI_EXIT_USAGE;
    }
    return 0;
}

/* ---- JSON output ------------------------------------------------------------ */

static void put_arr(const char *key, const int32_t *v, long long n, int last) {
    printf("    \"%s\": [", key);
    for (long long i = 0; i < n; i++)
        printf(i ? ", %d" : "%d", v[i]);
    printf("]%s\n", last ? "" : ",");
}
static void put_arr64(const char *key, const int64_t *v, long long n, int last) {
    printf("    \"%s\": [", key);
    for (long long i = 0; i < n; i++)
        printf(i ? ", %lld" : "%lld", (long long)v[i]);
    printf("]%s\n", last ? "" : ",");
}
static void put_rows(const char *key, const int32_t *v, long long rows, long long width, int last) {
    printf("    \"%s\": [", key);
    for (long long r = 0; r < rows; r++) {
        printf(r ? ", [" : "[");
        for (long long c = 0; c < width; c++)
            printf(c ? ", %d" : "%d", v[r * width + c]);
        printf("]");
    }
    printf("]%s\n", last ? "" : ",");
}
static void put_view(const char *key, const pa_seq_view *v, int stride, int last) {
    printf("    \"%s\": {\"first_seq\": %d, \"num_seqs\": %d, \"first_token\": %d, \"num_tokens\": %d, "
           "\"max_query_len\": %d, \"max_seq_len\": %d}%s\n",
           key, v->first_seq, v->num_seqs, v->first_token, v->num_tokens, v->max_query_len, v->max_seq_len,
           last ? "" : ",");
    (void)stride;
}

/* ---- plan -------------------------------------------------------------------- */

int pa_cmd_plan(int argc, char **argv) {
    plan_in p;
    memset(&p, 0, sizeof p);
    p.block_size = 16;
    p.spb = 8;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(PLAN_HELP, stdout);
            return PA_CLI_EXIT_OK;
        }
    if (argc < 2)
        return usage_error("needs --computed and --scheduled, or --json FILE (see pagedattn plan --help)");
    for (int i = 1; i < argc && !rc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
#define INT_FLAG(name, lo, hi, dst, extra)                                                                             \
    if (!strcmp(f, name)) {                                                                                            \
        if (!pa_cli_parse_int("plan " name, val, lo, hi, &x)) {                                                        \
            rc = PA_CLI_EXIT_USAGE;                                                                                    \
            break;                                                                                                     \
        }                                                                                                              \
        dst = x;                                                                                                       \
        extra;                                                                                                         \
        i++;                                                                                                           \
        continue;                                                                                                      \
    }
        INT_FLAG("--block-size", INT32_MIN, INT32_MAX, p.block_size, (void)0)
        INT_FLAG("--prefills", INT32_MIN, INT32_MAX, p.prefills, p.has_prefills = 1)
        INT_FLAG("--padded", 0, PLAN_MAX_TOKENS, p.padded, (void)0)
        INT_FLAG("--slices-per-block", INT32_MIN, PLAN_MAX_TOKENS, p.spb, (void)0)
        INT_FLAG("--chunk", INT32_MIN, INT32_MAX, p.chunk, p.has_chunk = 1)
#undef INT_FLAG
        if (!strcmp(f, "--computed") || !strcmp(f, "--scheduled") || !strcmp(f, "--encoder-lens")) {
            int ok = !strcmp(f, "--computed")    ? parse_list(f, val, &p.computed, &p.n_computed)
                     : !strcmp(f, "--scheduled") ? parse_list(f, val, &p.scheduled, &p.n_scheduled)
                                                 : parse_list(f, val, &p.enc, &p.n_enc);
            rc = ok ? 0 : PA_CLI_EXIT_USAGE;
            i++;
        } else if (!strcmp(f, "--block-table")) {
            rc = val ? parse_table(val, &p) : usage_error("--block-table needs a value");
            i++;
        } else if (!strcmp(f, "--json")) {
            rc = val ? read_json(val, &p) : usage_error("--json needs a value");
            i++;
        } else {
            fprintf(stderr, "pagedattn plan: unknown flag '%s' (see pagedattn plan --help)\n", f);
            rc = PA_CLI_EXIT_USAGE;
        }
    }
    if (rc) {
        plan_in_free(&p);
        return rc;
    }

    /* ---- assemble and check the batch shape (the library checks the values) */
    /* the flags' caps, for --json's keys too: the slot mapping and the slices are allocated and printed */
    if (p.padded < 0 || p.padded > PLAN_MAX_TOKENS)
        rc = usage_error("padded is outside 0..16777216 (PLAN_MAX_TOKENS)");
    else if (p.spb > PLAN_MAX_TOKENS)
        rc = usage_error("slices_per_block is above 16777216 (PLAN_MAX_TOKENS)");
    if (rc) {
        plan_in_free(&p);
        return rc;
    }
    if (!p.computed || !p.scheduled)
        rc = usage_error("--computed and --scheduled (or a --json file with both) are required");
    else if (p.n_computed != p.n_scheduled)
        rc = usage_error("--computed and --scheduled have different lengths");
    else if (p.enc && p.n_enc != p.n_scheduled)
        rc = usage_error("--encoder-lens has a different length from --scheduled");
    else if (p.bt && p.bt_rows != p.n_scheduled)
        rc = usage_error("--block-table has a different number of rows from --scheduled");
    else if (p.block_size <= 0)
        rc = usage_error("block_size must be > 0");
    if (rc) {
        plan_in_free(&p);
        return rc;
    }
    const int n = p.n_scheduled;
    const int32_t bs = (int32_t)p.block_size;
    long long total = 0, enc_total = 0, alloc_blocks = 0;
    int need_w = 1, need_ew = 1;
    for (int r = 0; r < n; r++) {
        long long s = (long long)p.computed[r] + p.scheduled[r];
        if (p.computed[r] < 0 || p.scheduled[r] < 0)
            continue; /* the library names it below */
        total += p.scheduled[r];
        long long nb = (s + bs - 1) / bs;
        alloc_blocks += nb;
        need_w = nb > need_w ? (int)(nb > PLAN_MAX_BLOCKS ? PLAN_MAX_BLOCKS + 1 : nb) : need_w;
        if (p.enc && p.enc[r] >= 0) { /* (a negative one: the library names it below) */
            long long ne = ((long long)p.enc[r] + bs - 1) / bs;
            enc_total += p.enc[r];
            alloc_blocks += ne;
            need_ew = ne > need_ew ? (int)(ne > PLAN_MAX_BLOCKS ? PLAN_MAX_BLOCKS + 1 : ne) : need_ew;
        }
    }
    if (total > PLAN_MAX_TOKENS || enc_total > PLAN_MAX_TOKENS) {
        fprintf(stderr, "pagedattn plan: %lld new / %lld encoder tokens; the CLI plans at most %d\n", total, enc_total,
                PLAN_MAX_TOKENS);
        plan_in_free(&p);
        return PA_CLI_EXIT_USAGE;
    }
    if (!p.bt || p.enc) {
        if (alloc_blocks > PLAN_MAX_BLOCKS || (long long)need_w * n > PLAN_MAX_BLOCKS ||
            (long long)need_ew * n > PLAN_MAX_BLOCKS) {
            fprintf(stderr,
                    "pagedattn plan: the default allocation needs %lld blocks; at most %d (give --block-table "
                    "or a larger --block-size)\n",
                    alloc_blocks, PLAN_MAX_BLOCKS);
            plan_in_free(&p);
            return PA_CLI_EXIT_USAGE;
        }
    }
    int32_t *cross_bt = NULL;
    long long next_block = 0; /* 64-bit: a given table's largest id may be INT32_MAX - 1 */
    if (!p.bt) {              /* contiguous: request r gets the next cdiv(seq_len, bs) blocks */
        p.bt_width = need_w;
        p.bt_rows = n;
        p.bt = calloc((size_t)(n ? n : 1) * (size_t)need_w, sizeof(int32_t));
        for (int r = 0; p.bt && r < n; r++) {
            long long s = (long long)p.computed[r] + p.scheduled[r];
            int nb = s > 0 ? (int)((s + bs - 1) / bs) : 0;
            for (int k = 0; k < nb && k < need_w; k++)
                p.bt[(size_t)r * need_w + k] = (int32_t)next_block++;
        }
    } else {
        for (long long k = 0; k < (long long)p.bt_rows * p.bt_width; k++)
            next_block = p.bt[k] >= next_block && p.bt[k] < INT32_MAX ? p.bt[k] + 1 : next_block;
    }
    if (p.enc) {
        cross_bt = calloc((size_t)(n ? n : 1) * (size_t)need_ew, sizeof(int32_t));
        for (int r = 0; cross_bt && r < n; r++) {
            int ne = p.enc[r] > 0 ? (int)(((long long)p.enc[r] + bs - 1) / bs) : 0;
            for (int k = 0; k < ne && k < need_ew; k++) {
                if (next_block > INT32_MAX) {
                    fprintf(stderr,
                            "pagedattn plan: the cross blocks, allocated after the block table's largest id, pass "
                            "the int32 block ids\n");
                    free(cross_bt);
                    plan_in_free(&p);
                    return PA_CLI_EXIT_USAGE;
                }
                cross_bt[(size_t)r * need_ew + k] = (int32_t)next_block++;
            }
        }
    }
    if (!p.has_prefills) {
        p.prefills = 0;
        while (p.prefills < n && p.scheduled[p.prefills] > 1)
            p.prefills++;
    }

    /* ---- build ---------------------------------------------------------- */
    const long long padded = p.padded ? p.padded : total;
    int32_t *qsl = malloc(sizeof(int32_t) * (size_t)(n + 1)), *sl = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *nc = malloc(sizeof(int32_t) * (size_t)(n + 1)), *ssl = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *esl = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int64_t *slots = malloc(sizeof(int64_t) * (size_t)(padded + 1));
    int64_t *cross = malloc(sizeof(int64_t) * (size_t)(enc_total + 1));
    int32_t *slices = NULL;
    int32_t *lq = NULL, *lcu = NULL, *lk = NULL, *lbt = NULL;
    if (!qsl || !sl || !nc || !ssl || !esl || !slots || !cross || !p.bt || (p.enc && !cross_bt)) {
        rc = usage_error("out of memory");
        goto done;
    }
    pa_batch batch = {n, p.computed, p.scheduled, bs, p.bt, p.bt_width};
    pa_common_metadata c;
    memset(&c, 0, sizeof c);
    c.query_start_loc = qsl;
    c.seq_lens = sl;
    c.num_computed_tokens = nc;
    c.slot_mapping = slots;
    c.slot_mapping_capacity = (int32_t)padded;
    pa_status s = pa_build_common_metadata(&batch, (int32_t)p.padded, &c);
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = ssl;
    m.encoder_seq_start_loc = esl;
    m.cross_slot_mapping = cross;
    m.cross_slot_mapping_capacity = (int32_t)enc_total;
    pa_encoder_batch enc = {p.enc, cross_bt, need_ew};
    if (s == PA_SUCCESS) {
        if (p.prefills < INT32_MIN || p.prefills > INT32_MAX)
            p.prefills = -1;
        s = pa_build_prompt_decode_metadata(&c, (int32_t)p.prefills, p.enc ? &enc : NULL, &m);
    }
    int32_t num_slices = 0, num_padded = 0;
    pa_ragged_metadata rg;
    memset(&rg, 0, sizeof rg);
    if (s == PA_SUCCESS)
        s = pa_kv_update_slices_count(&c, (int32_t)p.spb, &num_slices, &num_padded);
    if (s == PA_SUCCESS && num_padded > PLAN_MAX_TOKENS) {
        fprintf(stderr, "pagedattn plan: %d KV-update slices (padded to slices_per_block %lld); at most %d\n",
                num_padded, p.spb, PLAN_MAX_TOKENS);
        rc = PA_CLI_EXIT_USAGE;
        goto done;
    }
    if (s == PA_SUCCESS) {
        slices = malloc(sizeof(int32_t) * PA_SLICE_FIELDS * (size_t)(num_padded + 1));
        if (!slices) {
            rc = usage_error("out of memory");
            goto done;
        }
        rg.slices = slices;
        rg.slices_capacity = num_padded;
        s = pa_build_ragged_metadata(&c, (int32_t)p.spb, &rg);
    }
    int32_t nv = 0, pages = 0;
    if (s == PA_SUCCESS && p.has_chunk) {
        pa_local_attention_params lp = {(int32_t)p.chunk, bs, n, qsl, sl, p.bt, p.bt_width, p.bt_width};
        s = pa_local_attention_size(&lp, &nv, &pages);
        if (s == PA_SUCCESS && ((long long)nv * pages > PLAN_MAX_BLOCKS || nv > PLAN_MAX_TOKENS)) {
            fprintf(stderr, "pagedattn plan: --chunk %lld gives %d virtual batches x %d pages; too many\n", p.chunk, nv,
                    pages);
            rc = PA_CLI_EXIT_USAGE;
            goto done;
        }
        if (s == PA_SUCCESS) {
            lq = malloc(sizeof(int32_t) * (size_t)(nv + 1));
            lcu = malloc(sizeof(int32_t) * (size_t)(nv + 2));
            lk = malloc(sizeof(int32_t) * (size_t)(nv + 1));
            lbt = malloc(sizeof(int32_t) * ((size_t)nv * (size_t)pages + 1));
            if (!lq || !lcu || !lk || !lbt) {
                rc = usage_error("out of memory");
                goto done;
            }
            pa_local_attention_out lo = {nv, lq, lcu, lk, lbt, PA_LOCAL_TABLE_FULL};
            s = pa_make_local_attention_virtual_batches(&lp, &lo, &nv);
        }
    }
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pagedattn plan: %s: %s\n", pa_status_string(s), pa_last_error());
        rc = PA_CLI_EXIT_USAGE;
        goto done;
    }

    /* ---- print ---------------------------------------------------------- */
    printf("{\n  \"common\": {\n");
    printf("    \"num_reqs\": %d, \"num_actual_tokens\": %d, \"padded_num_tokens\": %d, \"max_query_len\": %d, "
           "\"max_seq_len\": %d, \"block_size\": %d,\n",
           c.num_reqs, c.num_actual_tokens, c.padded_num_tokens, c.max_query_len, c.max_seq_len, c.block_size);
    put_arr("query_start_loc", qsl, n + 1, 0);
    put_arr("seq_lens", sl, n, 0);
    put_arr("num_computed_tokens", nc, n, 0);
    put_rows("block_table", p.bt, n, p.bt_width, 0);
    put_arr64("slot_mapping", slots, c.padded_num_tokens, 1);
    printf("  },\n  \"prompt_decode\": {\n");
    printf("    \"num_prefills\": %d, \"num_prefill_tokens\": %d, \"num_decode_tokens\": %d, \"max_query_len\": %d, "
           "\"max_prefill_seq_len\": %d, \"max_decode_seq_len\": %d, \"max_decode_query_len\": %d,\n",
           m.num_prefills, m.num_prefill_tokens, m.num_decode_tokens, m.max_query_len, m.max_prefill_seq_len,
           m.max_decode_seq_len, m.max_decode_query_len);
    put_arr("seq_lens", m.seq_lens, n, 0);
    put_arr("context_lens", m.context_lens, n, 0);
    put_arr("query_start_loc", m.query_start_loc, n + 1, 0);
    put_arr("seq_start_loc", ssl, n + 1, 0);
    if (p.enc) {
        printf("    \"max_encoder_seq_len\": %d, \"num_encoder_tokens\": %d, \"num_cross_slots\": %d,\n",
               m.max_encoder_seq_len, m.num_encoder_tokens, m.num_cross_slots);
        put_arr("encoder_seq_lens", p.enc, n, 0);
        put_arr("encoder_seq_start_loc", esl, n + 1, 0);
        put_rows("cross_block_tables", cross_bt, n, need_ew, 0);
        put_arr64("cross_slot_mapping", cross, m.num_cross_slots, 0);
    }
    put_view("prefill", &m.prefill, p.bt_width, 0);
    put_view("decode", &m.decode, p.bt_width, 1);
    printf("  },\n  \"ragged\": {\n");
    printf("    \"num_seqs\": %d, \"num_slices\": %d, \"num_slices_padded\": %d, \"slices_per_block\": %lld,\n",
           rg.num_seqs, rg.num_slices, rg.num_slices_padded, p.spb);
    put_arr("context_lens", rg.context_lens, n, 0);
    put_arr("query_start_loc", rg.query_start_loc, n + 1, 0);
    /* field-major [3][num_slices_padded], the shape pa_kv_cache_update reads */
    put_rows("slices", slices, PA_SLICE_FIELDS, rg.num_slices_padded, 1);
    printf("  }%s\n", p.has_chunk ? "," : "");
    if (p.has_chunk) {
        printf("  \"local_attention\": {\n    \"attn_chunk_size\": %lld, \"num_virtual_batches\": %d,\n", p.chunk, nv);
        put_arr("seqlens_q_local", lq, nv, 0);
        put_arr("cu_seqlens_q_local", lcu, nv + 1, 0);
        put_arr("seqlens_k_local", lk, nv, 0);
        put_rows("block_table_local", lbt, nv, pages, 1);
        printf("  }\n");
    }
    printf("}\n");

done:
    free(qsl);
    free(sl);
    free(nc);
    free(ssl);
    free(esl);
    free(slots);
    free(cross);
    free(cross_bt);
    free(slices);
    free(lq);
    free(lcu);
    free(lk);
    free(lbt);
    plan_in_free(&p);
    return rc;
}

/* ---- bench plan ------------------------------------------------------------ */

/* The generator scripts/numpy_plan_baseline.py mirrors: a 64-bit LCG, top bits. */
static uint32_t lcg(uint64_t *x) {
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

typedef struct bench_batch {
    int n, stride, num_prefills, total;
    int32_t *comp, *sched, *bt;
} bench_batch;

/* 90% decodes, 10% prefill chunks of 16..512 tokens, contexts 0..3999; the
 * prefills are moved to the front (stable), blocks allocated contiguously. */
static int make_bench_batch(int n, uint64_t seed, bench_batch *b) {
    uint64_t x = seed;
    int32_t *c0 = malloc(sizeof(int32_t) * (size_t)n), *s0 = malloc(sizeof(int32_t) * (size_t)n);
    b->comp = malloc(sizeof(int32_t) * (size_t)n);
    b->sched = malloc(sizeof(int32_t) * (size_t)n);
    if (!c0 || !s0 || !b->comp || !b->sched)
        return 0;
    for (int r = 0; r < n; r++) {
        int prefill = lcg(&x) % 100 < 10;
        s0[r] = prefill ? 16 + (int32_t)(lcg(&x) % 497) : 1;
        c0[r] = (int32_t)(lcg(&x) % 4000);
    }
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < n; r++)
            if ((s0[r] > 1) == (pass == 0)) {
                b->comp[k] = c0[r];
                b->sched[k] = s0[r];
                k++;
            }
    b->n = n;
    b->num_prefills = 0;
    b->total = 0;
    b->stride = 1;
    for (int r = 0; r < n; r++) {
        b->num_prefills += b->sched[r] > 1;
        b->total += b->sched[r];
        int nb = (b->comp[r] + b->sched[r] + 15) / 16;
        b->stride = nb > b->stride ? nb : b->stride;
    }
    b->bt = calloc((size_t)n * (size_t)b->stride, sizeof(int32_t));
    if (!b->bt)
        return 0;
    int next = 0;
    for (int r = 0; r < n; r++) {
        int nb = (b->comp[r] + b->sched[r] + 15) / 16;
        for (int j = 0; j < nb; j++)
            b->bt[(size_t)r * b->stride + j] = next++;
    }
    free(c0);
    free(s0);
    return 1;
}

/* Reorder + common metadata (slot mapping) + local virtual batches, the steps
 * of vLLM's builder for chunked local attention (Llama-4: chunk 8192), with
 * each table fill in turn (its own warm-up and output table). */
static int bench_plan_local(long long reps, long long seed, const int *sizes) {
    enum { CHUNK = 8192, BS = 16 };
    static const char *fill_name[2] = {"full", "used"};
    printf("# bench plan local: reorder + common metadata (slot mapping) + local virtual batches, attn_chunk_size "
           "%d, block_size %d\n",
           CHUNK, BS);
    printf("%-6s %-8s %-8s %-8s %-8s %-6s %10s %12s %12s %12s\n", "reqs", "prefill", "tokens", "virtual", "pages",
           "table", "table_KiB", "median_us", "p10_us", "p90_us");
    for (int si = 0; si < 3; si++) {
        bench_batch b;
        memset(&b, 0, sizeof b);
        const int n = sizes[si];
        if (!make_bench_batch(n, (uint64_t)seed + (uint64_t)n, &b)) {
            fprintf(stderr, "pagedattn bench plan: out of memory\n");
            return PA_CLI_EXIT_FAIL;
        }
        int32_t *qsl = malloc(sizeof(int32_t) * (size_t)(n + 1)), *sl = malloc(sizeof(int32_t) * (size_t)n);
        int32_t *nc = malloc(sizeof(int32_t) * (size_t)n), *perm = malloc(sizeof(int32_t) * (size_t)n);
        int32_t *tok = malloc(sizeof(int32_t) * (size_t)n);
        int64_t *slots = malloc(sizeof(int64_t) * (size_t)(b.total + 1));
        pa_batch batch = {n, b.comp, b.sched, BS, b.bt, b.stride};
        pa_common_metadata c;
        memset(&c, 0, sizeof c);
        c.query_start_loc = qsl;
        c.seq_lens = sl;
        c.num_computed_tokens = nc;
        c.slot_mapping = slots;
        c.slot_mapping_capacity = b.total;
        int32_t nv = 0, pages = 0;
        if (!qsl || !sl || !nc || !perm || !tok || !slots || pa_build_common_metadata(&batch, 0, &c) != PA_SUCCESS) {
            fprintf(stderr, "pagedattn bench plan: setup failed: %s\n", pa_last_error());
            return PA_CLI_EXIT_FAIL;
        }
        pa_local_attention_params lp = {CHUNK, BS, n, qsl, sl, b.bt, b.stride, b.stride};
        if (pa_local_attention_size(&lp, &nv, &pages) != PA_SUCCESS) {
            fprintf(stderr, "pagedattn bench plan: %s\n", pa_last_error());
            return PA_CLI_EXIT_FAIL;
        }
        int32_t *lq = malloc(sizeof(int32_t) * (size_t)(nv + 1)), *lcu = malloc(sizeof(int32_t) * (size_t)(nv + 2));
        int32_t *lk = malloc(sizeof(int32_t) * (size_t)(nv + 1));
        int32_t *lbt = malloc(sizeof(int32_t) * ((size_t)nv * (size_t)pages + 1));
        /* its own table: the columns it leaves are never written by the other fill */
        int32_t *lbt_used = malloc(sizeof(int32_t) * ((size_t)nv * (size_t)pages + 1));
        const int inner = n <= 8 ? 200 : n <= 256 ? 20 : 2;
        const int samples = reps ? (int)reps : (n <= 256 ? 2000 : 500);
        double *t[2] = {malloc(sizeof(double) * (size_t)samples), malloc(sizeof(double) * (size_t)samples)};
        if (!lq || !lcu || !lk || !lbt || !lbt_used || !t[0] || !t[1]) {
            fprintf(stderr, "pagedattn bench plan: out of memory\n");
            return PA_CLI_EXIT_FAIL;
        }
        pa_local_attention_out lo[2] = {{nv, lq, lcu, lk, lbt, PA_LOCAL_TABLE_FULL},
                                        {nv, lq, lcu, lk, lbt_used, PA_LOCAL_TABLE_USED}};
        int bad = 0;
        for (int f = 0; f < 2; f++) {
            for (int w = 0; w < samples + 10; w++) {
                double t0 = pa_cli_now();
                for (int k = 0; k < inner; k++) {
                    for (int r = 0; r < n; r++)
                        perm[r] = r;
                    int modified = 0;
                    bad |= pa_reorder_batch_to_split_decodes_and_prefills(b.sched, n, 1, NULL, NULL, perm, tok,
                                                                          &modified) != PA_SUCCESS;
                    bad |= pa_build_common_metadata(&batch, 0, &c) != PA_SUCCESS;
                    bad |= pa_make_local_attention_virtual_batches(&lp, &lo[f], NULL) != PA_SUCCESS;
                }
                double dt = (pa_cli_now() - t0) / inner;
                if (w >= 10)
                    t[f][w - 10] = dt * 1e6;
            }
        }
        if (bad) {
            fprintf(stderr, "pagedattn bench plan: a build failed: %s\n", pa_last_error());
            return PA_CLI_EXIT_FAIL;
        }
        /* what each fill writes into the virtual block table; the used
         * columns of the two tables agree */
        long long used_cols = 0;
        for (int32_t v = 0; v < nv; v++) {
            const int32_t cols = (lk[v] + BS - 1) / BS;
            used_cols += cols;
            bad |= memcmp(lbt + (size_t)v * pages, lbt_used + (size_t)v * pages, sizeof(int32_t) * (size_t)cols) != 0;
        }
        if (bad) {
            fprintf(stderr, "pagedattn bench plan: the used columns differ from the full table's\n");
            return PA_CLI_EXIT_FAIL;
        }
        const double kib[2] = {(double)nv * pages * sizeof(int32_t) / 1024.0,
                               (double)used_cols * sizeof(int32_t) / 1024.0};
        for (int f = 0; f < 2; f++) {
            const double med = pa_bench_sort_median(t[f], samples);
            printf("%-6d %-8d %-8d %-8d %-8d %-6s %10.1f %12.3f %12.3f %12.3f\n", n, b.num_prefills, b.total, nv, pages,
                   fill_name[f], kib[f], med, t[f][samples / 10], t[f][samples * 9 / 10]);
            free(t[f]);
        }
        free(qsl);
        free(sl);
        free(nc);
        free(perm);
        free(tok);
        free(slots);
        free(lq);
        free(lcu);
        free(lk);
        free(lbt);
        free(lbt_used);
        free(b.comp);
        free(b.sched);
        free(b.bt);
    }
    return PA_CLI_EXIT_OK;
}

int pa_bench_plan(int argc, char **argv) {
    long long reps = 0, seed = 1234;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            fputs(BENCH_PLAN_HELP, stdout);
            return PA_CLI_EXIT_OK;
        } else if (!strcmp(f, "--reps")) {
            if (!pa_cli_parse_int("bench plan --reps", val, 1, 1000000, &reps))
                return PA_CLI_EXIT_USAGE;
            i++;
        } else if (!strcmp(f, "--seed")) {
            if (!pa_cli_parse_int("bench plan --seed", val, 0, 1LL << 62, &seed))
                return PA_CLI_EXIT_USAGE;
            i++;
        } else {
            fprintf(stderr, "pagedattn bench plan: unknown flag '%s' (see --help)\n", f);
            return PA_CLI_EXIT_USAGE;
        }
    }
    static const int sizes[3] = {8, 256, 4096};
    printf("# bench plan: common metadata + decode/prompt builder + ragged builder (KV-update slices), "
           "block_size 16, slices_per_block 8, host only\n");
    printf("%-6s %-8s %-8s %-8s %-8s %12s %12s %12s\n", "reqs", "prefill", "tokens", "slots", "slices", "median_us",
           "p10_us", "p90_us");
    for (int si = 0; si < 3; si++) {
        bench_batch b;
        memset(&b, 0, sizeof b);
        const int n = sizes[si];
        if (!make_bench_batch(n, (uint64_t)seed + (uint64_t)n, &b)) {
            fprintf(stderr, "pagedattn bench plan: out of memory\n");
            return PA_CLI_EXIT_FAIL;
        }
        int32_t *qsl = malloc(sizeof(int32_t) * (size_t)(n + 1)), *sl = malloc(sizeof(int32_t) * (size_t)n);
        int32_t *nc = malloc(sizeof(int32_t) * (size_t)n), *ssl = malloc(sizeof(int32_t) * (size_t)(n + 1));
        int64_t *slots = malloc(sizeof(int64_t) * (size_t)(b.total + 1));
        int32_t bound = 0;
        pa_kv_update_slices_upper_bound(n, b.total, 16, 8, &bound);
        int32_t *slices = malloc(sizeof(int32_t) * 3 * (size_t)(bound + 1));
        pa_batch batch = {n, b.comp, b.sched, 16, b.bt, b.stride};
        pa_common_metadata c;
        memset(&c, 0, sizeof c);
        c.query_start_loc = qsl;
        c.seq_lens = sl;
        c.num_computed_tokens = nc;
        c.slot_mapping = slots;
        c.slot_mapping_capacity = b.total;
        pa_prompt_decode_metadata m;
        memset(&m, 0, sizeof m);
        m.seq_start_loc = ssl;
        pa_ragged_metadata rg;
        memset(&rg, 0, sizeof rg);
        rg.slices = slices;
        rg.slices_capacity = bound;
        /* one sample = `inner` steps, so a sample is well above clock resolution */
        const int inner = n <= 8 ? 200 : n <= 256 ? 20 : 2;
        const int samples = reps ? (int)reps : (n <= 256 ? 2000 : 500);
        double *t = malloc(sizeof(double) * (size_t)samples);
        if (!qsl || !sl || !nc || !ssl || !slots || !slices || !t) {
            fprintf(stderr, "pagedattn bench plan: out of memory\n");
            return PA_CLI_EXIT_FAIL;
        }
        int bad = 0;
        for (int w = 0; w < samples + 10; w++) {
            double t0 = pa_cli_now();
            for (int k = 0; k < inner; k++) {
                bad |= pa_build_common_metadata(&batch, 0, &c) != PA_SUCCESS;
                bad |= pa_build_prompt_decode_metadata(&c, b.num_prefills, NULL, &m) != PA_SUCCESS;
                bad |= pa_build_ragged_metadata(&c, 8, &rg) != PA_SUCCESS;
            }
            double dt = (pa_cli_now() - t0) / inner;
            if (w >= 10)
                t[w - 10] = dt * 1e6;
        }
        if (bad) {
            fprintf(stderr, "pagedattn bench plan: a build failed: %s\n", pa_last_error());
            return PA_CLI_EXIT_FAIL;
        }
        const double med = pa_bench_sort_median(t, samples);
        printf("%-6d %-8d %-8d %-8d %-8d %12.3f %12.3f %12.3f\n", n, b.num_prefills, b.total, c.padded_num_tokens,
               rg.num_slices, med, t[samples / 10], t[samples * 9 / 10]);
        free(t);
        free(qsl);
        free(sl);
        free(nc);
        free(ssl);
        free(slots);
        free(slices);
        free(b.comp);
        free(b.sched);
        free(b.bt);
    }
    return bench_plan_local(reps, seed, sizes);
}
