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
 *   - stream capture records launches into a graph that cuGraphLaunch
 *     replays.
 * The unversioned old-ABI names (cuMemAlloc, ...) are exported as decoys
 * that fail, so calling the wrong symbol shows up in tests.
 *
 * Test hooks are the stub_* functions at the end. Compile with
 *   cc -shared -fPIC -o libcuda_stub.so libcuda_stub.c -lpthread
 * and -DSTUB_OMIT_MEMSETD32 / -DSTUB_OMIT_GRAPH_INSTANTIATE to leave out a
 * required / an optional entry point.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	OK = 0,
	E_INVALID_VALUE = 1,
	E_OUT_OF_MEMORY = 2,
	E_NOT_INITIALIZED = 3,
	E_INVALID_DEVICE = 101,
	E_INVALID_CONTEXT = 201,
	E_INVALID_PTX = 218,
	E_UNSUPPORTED_PTX_VERSION = 222,
	E_INVALID_HANDLE = 400,
	E_ILLEGAL_STATE = 401,
	E_NOT_FOUND = 500,
	E_NOT_READY = 600,
	E_ILLEGAL_ADDRESS = 700,
	E_CONTEXT_IS_DESTROYED = 709,
	E_NOT_SUPPORTED = 801,
	E_STREAM_CAPTURE_UNSUPPORTED = 900,
	E_UNKNOWN = 999,
};

#define MAGIC_CTX 0x43545831
#define MAGIC_MOD 0x4d4f4431
#define MAGIC_FUNC 0x46554e31
#define MAGIC_STREAM 0x53545231
#define MAGIC_EVENT 0x45564e31
#define MAGIC_GRAPH 0x47525031
#define MAGIC_EXEC 0x45584531
#define MAGIC_LINK 0x4c4e4b31

#define MAX_PARAMS 64
#define MAX_PARAM_BYTES 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

/* ---- call recorder and failure injection ---- */

struct callcount {
	char name[64];
	long n;
};
static struct callcount calls[256]; /* names are never removed; reset zeroes n */
static int ncalls;
static long decoys;
static char fail_name[64];
static int fail_code;
static int busy; /* next queries answer NOT_READY this many times */
static int pending; /* sticky asynchronous error, reported by synchronize */

