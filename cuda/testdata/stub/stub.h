/*
 * stub.h: what the files of the stub libcuda share (see libcuda_stub.c).
 * Only EXPORT functions are visible outside the library; everything else
 * is compiled with -fvisibility=hidden.
 */
#ifndef KERN_STUB_H
#define KERN_STUB_H

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

/* Handles carry a magic number so stale or foreign handles are rejected
 * with CUDA_ERROR_INVALID_HANDLE instead of crashing. */
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

/* One lock guards all shared state; the current context is thread-local. */
extern pthread_mutex_t mu;
#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

/* ---- call recorder (libcuda_stub.c) ---- */

struct callcount {
	char name[64];
	long n;
};
extern struct callcount calls[256];
extern int inited;  /* cuInit was called */
extern int busy;    /* next queries answer NOT_READY this many times */
extern int pending; /* sticky asynchronous error, reported by synchronize */
int slot(const char *name);
int injected(const char *name);

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

/* ENTER records the call, applies an injected failure, and requires cuInit. */
#define ENTER()                                                                \
	do {                                                                       \
		NOTE(__func__);                                                        \
		int injected_code = injected(__func__);                                \
		if (injected_code) return injected_code;                               \
		if (!inited) return E_NOT_INITIALIZED;                                 \
	} while (0)

/* ---- devices and contexts (libcuda_stub.c) ---- */

extern const size_t dev_total[2];
int attr_of(int dev, int id, int *out);

struct ctx {
	int magic, dev, refs, alive;
	unsigned flags;
};
extern struct ctx primary[2];
extern __thread struct ctx *cur;

#define NEED_CTX()                                                             \
	do {                                                                       \
		if (!cur) return E_INVALID_CONTEXT;                                    \
		if (!cur->alive) return E_CONTEXT_IS_DESTROYED;                        \
	} while (0)

int take_pending(void);

/* stub_fault_next: the next launch of fault_kernel writes fault_slot into
 * its module's kern_error global, as a failed device check would. */
extern char fault_kernel[128];
extern unsigned char fault_slot[64];
extern int fault_len;

/* ---- memory (stub_memory.c) ---- */

extern long long allocated;
char *new_alloc(size_t size, int host);
int free_alloc(char *p, int host);
int in_range(CUdeviceptr p, size_t n);

/* ---- streams (stub_launch.c) ---- */

struct stream {
	int magic, capturing, mode;
	struct graph *g;
};

/* valid_stream accepts NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD. */
static inline int valid_stream(struct stream *s) {
	return s == NULL || (uintptr_t)s == 1 || (uintptr_t)s == 2 || s->magic == MAGIC_STREAM;
}
static inline int capturing(struct stream *s) { return s && (uintptr_t)s > 2 && s->capturing; }
int any_global_capture(void);

#define ASYNC_CHECK(s)                                                         \
	do {                                                                       \
		if (!valid_stream(s)) return E_INVALID_HANDLE;                         \
		if (capturing(s)) return E_STREAM_CAPTURE_UNSUPPORTED;                 \
	} while (0)

/* ---- modules (stub_module.c) ---- */

/* STUB_MAX_FUNCS is the entries a module keeps: a package of ops has hundreds. */
#define STUB_MAX_FUNCS 1024

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
	struct func funcs[STUB_MAX_FUNCS];
	int nfuncs;
	struct global globals[16];
	int nglobals;
};

/* ---- launches (stub_launch.c) ---- */

/* sig is a kernel signature registered by stub_set_param_sizes. */
struct sig {
	char kernel[128];
	int n, sizes[MAX_PARAMS];
};
extern struct sig sigs[64];
extern int nsigs;

struct launch {
	char name[128];
	unsigned dims[7]; /* grid xyz, block xyz, dynamic shared bytes */
	void *stream;
	int pdl;  /* launched by cuLaunchKernelEx with programmatic stream serialization */
	int coop; /* launched by cuLaunchKernelEx with the cooperative attribute */
	int n, sizes[MAX_PARAMS];
	unsigned char data[MAX_PARAMS][MAX_PARAM_BYTES];
};
extern struct launch last;
extern long nlaunches;

/* memset32 sets n words from dst (stub_memory.c); capture_memset32 records
 * it into s's graph, replayed in order with its launches (stub_launch.c). */
CUresult memset32(CUdeviceptr dst, unsigned ui, size_t n);
CUresult capture_memset32(struct stream *s, CUdeviceptr dst, unsigned ui, size_t n);
/* capture_memcpy records an async copy between host and device memory
 * into s's graph (both are host memory in the stub). */
CUresult capture_memcpy(struct stream *s, uint64_t dst, uint64_t src, size_t n);

#endif
