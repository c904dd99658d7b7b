/*
 * libcuda_stub.c: a fake CUDA driver for package cuda's tests.
 *
 * It exports the versioned entry points the real libcuda.so.1 exports
 * (cuMemAlloc_v2, ...) with the same C signatures, and implements them on
 * the host:
 *   - device memory is host memory; every pointer argument is range-checked
 *     against the live allocations, so an out-of-range copy fails;
 *   - the current context is thread-local, as in the real driver, and every
 *     call that needs one fails with CUDA_ERROR_INVALID_CONTEXT without it;
 *   - modules are PTX text: .entry names become functions, .global
 *     declarations become zeroed globals, and "SYNTAX_ERROR" anywhere makes
 *     the load fail with CUDA_ERROR_INVALID_PTX and a message in the JIT
 *     error log buffer;
 *   - cuLaunchKernel copies out each kernel parameter through the
 *     kernelParams pointer array, using sizes the test registered with
 *     stub_set_param_sizes, and records the launch; the kernels "add_one"
 *     (u32* data, s64 n) and "fault" actually run;
 *   - stub_fault_next makes the next launch of a kernel write given bytes
 *     into its module's kern_error global, as a failed device check would;
 *   - stream capture records launches into a graph that cuGraphLaunch
 *     replays.
 * The unversioned old-ABI names (cuMemAlloc, ...) are exported as decoys
 * that fail, so calling the wrong symbol shows up in tests.
 *
 * The stub is split by area: this file has the call recorder, devices,
 * contexts, error strings, decoys and the stub_* test hooks; stub_memory.c,
 * stub_module.c and stub_launch.c the rest; stub.h what they share.
 * Compile with
 *   cc -shared -fPIC -fvisibility=hidden -o libcuda_stub.so *.c -lpthread
 * and -DSTUB_OMIT_MEMSETD32 / -DSTUB_OMIT_GRAPH_INSTANTIATE to leave out a
 * required / an optional entry point.
 */
#include "stub.h"

/* ---- call recorder and failure injection ---- */

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
struct callcount calls[256]; /* names are never removed; reset zeroes n */
static int ncalls;
static long decoys;
static char fail_name[64];
static int fail_code;
int busy;
int pending;
int inited;

/* slot returns the recorder slot for name, adding it on first use. */
int slot(const char *name) {
	LOCK();
	int i;
	for (i = 0; i < ncalls; i++) {
		if (strcmp(calls[i].name, name) == 0) break;
	}
	if (i == ncalls && ncalls < 256) {
		snprintf(calls[ncalls++].name, sizeof calls[0].name, "%s", name);
	}
	UNLOCK();
	return i < 256 ? i : 255;
}

int injected(const char *name) {
	if (!__atomic_load_n(&fail_code, __ATOMIC_ACQUIRE)) return 0;
	int c = 0;
	LOCK();
	if (fail_code && strcmp(fail_name, name) == 0) {
		c = fail_code;
		__atomic_store_n(&fail_code, 0, __ATOMIC_RELEASE);
	}
	UNLOCK();
	return c;
}

/* ---- devices ---- */

struct attr {
	int id, v[2];
};
/* Per-device attribute values: device 0 looks like an A100 (sm_80),
 * device 1 like an H100 (sm_90). Unknown attributes fail. */
static const struct attr attrs[] = {
	{1, {1024, 1024}},         {2, {1024, 1024}},       {3, {1024, 1024}},
	{4, {64, 64}},             {5, {2147483647, 2147483647}},
	{6, {65535, 65535}},       {7, {65535, 65535}},     {8, {49152, 49152}},
	{9, {65536, 65536}},       {10, {32, 32}},          {12, {65536, 65536}},
	{13, {1410000, 1755000}},  {16, {108, 132}},        {36, {1215000, 2619000}},
	{37, {5120, 5120}},        {38, {41943040, 52428800}},
	{39, {2048, 2048}},        {75, {8, 9}},            {76, {0, 0}},
	{81, {167936, 233472}},    {82, {65536, 65536}},    {97, {166912, 232448}},
	{106, {32, 32}},           {111, {1024, 1024}},
};
static const char *dev_names[2] = {"Kern Stub A100", "Kern Stub H100"};
const size_t dev_total[2] = {40ull << 30, 80ull << 30};

