// The prefill launcher: picks the instance the selector (csrc/ops/prefill.c,
// pa_prefill_select) named for the validated parameters. The tensor-core
// instances live in the generated inst_*.cu files; the sm_90a kernel
// (prefill_wgmma.cuh) in inst_hopper.cu, taken under AUTO (the default) and
// HOPPER when the device is sm_90, the library holds sm_90a code
// (PA_HAVE_SM90A, from meson's gpu_archs) and pa_prefill_hopper_head accepts
// the shape; PA_PREFILL_PATH_HOPPER_FP8 sends e4m3-cache context launches at
// HP 128 to the FP8 instances of the same kernel. Interpret mode has every instruction's twin, so there the Hopper
// kernel runs whenever it is asked for.
#include "../device_cc.cuh"
#include "prefill_kernel.cuh"

typedef int (*pa_prefill_fn)(const pa_prefill_kparams &, cudaStream_t); // a cudaError_t or PA_LAUNCH_SMEM_SHORT

cudaError_t pa_prefill_f32(const pa_prefill_kparams &p, cudaStream_t stream); // prefill_f32.cu
// inst_hopper.cu: DT 1 f16, 2 bf16; HP 64, 96, 128, 192 or 256.
cudaError_t pa_prefill_wgmma(int dt, int hp, const pa_prefill_kparams &p, cudaStream_t stream);
// inst_hopper.cu: the FP8 path (e4m3 caches, HP 128); DT 1 f16, 2 bf16.
cudaError_t pa_prefill_wgmma_fp8(int dt, const pa_prefill_kparams &p, cudaStream_t stream);

#include "instances.inc"

// The current device is sm_90 (an H100 or H200) and this build carries sm_90a code.
static bool hopper_device() {
#if defined(PA_INTERPRET)
    return true;
#elif defined(PA_HAVE_SM90A)
    int major = 0, minor = 0;
    return pa_current_cc(&major, &minor) && major == 9 && minor == 0;
#else
    return false;
#endif
}

extern "C" int pa_prefill_hopper_available(void) { return hopper_device() ? 1 : 0; }

extern "C" int pa_launch_prefill(const pa_prefill_kparams *p, pa_stream stream) {
    pa_prefill_kernel k;
    if (pa_prefill_select("prefill launch", (pa_dtype)p->q_dtype, (pa_dtype)p->cache_dtype, p->head_size, &k) !=
        PA_SUCCESS)
        return (int)cudaErrorInvalidValue;
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    if (!k.tensor_cores)
        return (int)pa_prefill_f32(*p, s);
    const pa_prefill_path path = pa_get_prefill_path();
    if (path == PA_PREFILL_PATH_HOPPER_FP8 && pa_prefill_hopper_fp8(p) && hopper_device()) {
        pa_prefill_hopper_fp8_counted();
        return (int)pa_prefill_wgmma_fp8(p->q_dtype, *p, s);
    }
    // AUTO takes the Hopper kernel wherever it can run: on an H100
    // (2026-11-27) it ran prompts at 1.6x the mma.sync kernel's rate (heads
    // 64, 96, 128) and context attention at 1.3-1.8x (flash and vLLM caches,
    // bf16 and fp8). Its FP8 tensor-core path stays opt-in (less accurate).
    if (path == PA_PREFILL_PATH_HOPPER || path == PA_PREFILL_PATH_HOPPER_FP8 || path == PA_PREFILL_PATH_AUTO) {
        const int hp = pa_prefill_hopper_head(p);
        if (hp != 0 && hopper_device()) {
            pa_prefill_hopper_counted();
            return (int)pa_prefill_wgmma(p->q_dtype, hp, *p, s);
        }
    }
    pa_prefill_fn fn = pa_prefill_instance(p->q_dtype, k.head_class);
    if (!fn)
        return (int)cudaErrorInvalidValue;
    return fn(*p, s);
}