/* slot returns the recorder slot for name, adding it on first use. */
static int slot(const char *name) {
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

/* NOTE counts a call; each call site caches its slot, so the hot path is
 * one atomic add (the benchmarks measure the binding, not the stub). */
#define NOTE(name)                                                             \
	do {                                                                       \
		static int slot_;                                                      \
		int s_ = __atomic_load_n(&slot_, __ATOMIC_ACQUIRE);                    \
		if (s_ == 0) {                                                         \
			s_ = slot(name) + 1;                                               \
			__atomic_store_n(&slot_, s_, __ATOMIC_RELEASE);                    \
		}                                                                      \
		__atomic_fetch_add(&calls[s_ - 1].n, 1, __ATOMIC_RELAXED);             \
	} while (0)

static int injected(const char *name) {
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

static int inited;

/* ENTER records the call and applies an injected failure. */
#define ENTER()                                                                \
	do {                                                                       \
		NOTE(__func__);                                                        \
		int injected_code = injected(__func__);                                \
		if (injected_code) return injected_code;                               \
		if (!inited) return E_NOT_INITIALIZED;                                 \
	} while (0)

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
static const size_t dev_total[2] = {40ull << 30, 80ull << 30};

static int attr_of(int dev, int id, int *out) {
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

struct ctx {
	int magic, dev, refs, alive;
	unsigned flags;
};
static struct ctx primary[2];
static __thread struct ctx *cur;
static __thread struct ctx *ctx_stack[16];
static __thread int ctx_depth;

#define NEED_CTX()                                                             \
	do {                                                                       \
		if (!cur) return E_INVALID_CONTEXT;                                    \
		if (!cur->alive) return E_CONTEXT_IS_DESTROYED;                        \
	} while (0)

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

static int take_pending(void) {
	LOCK();
	int p = pending;
	pending = 0;
	UNLOCK();
	return p;
}

struct stream;
static int any_global_capture(void);

EXPORT CUresult cuCtxSynchronize(void) {
	ENTER();
	NEED_CTX();
	if (any_global_capture()) return E_STREAM_CAPTURE_UNSUPPORTED;
	return take_pending();
}

/* ---- memory: device memory is host memory, range-checked ---- */

struct alloc {
	char *base;
	size_t size;
	int host;
	struct alloc *next;
};
static struct alloc *allocs;
static long long allocated;

static char *new_alloc(size_t size, int host) {
	size_t rounded = (size + 255) & ~(size_t)255;
	char *p = aligned_alloc(256, rounded);
	if (!p) return NULL;
	memset(p, 0xA5, rounded); /* real device memory is not zeroed either */
	struct alloc *a = malloc(sizeof *a);
	a->base = p;
	a->size = size;
	a->host = host;
	LOCK();
	a->next = allocs;
	allocs = a;
	allocated += (long long)size;
	UNLOCK();
	return p;
}

static int free_alloc(char *p, int host) {
	LOCK();
	for (struct alloc **pp = &allocs; *pp; pp = &(*pp)->next) {
		struct alloc *a = *pp;
		if (a->base == p && a->host == host) {
			*pp = a->next;
			allocated -= (long long)a->size;
			UNLOCK();
			free(a->base);
			free(a);
			return 1;
		}
	}
	UNLOCK();
	return 0;
}

/* in_range reports whether [p, p+n) lies inside one device allocation. */
static int in_range(CUdeviceptr p, size_t n) {
	int ok = 0;
	LOCK();
	for (struct alloc *a = allocs; a; a = a->next) {
		uintptr_t b = (uintptr_t)a->base;
		if (!a->host && p >= b && p + n <= b + a->size && p + n >= p) {
			ok = 1;
			break;
		}
	}
	UNLOCK();
	return ok;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dp, size_t size) {
	ENTER();
	NEED_CTX();
	if (!dp || size == 0) return E_INVALID_VALUE;
	if (size > (1ull << 40)) return E_OUT_OF_MEMORY;
	char *p = new_alloc(size, 0);
	if (!p) return E_OUT_OF_MEMORY;
	*dp = (CUdeviceptr)(uintptr_t)p;
	return OK;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
	ENTER();
	NEED_CTX();
	if (p == 0) return OK;
	return free_alloc((char *)(uintptr_t)p, 0) ? OK : E_INVALID_VALUE;
}

struct stream {
	int magic, capturing, mode;
	struct graph *g;
};
static int valid_stream(struct stream *s) {
	return s == NULL || (uintptr_t)s == 1 || (uintptr_t)s == 2 || s->magic == MAGIC_STREAM;
}
static int capturing(struct stream *s) {
	return s && (uintptr_t)s > 2 && s->capturing;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dp, size_t size, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (!dp || size == 0) return E_INVALID_VALUE;
	char *p = new_alloc(size, 0);
	if (!p) return E_OUT_OF_MEMORY;
	*dp = (CUdeviceptr)(uintptr_t)p;
	return OK;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	return free_alloc((char *)(uintptr_t)p, 0) ? OK : E_INVALID_VALUE;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *freeb, size_t *total) {
	ENTER();
	NEED_CTX();
	LOCK();
	*total = dev_total[cur->dev];
	*freeb = dev_total[cur->dev] - (size_t)allocated;
	UNLOCK();
	return OK;
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t size, unsigned flags) {
	ENTER();
	NEED_CTX();
	if (!pp || size == 0 || (flags & ~7u)) return E_INVALID_VALUE;
	char *p = new_alloc(size, 1);
	if (!p) return E_OUT_OF_MEMORY;
	*pp = p;
	return OK;
}

EXPORT CUresult cuMemFreeHost(void *p) {
	ENTER();
	NEED_CTX();
	return free_alloc(p, 1) ? OK : E_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	ENTER();
	NEED_CTX();
	if (!src || !in_range(dst, n)) return E_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	ENTER();
	NEED_CTX();
	if (!dst || !in_range(src, n)) return E_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	ENTER();
	NEED_CTX();
	if (!in_range(dst, n) || !in_range(src, n)) return E_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return OK;
}

#define ASYNC_CHECK(s)                                                         \
	do {                                                                       \
		if (!valid_stream(s)) return E_INVALID_HANDLE;                         \
		if (capturing(s)) return E_STREAM_CAPTURE_UNSUPPORTED;                 \
	} while (0)

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	ASYNC_CHECK(s);
	if (!src || !in_range(dst, n)) return E_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	ASYNC_CHECK(s);
	if (!dst || !in_range(src, n)) return E_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	ASYNC_CHECK(s);
	if (!in_range(dst, n) || !in_range(src, n)) return E_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return OK;
}

static CUresult memset8(CUdeviceptr dst, unsigned uc, size_t n) {
	if (!in_range(dst, n)) return E_INVALID_VALUE;
	memset((void *)(uintptr_t)dst, (int)(uc & 0xff), n);
	return OK;
}

static CUresult memset32(CUdeviceptr dst, unsigned ui, size_t n) {
	if (dst % 4 != 0 || !in_range(dst, n * 4)) return E_INVALID_VALUE;
	uint32_t *p = (uint32_t *)(uintptr_t)dst;
	for (size_t i = 0; i < n; i++) p[i] = ui;
	return OK;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n) {
	ENTER();
	NEED_CTX();
	return memset8(dst, uc, n);
}

#ifndef STUB_OMIT_MEMSETD32
EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned ui, size_t n) {
	ENTER();
	NEED_CTX();
	return memset32(dst, ui, n);
}
#endif

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	ASYNC_CHECK(s);
	return memset8(dst, uc, n);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned ui, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	ASYNC_CHECK(s);
	return memset32(dst, ui, n);
}