int attr_of(int dev, int id, int *out) {
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
		if (attrs[i].id == id) {
			*out = attrs[i].v[dev];
			return 1;
		}
	}
	return 0;
}

EXPORT CUresult cuInit(unsigned flags) {
	NOTE(__func__);
	if (flags != 0) return E_INVALID_VALUE;
	inited = 1;
	return OK;
}

EXPORT CUresult cuDriverGetVersion(int *v) {
	NOTE(__func__);
	if (!v) return E_INVALID_VALUE;
	*v = 12040;
	return OK;
}

EXPORT CUresult cuDeviceGetCount(int *n) {
	ENTER();
	*n = 2;
	return OK;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	ENTER();
	if (ordinal < 0 || ordinal > 1) return E_INVALID_DEVICE;
	*d = ordinal;
	return OK;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	if (!name || len <= 0) return E_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", dev_names[d]);
	return OK;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	if (!attr_of(d, attr, v)) return E_INVALID_VALUE;
	return OK;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	*bytes = dev_total[d];
	return OK;
}

/* ---- contexts: current context is thread-local ---- */

struct ctx primary[2];
__thread struct ctx *cur;
static __thread struct ctx *ctx_stack[16];
static __thread int ctx_depth;


static int valid_ctx(struct ctx *c) { return c && c->magic == MAGIC_CTX; }

EXPORT CUresult cuDevicePrimaryCtxRetain(struct ctx **pc, CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	LOCK();
	primary[d].magic = MAGIC_CTX;
	primary[d].dev = d;
	primary[d].refs++;
	primary[d].alive = 1;
	UNLOCK();
	*pc = &primary[d];
	return OK;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	int rc = OK;
	LOCK();
	if (primary[d].refs == 0) {
		rc = E_INVALID_CONTEXT;
	} else if (--primary[d].refs == 0) {
		primary[d].alive = 0;
	}
	UNLOCK();
	return rc;
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	LOCK();
	primary[d].refs = 0;
	primary[d].alive = 0;
	UNLOCK();
	return OK;
}

EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned flags) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	if (flags & ~0x1fu) return E_INVALID_VALUE;
	primary[d].flags = flags;
	return OK;
}

EXPORT CUresult cuCtxCreate_v2(struct ctx **pc, unsigned flags, CUdevice d) {
	ENTER();
	if (d < 0 || d > 1) return E_INVALID_DEVICE;
	struct ctx *c = calloc(1, sizeof *c);
	c->magic = MAGIC_CTX;
	c->dev = d;
	c->refs = 1;
	c->alive = 1;
	c->flags = flags;
	if (ctx_depth < 16) ctx_stack[ctx_depth++] = cur;
	cur = c;
	*pc = c;
	return OK;
}

EXPORT CUresult cuCtxDestroy_v2(struct ctx *c) {
	ENTER();
	if (!valid_ctx(c) || !c->alive) return E_INVALID_CONTEXT;
	c->alive = 0; /* never freed, so stale handles stay recognizable */
	if (cur == c) cur = NULL;
	return OK;
}

EXPORT CUresult cuCtxSetCurrent(struct ctx *c) {
	ENTER();
	if (c && !valid_ctx(c)) return E_INVALID_CONTEXT;
	cur = c;
	return OK;
}

EXPORT CUresult cuCtxGetCurrent(struct ctx **pc) {
	ENTER();
	*pc = cur;
	return OK;
}

EXPORT CUresult cuCtxPushCurrent_v2(struct ctx *c) {
	ENTER();
	if (!valid_ctx(c)) return E_INVALID_CONTEXT;
	if (ctx_depth >= 16) return E_INVALID_VALUE;
	ctx_stack[ctx_depth++] = cur;
	cur = c;
	return OK;
}

