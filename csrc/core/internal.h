/* Private helpers of the host layer: error reporting, NVTX ranges, checks. */
#ifndef PA_INTERNAL_H
#define PA_INTERNAL_H

#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "pagedattn/pagedattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records the detail for pa_last_error() and returns `s`. printf-style. */
pa_status pa_fail(pa_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Puts "`prefix`: " before the thread's error detail and returns `s` (an entry
 * that validates through another op's checks says whose they are). */
pa_status pa_error_context(pa_status s, const char *prefix);
/* Clears the thread's error detail (every entry does this on success). */
void pa_clear_error(void);
/* Maps a cudaError_t (as int) from a runtime call to PA_ERR_CUDA with a message. */
pa_status pa_cuda_fail(int cuda_err, const char *what);
/* Called by every GPU entry right before its first CUDA call, its NVTX range
 * push (scripts/check-sources.sh holds each entry to it): an error already
 * pending on the thread (cudaPeekAtLastError: the caller's unread one, or the
 * context's sticky one) would be read by the launch's own check as the
 * launch's, and cleared; it is reported as pending instead (PA_ERR_CUDA, or
 * PA_ERR_NO_DEVICE without a driver or device), left pending, and nothing runs. */
pa_status pa_no_pending_cuda_error(const char *op);

#define PA_REQUIRE(cond, ...)                                                                                          \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            return pa_fail(PA_ERR_INVALID_ARGUMENT, __VA_ARGS__);                                                      \
    } while (0)

#define PA_TRY(expr)                                                                                                   \
    do {                                                                                                               \
        pa_status pa_try_s_ = (expr);                                                                                  \
        if (pa_try_s_ != PA_SUCCESS)                                                                                   \
            return pa_try_s_;                                                                                          \
    } while (0)

/* NVTX: one range per public entry. */
#ifdef PA_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#define PA_RANGE_PUSH(name) nvtxRangePushA(name)
#define PA_RANGE_POP() nvtxRangePop()
#else
#define PA_RANGE_PUSH(name) ((void)0)
#define PA_RANGE_POP() ((void)0)
#endif

/* Overflow-checked int64 arithmetic for sizes and offsets: *r = a * b (a + b)
 * and 1, or 0 (with *r unspecified) when the exact result does not fit. */
static inline int pa_mul_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline int pa_add_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
/* The longest key sequence an attention entry takes (decode's max_seq_len,
 * context attention's, prompt attention's max_seqlen_k): the kernels hold key
 * positions, tile bounds and tile counts in int32, and a position plus a key
 * tile (at most 128, f32's 32 + 31) must not wrap. */
#define PA_MAX_SEQ_LEN (INT32_MAX - 256)

/* A usable soft cap: 0 (off), or a normal float up to 2^126. The kernels take
 * 1 / cap, which is +inf for a subnormal cap (and 0 x inf a NaN logit), and the
 * ragged kernel divides by it with __fdividef, which gives 0 past 2^126; a cap
 * that large changes no logit the scale's bound allows (cap tanh(x / cap) is x
 * to the float while |x| < 2^-12 cap): pass 0. NaN fails both tests. */
#define PA_SOFT_CAP_MAX 0x1p126f
static inline int pa_soft_cap_ok(float cap) { return cap == 0.0f || (cap >= FLT_MIN && cap <= PA_SOFT_CAP_MAX); }

/* The blocks (pages) that len >= 0 tokens fill at bs >= 1 tokens a block:
 * ceil(len / bs), formed without len + bs - 1, which passes INT32_MAX for
 * block sizes near it. */
static inline int64_t pa_blocks_for(int64_t len, int64_t bs) { return len <= 0 ? 0 : (len - 1) / bs + 1; }

/* Pointer checks every entry makes before it launches (the kernels load whole
 * elements, so a pointer off its element size faults on the device and leaves
 * the context unusable): `ptr` NULL or a multiple of `bytes`, else
 * PA_ERR_INVALID_ARGUMENT naming op and buffer. */
pa_status pa_check_aligned(const char *op, const char *name, const void *ptr, size_t bytes);
/* pa_convert's checks of its arguments (dtypes, n, pointers, alignment,
 * overlap), shared by the entry and pa_ref_convert (csrc/reference/convert.c). */
pa_status pa_convert_validate(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n);
/* pa_merge_attn_states' checks (csrc/reference/merge.c), shared by the entry and
 * the reference: *r is *p with its 0 strides replaced by their defaults. */
pa_status pa_merge_resolve(const pa_merge_attn_states_params *p, pa_merge_attn_states_params *r);
/* A view of `rows` rows of `row` elements, `stride` apart (0 = row): its extent
 * (rows - 1) * stride + row must fit in int64, so no index into it wraps; else
 * PA_ERR_INVALID_ARGUMENT naming op and buffer. */
pa_status pa_check_rows_extent(const char *op, const char *name, int64_t rows, int64_t stride, int64_t row);
/* A required pointer: NULL is PA_ERR_INVALID_ARGUMENT naming op and buffer. */
pa_status pa_check_not_null(const char *op, const char *name, const void *ptr);
/* An lse array's layout (the prefill, decode and merge entries'): element
 * (h, t) at h * head stride + t * token stride floats, a given stride of 0
 * taking its default (token 1, head `tokens`: [heads, tokens]). Resolves the
 * strides, checks them (>= 0; the last element's index within int64 / 4;
 * distinct (head, token) pairs on distinct floats: one stride spans the
 * other's whole extent) and gives the bytes the layout spans (0 with no head
 * or token). PA_ERR_INVALID_ARGUMENT naming op. */
