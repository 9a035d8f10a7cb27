/* libpagedattn: prefill attention (context/prefix attention over the paged
 * cache, varlen prompt attention for decoder, encoder and cross attention). */
#ifndef PAGEDATTN_PREFILL_H
#define PAGEDATTN_PREFILL_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_PREFILL_H */