/* ---- modules ---- */

struct sig {
	char kernel[128];
	int n, sizes[MAX_PARAMS];
};
static struct sig sigs[64];
static int nsigs;

struct func {
	int magic;
	char name[128];
	int maxdyn, carveout;
	struct module *m;
};
struct global {
	char name[128];
	char *mem;
	size_t size;
};
struct module {
	int magic;
	struct func funcs[32];
	int nfuncs;
	struct global globals[16];
	int nglobals;
};

/* jit_opts extracts the log buffers from cuModuleLoadDataEx-style options. */
struct jit {
	char *info, *err;
	size_t infosz, errsz;
	int infoidx, erridx, verbose;
	void **vals;
};

static void parse_jit(struct jit *j, unsigned n, const int *opts, void **vals) {
	memset(j, 0, sizeof *j);
	j->infoidx = j->erridx = -1;
	j->vals = vals;
	for (unsigned i = 0; i < n; i++) {
		switch (opts[i]) {
		case 3: j->info = vals[i]; break;
		case 4: j->infosz = (size_t)(uintptr_t)vals[i]; j->infoidx = (int)i; break;
		case 5: j->err = vals[i]; break;
		case 6: j->errsz = (size_t)(uintptr_t)vals[i]; j->erridx = (int)i; break;
		case 12: j->verbose = (int)(uintptr_t)vals[i]; break;
		}
	}
}

/* jit_log writes msg into a log buffer and stores the length written in
 * the size option's value, as the driver does. */
static void jit_log(char *buf, size_t cap, void **vals, int idx, const char *msg) {
	if (!buf || cap == 0) return;
	snprintf(buf, cap, "%s", msg);
	if (idx >= 0) vals[idx] = (void *)(uintptr_t)(strlen(buf) + 1);
}

