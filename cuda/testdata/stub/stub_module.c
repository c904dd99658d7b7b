/* stub_module.c: modules from PTX text, and the linker (see libcuda_stub.c). */
#include "stub.h"

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

/* type_size is the size of the type named by the token at t (".b64"),
   looking only at the token itself. */
static size_t type_size(const char *t) {
	size_t n = 1;
	while (ident_char(t[n])) n++;
	if (n == 3 && (strncmp(t, ".b8", 3) == 0 || strncmp(t, ".u8", 3) == 0 || strncmp(t, ".s8", 3) == 0)) return 1;
	if (n == 4 && strncmp(t + 2, "16", 2) == 0) return 2;
	if (n == 4 && strncmp(t + 2, "32", 2) == 0) return 4;
	if (n == 4 && strncmp(t + 2, "64", 2) == 0) return 8;
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
	for (const char *p = ptx; (p = strstr(p, ".entry")) != NULL && m->nfuncs < STUB_MAX_FUNCS;) {
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

/* last_ptx is the start of the last image cuModuleLoadDataEx was given. */
static char last_ptx[1 << 20];

/* stub_last_ptx_has reports whether the last loaded image's first 1 MiB
 * contain needle. */
EXPORT int stub_last_ptx_has(const char *needle) {
	LOCK();
	int v = strstr(last_ptx, needle) != NULL;
	UNLOCK();
	return v;
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
	LOCK();
	snprintf(last_ptx, sizeof last_ptx, "%s", ptx);
	UNLOCK();
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

