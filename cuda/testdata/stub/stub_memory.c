/* stub_memory.c: device memory is host memory, range-checked (see libcuda_stub.c). */
#include "stub.h"

struct alloc {
	char *base;
	size_t size;
	int host;
	struct alloc *next;
};
static struct alloc *allocs;
long long allocated;

char *new_alloc(size_t size, int host) {
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

int free_alloc(char *p, int host) {
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
int in_range(CUdeviceptr p, size_t n) {
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


/* The async copies between host and device memory are recorded into a
 * capture's graph (capture_memcpy), as the driver records page-locked
 * copies. */
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (!src || !in_range(dst, n)) return E_INVALID_VALUE;
	if (capturing(s)) return capture_memcpy(s, (uint64_t)dst, (uint64_t)(uintptr_t)src, n);
	memcpy((void *)(uintptr_t)dst, src, n);
	return OK;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (!dst || !in_range(src, n)) return E_INVALID_VALUE;
	if (capturing(s)) return capture_memcpy(s, (uint64_t)(uintptr_t)dst, (uint64_t)src, n);
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

CUresult memset32(CUdeviceptr dst, unsigned ui, size_t n) {
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

/* cuMemsetD32Async is recorded into a capture's graph (capture_memset32)
 * and replayed with it, as the driver makes it a memset node. */
EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned ui, size_t n, struct stream *s) {
	ENTER();
	NEED_CTX();
	if (!valid_stream(s)) return E_INVALID_HANDLE;
	if (capturing(s)) return capture_memset32(s, dst, ui, n);
	return memset32(dst, ui, n);
}