/* syntax_error fills the error log when the PTX contains SYNTAX_ERROR. */
static int syntax_error(const char *ptx, struct jit *j) {
	const char *at = strstr(ptx, "SYNTAX_ERROR");
	if (!at) return 0;
	int line = 1;
	for (const char *p = ptx; p < at; p++) line += *p == '\n';
	char msg[256];
	snprintf(msg, sizeof msg, "ptxas application ptx input, line %d; error   : syntax error at 'SYNTAX_ERROR'\nptxas fatal   : Ptx assembly aborted due to errors\n", line);
	jit_log(j->err, j->errsz, j->vals, j->erridx, msg);
	return 1;
}

static int ident_char(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static size_t type_size(const char *t) {
	if (strncmp(t, ".b8", 3) == 0 || strncmp(t, ".u8", 3) == 0 || strncmp(t, ".s8", 3) == 0) return 1;
	if (strstr(t, "16")) return 2;
	if (strstr(t, "32")) return 4;
	if (strstr(t, "64")) return 8;
	return 0;
}

/* parse_global reads "[.align N] .type name[count]" up to ';'. */
static void parse_global(struct module *m, const char *p) {
	const char *end = strchr(p, ';');
	if (!end || m->nglobals >= 16) return;
	size_t elem = 0, count = 1;
	char name[128] = "";
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t')) p++;
		const char *tok = p;
		while (p < end && *p != ' ' && *p != '\t' && *p != '[' && *p != '=') p++;
		if (*tok == '.' && strncmp(tok, ".align", 6) != 0) {
			elem = type_size(tok);
		} else if (ident_char(*tok) && !(tok[0] >= '0' && tok[0] <= '9')) {
			snprintf(name, sizeof name, "%.*s", (int)(p - tok), tok);
		}
		if (p < end && *p == '[') {
			count = strtoull(p + 1, NULL, 10);
			p = strchr(p, ']');
			if (!p) return;
			p++;
		}
		if (p < end && *p == '=') break;
	}
	if (!name[0] || !elem) return;
	struct global *g = &m->globals[m->nglobals++];
	snprintf(g->name, sizeof g->name, "%s", name);
	g->size = elem * count;
	g->mem = new_alloc(g->size, 0);
	memset(g->mem, 0, g->size);
}

static struct module *parse_module(const char *ptx) {
	struct module *m = calloc(1, sizeof *m);
	m->magic = MAGIC_MOD;
	for (const char *p = ptx; (p = strstr(p, ".entry")) != NULL && m->nfuncs < 32;) {
		p += 6;
		while (*p == ' ' || *p == '\t') p++;
		const char *s = p;
		while (ident_char(*p)) p++;
		struct func *f = &m->funcs[m->nfuncs++];
		f->magic = MAGIC_FUNC;
		snprintf(f->name, sizeof f->name, "%.*s", (int)(p - s), s);
		f->maxdyn = 49152;
		f->carveout = -1;
		f->m = m;
	}
	for (const char *p = ptx; (p = strstr(p, ".global")) != NULL;) {
		/* a declaration, not ld.global / st.global / cvta.to.global */
		int decl = (p == ptx || p[-1] == '\n' || p[-1] == ' ' || p[-1] == '\t') && (p[7] == ' ' || p[7] == '\t');
		p += 7;
		if (decl) parse_global(m, p);
	}
	return m;
}

EXPORT CUresult cuModuleLoadDataEx(struct module **pm, const void *image, unsigned n, int *opts, void **vals) {
	ENTER();
	NEED_CTX();
	if (!pm || !image || (n && (!opts || !vals))) return E_INVALID_VALUE;
	struct jit j;
	parse_jit(&j, n, opts, vals);
	const char *ptx = image;
	if (syntax_error(ptx, &j)) return E_INVALID_PTX;
	if (strstr(ptx, ".version 99")) {
		jit_log(j.err, j.errsz, vals, j.erridx, "ptxas fatal   : Unsupported .version 99.0\n");
		return E_UNSUPPORTED_PTX_VERSION;
	}
	struct module *m = parse_module(ptx);
	char msg[128];
	if (j.verbose) {
		snprintf(msg, sizeof msg, "stub: compiled %d entries, %d globals\n", m->nfuncs, m->nglobals);
	} else {
		msg[0] = 0;
	}
	jit_log(j.info, j.infosz, vals, j.infoidx, msg);
	*pm = m;
	return OK;
}

