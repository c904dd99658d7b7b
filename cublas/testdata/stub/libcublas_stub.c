/*
 * libcublas_stub.c: a fake cuBLAS for package cublas's tests.
 *
 * It exports the cublas_v2.h entry points package cublas binds, with the
 * same C signatures, and implements them on the CPU:
 *   - device memory is host memory (the tests allocate it from package
 *     cuda's stub driver, whose device pointers are host pointers);
 *   - cublasSgemm_v2 and cublasGemmEx compute C = alpha*op(A)*op(B) +
 *     beta*C column-major, after checking their arguments the way the
 *     cuBLAS documentation says cuBLAS does (dimensions, leading
 *     dimensions, operations, type and compute-type combinations, algo),
 *     returning CUBLAS_STATUS_INVALID_VALUE or _NOT_SUPPORTED otherwise;
 *   - GemmEx reads and writes float, IEEE half and bfloat16 elements, and
 *     reads alpha and beta as half under CUBLAS_COMPUTE_16F, as float
 *     under the CUBLAS_COMPUTE_32F family;
 *   - like cuBLAS, every call needs a current CUDA context: a test hands
 *     over the stub driver's cuCtxGetCurrent with stub_cublas_use_ctx,
 *     and a call made without a current context, or in another context
 *     than the handle's, fails;
 *   - each GEMM's raw arguments (enum values, dimensions, scalars, the
 *     handle's stream and math mode) are recorded for stub_cublas_last.
 * The legacy cublas.h cublasSgemm (char operations, no handle) and the
 * ILP64 _64 variants are exported as decoys that only count their calls.
 *
 * Compile with
 *   cc -shared -fPIC -fvisibility=hidden -o libcublas_stub.so libcublas_stub.c -lm -lpthread
 * -DSTUB_NO_STATUS_NAME leaves out cublasGetStatusName/String (cuBLAS
 * before 11.4); -DSTUB_OMIT_GEMMEX leaves out the required cublasGemmEx.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int cublasStatus_t;

enum {
	S_SUCCESS = 0,
	S_NOT_INITIALIZED = 1,
	S_ALLOC_FAILED = 3,
	S_INVALID_VALUE = 7,
	S_ARCH_MISMATCH = 8,
	S_MAPPING_ERROR = 11,
	S_EXECUTION_FAILED = 13,
	S_INTERNAL_ERROR = 14,
	S_NOT_SUPPORTED = 15,
	S_LICENSE_ERROR = 16,
};

enum { OP_N = 0, OP_T = 1, OP_C = 2 };                 /* cublasOperation_t */
enum { R_32F = 0, R_64F = 1, R_16F = 2, R_16BF = 14 }; /* cudaDataType_t */
enum {                                                 /* cublasComputeType_t */
	C_16F = 64,
	C_16F_PEDANTIC = 65,
	C_32F = 68,
	C_32F_PEDANTIC = 69,
	C_32F_FAST_16F = 74,
	C_32F_FAST_16BF = 75,
	C_32F_FAST_TF32 = 77,
};
enum { ALGO_DEFAULT = -1, ALGO_DEFAULT_TENSOR_OP = 99 };

#define MAGIC 0x43424c53

