/* libpagedattn: ragged paged attention: one launch for a mixed prefill+decode
 * batch over the combined K/V cache (vLLM's TPU ragged_paged_attention). */
#ifndef PAGEDATTN_RAGGED_H
#define PAGEDATTN_RAGGED_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_RAGGED_H */