EXPORT CUresult cuModuleUnload(struct module *m) {
	ENTER();
	NEED_CTX();
	if (!m || m->magic != MAGIC_MOD) return E_INVALID_HANDLE;
	for (int i = 0; i < m->nglobals; i++) free_alloc(m->globals[i].mem, 0);
	m->magic = 0;
	for (int i = 0; i < m->nfuncs; i++) m->funcs[i].magic = 0;
	return OK;
}

EXPORT CUresult cuModuleGetFunction(struct func **pf, struct module *m, const char *name) {
	ENTER();
	NEED_CTX();
	if (!m || m->magic != MAGIC_MOD) return E_INVALID_HANDLE;
	for (int i = 0; i < m->nfuncs; i++) {
		if (strcmp(m->funcs[i].name, name) == 0) {
			*pf = &m->funcs[i];
			return OK;
		}
	}
	return E_NOT_FOUND;
}

EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dp, size_t *bytes, struct module *m, const char *name) {
	ENTER();
	NEED_CTX();
	if (!m || m->magic != MAGIC_MOD) return E_INVALID_HANDLE;
	for (int i = 0; i < m->nglobals; i++) {
		if (strcmp(m->globals[i].name, name) == 0) {
			if (dp) *dp = (CUdeviceptr)(uintptr_t)m->globals[i].mem;
			if (bytes) *bytes = m->globals[i].size;
			return OK;
		}
	}
	return E_NOT_FOUND;
}

/* ---- linker: concatenates PTX inputs ---- */

struct link {
	int magic;
	struct jit j;
	char *buf;
	size_t len;
};

EXPORT CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, struct link **ps) {
	ENTER();
	NEED_CTX();
	struct link *l = calloc(1, sizeof *l);
	l->magic = MAGIC_LINK;
	parse_jit(&l->j, n, opts, vals);
	*ps = l;
	return OK;
}

EXPORT CUresult cuLinkAddData_v2(struct link *l, int type, void *data, size_t size, const char *name,
                                 unsigned n, int *opts, void **vals) {
	ENTER();
	NEED_CTX();
	(void)name, (void)n, (void)opts, (void)vals;
	if (!l || l->magic != MAGIC_LINK) return E_INVALID_HANDLE;
	if (type != 1) return E_NOT_SUPPORTED;
	const char *ptx = data;
	if (syntax_error(ptx, &l->j)) return E_INVALID_PTX;
	size_t n2 = strnlen(ptx, size);
	l->buf = realloc(l->buf, l->len + n2 + 2);
	memcpy(l->buf + l->len, ptx, n2);
	l->len += n2;
	l->buf[l->len++] = '\n';
	l->buf[l->len] = 0;
	return OK;
}

EXPORT CUresult cuLinkComplete(struct link *l, void **image, size_t *size) {
	ENTER();
	NEED_CTX();
	if (!l || l->magic != MAGIC_LINK) return E_INVALID_HANDLE;
	if (!l->buf) return E_INVALID_VALUE;
	*image = l->buf;
	*size = l->len + 1;
	return OK;
}

EXPORT CUresult cuLinkDestroy(struct link *l) {
	ENTER();
	if (!l || l->magic != MAGIC_LINK) return E_INVALID_HANDLE;
	l->magic = 0;
	free(l->buf);
	free(l);
	return OK;
}

/* ---- functions and launches ---- */

static int valid_func(struct func *f) { return f && f->magic == MAGIC_FUNC; }

EXPORT CUresult cuFuncGetAttribute(int *v, int attr, struct func *f) {
	ENTER();
	NEED_CTX();
	if (!valid_func(f)) return E_INVALID_HANDLE;
	switch (attr) {
	case 0: *v = 1024; break;       /* max threads per block */
	case 1: *v = 0; break;          /* static shared */
	case 2: *v = 0; break;          /* const */
	case 3: *v = 0; break;          /* local */
	case 4: *v = 32; break;         /* registers */
	case 5: *v = 80; break;         /* PTX version */
	case 6: *v = 80; break;         /* binary version */
	case 7: *v = 0; break;
	case 8: *v = f->maxdyn; break;
	case 9: *v = f->carveout; break;
	default: return E_INVALID_VALUE;
	}
	return OK;
}