struct handle {
	int magic;
	void *ctx;    /* CUDA context current at cublasCreate */
	void *stream; /* from cublasSetStream */
	int math;     /* from cublasSetMathMode */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- call recorder and failure injection ---- */

static struct {
	char name[48];
	long n;
} counts[64];
static int ncounts;
static long decoys;
static int live;
static char fail_name[48];
static int fail_status;

static void note(const char *name) {
	pthread_mutex_lock(&mu);
	int i;
	for (i = 0; i < ncounts; i++) {
		if (strcmp(counts[i].name, name) == 0) break;
	}
	if (i == ncounts && ncounts < 64) snprintf(counts[ncounts++].name, sizeof counts[0].name, "%s", name);
	if (i < 64) counts[i].n++;
	pthread_mutex_unlock(&mu);
}

static int injected(const char *name) {
	int s = 0;
	pthread_mutex_lock(&mu);
	if (fail_status && strcmp(fail_name, name) == 0) {
		s = fail_status;
		fail_status = 0;
	}
	pthread_mutex_unlock(&mu);
	return s;
}

/* ---- the current CUDA context, asked of the stub driver ---- */

typedef int (*ctx_getter)(void **);
static ctx_getter get_ctx;

/* current_ctx returns the calling thread's current context, or NULL. Without
 * a getter (a test that did not hand one over) every call has a context. */
static void *current_ctx(void) {
	if (!get_ctx) return (void *)1;
	void *c = NULL;
	if (get_ctx(&c) != 0) return NULL;
	return c;
}

/* ENTER records the call, applies an injected failure, and requires a
 * current context. HANDLE also requires a live handle created in that
 * context. */
#define ENTER()                                                                \
	do {                                                                       \
		note(__func__);                                                        \
		int inj_ = injected(__func__);                                         \
		if (inj_) return inj_;                                                 \
		if (!current_ctx()) return S_NOT_INITIALIZED;                          \
	} while (0)

#define HANDLE(h)                                                              \
	do {                                                                       \
		if (!(h) || (h)->magic != MAGIC) return S_NOT_INITIALIZED;             \
		if ((h)->ctx != current_ctx()) return S_EXECUTION_FAILED;              \
	} while (0)

/* ---- the last GEMM, for stub_cublas_last ---- */

enum {
	L_TRANSA, L_TRANSB, L_M, L_N, L_K, L_LDA, L_LDB, L_LDC,
	L_ATYPE, L_BTYPE, L_CTYPE, L_COMPUTE, L_ALGO, L_MATH, L_COUNT
};
static struct {
	char call[32];
	int v[L_COUNT];
	double alpha, beta;
	void *stream;
} last;

static void record(const char *call, struct handle *h, const int *v, double alpha, double beta) {
	pthread_mutex_lock(&mu);
	snprintf(last.call, sizeof last.call, "%s", call);
	memcpy(last.v, v, sizeof last.v);
	last.alpha = alpha;
	last.beta = beta;
	last.stream = h->stream;
	pthread_mutex_unlock(&mu);
}

/* ---- element codecs ---- */

static float half_to_float(uint16_t h) {
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
	if (e == 0) {
		float f = ldexpf((float)m, -24); /* zero or subnormal */
		return sign ? -f : f;
	}
	if (e == 31) {
		bits = sign | 0x7f800000u | (m << 13);
	} else {
		bits = sign | ((e + 112) << 23) | (m << 13);
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

/* float_to_half rounds to nearest, ties to even. */
static uint16_t float_to_half(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u) return sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0);
	if (ax >= 0x477ff000u) return sign | 0x7c00; /* rounds past 65504 */
	if (ax < 0x38800000u) {                      /* below 2^-14: subnormal */
		float a;
		memcpy(&a, &ax, 4);
		return sign | (uint16_t)nearbyintf(a * 16777216.0f);
	}
	uint32_t hm = ((ax >> 23) - 112) << 10 | ((ax & 0x7fffffu) >> 13);
	uint32_t rem = ax & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (hm & 1))) hm++;
	return sign | (uint16_t)hm;
}

