package cublas

import "github.com/gokern/kern/internal/dynlib"

// proc is one entry point (dynlib.Proc): the name it was found under and
// its address, or 0 when the library does not export it.
type proc = dynlib.Proc

// procs holds every entry point this package calls. Field names are the
// exported names without the _v2 suffix.
type procs struct {
	cublasCreate, cublasDestroy, cublasSetStream, cublasGetStream proc
	cublasSetMathMode, cublasGetVersion                           proc
	cublasGetStatusName, cublasGetStatusString                    proc
	cublasSgemm, cublasGemmEx                                     proc
}

// symbolTable lists every entry point. The _v2 suffixes are the
// cublas_v2.h ABI (see the package doc); cublasGemmEx and
// cublasSetMathMode never had another. cublasGetStatusName and
// cublasGetStatusString appeared in cuBLAS 11.4, so they are optional and
// errors fall back to the built-in table (status.go).
func (l *library) symbolTable() []dynlib.Symbol {
	req, opt := dynlib.Req, dynlib.Opt
	return []dynlib.Symbol{
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
	return dynlib.Resolve(l.symbolTable(), lookup)
}
