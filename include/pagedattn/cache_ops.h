/* libpagedattn: cache maintenance ops (vLLM's reshape_and_cache, write_to_kv_cache,
 * kv_cache_update, swap_blocks, copy_blocks) and their CPU references.
 *
 * Every GPU entry validates everything it can see on the host first and returns
 * PA_ERR_INVALID_ARGUMENT (message names the field) or PA_ERR_UNSUPPORTED before
 * launching anything. reshape_and_cache and kv_cache_update refuse a cache
 * buffer (key or value) that shares a byte with what they read (the key and
 * value views, slot_mapping, new_kv, slices, num_slices, the fp8 scales):
 * "output cache.key overlaps the input key". A cache's key and value buffers
 * may interleave block by block (a [num_blocks, 2, ...] tensor), but one
 * buffer passed as both is refused (each value would land on its key). No entry
 * allocates, synchronises or copies between host and device behind the
 * caller's back; per-step data (slot mappings, slices, slice
 * counts, copy_blocks' block mappings, layer pointer tables, fp8 scales) is read on
 * the device, so every launch can be captured in a CUDA graph and replayed with new
 * contents. swap_blocks is the exception: its mapping is on the host, and a graph
 * captured over it replays the pairs of the capture (below).
 *
 * Device-side data the host cannot check (slots, slices, block mappings) is
 * bounds-checked on the device: an entry that would address memory outside the
 * cache is skipped (nothing written for it), never written out of bounds. The CPU
 * references (pa_ref_*) read the same data on the host and reject it instead,
 * with an error naming the offending token / slice / pair, before writing anything.
 *
 * Cache element conversion: the cache dtype equals the input dtype (bytes are
 * copied unchanged), or the cache is fp8 (e4m3 / e5m2) and the input is f32, f16
 * or bf16: stored = sat(x / scale) with scale = *k_scale for keys and *v_scale
 * for values (NULL = 1.0), rounded to nearest even, exactly as pa_convert does.
 */
#ifndef PAGEDATTN_CACHE_OPS_H
#define PAGEDATTN_CACHE_OPS_H

#include "pagedattn/core.h"
#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* New keys and values of one step, as views: key and value are each
 * [num_tokens, num_kv_heads, head_size] with arbitrary token and head strides
 * (elements), e.g. slices of a fused qkv projection; the element stride inside a
 * head is 1. num_kv_heads and head_size are the cache's. Strides of 0 mean
 * contiguous (head_stride = head_size, token_stride = num_kv_heads * head_stride). */
typedef struct pa_kv_input {
    const void *key;
    const void *value;
    pa_dtype dtype; /* f32, f16 or bf16 */
    int64_t num_tokens;
    int64_t key_token_stride;
    int64_t key_head_stride;
    int64_t value_token_stride;
    int64_t value_head_stride;
} pa_kv_input;

/* Writes token t's key and value into the cache at slot slot_mapping[t]
 * (= block * block_size + offset in block). slot_mapping is int64 device memory
 * [num_tokens] (vLLM's dtype); -1 is padding and is skipped. Works for every
 * layout:
 *   PA_LAYOUT_VLLM       vLLM's reshape_and_cache (key x-vectorised, value transposed)
 *   PA_LAYOUT_FLASH_NHD/HND  vLLM's reshape_and_cache_flash, cache strides honoured
 *   PA_LAYOUT_COMBINED   the ragged path's write_to_kv_cache: K to combined head 2h,
 *                        V to 2h+1 of the one buffer
 * The key and value buffers (other layouts) may be views of one buffer that
 * interleave (the halves of a [num_blocks, 2, ...] tensor) but must share no
 * byte: views that do (value a head or a token after key) are refused.
 * Slots outside [-1, num_blocks * block_size) are skipped on the device.
 * A slot takes at most one token a call: the device writes the tokens in
 * parallel, so a slot named twice ends holding either token's row or a mix of
 * both (the reference refuses it, naming both tokens).
 * Supported dtype pairs (input -> cache): same dtype, or f32/f16/bf16 -> fp8. */
