package cublas

// proc is one cuBLAS entry point: the name it was found under and its
// address, or 0 when the library does not export it.
type proc struct {
	name string
	addr uintptr
}

// procs holds every entry point this package calls. Field names are the
// exported names without the _v2 suffix.
type procs struct {
	cublasCreate, cublasDestroy, cublasSetStream, cublasGetStream proc
	cublasSetMathMode, cublasGetVersion                           proc
	cublasGetStatusName, cublasGetStatusString                    proc
	cublasSgemm, cublasGemmEx                                     proc
}

// symbol says how one proc is found: the exported names to try, in
// order, and whether loading fails without it.
type symbol struct {
	p        *proc
	names    []string
	optional bool
}

// symbolTable lists every entry point. The _v2 suffixes are the
// cublas_v2.h ABI (see the package doc); cublasGemmEx and
// cublasSetMathMode never had another. cublasGetStatusName and
// cublasGetStatusString appeared in cuBLAS 11.4, so they are optional and
// errors fall back to the built-in table (status.go).
func (l *library) symbolTable() []symbol {
	req := func(p *proc, names ...string) symbol { return symbol{p: p, names: names} }
	opt := func(p *proc, names ...string) symbol { return symbol{p: p, names: names, optional: true} }
	return []symbol{
		req(&l.cublasCreate, "cublasCreate_v2"),
		req(&l.cublasDestroy, "cublasDestroy_v2"),
		req(&l.cublasSetStream, "cublasSetStream_v2"),
		opt(&l.cublasGetStream, "cublasGetStream_v2"),
		opt(&l.cublasSetMathMode, "cublasSetMathMode"),
		opt(&l.cublasGetVersion, "cublasGetVersion_v2"),
		opt(&l.cublasGetStatusName, "cublasGetStatusName"),
		opt(&l.cublasGetStatusString, "cublasGetStatusString"),
		req(&l.cublasSgemm, "cublasSgemm_v2"),
		req(&l.cublasGemmEx, "cublasGemmEx"),
	}
}

// resolve looks every symbol up through lookup (0 for a missing name) and
// returns the required ones that are missing, by their preferred name.
// Missing optional procs keep addr 0 and fail when called.
func (l *library) resolve(lookup func(name string) uintptr) (missing []string) {
	for _, s := range l.symbolTable() {
		s.p.name = s.names[0]
		for _, n := range s.names {
			if a := lookup(n); a != 0 {
				s.p.name, s.p.addr = n, a
				break
			}
		}
		if s.p.addr == 0 && !s.optional {
			missing = append(missing, s.names[0])
		}
	}
	return missing
}
