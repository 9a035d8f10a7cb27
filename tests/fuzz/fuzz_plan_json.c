/* libFuzzer target: `pagedattn plan --json`'s reader (benchmarks/plan_json.c)
 * on arbitrary bytes, under ASan and UBSan (and LeakSanitizer).
 *
 * Inputs starting with 'S' are structured: the rest of the bytes choose a
 * batch (keys in any order, repeated or left out, values, rows of any length,
 * whitespace anywhere JSON allows it), this file writes it as JSON, and the
 * reader must return exactly that batch (rows padded with 0 to the widest).
 * Other inputs are raw text. Beyond "no crash, no leak, no undefined
 * behaviour" it checks what the reader promises: a refusal carries a message; an accepted batch keeps every
 * array within its cap (PLAN_MAX_REQS values, a block table of at most
 * PLAN_MAX_BLOCKS entries, at least one column), and its fields are what the
 * text said. The last is checked by printing the batch back as JSON here (a
 * writer of its own, not the parser's code) and reading that again into a
 * fresh batch: the two must be equal field for field (scalars the text never
 * named keep their sentinel in both). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_json.h"

#define SENTINEL (-777)

static void die(const char *what) {
    fprintf(stderr, "fuzz_plan_json: %s\n", what);
    abort();
}

static void fresh(plan_in *p) {
    memset(p, 0, sizeof *p);
    p->block_size = p->prefills = p->padded = p->spb = p->chunk = SENTINEL;
}

/* A growing text buffer. */
typedef struct out {
    char *s;
    size_t n, cap;
} out;
static void put_str(out *o, const char *str) {
    const size_t k = strlen(str);
    if (o->n + k + 1 > o->cap) {
        o->cap = (o->n + k + 1) * 2;
        o->s = realloc(o->s, o->cap);
        if (!o->s)
            die("out of memory");
    }
    memcpy(o->s + o->n, str, k + 1);
    o->n += k;
}
static void put_int(out *o, long long v) {
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%lld", v);
    put_str(o, tmp);
}
static void put_key(out *o, const char *key, int *first) {
    put_str(o, *first ? "\"" : ", \"");
    *first = 0;
    put_str(o, key);
    put_str(o, "\": ");
}
static void put_row(out *o, const int32_t *v, int n) {
    put_str(o, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            put_str(o, ", ");
        put_int(o, v[i]);
    }
    put_str(o, "]");
}

/* The batch as JSON: the scalars the text set (the others still hold the
 * sentinel, which a text that sets one to it writes back as unset, reading
 * back the same; prefills and chunk by their has_ flags), the arrays
 * it set (one the text gave as [] is NULL with no entries, as is one it never
 * named: both are left out and read back the same), the block table as rows
 * of bt_width. */
static char *write_json(const plan_in *p, size_t *len) {
    out o = {0};
    int first = 1;
    put_str(&o, "{");
    const struct {
        const char *key;
        long long v;
        int set;
    } sc[] = {{"block_size", p->block_size, p->block_size != SENTINEL},
              {"padded", p->padded, p->padded != SENTINEL},
              {"slices_per_block", p->spb, p->spb != SENTINEL},
              {"prefills", p->prefills, p->has_prefills},
              {"chunk", p->chunk, p->has_chunk}};
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        if (!sc[i].set)
            continue;
        put_key(&o, sc[i].key, &first);
        put_int(&o, sc[i].v);
    }
    const struct {
        const char *key;
        const int32_t *v;
        int n;
    } ar[] = {{"computed", p->computed, p->n_computed},
              {"scheduled", p->scheduled, p->n_scheduled},
              {"encoder_lens", p->enc, p->n_enc}};
    for (size_t i = 0; i < sizeof ar / sizeof ar[0]; i++) {
        if (!ar[i].v && ar[i].n == 0)
            continue;
        put_key(&o, ar[i].key, &first);
        put_row(&o, ar[i].v, ar[i].n);
    }
    if (p->bt) {
        put_key(&o, "block_table", &first);
        put_str(&o, "[");
        for (int r = 0; r < p->bt_rows; r++) {
            if (r)
                put_str(&o, ", ");
            put_row(&o, p->bt + (size_t)r * (size_t)p->bt_width, p->bt_width);
        }
        put_str(&o, "]");
    }
    put_str(&o, "}");
    *len = o.n;
    return o.s;
}

static int same_arr(const int32_t *a, int na, const int32_t *b, int nb) {
    return na == nb && (na == 0 || memcmp(a, b, sizeof(int32_t) * (size_t)na) == 0);
}