EXPORT CUresult cuFuncSetAttribute(struct func *f, int attr, int value) {
	ENTER();
	NEED_CTX();
	if (!valid_func(f)) return E_INVALID_HANDLE;
	int optin;
	attr_of(cur->dev, 97, &optin);
	switch (attr) {
	case 8:
		if (value < 0 || value > optin) return E_INVALID_VALUE;
		f->maxdyn = value;
		return OK;
	case 9:
		if (value < -1 || value > 100) return E_INVALID_VALUE;
		f->carveout = value;
		return OK;
	}
	return E_INVALID_VALUE;
}

struct launch {
	char name[128];
	unsigned dims[7]; /* grid xyz, block xyz, dynamic shared bytes */
	void *stream;
	int n, sizes[MAX_PARAMS];
	unsigned char data[MAX_PARAMS][MAX_PARAM_BYTES];
};
static struct launch last;
static long nlaunches;

/* copy_launch copies a launch record's header and its used parameter rows. */
static void copy_launch(struct launch *dst, const struct launch *src) {
	memcpy(dst, src, offsetof(struct launch, data));
	memcpy(dst->data, src->data, (size_t)src->n * sizeof src->data[0]);
}

/* run executes the few kernels the stub knows, on the host. */
static void run(const struct launch *l) {
	if (strcmp(l->name, "add_one") == 0 && l->n == 2 && l->sizes[0] == 8 && l->sizes[1] == 8) {
		uint64_t p;
		int64_t n;
		memcpy(&p, l->data[0], 8);
		memcpy(&n, l->data[1], 8);
		if (n < 0 || !in_range(p, (size_t)n * 4)) {
			LOCK();
			pending = E_ILLEGAL_ADDRESS;
			UNLOCK();
			return;
		}
		uint32_t *d = (uint32_t *)(uintptr_t)p;
		for (int64_t i = 0; i < n; i++) d[i]++;
	} else if (strcmp(l->name, "fault") == 0) {
		LOCK();
		pending = E_ILLEGAL_ADDRESS;
		UNLOCK();
	}
	LOCK();
	copy_launch(&last, l);
	nlaunches++;
	UNLOCK();
}

struct graph {
	int magic, n;
	struct launch *recs;
};

static int any_global_capture_flag;
static int any_global_capture(void) { return any_global_capture_flag; }

EXPORT CUresult cuLaunchKernel(struct func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, struct stream *s, void **params, void **extra) {
	ENTER();
	NEED_CTX();
	if (!valid_func(f)) return E_INVALID_HANDLE;
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (extra) return E_NOT_SUPPORTED;
	if (gx == 0 || gy == 0 || gz == 0 || gy > 65535 || gz > 65535 || gx > 2147483647u) return E_INVALID_VALUE;
	if (bx == 0 || by == 0 || bz == 0 || bx > 1024 || by > 1024 || bz > 64 || bx * by * bz > 1024) return E_INVALID_VALUE;
	if ((int)smem > f->maxdyn) return E_INVALID_VALUE;
	struct launch rec, *l = &rec;
	memset(l, 0, offsetof(struct launch, data));
	snprintf(l->name, sizeof l->name, "%s", f->name);
	unsigned dims[7] = {gx, gy, gz, bx, by, bz, smem};
	memcpy(l->dims, dims, sizeof dims);
	l->stream = s;
	LOCK();
	for (int i = 0; i < nsigs; i++) {
		if (strcmp(sigs[i].kernel, f->name) == 0) {
			l->n = sigs[i].n;
			memcpy(l->sizes, sigs[i].sizes, sizeof l->sizes);
		}
	}
	UNLOCK();
	if (l->n > 0 && !params) return E_INVALID_VALUE;
	for (int i = 0; i < l->n; i++) memcpy(l->data[i], params[i], (size_t)l->sizes[i]);
	if (capturing(s)) {
		struct graph *g = s->g;
		g->recs = realloc(g->recs, (size_t)(g->n + 1) * sizeof *g->recs);
		copy_launch(&g->recs[g->n++], l);
	} else {
		run(l);
	}
	return OK;
}

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *nb, struct func *f, int bs, size_t dyn) {
	ENTER();
	NEED_CTX();
	if (!valid_func(f)) return E_INVALID_HANDLE;
	if (bs <= 0 || bs > 1024) return E_INVALID_VALUE;
	int smem_sm, n = 2048 / bs;
	attr_of(cur->dev, 81, &smem_sm);
	if (n > 32) n = 32;
	int by_regs = 65536 / (32 * ((bs + 31) / 32 * 32));
	if (by_regs < n) n = by_regs;
	if (dyn > 0 && (int)(smem_sm / dyn) < n) n = (int)(smem_sm / dyn);
	*nb = n;
	return OK;
}

EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *bs, struct func *f, void *cb, size_t dyn,
                                                 int limit) {
	ENTER();
	NEED_CTX();
	if (!valid_func(f)) return E_INVALID_HANDLE;
	if (cb) return E_NOT_SUPPORTED;
	int sms, best = 1024;
	attr_of(cur->dev, 16, &sms);
	if (limit > 0 && limit < best) best = limit;
	(void)dyn;
	*bs = best;
	*min_grid = sms * (2048 / best);
	return OK;
}

/* ---- streams, events, graphs ---- */

EXPORT CUresult cuStreamCreate(struct stream **ps, unsigned flags) {
	ENTER();
	NEED_CTX();
	if (flags > 1) return E_INVALID_VALUE;
	struct stream *s = calloc(1, sizeof *s);
	s->magic = MAGIC_STREAM;
	*ps = s;
	return OK;
}

EXPORT CUresult cuStreamDestroy_v2(struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!s || (uintptr_t)s <= 2 || s->magic != MAGIC_STREAM) return E_INVALID_HANDLE;
	s->magic = 0; /* never freed, so stale handles stay recognizable */
	return OK;
}

EXPORT CUresult cuStreamSynchronize(struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (capturing(s)) return E_STREAM_CAPTURE_UNSUPPORTED;
	return take_pending();
}

static int query(void) {
	LOCK();
	int b = busy > 0;
	if (b) busy--;
	UNLOCK();
	return b ? E_NOT_READY : OK;
}

EXPORT CUresult cuStreamQuery(struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	return query();
}

struct event {
	int magic, recorded;
	unsigned flags;
	double t;
};
static double clock_ms;

EXPORT CUresult cuStreamWaitEvent(struct stream *s, struct event *e, unsigned flags) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s) || !e || e->magic != MAGIC_EVENT) return E_INVALID_HANDLE;
	if (flags != 0) return E_INVALID_VALUE;
	return OK;
}

EXPORT CUresult cuEventCreate(struct event **pe, unsigned flags) {
	ENTER();
	NEED_CTX();
	if (flags & ~7u) return E_INVALID_VALUE;
	struct event *e = calloc(1, sizeof *e);
	e->magic = MAGIC_EVENT;
	e->flags = flags;
	*pe = e;
	return OK;
}

EXPORT CUresult cuEventRecord(struct event *e, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!e || e->magic != MAGIC_EVENT || !valid_stream(s)) return E_INVALID_HANDLE;
	LOCK();
	clock_ms += 1.5; /* every record is 1.5 ms after the previous one */
	e->t = clock_ms;
	e->recorded = 1;
	UNLOCK();
	return OK;
}

EXPORT CUresult cuEventSynchronize(struct event *e) {
	ENTER();
	NEED_CTX();
	if (!e || e->magic != MAGIC_EVENT) return E_INVALID_HANDLE;
	return take_pending();
}