PA_API pa_status pa_reshape_and_cache(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache,
                                      pa_stream stream);
/* CPU reference on host memory (slot_mapping, buffers and scales on the host).
 * Rejects a slot outside [-1, num_blocks * block_size) naming the token, and an
 * fp8 cache's k_scale / v_scale that is not finite and > 0. */
PA_API pa_status pa_ref_reshape_and_cache(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache);

/* KV update by slices for the combined layout (vLLM's kv_cache_update).
 *   new_kv     [num_tokens, 2*num_kv_heads, head_size], K/V already interleaved
 *              (K at even, V at odd combined heads), token stride
 *              new_kv_token_stride elements (0 = 2*num_kv_heads*head_size),
 *              dtype new_kv_dtype (the cache dtype, or f32/f16/bf16 into an fp8 cache)
 *   slices     int32 device memory [3][slices_capacity] as in vLLM:
 *              slices[0][i] = kv_cache_start (a row of the cache viewed as
 *              [num_blocks * block_size, 2*num_kv_heads, head_size]),
 *              slices[1][i] = new_kv_start, slices[2][i] = slice_len
 *   num_slices int32 device memory [1]: how many leading slices are live; read on
 *              the device so a captured graph replays with a new count
 *   slices_capacity  host int: the row stride of `slices` (the slices it holds
 *              per field; vLLM's padded count) and the grid size. From
 *              pa_build_ragged_metadata pass its slices_capacity, not its
 *              num_slices_padded (the batch's count rounded up): with a
 *              smaller value the rows are misread, which no check can see.
 * Row new_kv_start + j goes to cache row kv_cache_start + j, j < slice_len. A
 * slice may cross a page boundary of the flat row space but may be at most
 * block_size (page size) rows long. A cache row takes at most one live slice a
 * call: slices are written in parallel, so two live slices over one row leave
 * it holding either's row or a mix (the reference refuses them, naming both).
 * On the device a slice with slice_len >
 * block_size, a negative field, or rows outside new_kv / the cache is skipped
 * whole (never written out of bounds); zero-length (padding) slices do nothing. */
PA_API pa_status pa_kv_cache_update(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                                    int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                                    int32_t slices_capacity, const pa_kv_cache *cache, pa_stream stream);
/* CPU reference: everything on the host; *num_slices is a host int32. Rejects
 * (before writing anything) any live slice that the device would skip, and an
 * fp8 cache's k_scale / v_scale that is not finite and > 0. */
PA_API pa_status pa_ref_kv_cache_update(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                                        int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                                        int32_t slices_capacity, const pa_kv_cache *cache);

/* ---- swap_blocks ------------------------------------------------------------
 * block_mapping: HOST int64 [num_pairs][2] = (src_block, dst_block). Block b of
 * a buffer is the block_bytes bytes at base + b * block_bytes. src / dst may be
 * device memory or pinned (page-locked) host memory in any combination
 * (host->device, device->host, device->device); CUDA infers the direction.
 * src and dst must be distinct buffers: their spans (num_blocks x block_bytes
 * each) must not overlap (refused; pa_copy_blocks copies within one buffer),
 * and the mapping must not lie in dst (refused). pa_swap_blocks_kv refuses a
 * dst whose key and value share a byte (one buffer, or spans that overlap).
 * A dst block named by several pairs ends as the last such pair's src block,
 * as if the pairs were copied in order (a batch never holds two copies into
 * one block: such a run waits for the next batch call).
 *
 * Runs of pairs whose src and dst both advance by one block are merged into one
 * copy (pa_swap_plan_runs). The runs are then issued with cudaMemcpyBatchAsync
 * (CUDA 12.8+; one driver call per up to 128 runs instead of one per pair) on a
 * non-default stream, or one cudaMemcpyAsync per run on the legacy NULL stream
 * (which the batch API refuses) and on older toolkits. A copy engine moves the
 * bytes: this keeps SMs free for compute, unlike a gather kernel over mapped
 * pinned memory, and needs no mapped allocations. Asynchronous, no sync, no
 * allocation; the host mapping can be reused as soon as the call returns.
 * Captured into a CUDA graph, the copies keep the capture's addresses: a replay
 * moves the pairs the mapping held at capture, whatever it holds then (capture
 * a graph per mapping, or call it outside graphs, as vLLM does). */
