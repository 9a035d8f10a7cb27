// The prefill launcher: picks the instance the selector (csrc/ops/prefill.c,
// pa_prefill_select) named for the validated parameters. The tensor-core
// instances live in the generated inst_*.cu files.
#include "prefill_kernel.cuh"

typedef cudaError_t (*pa_prefill_fn)(const pa_prefill_kparams &, cudaStream_t);

cudaError_t pa_prefill_f32(const pa_prefill_kparams &p, cudaStream_t stream); // prefill_f32.cu

#include "instances.inc"

extern "C" int pa_launch_prefill(const pa_prefill_kparams *p, pa_stream stream) {
    pa_prefill_kernel k;
    if (pa_prefill_select((pa_dtype)p->q_dtype, (pa_dtype)p->cache_dtype, p->head_size, &k) != PA_SUCCESS)
        return (int)cudaErrorInvalidValue;
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    if (!k.tensor_cores)
        return (int)pa_prefill_f32(*p, s);
    pa_prefill_fn fn = pa_prefill_instance(p->q_dtype, k.head_class);
    if (!fn)
        return (int)cudaErrorInvalidValue;
    return (int)fn(*p, s);
}
