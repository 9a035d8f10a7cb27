/* libpagedattn: paged-KV-cache attention kernels and their host layer.
 * The one header a server includes. */
#ifndef PAGEDATTN_H
#define PAGEDATTN_H

#include "pagedattn/core.h"
#include "pagedattn/kv_cache.h"
#include "pagedattn/decode.h"
#include "pagedattn/convert.h"
#include "pagedattn/check.h"
#include "pagedattn/cache_ops.h"
#include "pagedattn/batch.h"
#include "pagedattn/heuristics.h"
#include "pagedattn/metadata.h"
#include "pagedattn/prefill.h"
#include "pagedattn/ragged.h"
#include "pagedattn/merge.h"

#endif /* PAGEDATTN_H */