static void check_caps(const plan_in *p) {
    if (p->n_computed < 0 || p->n_computed > PLAN_MAX_REQS || p->n_scheduled < 0 || p->n_scheduled > PLAN_MAX_REQS ||
        p->n_enc < 0 || p->n_enc > PLAN_MAX_REQS)
        die("an array past PLAN_MAX_REQS");
    if ((p->n_computed && !p->computed) || (p->n_scheduled && !p->scheduled) || (p->n_enc && !p->enc))
        die("an array with entries and no storage");
    if (p->bt && (p->bt_rows < 0 || p->bt_rows > PLAN_MAX_REQS || p->bt_width < 1 ||
                  (long long)p->bt_rows * p->bt_width > PLAN_MAX_BLOCKS))
        die("a block table past its caps, or without a column");
}

/* ---- structured inputs: a batch made from the bytes, written as JSON ------ */

typedef struct bytes {
    const uint8_t *d;
    size_t n, i;
} bytes;
static unsigned take(bytes *b) { return b->i < b->n ? b->d[b->i++] : 0; }
static int32_t take_int(bytes *b) {
    const unsigned k = take(b) % 4;
    if (k == 0)
        return (int32_t)(take(b) % 40); /* small, the usual */
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | take(b);
    return k == 1 ? (int32_t)(v % 100000) : k == 2 ? -(int32_t)(v % 1000) : (int32_t)v;
}
/* Whitespace of the bytes' choosing (none, or up to three of the four JSON allows). */
static void ws(out *o, bytes *b) {
    static const char *const sp[4] = {" ", "\t", "\n", "\r"};
    const unsigned k = take(b) % 6;
    for (unsigned i = 0; i < k && i < 3; i++)
        put_str(o, sp[take(b) % 4]);
}
static void put_int_ws(out *o, bytes *b, int32_t v) {
    ws(o, b);
    put_int(o, v);
    ws(o, b);
}
static int32_t *new_row(bytes *b, int *n, int most) {
    *n = (int)(take(b) % (unsigned)(most + 1));
    int32_t *v = *n ? malloc(sizeof(int32_t) * (size_t)*n) : NULL;
    for (int i = 0; i < *n; i++)
        v[i] = take_int(b);
    return v;
}
static void put_row_ws(out *o, bytes *b, const int32_t *v, int n) {
    ws(o, b);
    put_str(o, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            put_str(o, ",");
        put_int_ws(o, b, v[i]);
    }
    if (!n)
        ws(o, b);
    put_str(o, "]");
    ws(o, b);
}

/* Up to 12 keys in the bytes' order (repeats allowed: the last one counts),
 * each with values from the bytes; `want` is what the reader must return.
 * *empty_named is set when the text gives "computed", "scheduled" or
 * "encoder_lens" as [] anywhere: the reader refuses that (a batch has at
 * least one request; encoder lengths are one per request, or left out), even
 * when a later repeat of the key has entries. */
static char *structured(bytes *b, plan_in *want, size_t *len, int *empty_named) {
    static const char *const keys[9] = {"block_size", "padded",    "slices_per_block", "prefills",   "chunk",
                                        "computed",   "scheduled", "encoder_lens",     "block_table"};
    out o = {0};
    put_str(&o, "{");
    const unsigned nk = take(b) % 13;
    for (unsigned k = 0; k < nk; k++) {
        const unsigned key = take(b) % 9;
        if (k)
            put_str(&o, ",");
        ws(&o, b);
        put_str(&o, "\"");
        put_str(&o, keys[key]);
        put_str(&o, "\"");
        ws(&o, b);
        put_str(&o, ":");
        if (key < 5) {
            const int32_t v = take_int(b);
            put_int_ws(&o, b, v);
            if (key == 0)
                want->block_size = v;
            else if (key == 1)
                want->padded = v;
            else if (key == 2)
                want->spb = v;
            else if (key == 3)
                want->prefills = v, want->has_prefills = 1;
            else
                want->chunk = v, want->has_chunk = 1;
        } else if (key < 8) {
            int n;
            int32_t *v = new_row(b, &n, 9);
            put_row_ws(&o, b, v, n);
            if (n == 0) /* encoder_lens too since 2026-12-07 (it was read as absent) */
                *empty_named = 1;
            int32_t **dst = key == 5 ? &want->computed : key == 6 ? &want->scheduled : &want->enc;
            int *dn = key == 5 ? &want->n_computed : key == 6 ? &want->n_scheduled : &want->n_enc;
            free(*dst);
            *dst = v;
            *dn = n;
        } else {
            /* rows of their own lengths, padded with 0 to the widest (at least 1) */
            const int rows = (int)(take(b) % 7);
            int32_t *rv[6];
            int rn[6], width = 1;
            ws(&o, b);
            put_str(&o, "[");
            for (int r = 0; r < rows; r++) {
                rv[r] = new_row(b, &rn[r], 6);
                width = rn[r] > width ? rn[r] : width;
                if (r)
                    put_str(&o, ",");
                put_row_ws(&o, b, rv[r], rn[r]);
            }
            if (!rows)
                ws(&o, b);
            put_str(&o, "]");
            ws(&o, b);
            free(want->bt);
            want->bt = calloc((size_t)(rows ? rows : 1) * (size_t)width, sizeof(int32_t));
            for (int r = 0; r < rows; r++) {
                if (rn[r])
                    memcpy(want->bt + (size_t)r * (size_t)width, rv[r], sizeof(int32_t) * (size_t)rn[r]);
                free(rv[r]);
            }
            want->bt_rows = rows;
            want->bt_width = width;
        }
    }
    ws(&o, b);
    put_str(&o, "}");
    ws(&o, b);
    *len = o.n;
    return o.s;
}

