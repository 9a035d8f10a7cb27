/* libpagedattn: status codes, dtypes, version, device info and errors.
 *
 * Every public entry returns a pa_status. On failure pa_last_error() gives the
 * human detail for the calling thread ("head_size 100 unsupported; ...").
 */
#ifndef PAGEDATTN_CORE_H
#define PAGEDATTN_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PA_API
#elif defined(PAGEDATTN_BUILDING)
#define PA_API __attribute__((visibility("default")))
#else
#define PA_API
#endif

#define PA_VERSION_MAJOR 0
#define PA_VERSION_MINOR 1
#define PA_VERSION_PATCH 0
#define PA_VERSION_NUMBER (PA_VERSION_MAJOR * 10000 + PA_VERSION_MINOR * 100 + PA_VERSION_PATCH)

/* Stable numbers: never renumbered, only appended. */
typedef enum pa_status {
    PA_SUCCESS = 0,
    PA_ERR_INVALID_ARGUMENT = 1, /* bad input; nothing was written or launched */
    PA_ERR_UNSUPPORTED = 2,      /* valid but not supported (head size, dtype pair, ...) */
    PA_ERR_NO_DEVICE = 3,        /* no CUDA device or driver */
    PA_ERR_CUDA = 4,             /* a CUDA runtime call failed, or an error was pending (below) */
    PA_ERR_WORKSPACE_TOO_SMALL = 5,
    PA_ERR_INTERNAL = 6,
} pa_status;

/* Element types of queries, outputs and caches. Stable numbers. */
typedef enum pa_dtype {
    PA_DTYPE_F32 = 0,
    PA_DTYPE_F16 = 1,
    PA_DTYPE_BF16 = 2,
    PA_DTYPE_FP8_E4M3 = 3, /* OCP e4m3 "fn": no infinities, max 448, saturating */
    PA_DTYPE_FP8_E5M2 = 4, /* OCP e5m2: max 57344, saturating to finite */
} pa_dtype;

#define PA_DTYPE_COUNT 5

/* CUDA stream without dragging the CUDA headers in: the same type as
 * cudaStream_t / CUstream. NULL is the legacy default stream.
 *
 * Every GPU entry works on the calling thread's current device (cudaSetDevice):
 * its launchers ask that device's compute capability and limits, and a stream
 * passed in must belong to it. Entries may be called from several host threads
 * at once (on one device or several); what they read from the environment
 * (PAGEDATTN_*) they read at each call, so the environment must not be changed
 * (setenv) while another thread is inside an entry. A launch captured into a
 * CUDA graph keeps the kernel and tiles chosen at capture.
 *
 * CUDA errors: a GPU entry reads the runtime's error state (cudaGetLastError)
 * after its own launches, and reports and clears what they caused. An error
 * already pending on the thread when the entry is called (a caller's launch
 * whose error it has not read, or the context's sticky error) is not taken
 * for the entry's: the entry checks before its first CUDA call
 * (cudaPeekAtLastError), returns PA_ERR_CUDA naming it as pending (no device:
 * PA_ERR_NO_DEVICE), leaves it for the caller to read, and launches nothing.
 * Before 2026-12-05 (ninth session) the entry's launch check read such an
 * error as its own and cleared it. */
typedef struct CUstream_st *pa_stream;

PA_API const char *pa_version(void); /* "0.1.0" */
PA_API int pa_version_number(void);  /* PA_VERSION_NUMBER of the library */
PA_API const char *pa_status_string(pa_status s);
/* Detail of the last failure on this thread ("" when none). Valid until the
 * next pa_ call on this thread. */
PA_API const char *pa_last_error(void);

PA_API size_t pa_dtype_size(pa_dtype t);      /* 0 for an unknown dtype */
PA_API const char *pa_dtype_name(pa_dtype t); /* "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2" */
/* Parses the names above plus vLLM's spellings ("auto" is not a dtype: the
 * caller resolves it; "fp8" means e4m3, "float16", "half", "bfloat16",
 * "float32", "float") and the fp8 formats' bare names "e4m3" and "e5m2".
 * Case-sensitive. Returns PA_ERR_INVALID_ARGUMENT for anything else. */
PA_API pa_status pa_dtype_from_name(const char *name, pa_dtype *out);
PA_API int pa_dtype_is_fp8(pa_dtype t);

/* Host-side scalar conversions, bit-exact with the device conversions
 * (round to nearest even; fp8 saturates to the largest finite value). */
PA_API float pa_half_to_float(uint16_t h);
PA_API uint16_t pa_float_to_half(float f);
PA_API float pa_bf16_to_float(uint16_t b);
PA_API uint16_t pa_float_to_bf16(float f);
PA_API float pa_fp8_e4m3_to_float(uint8_t v);
PA_API uint8_t pa_float_to_fp8_e4m3(float f);
PA_API float pa_fp8_e5m2_to_float(uint8_t v);
PA_API uint8_t pa_float_to_fp8_e5m2(float f);
/* Element i of a typed array as float, and the reverse. */
PA_API float pa_load_as_float(pa_dtype t, const void *base, size_t i);
PA_API void pa_store_from_float(pa_dtype t, void *base, size_t i, float v);

typedef struct pa_device_props {
    char name[256];
    int device;
    int sm_count;
    int cc_major, cc_minor;
    size_t smem_per_block_optin; /* bytes, opt-in maximum per block */
    size_t l2_bytes;
    size_t total_mem_bytes;
    int driver_version; /* e.g. 13000 */
    int runtime_version;
} pa_device_props;

/* Fills *out for CUDA device `device`. Returns PA_ERR_NO_DEVICE where there is
 * no driver or no device (never aborts), PA_ERR_INVALID_ARGUMENT for a device
 * index out of range (a negative index is PA_ERR_INVALID_ARGUMENT whether or
 * not a device is present, checked before CUDA is touched). *out is written
 * only on success. */
PA_API pa_status pa_device_info(int device, pa_device_props *out);
/* Number of CUDA devices; 0 where there is no driver or device. */
PA_API int pa_device_count(void);

/* ABI facts for bindings without a compiler step (the Python package's ctypes
 * mirrors): sizeof of a public struct by name ("pa_decode_params"; 0 for an
 * unknown name) and the offset of one of its fields (-1 for an unknown struct
 * or field), as this library was compiled. */
PA_API size_t pa_abi_sizeof(const char *type_name);
PA_API int64_t pa_abi_offsetof(const char *type_name, const char *field_name);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_CORE_H */