EXPORT CUresult cuCtxPopCurrent_v2(struct ctx **pc) {
	ENTER();
	if (!cur) return E_INVALID_CONTEXT;
	if (pc) *pc = cur;
	cur = ctx_depth > 0 ? ctx_stack[--ctx_depth] : NULL;
	return OK;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d) {
	ENTER();
	NEED_CTX();
	*d = cur->dev;
	return OK;
}

int take_pending(void) {
	LOCK();
	int p = pending;
	pending = 0;
	UNLOCK();
	return p;
}

EXPORT CUresult cuCtxSynchronize(void) {
	ENTER();
	NEED_CTX();
	if (any_global_capture()) return E_STREAM_CAPTURE_UNSUPPORTED;
	return take_pending();
}

/* ---- error strings; "(stub)" marks text that came from here ---- */

static const struct {
	int code;
	const char *name, *text;
} errs[] = {
	{0, "CUDA_SUCCESS", "no error (stub)"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument (stub)"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory (stub)"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error (stub)"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal (stub)"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context (stub)"},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed (stub)"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain (stub)"},
	{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle (stub)"},
	{401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state (stub)"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found (stub)"},
	{600, "CUDA_ERROR_NOT_READY", "device not ready (stub)"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered (stub)"},
	{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed (stub)"},
	{900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing (stub)"},
};

static CUresult err_lookup(int code, const char **s, int text) {
	if (!s) return E_INVALID_VALUE;
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		if (errs[i].code == code) {
			*s = text ? errs[i].text : errs[i].name;
			return OK;
		}
	}
	*s = NULL;
	return E_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(int code, const char **s) {
	NOTE(__func__);
	return err_lookup(code, s, 0);
}

EXPORT CUresult cuGetErrorString(int code, const char **s) {
	NOTE(__func__);
	return err_lookup(code, s, 1);
}

/* ---- decoys: the pre-_v2 ABI names must never be called ---- */

#define DECOY(name)                                                            \
	EXPORT CUresult name(void) {                                               \
		NOTE(#name);                                                           \
		LOCK();                                                                \
		decoys++;                                                              \
		UNLOCK();                                                              \
		return E_UNKNOWN;                                                      \
	}
DECOY(cuDeviceTotalMem)
DECOY(cuCtxCreate)
DECOY(cuCtxDestroy)
DECOY(cuCtxPushCurrent)
DECOY(cuCtxPopCurrent)
DECOY(cuDevicePrimaryCtxRelease)
DECOY(cuDevicePrimaryCtxReset)
DECOY(cuDevicePrimaryCtxSetFlags)
DECOY(cuModuleGetGlobal)
DECOY(cuLinkCreate)
DECOY(cuLinkAddData)
DECOY(cuMemAlloc)
DECOY(cuMemFree)
DECOY(cuMemGetInfo)
DECOY(cuMemcpyHtoD)
DECOY(cuMemcpyDtoH)
DECOY(cuMemcpyDtoD)
DECOY(cuMemcpyHtoDAsync)
DECOY(cuMemcpyDtoHAsync)
DECOY(cuMemcpyDtoDAsync)
DECOY(cuMemsetD8)
DECOY(cuMemsetD32)
DECOY(cuStreamDestroy)
DECOY(cuEventDestroy)
DECOY(cuStreamBeginCapture)
DECOY(cuGraphInstantiate)

/* ---- test hooks ---- */

char fault_kernel[128];
unsigned char fault_slot[64];
int fault_len;

EXPORT void stub_fault_next(const char *kernel, const void *slot, int n) {
	LOCK();
	snprintf(fault_kernel, sizeof fault_kernel, "%s", kernel);
	if (n > (int)sizeof fault_slot) n = (int)sizeof fault_slot;
	memcpy(fault_slot, slot, (size_t)n);
	fault_len = n;
	UNLOCK();
}

EXPORT void stub_reset(void) {
	LOCK();
	for (int i = 0; i < ncalls; i++) __atomic_store_n(&calls[i].n, 0, __ATOMIC_RELAXED);
	decoys = 0;
	__atomic_store_n(&fail_code, 0, __ATOMIC_RELEASE);
	busy = 0;
	pending = 0;
	nlaunches = 0;
	nsigs = 0;
	memset(&last, 0, sizeof last);
	UNLOCK();
}

EXPORT long stub_calls(const char *name) {
	long n = 0;
	LOCK();
	for (int i = 0; i < ncalls; i++) {
		if (strcmp(calls[i].name, name) == 0) n = __atomic_load_n(&calls[i].n, __ATOMIC_RELAXED);
	}
	UNLOCK();
	return n;
}

EXPORT long stub_decoy_calls(void) {
	LOCK();
	long n = decoys;
	UNLOCK();
	return n;
}

/* stub_fail_next makes the next call of the named entry point return code. */
EXPORT void stub_fail_next(const char *name, int code) {
	LOCK();
	snprintf(fail_name, sizeof fail_name, "%s", name);
	__atomic_store_n(&fail_code, code, __ATOMIC_RELEASE);
	UNLOCK();
}

EXPORT void stub_set_busy(int n) {
	LOCK();
	busy = n;
	UNLOCK();
}

/* stub_set_param_sizes registers a kernel's signature: the byte size of
 * each parameter, which the real driver reads from the compiled kernel. */
EXPORT int stub_set_param_sizes(const char *kernel, int n, const int *sizes) {
	if (n < 0 || n > MAX_PARAMS) return -1;
	for (int i = 0; i < n; i++) {
		if (sizes[i] <= 0 || sizes[i] > MAX_PARAM_BYTES) return -1;
	}
	LOCK();
	int i;
	for (i = 0; i < nsigs; i++) {
		if (strcmp(sigs[i].kernel, kernel) == 0) break;
	}
	if (i == nsigs) {
		if (nsigs == 64) {
			UNLOCK();
			return -1;
		}
		nsigs++;
	}
	snprintf(sigs[i].kernel, sizeof sigs[i].kernel, "%s", kernel);
	sigs[i].n = n;
	memcpy(sigs[i].sizes, sizes, (size_t)n * sizeof *sizes);
	UNLOCK();
	return 0;
}

EXPORT long stub_launches(void) {
	LOCK();
	long n = nlaunches;
	UNLOCK();
	return n;
}

/* stub_last_launch copies the last executed launch's kernel name and its
 * grid, block and shared size (7 values) and returns its parameter count. */
EXPORT int stub_last_launch(char *name, int cap, unsigned *dims, void **stream) {
	LOCK();
	snprintf(name, (size_t)cap, "%s", last.name);
	memcpy(dims, last.dims, sizeof last.dims);
	*stream = last.stream;
	int n = last.n;
	UNLOCK();
	return n;
}

/* stub_last_pdl reports whether the last executed launch asked for
 * programmatic stream serialization (cuLaunchKernelEx, attribute 6). */
EXPORT int stub_last_pdl(void) {
	LOCK();
	int v = last.pdl;
	UNLOCK();
	return v;
}

/* stub_last_coop reports whether the last executed launch asked for a
 * cooperative launch (cuLaunchKernelEx, attribute 2). */
EXPORT int stub_last_coop(void) {
	LOCK();
	int v = last.coop;
	UNLOCK();
	return v;
}

/* stub_last_param copies parameter i of the last launch; returns its size. */
EXPORT int stub_last_param(int i, void *out, int cap) {
	LOCK();
	int n = -1;
	if (i >= 0 && i < last.n && last.sizes[i] <= cap) {
		n = last.sizes[i];
		memcpy(out, last.data[i], (size_t)n);
	}
	UNLOCK();
	return n;
}

EXPORT long long stub_allocated(void) {
	LOCK();
	long long n = allocated;
	UNLOCK();
	return n;
}

EXPORT int stub_primary_refs(int dev) {
	LOCK();
	int n = (dev == 0 || dev == 1) ? primary[dev].refs : -1;
	UNLOCK();
	return n;
}