static void same_batch(const plan_in *a, const plan_in *b, const char *what) {
    if (a->block_size != b->block_size || a->padded != b->padded || a->spb != b->spb ||
        a->has_prefills != b->has_prefills || a->prefills != b->prefills || a->has_chunk != b->has_chunk ||
        a->chunk != b->chunk)
        die(what);
    if (!same_arr(a->computed, a->n_computed, b->computed, b->n_computed) ||
        !same_arr(a->scheduled, a->n_scheduled, b->scheduled, b->n_scheduled) ||
        !same_arr(a->enc, a->n_enc, b->enc, b->n_enc))
        die(what);
    if (!a->bt != !b->bt || (a->bt && (a->bt_rows != b->bt_rows || a->bt_width != b->bt_width ||
                                       !same_arr(a->bt, a->bt_rows * a->bt_width, b->bt, b->bt_rows * b->bt_width))))
        die(what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 0 && data[0] == 'S') {
        /* The rest of the bytes make a batch and its text: the reader must
         * return exactly that batch. */
        bytes b = {data + 1, size - 1, 0};
        plan_in want, got;
        fresh(&want);
        fresh(&got);
        size_t len = 0;
        int empty_named = 0;
        char *text = structured(&b, &want, &len, &empty_named);
        char err[160] = {0};
        if (empty_named) {
            if (plan_json_parse(text, len, &got, err, sizeof err)) {
                fprintf(stderr, "fuzz_plan_json: accepted:\n%s\n", text);
                die("an empty computed, scheduled or encoder_lens array accepted");
            }
            if (!strstr(err, "is empty")) {
                fprintf(stderr, "fuzz_plan_json: refused (%s):\n%s\n", err, text);
                die("an empty computed, scheduled or encoder_lens array refused for another reason");
            }
            free(text);
            plan_in_free(&want);
            plan_in_free(&got);
            return 0;
        }
        if (!plan_json_parse(text, len, &got, err, sizeof err)) {
            fprintf(stderr, "fuzz_plan_json: refused (%s):\n%s\n", err, text);
            die("a well-formed batch refused");
        }
        check_caps(&got);
        same_batch(&want, &got, "the batch read differs from the batch written");
        free(text);
        plan_in_free(&want);
        plan_in_free(&got);
        return 0;
    }
    plan_in a;
    fresh(&a);
    char err[160] = {0};
    if (!plan_json_parse((const char *)data, size, &a, err, sizeof err)) {
        if (!err[0])
            die("a refusal without a message");
        plan_in_free(&a);
        return 0;
    }
    check_caps(&a);
    size_t len = 0;
    char *text = write_json(&a, &len);
    plan_in b;
    fresh(&b);
    char err2[160] = {0};
    if (!plan_json_parse(text, len, &b, err2, sizeof err2)) {
        fprintf(stderr, "fuzz_plan_json: the batch written back is refused (%s):\n%s\n", err2, text);
        die("round trip refused");
    }
    same_batch(&a, &b, "the batch changed across the round trip");
    free(text);
    plan_in_free(&a);
    plan_in_free(&b);
    return 0;
}