static float bf16_to_float(uint16_t b) {
	uint32_t bits = (uint32_t)b << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t float_to_bf16(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fffu + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

static double load(int type, const void *p, size_t i) {
	switch (type) {
	case R_16F: return half_to_float(((const uint16_t *)p)[i]);
	case R_16BF: return bf16_to_float(((const uint16_t *)p)[i]);
	default: return ((const float *)p)[i];
	}
}

static void store(int type, void *p, size_t i, double v) {
	switch (type) {
	case R_16F: ((uint16_t *)p)[i] = float_to_half((float)v); break;
	case R_16BF: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
	default: ((float *)p)[i] = (float)v;
	}
}

/* ---- GEMM ---- */

static int valid_op(int op) { return op == OP_N || op == OP_T || op == OP_C; }
static int imax(int a, int b) { return a > b ? a : b; }

/* check_gemm validates what every cuBLAS GEMM validates. */
static int check_gemm(int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc, const void *alpha,
                      const void *beta) {
	if (!valid_op(ta) || !valid_op(tb)) return S_INVALID_VALUE;
	if (m < 0 || n < 0 || k < 0) return S_INVALID_VALUE;
	if (lda < imax(1, ta == OP_N ? m : k)) return S_INVALID_VALUE;
	if (ldb < imax(1, tb == OP_N ? k : n)) return S_INVALID_VALUE;
	if (ldc < imax(1, m)) return S_INVALID_VALUE;
	if (!alpha || !beta) return S_INVALID_VALUE;
	return S_SUCCESS;
}

/* gemm computes C = alpha*op(A)*op(B) + beta*C in double, column-major.
 * As in BLAS, C is not read when beta is 0 (NaNs there do not survive). */
static void gemm(int ta, int tb, int m, int n, int k, double alpha, const void *A, int at, int lda, const void *B,
                 int bt, int ldb, double beta, void *C, int ct, int ldc) {
	for (int j = 0; j < n; j++) {
		for (int i = 0; i < m; i++) {
			double acc = 0;
			for (int p = 0; p < k; p++) {
				size_t ai = ta == OP_N ? (size_t)i + (size_t)p * lda : (size_t)p + (size_t)i * lda;
				size_t bi = tb == OP_N ? (size_t)p + (size_t)j * ldb : (size_t)j + (size_t)p * ldb;
				acc += load(at, A, ai) * load(bt, B, bi);
			}
			size_t ci = (size_t)i + (size_t)j * ldc;
			double c = beta == 0 ? 0 : beta * load(ct, C, ci);
			store(ct, C, ci, alpha * acc + c);
		}
	}
}

EXPORT cublasStatus_t cublasSgemm_v2(struct handle *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                     const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
                                     int ldc) {
	ENTER();
	HANDLE(h);
	int rc = check_gemm(ta, tb, m, n, k, lda, ldb, ldc, alpha, beta);
	if (rc) return rc;
	int v[L_COUNT] = {ta, tb, m, n, k, lda, ldb, ldc, R_32F, R_32F, R_32F, C_32F, ALGO_DEFAULT, h->math};
	record(__func__, h, v, *alpha, *beta);
	if (m && n) gemm(ta, tb, m, n, k, *alpha, A, R_32F, lda, B, R_32F, ldb, *beta, C, R_32F, ldc);
	return S_SUCCESS;
}

#ifndef STUB_OMIT_GEMMEX
/* gemmex_types returns 0 when cuBLAS supports the combination (the
 * "cublasGemmEx: supported combinations" table, restricted to float,
 * half and bfloat16), else the status cuBLAS answers. */
static int gemmex_types(int at, int bt, int ct, int compute) {
	int known = at == R_32F || at == R_16F || at == R_16BF;
	if (!known || at != bt) return S_NOT_SUPPORTED;
	switch (compute) {
	case C_16F:
	case C_16F_PEDANTIC:
		return at == R_16F && ct == R_16F ? S_SUCCESS : S_NOT_SUPPORTED;
	case C_32F:
	case C_32F_PEDANTIC:
		if (at == R_32F) return ct == R_32F ? S_SUCCESS : S_NOT_SUPPORTED;
		return ct == at || ct == R_32F ? S_SUCCESS : S_NOT_SUPPORTED;
	case C_32F_FAST_16F:
	case C_32F_FAST_16BF:
	case C_32F_FAST_TF32:
		return at == R_32F && ct == R_32F ? S_SUCCESS : S_NOT_SUPPORTED;
	}
	return S_INVALID_VALUE; /* not a cublasComputeType_t this stub knows */
}

static int valid_algo(int a) { return a == ALGO_DEFAULT || a == ALGO_DEFAULT_TENSOR_OP || (a >= 0 && a <= 23) || (a >= 100 && a <= 115); }

EXPORT cublasStatus_t cublasGemmEx(struct handle *h, int ta, int tb, int m, int n, int k, const void *alpha,
                                   const void *A, int at, int lda, const void *B, int bt, int ldb, const void *beta,
                                   void *C, int ct, int ldc, int compute, int algo) {
	ENTER();
	HANDLE(h);
	int rc = check_gemm(ta, tb, m, n, k, lda, ldb, ldc, alpha, beta);
	if (rc) return rc;
	if (!valid_algo(algo)) return S_INVALID_VALUE;
	if ((rc = gemmex_types(at, bt, ct, compute))) return rc;
	double a, b;
	if (compute == C_16F || compute == C_16F_PEDANTIC) {
		a = half_to_float(*(const uint16_t *)alpha);
		b = half_to_float(*(const uint16_t *)beta);
	} else {
		a = *(const float *)alpha;
		b = *(const float *)beta;
	}
	int v[L_COUNT] = {ta, tb, m, n, k, lda, ldb, ldc, at, bt, ct, compute, algo, h->math};
	record(__func__, h, v, a, b);
	if (m && n) gemm(ta, tb, m, n, k, a, A, at, lda, B, bt, ldb, b, C, ct, ldc);
	return S_SUCCESS;
}
#endif

/* ---- handles ---- */

EXPORT cublasStatus_t cublasCreate_v2(struct handle **ph) {
	ENTER();
	if (!ph) return S_INVALID_VALUE;
	struct handle *h = calloc(1, sizeof *h);
	if (!h) return S_ALLOC_FAILED;
	h->magic = MAGIC;
	h->ctx = current_ctx();
	pthread_mutex_lock(&mu);
	live++;
	pthread_mutex_unlock(&mu);
	*ph = h;
	return S_SUCCESS;
}

EXPORT cublasStatus_t cublasDestroy_v2(struct handle *h) {
	ENTER();
	HANDLE(h);
	h->magic = 0; /* leaked on purpose: a stale handle must stay readable */
	pthread_mutex_lock(&mu);
	live--;
	pthread_mutex_unlock(&mu);
	return S_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(struct handle *h, void *stream) {
	ENTER();
	HANDLE(h);
	h->stream = stream;
	return S_SUCCESS;
}

EXPORT cublasStatus_t cublasGetStream_v2(struct handle *h, void **stream) {
	ENTER();
	HANDLE(h);
	if (!stream) return S_INVALID_VALUE;
	*stream = h->stream;
	return S_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMathMode(struct handle *h, int mode) {
	ENTER();
	HANDLE(h);
	int base = mode & ~16;
	if (base < 0 || base > 3) return S_INVALID_VALUE;
	h->math = mode;
	return S_SUCCESS;
}

EXPORT cublasStatus_t cublasGetVersion_v2(struct handle *h, int *v) {
	ENTER();
	if (!v) return S_INVALID_VALUE;
	(void)h;
	*v = 120405;
	return S_SUCCESS;
}

#ifndef STUB_NO_STATUS_NAME
/* The names are cuBLAS's; the texts are marked so tests can tell them
 * from package cublas's built-in table. */
EXPORT const char *cublasGetStatusName(cublasStatus_t s) {
	switch (s) {
	case S_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case S_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case S_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
	case S_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	case S_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
	case S_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
	case S_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case S_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
	case S_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
	case S_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
	}
	return "CUBLAS_STATUS_UNKNOWN";
}

EXPORT const char *cublasGetStatusString(cublasStatus_t s) {
	switch (s) {
	case S_NOT_INITIALIZED: return "stub: not initialized";
	case S_INVALID_VALUE: return "stub: invalid value";
	case S_NOT_SUPPORTED: return "stub: not supported";
	case S_EXECUTION_FAILED: return "stub: execution failed";
	}
	return "stub: other status";
}
#endif

/* ---- decoys: the legacy and ILP64 ABIs, never to be called ---- */

EXPORT void cublasSgemm(char ta, char tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                        int ldb, float beta, float *C, int ldc) {
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta,
	    (void)C, (void)ldc;
	pthread_mutex_lock(&mu);
	decoys++;
	pthread_mutex_unlock(&mu);
}

EXPORT cublasStatus_t cublasSgemm_v2_64(void) {
	pthread_mutex_lock(&mu);
	decoys++;
	pthread_mutex_unlock(&mu);
	return S_INTERNAL_ERROR;
}

EXPORT cublasStatus_t cublasGemmEx_64(void) {
	pthread_mutex_lock(&mu);
	decoys++;
	pthread_mutex_unlock(&mu);
	return S_INTERNAL_ERROR;
}

/* ---- test hooks ---- */

/* stub_cublas_use_ctx installs the stub driver's cuCtxGetCurrent (or NULL
 * to stop checking contexts). */
EXPORT void stub_cublas_use_ctx(void *fn) { get_ctx = (ctx_getter)fn; }

EXPORT void stub_cublas_reset(void) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < ncounts; i++) counts[i].n = 0;
	memset(&last, 0, sizeof last);
	fail_status = 0;
	pthread_mutex_unlock(&mu);
}

EXPORT long stub_cublas_calls(const char *name) {
	long n = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < ncounts; i++) {
		if (strcmp(counts[i].name, name) == 0) n = counts[i].n;
	}
	pthread_mutex_unlock(&mu);
	return n;
}

EXPORT long stub_cublas_decoys(void) { return decoys; }

EXPORT int stub_cublas_live(void) { return live; }

EXPORT void stub_cublas_fail_next(const char *name, int status) {
	pthread_mutex_lock(&mu);
	snprintf(fail_name, sizeof fail_name, "%s", name);
	fail_status = status;
	pthread_mutex_unlock(&mu);
}

/* stub_cublas_last copies the last GEMM's entry point name into call, its
 * L_COUNT integer arguments (see the enum above) into v, alpha and beta
 * into scal, and the handle's stream into *stream; it returns L_COUNT. */
EXPORT int stub_cublas_last(char *call, int cap, int *v, double *scal, void **stream) {
	pthread_mutex_lock(&mu);
	snprintf(call, (size_t)cap, "%s", last.call);
	memcpy(v, last.v, sizeof last.v);
	scal[0] = last.alpha;
	scal[1] = last.beta;
	*stream = last.stream;
	pthread_mutex_unlock(&mu);
	return L_COUNT;
}
