/* stub_launch.c: functions, launches, streams, events and graphs (see libcuda_stub.c). */
#include "stub.h"

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

struct sig sigs[64];
int nsigs;
struct launch last;
long nlaunches;

/* copy_launch copies a launch record's header and its used parameter rows. */
static void copy_launch(struct launch *dst, const struct launch *src) {
	memcpy(dst, src, offsetof(struct launch, data));
	memcpy(dst->data, src->data, (size_t)src->n * sizeof src->data[0]);
}

/* memsetName marks a graph record that is a captured cuMemsetD32Async:
 * data[0] the address, data[1] the word, data[2] the count. */
static const char memsetName[] = "\x01memset32";

/* memcpyName marks a captured cuMemcpyHtoDAsync or cuMemcpyDtoHAsync:
 * data[0] the destination, data[1] the source, data[2] the bytes (the
 * stub's device memory is host memory, so both are plain pointers). */
static const char memcpyName[] = "\x01memcpy";

/* run executes the few kernels the stub knows, on the host, and a graph's
 * recorded memsets (not launches: last and nlaunches are left alone). */
static void run(const struct launch *l) {
	if (strcmp(l->name, memcpyName) == 0) {
		uint64_t d, src, n;
		memcpy(&d, l->data[0], 8);
		memcpy(&src, l->data[1], 8);
		memcpy(&n, l->data[2], 8);
		memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n);
		return;
	}
	if (strcmp(l->name, memsetName) == 0) {
		uint64_t p, n;
		unsigned v;
		memcpy(&p, l->data[0], 8);
		memcpy(&v, l->data[1], 4);
		memcpy(&n, l->data[2], 8);
		memset32(p, v, n);
		return;
	}
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

/* capture_rec appends rec to the graph s is capturing into. */
static CUresult capture_rec(struct stream *s, const struct launch *rec) {
	struct graph *g = s->g;
	g->recs = realloc(g->recs, (size_t)(g->n + 1) * sizeof *g->recs);
	copy_launch(&g->recs[g->n++], rec);
	return OK;
}

CUresult capture_memset32(struct stream *s, CUdeviceptr dst, unsigned ui, size_t n) {
	if (dst % 4 != 0 || !in_range(dst, n * 4)) return E_INVALID_VALUE;
	struct launch rec;
	memset(&rec, 0, sizeof rec);
	snprintf(rec.name, sizeof rec.name, "%s", memsetName);
	uint64_t p = dst, cnt = n;
	rec.n = 3;
	rec.sizes[0] = 8, rec.sizes[1] = 4, rec.sizes[2] = 8;
	memcpy(rec.data[0], &p, 8);
	memcpy(rec.data[1], &ui, 4);
	memcpy(rec.data[2], &cnt, 8);
	return capture_rec(s, &rec);
}

CUresult capture_memcpy(struct stream *s, uint64_t dst, uint64_t src, size_t n) {
	struct launch rec;
	memset(&rec, 0, sizeof rec);
	snprintf(rec.name, sizeof rec.name, "%s", memcpyName);
	uint64_t cnt = n;
	rec.n = 3;
	rec.sizes[0] = 8, rec.sizes[1] = 8, rec.sizes[2] = 8;
	memcpy(rec.data[0], &dst, 8);
	memcpy(rec.data[1], &src, 8);
	memcpy(rec.data[2], &cnt, 8);
	return capture_rec(s, &rec);
}

static int any_global_capture_flag;
int any_global_capture(void) { return any_global_capture_flag; }

static CUresult launch_kernel(struct func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned smem, struct stream *s, void **params, void **extra, int pdl,
                              int coop);

EXPORT CUresult cuLaunchKernel(struct func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, struct stream *s, void **params, void **extra) {
	ENTER();
	NEED_CTX();
	return launch_kernel(f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 0, 0);
}

/* CUlaunchConfig and CUlaunchAttribute as cuda.h (12.x) lays them out. */
struct launch_attr {
	int id, pad;
	union {
		char raw[64];
		int value;
	} v;
};
struct launch_config {
	unsigned gx, gy, gz, bx, by, bz, smem;
	struct stream *s;
	struct launch_attr *attrs;
	unsigned nattrs;
};

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *nb, struct func *f, int bs, size_t dyn);

/* cuLaunchKernelEx takes the programmatic stream serialization attribute
 * (id 6) and, like the driver, refuses it below compute capability 9.0;
 * and the cooperative attribute (id 2), refusing, like the driver, a grid
 * larger than the occupancy calculator's blocks per SM times the SMs.
 * Other attributes are not supported by the stub. */
EXPORT CUresult cuLaunchKernelEx(const struct launch_config *c, struct func *f, void **params, void **extra) {
	ENTER();
	NEED_CTX();
	if (!c || (c->nattrs > 0 && !c->attrs)) return E_INVALID_VALUE;
	int pdl = 0, coop = 0;
	for (unsigned i = 0; i < c->nattrs; i++) {
		if (c->attrs[i].id == 2) {
			coop = c->attrs[i].v.value != 0;
			continue;
		}
		if (c->attrs[i].id != 6) return E_NOT_SUPPORTED;
		int major;
		attr_of(cur->dev, 75, &major);
		if (c->attrs[i].v.value && major < 9) return E_NOT_SUPPORTED;
		pdl = c->attrs[i].v.value != 0;
	}
	if (coop) {
		int per, sms;
		if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&per, f, (int)(c->bx * c->by * c->bz), c->smem) != OK)
			return E_INVALID_VALUE;
		attr_of(cur->dev, 16, &sms);
		if ((long)c->gx * c->gy * c->gz > (long)per * sms) return 720; /* COOPERATIVE_LAUNCH_TOO_LARGE */
	}
	return launch_kernel(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem, c->s, params, extra, pdl, coop);
}

static CUresult launch_kernel(struct func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned smem, struct stream *s, void **params, void **extra, int pdl,
                              int coop) {
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
	l->pdl = pdl;
	l->coop = coop;
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
		LOCK();
		if (fault_len > 0 && strcmp(fault_kernel, f->name) == 0) {
			for (int i = 0; i < f->m->nglobals; i++) {
				struct global *g = &f->m->globals[i];
				if (strcmp(g->name, "kern_error") == 0)
					memcpy(g->mem, fault_slot, (size_t)fault_len < g->size ? (size_t)fault_len : g->size);
			}
			fault_len = 0;
		}
		UNLOCK();
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