typedef struct pa_lse_strides {
    int64_t head, token, bytes;
} pa_lse_strides;
pa_status pa_lse_layout(const char *op, int64_t heads, int64_t tokens, int64_t head_stride, int64_t token_stride,
                        pa_lse_strides *out);
/* Do [a, a + a_bytes) and [b, b + b_bytes) share a byte? (Empty ranges never do.) */
int pa_ranges_overlap(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes);
/* A host builder's array: its name, address and extent in bytes (NULL or
 * empty: meets nothing). `may_be`: an input the output may be exactly (the
 * same address; an element-wise copy), or NULL. */
typedef struct pa_span {
    const char *name;
    const void *p;
    int64_t bytes;
    const void *may_be;
} pa_span;
/* The host builders read their inputs while they write their outputs: an
 * output that shares a byte with an input (but the one it may_be) or with
 * another output is PA_ERR_INVALID_ARGUMENT, "[op: ]output X overlaps the
 * input Y" or "[op: ]outputs X and Y overlap" (op NULL: no prefix). */
pa_status pa_check_spans_apart(const char *op, const pa_span *in, int nin, const pa_span *out, int nout);
/* Bytes from the first element of `rows` rows `stride` elements apart (0 =
 * `row`) to the end of the last, for overlap checks; INT64_MAX where that
 * overflows (the element extents are checked apart), 0 for no row. */
int64_t pa_rows_bytes(int64_t rows, int64_t stride, int64_t row, size_t esz);
/* A validated cache's buffers as inputs of an op that reads them: its key and
 * value buffers (value: not for the combined layout) and, for fp8, its
 * k_scale and v_scale; named `prefix`.key, .value, .k_scale, .v_scale (prefix
 * "kv" or "cache"). Writes up to 4 spans to s and returns how many. */
int pa_kv_cache_spans(const pa_kv_cache *kv, const char *prefix, pa_span *s);

/* pa_decode_validate (apart 1) or all of it but the check that its outputs
 * share no byte with its inputs (apart 0: the mixed entry's decode part, whose
 * buffers the mixed validation checks whole, last). csrc/ops/decode.c. */
pa_status pa_decode_validate_fields(const pa_decode_params *p, int apart);

/* Host-side value checks of the CPU references (csrc/core/kv_cache.c), which read
 * these from host memory; the GPU entries never read them on the host. An fp8
 * cache's k_scale / v_scale (when not NULL) must be finite and > 0; ALiBi
 * slopes (when not NULL) finite. PA_ERR_INVALID_ARGUMENT naming `who`. */
pa_status pa_check_host_kv_scales(const char *who, const pa_kv_cache *kv);
/* kv_cache.h: a cache that is not fp8 reads neither scale. An fp8 cache's
 * device scale pointers must be float-aligned (named k_name and v_name in the
 * message); another cache's are not looked at, and the kernels get NULL for
 * them (pa_kv_scale_ptr). */
pa_status pa_check_kv_scale_pointers(const char *op, const pa_kv_cache *kv, const char *k_name, const char *v_name);
static inline const float *pa_kv_scale_ptr(const pa_kv_cache *kv, const float *scale) {
    return pa_dtype_is_fp8(kv->dtype) ? scale : NULL;
}
/* KV head h's scale (k_scale or v_scale of kv): [h] with scales_per_head, else
 * the one float; 1 for NULL and for caches that are not fp8 (whose scales are
 * never read: kv_cache.h gives them no meaning there). Host memory (the CPU
 * references). */
static inline float pa_host_kv_scale(const pa_kv_cache *kv, const float *s, int32_t h) {
    return s && pa_dtype_is_fp8(kv->dtype) ? s[kv->scales_per_head ? h : 0] : 1.0f;
}
pa_status pa_check_host_alibi(const char *who, const float *slopes, int32_t num_heads);
/* Attention sinks (when not NULL): none NaN (-inf is no sink, +inf leaves the row zero). */
pa_status pa_check_host_sinks(const char *who, const float *sinks, int32_t num_heads);

/* The CPU references' logits: out[j] = the sum over d = 0 .. hs-1, in that order and in
 * double, of q[d] * k[j * k_stride + d], for the n key rows j (csrc/reference/dots.c). */
void pa_ref_dots(const double *q, const float *k, size_t k_stride, int n, int hs, double *out);

/* The references' lse of a row, log(e^keys + e^sink): `keys` is the log-sum-exp of the
 * row's keys alone (-inf: none), `sink` its head's sink (NULL: none). The sum is taken
 * at the larger of the two, so a sink far above the logits gives the sink rather than
 * overflowing exp() at the keys' max; +inf gives +inf, -inf leaves keys as it is
 * (csrc/reference/dots.c). */
double pa_ref_lse_with_sink(double keys, const float *sink);

/* Query-side dtypes an attention kernel accepts. */
static inline int pa_is_float_dtype(pa_dtype t) { return t == PA_DTYPE_F32 || t == PA_DTYPE_F16 || t == PA_DTYPE_BF16; }
static inline int pa_is_valid_dtype(pa_dtype t) { return (int)t >= 0 && (int)t < PA_DTYPE_COUNT; }

/* Head sizes every attention op serves (decode, prefill, ragged): the multiples
 * of 8 up to 256. pa_supported_head_sizes lists the same set. */
#define PA_MAX_HEAD_SIZE 256
#define PA_HEAD_SIZES_TEXT "multiples of 8 from 8 to 256"
static inline int pa_head_size_ok(int32_t hs) { return hs >= 8 && hs <= PA_MAX_HEAD_SIZE && hs % 8 == 0; }

#ifdef __cplusplus
}
#endif
#endif
