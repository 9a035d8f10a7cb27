// The part of cuBLAS that the baseline (benchmarks/baseline.cu) calls, for
// pagedattn-interp: a handle and a strided batched GEMM computed on the CPU,
// so `pagedattn check baseline --interp` runs the baseline's own kernels
// (gather, softmax with its masks and sinks, scatter) in the interpreter
// around GEMMs that are plain loops. Column-major, as cuBLAS defines it:
//   C_b = alpha * op(A_b) . op(B_b) + beta * C_b,  X_b = X + b * strideX,
// op(A) m x k, op(B) k x n, C m x n with leading dimension ldc. f16, bf16 and
// f32 operands, f32 compute; anything else is CUBLAS_STATUS_NOT_SUPPORTED.
// The fake runtime runs every launch when it is made, so a GEMM in between
// sees what the launches before it wrote; inside a stream capture it would
// not, and it refuses. Not built with ThreadSanitizer: its accesses are the
// host's, not a kernel's.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "pagedattn/core.h"

extern "C" void pa_interp_host_open_all(int open); // interp.cpp

struct cublasContext {}; // no state: every call runs on the CPU at once

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext{};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

static bool dtype_of(cudaDataType t, pa_dtype *d) {
    switch (t) {
    case CUDA_R_16F: *d = PA_DTYPE_F16; return true;
    case CUDA_R_16BF: *d = PA_DTYPE_BF16; return true;
    case CUDA_R_32F: *d = PA_DTYPE_F32; return true;
    default: return false;
    }
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t) {
    pa_dtype at, bt, ct;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!dtype_of(Atype, &at) || !dtype_of(Btype, &bt) || !dtype_of(Ctype, &ct) || computeType != CUBLAS_COMPUTE_32F ||
        (transa != CUBLAS_OP_N && transa != CUBLAS_OP_T) || (transb != CUBLAS_OP_N && transb != CUBLAS_OP_T))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const bool ta = transa == CUBLAS_OP_T, tb = transb == CUBLAS_OP_T;
    if (m < 0 || n < 0 || k < 0 || batchCount < 0 || lda < (ta ? k : m) || ldb < (tb ? n : k) || ldc < m || lda < 1 ||
        ldb < 1 || ldc < 1 || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    // Computed here and now, so refused while a capture would record it (the handle's stream
    // is the legacy one: asking about it during a blocking stream's capture is itself refused).
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(nullptr, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (cs != cudaStreamCaptureStatusNone)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const float al = *static_cast<const float *>(alpha), be = *static_cast<const float *>(beta);
    pa_interp_host_open_all(1); // the GEMM runs here, on device memory (closed to the host between grids)
    // op(A) and op(B) as float rows along k, read once a batch (the sums are the same
    // float operations in the same order as reading each element where it is used).
    std::vector<float> Ar((size_t)m * (size_t)k), Br((size_t)n * (size_t)k);
    for (int b = 0; b < batchCount; b++) {
        const size_t a0 = (size_t)b * (size_t)strideA, b0 = (size_t)b * (size_t)strideB,
                     c0 = (size_t)b * (size_t)strideC;
        for (int i = 0; i < m; i++)
            for (int l = 0; l < k; l++)
                Ar[(size_t)i * k + l] = pa_load_as_float(at, A, a0 + (ta ? (size_t)i * lda + l : (size_t)l * lda + i));
        for (int j = 0; j < n; j++)
            for (int l = 0; l < k; l++)
                Br[(size_t)j * k + l] = pa_load_as_float(bt, B, b0 + (tb ? (size_t)l * ldb + j : (size_t)j * ldb + l));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                const float *ar = Ar.data() + (size_t)i * k, *br = Br.data() + (size_t)j * k;
                float s = 0.0f;
                for (int l = 0; l < k; l++)
                    s += ar[l] * br[l];
                const size_t ci = c0 + (size_t)j * ldc + i;
                // beta == 0: C is not read (it may hold NaN), as in BLAS
                const float old = be == 0.0f ? 0.0f : be * pa_load_as_float(ct, C, ci);
                pa_store_from_float(ct, C, ci, al * s + old);
            }
    }
    pa_interp_host_open_all(0);
    return CUBLAS_STATUS_SUCCESS;
}
