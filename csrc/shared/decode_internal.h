/* Private to the decode op: the launcher parameter block shared by csrc/decode*.c
 * and cuda/decode/ (plain C, also compiled as CUDA), the split rules both sides
 * use, and the launcher prototype.
 *
 * One kernel serves v1, v2 and the recommended entry. A CTA owns one
 * (sequence, KV head, head chunk, KV split): it reads each K/V byte of its
 * split once for every query head of the GQA group it serves. The three
 * entries differ only in how a sequence is cut into splits:
 *   v1    one split covering the sequence (no workspace, no merge);
 *   v2    vLLM's 512-token partitions, merged by a second kernel;
 *   auto  pa_dec_auto_part(seq_len, min_part) tokens per split (at most 64
 *         splits), a function of that sequence's length (and the process-wide
 *         smallest split, pa_dec_auto_min_part) only, so a sequence's output is
 *         bitwise the same whatever else is in the batch.
 * A sequence with one split writes its output directly; with more, each split
 * writes (tmp_out, exp_sums, max_logits) to the workspace and the merge kernel
 * combines them in split order. */
#ifndef PA_DECODE_INTERNAL_H
#define PA_DECODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kv_index.h"
#include "pagedattn/decode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PA_DEC_THREADS 128            /* threads per CTA (4 warps) */
#define PA_DEC_STAGES 3               /* cp.async pipeline depth (K+V tiles) */
#define PA_DEC_GB 4                   /* query heads per P.V accumulator set (registers) */
#define PA_DEC_MAX_HPC 16             /* query heads served by one CTA */
#define PA_DEC_TABLE_WIN 64           /* block-table entries staged in shared memory */
#define PA_DEC_MAX_TILE 128           /* tokens per tile, at most (128: fp8 head 64 on tensor cores) */
#define PA_DEC_AUTO_MIN_PART 256      /* auto: smallest split, tokens (the default; at least this) */
#define PA_DEC_AUTO_MIN_PART_MAX 8192 /* the largest smallest split PAGEDATTN_DECODE_MIN_SPLIT may ask for */
#define PA_DEC_AUTO_MAX_SPLITS 64
#define PA_DEC_V2_PART 512 /* = PA_DECODE_PARTITION_SIZE */
/* Every decode kernel's cudaFuncAttributeMaxDynamicSharedMemorySize, whatever
 * the launch needs (at most 68416 bytes over every shape: test_decode_api's
 * decode_geometry): one value a kernel, so a launch from one host thread never
 * lowers it under another thread's launch of the same kernel with more bytes
 * (which would then fail). 96 KiB fits the 99 KiB of every sm_80+ device with
 * 3 KiB to spare for static bytes (these kernels have none; the merge kernel,
 * which has some, needs no attribute); the host refuses a geometry past it
 * (none is). */
#define PA_DEC_SMEM_ATTR (96 * 1024)

/* The head sizes the tensor-core decode kernel serves (a 16-bit query; over an
 * fp8 cache all but 120), and those where a CTA of 9..16 query heads takes its
 * two head blocks: one list for the kernel (cuda/decode/decode_mma.cuh's
 * mma_head_ok, mma_two_blocks_ok) and the host (csrc/ops/decode.c's
 * dec_tensor_cores, which leaves the CUDA-core rows out of those shapes). */
#define PA_DEC_MMA_HEAD(hs, fp8)                                                                                       \
    ((hs) == 32 || (hs) == 64 || (hs) == 80 || (hs) == 96 || (hs) == 112 || (hs) == 128 || (hs) == 192 ||              \
     (hs) == 256 || ((hs) == 120 && !(fp8)))
#define PA_DEC_MMA_TWO_BLOCKS(hs) ((hs) == 64 || (hs) == 128 || (hs) == 192)

enum { PA_DEC_MODE_V1 = 0, PA_DEC_MODE_V2 = 1, PA_DEC_MODE_AUTO = 2 };

/* Tokens per split of the recommended entry for a sequence of len tokens:
 * max(min_part, next_pow2(ceil(len / 64))), min_part a power of two from 256
 * (pa_dec_auto_min_part). Depends on len and min_part alone (batch
 * invariance); a power of two, so a multiple of every tile size. */
