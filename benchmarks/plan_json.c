/* The flat JSON reader of `pagedattn plan --json` (plan_json.h): a small
 * recursive-descent parser for exactly that format. */
#include "plan_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plan_in_free(plan_in *p) {
    free(p->computed);
    free(p->scheduled);
    free(p->enc);
    free(p->bt);
}

typedef struct jp {
    const char *s;
    size_t i, n;
    char err[160];
} jp;

static void jws(jp *j) {
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r'))
        j->i++;
}
static int jfail(jp *j, const char *what) {
    if (!j->err[0]) {
        size_t line = 1;
        for (size_t k = 0; k < j->i && k < j->n; k++)
            line += j->s[k] == '\n';
        snprintf(j->err, sizeof j->err, "line %zu: %s", line, what);
    }
    return 0;
}
static int jchar(jp *j, char c) {
    jws(j);
    if (j->i < j->n && j->s[j->i] == c) {
        j->i++;
        return 1;
    }
    return 0;
}
static int jint(jp *j, int32_t *out) {
    jws(j);
    char tok[32];
    size_t k = 0;
    while (j->i < j->n && k < sizeof tok - 1 && (j->s[j->i] == '-' || (j->s[j->i] >= '0' && j->s[j->i] <= '9')))
        tok[k++] = j->s[j->i++];
    tok[k] = '\0';
    if (k == 0)
        return jfail(j, "expected an integer");
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (errno || *end || v < INT32_MIN || v > INT32_MAX)
        return jfail(j, "integer out of int32 range");
    *out = (int32_t)v;
    return 1;
}
/* [int, ...] into a growing array (limit elements). */
static int jarray(jp *j, int32_t **out, int *n, long long limit) {
    if (!jchar(j, '['))
        return jfail(j, "expected '['");
    int32_t *v = NULL;
    long long cnt = 0, cap = 0;
    if (!jchar(j, ']')) {
        do {
            if (cnt == limit) {
                free(v);
                return jfail(j, "array too long");
            }
            if (cnt == cap) {
                cap = cap ? cap * 2 : 16;
                int32_t *nv = realloc(v, sizeof(int32_t) * (size_t)cap);
                if (!nv) {
                    free(v);
                    return jfail(j, "out of memory");
                }
                v = nv;
            }
            if (!jint(j, &v[cnt])) {
                free(v);
                return 0;
            }
            cnt++;
        } while (jchar(j, ','));
        if (!jchar(j, ']')) {
            free(v);
            return jfail(j, "expected ',' or ']'");
        }
    }
    free(*out);
    *out = v;
    *n = (int)cnt;
    return 1;
}
static int jtable(jp *j, plan_in *p) {
    if (!jchar(j, '['))
        return jfail(j, "expected '[' (block_table is an array of rows)");
    int32_t *flat = NULL;
    int rows = 0, width = 1;
    int32_t **rv = NULL;
    int *rn = NULL;
    int ok = 1;
    if (!jchar(j, ']')) {
        do {
            if (rows == PLAN_MAX_REQS) {
                ok = jfail(j, "block_table has too many rows");
                break;
            }
            int32_t **nrv = realloc(rv, sizeof(int32_t *) * (size_t)(rows + 1));
            int *nrn = nrv ? realloc(rn, sizeof(int) * (size_t)(rows + 1)) : NULL;
            if (nrv)
                rv = nrv;
            if (!nrv || !nrn) {
                ok = jfail(j, "out of memory");
                break;
            }
            rn = nrn;
            rv[rows] = NULL;
            rn[rows] = 0;
            rows++;
            if (!jarray(j, &rv[rows - 1], &rn[rows - 1], PLAN_MAX_BLOCKS)) {
                ok = 0;
                break;
            }
            width = rn[rows - 1] > width ? rn[rows - 1] : width;
            if ((long long)rows * width > PLAN_MAX_BLOCKS) {
                ok = jfail(j, "block_table too large");
                break;
            }
        } while (jchar(j, ','));
        if (ok && !jchar(j, ']'))
            ok = jfail(j, "expected ',' or ']' in block_table");
    }
    if (ok) {
        /* at least one element: calloc(0) may be NULL; an empty row has no
         * array to copy from (rv[r] NULL, and memcpy's source must not be) */
        flat = calloc((size_t)(rows ? rows : 1) * (size_t)(width ? width : 1), sizeof(int32_t));
        if (!flat)
            ok = jfail(j, "out of memory");
        for (int r = 0; ok && r < rows; r++)
            if (rn[r] > 0)
                memcpy(flat + (size_t)r * width, rv[r], sizeof(int32_t) * (size_t)rn[r]);
    }
    for (int r = 0; r < rows; r++)
        free(rv[r]);
    free(rv);
    free(rn);
    if (ok) {
        free(p->bt);
        p->bt = flat;
        p->bt_rows = rows;
        p->bt_width = width;
    }
    return ok;
}
static int jkey(jp *j, char *key, size_t cap) {
    if (!jchar(j, '"'))
        return jfail(j, "expected a key string");
    size_t k = 0;
    while (j->i < j->n && j->s[j->i] != '"') {
        if (k + 1 >= cap)
            return jfail(j, "key too long");
        key[k++] = j->s[j->i++];
    }
    key[k] = '\0';
    if (!jchar(j, '"'))
        return jfail(j, "unterminated key");
    return 1;
}
static int json_object(jp *j, plan_in *p) {
    if (!jchar(j, '{'))
        return jfail(j, "expected '{'");
    if (jchar(j, '}'))
        goto end;
    do {
        char key[40];
        int32_t v;
        if (!jkey(j, key, sizeof key) || !(jchar(j, ':') || jfail(j, "expected ':'")))
            return 0;
        if (!strcmp(key, "computed")) {
            if (!jarray(j, &p->computed, &p->n_computed, PLAN_MAX_REQS))
                return 0;
            if (p->n_computed == 0)
                return jfail(j, "\"computed\" is empty (a batch has at least one request)");
        } else if (!strcmp(key, "scheduled")) {
            if (!jarray(j, &p->scheduled, &p->n_scheduled, PLAN_MAX_REQS))
                return 0;
            if (p->n_scheduled == 0)
                return jfail(j, "\"scheduled\" is empty (a batch has at least one request)");
        } else if (!strcmp(key, "encoder_lens")) {
            if (!jarray(j, &p->enc, &p->n_enc, PLAN_MAX_REQS))
                return 0;
            if (p->n_enc == 0) /* (else taken as absent: the cross-attention fields left out, rc 0) */
                return jfail(j, "\"encoder_lens\" is empty (one per request, or leave it out)");
        } else if (!strcmp(key, "block_table")) {
            if (!jtable(j, p))
                return 0;
        } else if (!strcmp(key, "block_size") || !strcmp(key, "prefills") || !strcmp(key, "padded") ||
                   !strcmp(key, "slices_per_block") || !strcmp(key, "chunk")) {
            if (!jint(j, &v))
                return 0;
            if (!strcmp(key, "block_size"))
                p->block_size = v;
            else if (!strcmp(key, "prefills"))
                p->prefills = v, p->has_prefills = 1;
            else if (!strcmp(key, "padded"))
                p->padded = v;
            else if (!strcmp(key, "slices_per_block"))
                p->spb = v;
            else
                p->chunk = v, p->has_chunk = 1;
        } else {
            char msg[96];
            snprintf(msg, sizeof msg, "unknown key \"%s\"", key);
            return jfail(j, msg);
        }
    } while (jchar(j, ','));
    if (!jchar(j, '}'))
        return jfail(j, "expected ',' or '}'");
end:
    jws(j);
    if (j->i != j->n)
        return jfail(j, "trailing characters after the object");
    return 1;
}

int plan_json_parse(const char *s, size_t n, plan_in *p, char *err, size_t cap) {
    jp j = {s, 0, n, {0}};
    const int ok = json_object(&j, p);
    if (!ok && cap > 0)
        snprintf(err, cap, "%s", j.err[0] ? j.err : "malformed");
    return ok;
}