EXPORT CUresult cuEventQuery(struct event *e) {
	ENTER();
	NEED_CTX();
	if (!e || e->magic != MAGIC_EVENT) return E_INVALID_HANDLE;
	return query();
}

static CUresult elapsed(float *ms, struct event *a, struct event *b) {
	if (!ms) return E_INVALID_VALUE;
	if (!a || !b || a->magic != MAGIC_EVENT || b->magic != MAGIC_EVENT) return E_INVALID_HANDLE;
	if ((a->flags | b->flags) & 2) return E_INVALID_HANDLE; /* timing disabled */
	if (!a->recorded || !b->recorded) return E_INVALID_HANDLE;
	*ms = (float)(b->t - a->t);
	return OK;
}

EXPORT CUresult cuEventElapsedTime(float *ms, struct event *a, struct event *b) {
	ENTER();
	NEED_CTX();
	return elapsed(ms, a, b);
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, struct event *a, struct event *b) {
	ENTER();
	NEED_CTX();
	return elapsed(ms, a, b);
}

EXPORT CUresult cuEventDestroy_v2(struct event *e) {
	ENTER();
	NEED_CTX();
	if (!e || e->magic != MAGIC_EVENT) return E_INVALID_HANDLE;
	e->magic = 0;
	return OK;
}

EXPORT CUresult cuStreamBeginCapture_v2(struct stream *s, int mode) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (s == NULL || (uintptr_t)s <= 2) return E_STREAM_CAPTURE_UNSUPPORTED;
	if (mode < 0 || mode > 2) return E_INVALID_VALUE;
	if (s->capturing) return E_ILLEGAL_STATE;
	s->capturing = 1;
	s->mode = mode;
	s->g = calloc(1, sizeof *s->g);
	s->g->magic = MAGIC_GRAPH;
	if (mode == 0) any_global_capture_flag++;
	return OK;
}

EXPORT CUresult cuStreamEndCapture(struct stream *s, struct graph **pg) {
	ENTER();
	NEED_CTX();
	if (!s || (uintptr_t)s <= 2 || s->magic != MAGIC_STREAM) return E_INVALID_HANDLE;
	if (!s->capturing) return E_ILLEGAL_STATE;
	s->capturing = 0;
	if (s->mode == 0) any_global_capture_flag--;
	*pg = s->g;
	s->g = NULL;
	return OK;
}

EXPORT CUresult cuStreamIsCapturing(struct stream *s, int *status) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	*status = capturing(s) ? 1 : 0;
	return OK;
}

#ifndef STUB_OMIT_GRAPH_INSTANTIATE
EXPORT CUresult cuGraphInstantiateWithFlags(struct graph **px, struct graph *g, unsigned long long flags) {
	ENTER();
	NEED_CTX();
	if (!g || g->magic != MAGIC_GRAPH) return E_INVALID_HANDLE;
	if (flags > 15) return E_INVALID_VALUE;
	struct graph *x = calloc(1, sizeof *x);
	x->magic = MAGIC_EXEC;
	x->n = g->n;
	x->recs = malloc((size_t)(g->n + 1) * sizeof *x->recs);
	memcpy(x->recs, g->recs, (size_t)g->n * sizeof *x->recs);
	*px = x;
	return OK;
}
#endif

EXPORT CUresult cuGraphLaunch(struct graph *x, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!x || x->magic != MAGIC_EXEC || !valid_stream(s)) return E_INVALID_HANDLE;
	for (int i = 0; i < x->n; i++) run(&x->recs[i]);
	return OK;
}

EXPORT CUresult cuGraphDestroy(struct graph *g) {
	ENTER();
	if (!g || g->magic != MAGIC_GRAPH) return E_INVALID_HANDLE;
	g->magic = 0;
	free(g->recs);
	g->recs = NULL;
	return OK;
}

EXPORT CUresult cuGraphExecDestroy(struct graph *x) {
	ENTER();
	if (!x || x->magic != MAGIC_EXEC) return E_INVALID_HANDLE;
	x->magic = 0;
	free(x->recs);
	x->recs = NULL;
	return OK;
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