PA_HD int32_t pa_dec_auto_part(int32_t len, int32_t min_part) {
    int32_t want = (int32_t)(((int64_t)len + PA_DEC_AUTO_MAX_SPLITS - 1) / PA_DEC_AUTO_MAX_SPLITS);
    int32_t part = min_part;
    while (part < want)
        part *= 2;
    return part;
}

/* Tokens per split for a sequence of len tokens (mode, part): v1 and v2 split
 * at `part` tokens; the recommended entry (auto) takes `part` as its smallest
 * split. */
PA_HD int32_t pa_dec_part(int32_t mode, int32_t part, int32_t len) {
    return mode == PA_DEC_MODE_AUTO ? pa_dec_auto_part(len, part) : part;
}

PA_HD int32_t pa_dec_num_splits(int32_t mode, int32_t part_arg, int32_t len) {
    const int32_t part = pa_dec_part(mode, part_arg, len);
    return (int32_t)(((int64_t)len + part - 1) / part);
}

/* Everything the kernels need; filled by pa_dec_kparams_make (csrc/ops/decode.c).
 * Sizes in elements unless named *_bytes / pitches (bytes). */
typedef struct pa_dec_kparams {
    /* ---- problem ---- */
    void *out;         /* [num_seqs, num_heads, head_size] q dtype */
    const void *query; /* rows q_stride elements apart */
    int64_t q_stride;
    const void *k_cache, *v_cache;
    pa_kv_geom g; /* cache element strides (kv_index.h) */
    const int32_t *block_tables;
    int64_t bt_stride;
    const int32_t *seq_lens;
    const float *alibi;
    const float *sinks;             /* [num_heads] or NULL: natural-log sink logits (decode.h) */
    const float *k_scale, *v_scale; /* device; NULL = 1 */
    int32_t scale_hs;               /* KV head h's scales at [h * scale_hs]: 1 per head, 0 one for all */
    int32_t q_dtype, cache_dtype, esz;
    int32_t num_seqs, num_heads, num_kv_heads, head_size, block_size, num_blocks, max_seq_len;
    float scale, soft_cap;
    int32_t window;
    int32_t sparse;  /* block-sparse on (vert_stride > 1) */
    int32_t q_words; /* a 16-bit query's rows are 4-byte aligned (query and q_stride): word loads */
    int32_t tp_rank, bs_local, bs_vert, bs_block, bs_step;

    /* ---- decomposition ---- */
    int32_t mode;            /* PA_DEC_MODE_* */
    int32_t part;            /* tokens per split for v1 / v2; auto: the smallest split */
    int32_t max_splits;      /* workspace rows per (seq, head): the documented layout's P */
    int32_t grid_splits;     /* grid.y: the most splits a sequence has (<= max_splits; < only when
                              * PAGEDATTN_DECODE_MIN_SPLIT makes the recommended entry's splits longer) */
    void *tmp_out;           /* [num_seqs, num_heads, max_splits, head_size] in the output's type (f32, f16 or
                              * bf16, as vLLM's and FlashInfer's partials), before v_scale (the merge applies
                              * it); its region is sized for that type (the workspace query reads q_dtype;
                              * NULL when max_splits == 1) */
    float *exp_sums;         /* [num_seqs, num_heads, max_splits] */
    float *max_logits;       /* [num_seqs, num_heads, max_splits] */
    int32_t group;           /* num_heads / num_kv_heads */
    int32_t head_chunks;     /* CTAs per KV head (group > PA_DEC_MAX_HPC) */
    int32_t hpc;             /* query heads per CTA (the last chunk may have fewer) */
    pa_kv_divider seq_div;   /* by num_kv_heads * head_chunks: blockIdx.x -> sequence */
    pa_kv_divider chunk_div; /* by head_chunks: the rest -> KV head */

    /* ---- tile geometry ---- */
    int32_t tile;             /* T: tokens per pipeline stage (8..64, power of 2; 128: dec_long_tile) */
    int32_t kchunks;          /* C: 16-byte chunks per K row in shared memory */
    int32_t headq;            /* floats per query row in shared memory (C * 16 / esz) */
    int32_t ds;               /* Q.K: lanes splitting the dot products of one item (power of 2) */
    int32_t pv_slices;        /* S: token slices of the P.V work (threads sharing one output) */
    int32_t pv_groups;        /* NG: head groups of PA_DEC_GB (Q.K items and P.V threads) */
    int32_t vllm_v;           /* V tile stored [dim][tile token] (V^T, vLLM layout) instead of [token][dim] */
    int32_t sbs;              /* vLLM V loader: tokens of a stored block a tile holds, min(block_size, tile) */
    int32_t pitch_k, pitch_v; /* bytes between K rows / V rows (flash: tokens, vLLM: dims) */
    int32_t unit_k, unit_v;   /* bytes per global->shared copy (16, 8, 4: cp.async; 2, 1: plain) */

    /* ---- the tile loop's address arithmetic, as shifts (every divisor below is
     * a power of two) and byte strides, so the loop does no division ---- */
    int32_t bs_shift;      /* log2(block_size) */
    int32_t tpt_shift;     /* log2(PA_DEC_THREADS / tile): threads per K row */
    int32_t units_k;       /* copy units per K row (head_size * esz / unit_k) */
    int32_t units_v;       /* flash V: copy units per V row */
    int32_t k_chunk_bytes; /* global bytes between 16-byte dim chunks of a K row (vLLM: block_size * 16) */
    int32_t v_dim_bytes;   /* vLLM V: global bytes between dims (block_size * esz) */
    int32_t tw_shift;      /* Q.K: log2(32 / ds), tokens per warp */
    int32_t wpg_shift;     /* Q.K: log2(tile / (32 / ds)), warps per head group */
    int32_t pr_shift;      /* vLLM V loader: log2(per_row) */
    int32_t pairs_shift;   /* vLLM V loader: log2(pairs) */

    /* ---- shared-memory swizzle: byte b of tile row t lives at
     * b ^ ((t & swz) << granule shift); swz = 7 where a row holds a multiple
     * of 8 granules (no padding needed), else 0 and the row is padded to an odd
     * number of 16-byte chunks ---- */
    int32_t swz_k;    /* K rows, 16-byte granules */
    int32_t swz_v;    /* flash V rows */
    int32_t gv_shift; /* flash V granule: log2(max(16, 8 * esz)), what one P.V thread reads */
    /* vLLM V^T rows (tile * esz bytes each, unpadded): byte b of dim d lives at
     * a ^ (s((a >> 7 or d) & 7) << 4), a = (d << vt_rs) + b; the 16-byte
     * granules move inside their 128-byte line (vt_at in decode_kernel.cuh,
     * whose key shift the kernels derive from vt_rs) */
    int32_t vt_rs; /* log2(pitch_v) */

    /* ---- shared memory (bytes from the start of the dynamic buffer) ---- */
    int32_t stage_k_bytes, stage_v_bytes;
    int32_t off_v, off_q, off_logit, off_stat, off_tok, off_tab;
    int32_t zero_bytes; /* [0, zero_bytes) cleared at CTA start (K row pads) */
    int32_t smem_bytes;

    /* last, so that the fields the tile loop reads keep their offsets */
    float *lse; /* or NULL (decode.h): (head h, sequence s) at h * lse_hs + s * lse_ts */
    int64_t lse_hs, lse_ts;
} pa_dec_kparams;

