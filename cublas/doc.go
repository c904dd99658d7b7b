// Package cublas is a thin binding to NVIDIA's cuBLAS (libcublas.so.12 on
// Linux, cublas64_12.dll on Windows), loaded at run time with purego like
// package cuda: no cgo, no toolkit at build time, and a machine without
// cuBLAS gets an error from Create, never a crash.
//
// kern uses it as the reference point for matrix multiplies: `kern bench
// gemm` times cuBLAS next to kern's own kernels, and tests compare results
// against it. It binds only what that needs: handles, streams, math mode,
// Sgemm and GemmEx.
//
// # Loading
//
// The library is opened on first use (Load, or implicitly by Create). The
// sonames are tried in order (load_linux.go, load_windows.go); $KERN_LIBCUBLAS,
// when set, is the only library tried. libcublas depends on libcublasLt of
// the same version, which the loader finds through libcublas's own search
// path; where that fails (a copy outside the loader's path, a Windows DLL
// directory not on PATH) the matching libcublasLt next to the chosen library
// is opened first, so the dependency is already loaded when libcublas asks
// for it.
//
// Every entry point is resolved by name through one table (symbols.go); a
// library lacking a required one is a *LoadError naming every missing name.
// cuBLAS exports two ABIs under similar names: cublas_v2.h maps cublasSgemm
// to cublasSgemm_v2, while the unsuffixed cublasSgemm is the legacy cublas.h
// API (char arguments, no handle, no status) and cublasSgemm_v2_64 the
// 64-bit-integer one. This package calls only the _v2 names with 32-bit
// ints; the stub in testdata exports the others as decoys that fail.
//
// # Contexts
//
// cuBLAS runs on the CUDA runtime, which uses the calling OS thread's
// current driver context. A Handle is created for one cuda.Context and runs
// every call inside Context.Do, so calls made from any goroutine go to that
// context. Create with the primary context (cuda.PrimaryCtxRetain) to share
// memory with kern's CUDA device, which uses the same primary context.
//
// # Column-major
//
// cuBLAS follows Fortran BLAS: matrices are column-major, element (i, j)
// of an m×n matrix A with leading dimension lda is at A[i + j*lda], and
// lda ≥ m. Go code usually holds row-major matrices. A row-major r×c matrix
// is, byte for byte, the column-major c×r matrix of its transpose, so
// C = A·B with row-major A (m×k), B (k×n), C (m×n) is computed as
// Cᵀ = Bᵀ·Aᵀ in column-major terms, swapping the operands:
//
//	// row-major: C[m×n] = A[m×k] · B[k×n]
//	h.Sgemm(cublas.OpN, cublas.OpN, n, m, k, 1, b, n, a, k, 0, c, n)
//
// which is what SgemmRowMajor does.
//
// # Errors
//
// A failing call returns an *Error naming the entry point and the status,
// with cuBLAS's own name and description (cublasGetStatusName and
// cublasGetStatusString, cuBLAS 11.4+) or the built-in table for older
// libraries. errors.Is(err, cublas.StatusInvalidValue) matches on the code.
//
// # Tests
//
// The tests build testdata/stub/libcublas_stub.c, a cuBLAS in C that
// computes Sgemm and GemmEx on the CPU (device memory is host memory, as in
// package cuda's stub driver, which the tests load too), validates
// arguments as cuBLAS documents, and records each call's raw enum values.
// They check argument order, transposes, leading dimensions, the enum
// values and the row-major trick numerically. gpu_test.go (build tag gpu)
// runs Sgemm on a real GPU against a CPU reference.
package cublas