typedef struct pa_block_run {
    int64_t src_block;
    int64_t dst_block;
    int64_t num_blocks;
} pa_block_run;

/* Host-only: splits a mapping into maximal runs of consecutive pairs
 * (src+1, dst+1), in order. Writes at most max_runs runs into `runs` (may be
 * NULL when max_runs is 0) and the total number of runs into *num_runs, so a
 * call with max_runs = 0 sizes the array; num_pairs runs always suffice. */
PA_API pa_status pa_swap_plan_runs(const int64_t *block_mapping, int64_t num_pairs, pa_block_run *runs,
                                   int64_t max_runs, int64_t *num_runs);

/* src_num_blocks / dst_num_blocks: blocks in each buffer, to range-check the
 * host mapping (an out-of-range pair is rejected naming the pair). */
PA_API pa_status pa_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                                int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks, pa_stream stream);
/* Both buffers of a cache (key and value; the one buffer for the combined
 * layout): the caches must have the same layout, dtype and geometry, contiguous
 * blocks (flash strides 0 or contiguous). */
PA_API pa_status pa_swap_blocks_kv(const pa_kv_cache *dst, const pa_kv_cache *src, const int64_t *block_mapping,
                                   int64_t num_pairs, pa_stream stream);
/* CPU reference: memcpy on host memory, same checks. */
PA_API pa_status pa_ref_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                                    int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks);

/* ---- copy_blocks ------------------------------------------------------------
 * For every layer l < num_layers and pair p < num_pairs, copies block
 * mapping[p][0] to block mapping[p][1] inside key cache l and inside value cache
 * l, in ONE launch (grid: pairs x layers). Everything per step is in DEVICE
 * memory and read by the kernel:
 *   key_caches, value_caches  uint64 [num_layers]: base addresses of each
 *              layer's buffers (value_caches may be NULL: one buffer per layer,
 *              e.g. the combined layout or MLA)
 *   block_mapping             int64 [num_pairs][2] = (src, dst)
 * num_pairs is a host int that sizes the grid: a graph captured with a padded
 * count replays with pairs holding -1 (or any out-of-range block) skipped.
 * Block b of a buffer is numel_per_block elements of `dtype` at b * that size;
 * num_blocks (host) bounds the block indices; pairs out of [0, num_blocks) are
 * skipped on the device. Several pairs may share a source (prefix forks); a
 * destination must not also be a source in the same call, nor be named by two
 * pairs (pairs are copied in parallel: either's block, or a mix, would land;
 * the reference refuses both, naming the pairs). The mapping and the two
 * pointer tables must not lie in a layer's buffer: the copies read them as
 * they go. The reference refuses that; the device entry cannot see the
 * layers' addresses (they are in device memory) and does not check it. */
PA_API pa_status pa_copy_blocks(const uint64_t *key_caches, const uint64_t *value_caches, int32_t num_layers,
                                const int64_t *block_mapping, int64_t num_pairs, int64_t numel_per_block,
                                pa_dtype dtype, int64_t num_blocks, pa_stream stream);
/* CPU reference: host arrays of host pointers (value_caches may be NULL) and a
 * host mapping; rejects an out-of-range pair naming it, before copying. Two
 * layers' buffers (or a layer's key and value) that share a byte are refused
 * too, naming both, unless they start at one address (one buffer named twice:
 * its blocks are copied twice alike); the device entry cannot see them. */
PA_API pa_status pa_ref_copy_blocks(void *const *key_caches, void *const *value_caches, int32_t num_layers,
                                    const int64_t *block_mapping, int64_t num_pairs, int64_t numel_per_block,
                                    pa_dtype dtype, int64_t num_blocks);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_CACHE_OPS_H */