/* Fills *kp for entry `mode` after pa_decode_validate passed. With ws == NULL
 * and ws_bytes == 0 it only computes *ws_needed (the size query). Returns
 * PA_ERR_WORKSPACE_TOO_SMALL / PA_ERR_INVALID_ARGUMENT / PA_ERR_UNSUPPORTED
 * with a message. */
pa_status pa_dec_kparams_make(const pa_decode_params *p, int mode, void *ws, size_t ws_bytes, pa_dec_kparams *kp,
                              size_t *ws_needed);

/* The recommended entry's smallest split: PAGEDATTN_DECODE_MIN_SPLIT when it
 * is a power of two from PA_DEC_AUTO_MIN_PART to PA_DEC_AUTO_MIN_PART_MAX,
 * else PA_DEC_AUTO_MIN_PART (read at each launch, as decode.h says). */
int32_t pa_dec_auto_min_part(void);

/* Workspace bytes of an entry (0 for v1 or a single split). */
pa_status pa_dec_workspace_size(const pa_decode_params *p, int mode, size_t *bytes);

/* cuda/decode/decode_launch.cu: launches the split kernel and, when
 * grid_splits > 1, the merge kernel. cudaError_t as int. */
int pa_launch_paged_decode(const pa_dec_kparams *kp, pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif
