/*
 * libnccl_stub.c: a fake NCCL for package nccl's tests.
 *
 * It exports the nccl.h entry points package nccl binds, with the same C
 * signatures (ncclCommInitRank takes its 128-byte ncclUniqueId by value,
 * which is what the binding's calling convention must get right), and
 * implements them on the host for ranks that are threads of one process:
 *   - device memory is host memory and streams are ignored: a collective
 *     is complete when its call returns;
 *   - ncclGetUniqueId writes a magic word and a fresh clique number;
 *     ncclCommInitRank with that id blocks until all nranks ranks have
 *     joined, as NCCL does, and fails with ncclInvalidArgument for a rank
 *     outside [0, nranks), an id it never issued, or an nranks that
 *     differs from the clique's;
 *   - AllReduce (sum, prod, max, min, avg over int32, float32, float64,
 *     bfloat16), AllGather and Broadcast meet at a barrier, each rank
 *     computes its result into scratch from every rank's send buffer in
 *     rank order, all meet again, then copy out, so in-place calls work;
 *   - ncclGroupStart/End nest and are counted; collectives inside a group
 *     run when called (the ranks' threads make progress on their own);
 *   - ncclCommAbort wakes the clique's ranks blocked in a collective,
 *     which then fail with ncclRemoteError, as do later ones (the comm
 *     is not freed: another thread may still hold it);
 *   - stub_nccl_fail_next makes the next call of a name fail with a code.
 * -DSTUB_OMIT_ALLGATHER leaves out the required ncclAllGather.
 *
 * Compile with
 *   cc -shared -fPIC -fvisibility=hidden -o libnccl_stub.so libnccl_stub.c -lpthread
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int ncclResult_t;
enum { OK = 0, UNHANDLED_CUDA = 1, SYSTEM = 2, INTERNAL = 3, INVALID_ARGUMENT = 4, INVALID_USAGE = 5, REMOTE = 6 };
enum { T_INT32 = 2, T_FLOAT32 = 7, T_FLOAT64 = 8, T_BF16 = 9 };
enum { OP_SUM = 0, OP_PROD = 1, OP_MAX = 2, OP_MIN = 3, OP_AVG = 4 };

#define ID_MAGIC 0x4e43434cu /* "NCCL" */
#define MAX_RANKS 64
#define MAX_CLIQUES 64

typedef struct { char internal[128]; } ncclUniqueId;

struct clique {
	int nranks, joined, destroyed, aborted;
	/* the barrier: arrivals in this generation, and the generation */
	int waiting;
	long gen;
	const void *send[MAX_RANKS];
};

struct comm {
	struct clique *c;
	int rank;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct clique cliques[MAX_CLIQUES];
static int ncliques;
static int group_depth, groups;
static char fail_name[64];
static int fail_code;
static long ncalls;

/* failing reports (and clears) an injected failure for name. */
static int failing(const char *name) {
	pthread_mutex_lock(&mu);
	ncalls++;
	int code = 0;
	if (fail_code != 0 && strcmp(fail_name, name) == 0) {
		code = fail_code;
		fail_code = 0;
	}
	pthread_mutex_unlock(&mu);
	return code;
}

/* barrier waits until every rank of c has arrived; it returns nonzero
 * if the clique is aborted instead. */
static int barrier(struct clique *c) {
	pthread_mutex_lock(&mu);
	long gen = c->gen;
	if (c->aborted) {
		pthread_mutex_unlock(&mu);
		return 1;
	}
	if (++c->waiting == c->nranks) {
		c->waiting = 0;
		c->gen++;
		pthread_cond_broadcast(&cv);
	} else {
		while (c->gen == gen && !c->aborted) pthread_cond_wait(&cv, &mu);
	}
	int aborted = c->gen == gen && c->aborted;
	pthread_mutex_unlock(&mu);
	return aborted;
}

static size_t type_size(int t) {
	switch (t) {
	case T_INT32: case T_FLOAT32: return 4;
	case T_FLOAT64: return 8;
	case T_BF16: return 2;
	}
	return 0;
}

static double load(const void *p, int t, size_t i) {
	switch (t) {
	case T_INT32: return ((const int32_t *)p)[i];
	case T_FLOAT32: return ((const float *)p)[i];
	case T_FLOAT64: return ((const double *)p)[i];
	}
	uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static void store(void *p, int t, size_t i, double v) {
	switch (t) {
	case T_INT32: ((int32_t *)p)[i] = (int32_t)v; return;
	case T_FLOAT32: ((float *)p)[i] = (float)v; return;
	case T_FLOAT64: ((double *)p)[i] = v; return;
	}
	float f = (float)v;
	uint32_t bits;
	memcpy(&bits, &f, 4);
	bits += 0x7fff + ((bits >> 16) & 1); /* round to nearest even */
	((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
}

EXPORT ncclResult_t ncclGetVersion(int *version) {
	if (failing("ncclGetVersion")) return INTERNAL;
	if (!version) return INVALID_ARGUMENT;
	*version = 22105; /* 2.21.5 */
	return OK;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case OK: return "no error";
	case UNHANDLED_CUDA: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case SYSTEM: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case INTERNAL: return "internal error - please report this issue to the NCCL developers";
	case INVALID_ARGUMENT: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case INVALID_USAGE: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	}
	return "unknown result code";
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
	int f = failing("ncclGetUniqueId");
	if (f) return f;
	if (!id) return INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	int n = ncliques < MAX_CLIQUES ? ncliques++ : -1;
	if (n >= 0) memset(&cliques[n], 0, sizeof cliques[n]);
	pthread_mutex_unlock(&mu);
	if (n < 0) return SYSTEM;
	memset(id, 0, sizeof *id);
	uint32_t w[2] = {ID_MAGIC, (uint32_t)n};
	memcpy(id->internal, w, sizeof w);
	/* the last byte too, so an id whose tail is lost in the call is noticed */
	id->internal[127] = (char)(0x5a ^ n);
	return OK;
}

EXPORT ncclResult_t ncclCommInitRank(struct comm **out, int nranks, ncclUniqueId id, int rank) {
	int f = failing("ncclCommInitRank");
	if (f) return f;
	uint32_t w[2];
	memcpy(w, id.internal, sizeof w);
	if (!out || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) return INVALID_ARGUMENT;
	if (w[0] != ID_MAGIC || w[1] >= (uint32_t)ncliques || id.internal[127] != (char)(0x5a ^ w[1])) return INVALID_ARGUMENT;
	struct clique *c = &cliques[w[1]];
	pthread_mutex_lock(&mu);
	if (c->nranks == 0) c->nranks = nranks;
	if (c->nranks != nranks || c->joined >= nranks) {
		pthread_mutex_unlock(&mu);
		return INVALID_ARGUMENT;
	}
	c->joined++;
	pthread_cond_broadcast(&cv);
	while (c->joined < c->nranks) pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	struct comm *cm = calloc(1, sizeof *cm);
	if (!cm) return SYSTEM;
	cm->c = c;
	cm->rank = rank;
	*out = cm;
	return OK;
}

EXPORT ncclResult_t ncclCommCount(const struct comm *cm, int *count) {
	if (!cm || !count) return INVALID_ARGUMENT;
	*count = cm->c->nranks;
	return OK;
}

EXPORT ncclResult_t ncclCommUserRank(const struct comm *cm, int *rank) {
	if (!cm || !rank) return INVALID_ARGUMENT;
	*rank = cm->rank;
	return OK;
}

EXPORT ncclResult_t ncclCommDestroy(struct comm *cm) {
	int f = failing("ncclCommDestroy");
	if (f) return f;
	if (!cm) return INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	cm->c->destroyed++;
	pthread_mutex_unlock(&mu);
	free(cm);
	return OK;
}

EXPORT ncclResult_t ncclCommAbort(struct comm *cm) {
	int f = failing("ncclCommAbort");
	if (f) return f;
	if (!cm) return INVALID_ARGUMENT;
	pthread_mutex_lock(&mu);
	cm->c->aborted = 1;
	cm->c->destroyed++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return OK;
}

EXPORT ncclResult_t ncclGroupStart(void) {
	pthread_mutex_lock(&mu);
	group_depth++;
	pthread_mutex_unlock(&mu);
	return OK;
}

EXPORT ncclResult_t ncclGroupEnd(void) {
	pthread_mutex_lock(&mu);
	int r = group_depth > 0 ? OK : INVALID_USAGE;
	if (r == OK && --group_depth == 0) groups++;
	pthread_mutex_unlock(&mu);
	return r;
}

/* collective runs one collective on cm: every rank publishes send, each
 * computes n elements of its result into scratch with fn, and copies them
 * to recv once every rank has finished reading. */
static ncclResult_t collective(struct comm *cm, const void *send, void *recv, size_t n, int t,
                               void (*fn)(struct comm *, void *, size_t, int, int, int), int arg, int root) {
	size_t es = type_size(t);
	if (!cm || es == 0) return INVALID_ARGUMENT;
	if (n > 0 && (!send || !recv)) return INVALID_ARGUMENT;
	void *scratch = malloc(n * es + 1);
	if (!scratch) return SYSTEM;
	struct clique *c = cm->c;
	c->send[cm->rank] = send;
	if (barrier(c)) {
		free(scratch);
		return REMOTE;
	}
	fn(cm, scratch, n, t, arg, root);
	if (barrier(c)) {
		free(scratch);
		return REMOTE;
	}
	if (n > 0) memcpy(recv, scratch, n * es);
	free(scratch);
	return OK;
}

static void reduce(struct comm *cm, void *out, size_t n, int t, int op, int root) {
	(void)root;
	struct clique *c = cm->c;
	for (size_t i = 0; i < n; i++) {
		double v = load(c->send[0], t, i);
		for (int r = 1; r < c->nranks; r++) {
			double x = load(c->send[r], t, i);
			switch (op) {
			case OP_SUM: case OP_AVG: v += x; break;
			case OP_PROD: v *= x; break;
			case OP_MAX: v = x > v ? x : v; break;
			case OP_MIN: v = x < v ? x : v; break;
			}
			if (t == T_FLOAT32) v = (float)v; /* accumulate as NCCL does, in the element type */
		}
		if (op == OP_AVG) v /= c->nranks;
		store(out, t, i, v);
	}
}

#ifndef STUB_OMIT_ALLGATHER
/* gather: n is the receive count, nranks times the send count */
static void gather(struct comm *cm, void *out, size_t n, int t, int arg, int root) {
	(void)arg, (void)root;
	struct clique *c = cm->c;
	size_t each = n / c->nranks, es = type_size(t);
	for (int r = 0; r < c->nranks; r++) memcpy((char *)out + r * each * es, c->send[r], each * es);
}

#endif

static void bcast(struct comm *cm, void *out, size_t n, int t, int arg, int root) {
	(void)arg;
	memcpy(out, cm->c->send[root], n * type_size(t));
}

EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op,
                                  struct comm *cm, void *stream) {
	(void)stream;
	int f = failing("ncclAllReduce");
	if (f) return f;
	if (op < OP_SUM || op > OP_AVG) return INVALID_ARGUMENT;
	return collective(cm, send, recv, count, datatype, reduce, op, 0);
}

#ifndef STUB_OMIT_ALLGATHER
EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount, int datatype,
                                  struct comm *cm, void *stream) {
	(void)stream;
	int f = failing("ncclAllGather");
	if (f) return f;
	if (!cm) return INVALID_ARGUMENT;
	return collective(cm, send, recv, sendcount * cm->c->nranks, datatype, gather, 0, 0);
}
#endif

EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, int datatype, int root,
                                  struct comm *cm, void *stream) {
	(void)stream;
	int f = failing("ncclBroadcast");
	if (f) return f;
	if (!cm || root < 0 || root >= cm->c->nranks) return INVALID_ARGUMENT;
	/* only the root's send buffer is read; others may pass NULL */
	if (cm->rank != root) send = recv;
	return collective(cm, send, recv, count, datatype, bcast, 0, root);
}

/* ---- test hooks ---- */

EXPORT void stub_nccl_fail_next(const char *name, int code) {
	pthread_mutex_lock(&mu);
	strncpy(fail_name, name, sizeof fail_name - 1);
	fail_code = code;
	pthread_mutex_unlock(&mu);
}

EXPORT long stub_nccl_groups(void) {
	pthread_mutex_lock(&mu);
	long g = groups;
	pthread_mutex_unlock(&mu);
	return g;
}

EXPORT long stub_nccl_calls(void) {
	pthread_mutex_lock(&mu);
	long n = ncalls;
	pthread_mutex_unlock(&mu);
	return n;
}
