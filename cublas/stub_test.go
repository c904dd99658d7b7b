//go:build linux && !gpu

package cublas

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gokern/kern/cuda"
)

// The tests run on two stubs built from C with the system compiler: package
// cuda's stub driver (../cuda/testdata/stub), which supplies contexts,
// streams and device memory that is host memory, and this package's stub
// cuBLAS (testdata/stub), which computes on that memory. Both are loaded
// the way users load the real libraries, through KERN_LIBCUDA and
// KERN_LIBCUBLAS. A -tags gpu build tests the real libraries instead
// (gpu_test.go).

var stub struct {
	skip     string // why the stub tests cannot run, if they cannot
	dir      string
	cudaPath string
	path     string // the stub libcublas

	reset    func()
	calls    func(name string) int64
	decoys   func() int64
	live     func() int32
	failNext func(name string, status int32)
	last     func(call *byte, cap int32, v *int32, scal *float64, stream *uintptr) int32
	useCtx   func(fn uintptr)
}

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kern-cublas-stub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stub.dir = dir
	if err := setupStubs(dir); err != nil {
		stub.skip = err.Error()
	}
	code := m.Run()
	if stub.skip == "" {
		if n := stub.decoys(); n != 0 {
			fmt.Fprintf(os.Stderr, "FAIL: the stub's legacy/ILP64 decoy entry points were called %d times\n", n)
			return 1
		}
	}
	return code
}

func setupStubs(dir string) error {
	cudaLib, err := buildC(filepath.Join(dir, "libcuda_stub.so"), filepath.Join("..", "cuda", "testdata", "stub"))
	if err != nil {
		return err
	}
	lib, err := buildCublasStub(filepath.Join(dir, "libcublas_stub.so"))
	if err != nil {
		return err
	}
	os.Setenv("KERN_LIBCUDA", cudaLib)
	os.Setenv(LibraryEnv, lib)
	if err := cuda.Init(); err != nil {
		return fmt.Errorf("loading the stub driver: %w", err)
	}
	if cuda.Library() != cudaLib {
		return fmt.Errorf("cuda.Init loaded %s, not the stub", cuda.Library())
	}
	if err := bindHooks(lib); err != nil {
		return err
	}
	// Hand the stub cuBLAS the stub driver's cuCtxGetCurrent, so that it
	// fails calls made without the handle's context current, as cuBLAS
	// would misbehave.
	h, err := purego.Dlopen(cudaLib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	getCtx, err := purego.Dlsym(h, "cuCtxGetCurrent")
	if err != nil {
		return err
	}
	stub.useCtx(getCtx)
	stub.cudaPath, stub.path = cudaLib, lib
	return nil
}

// buildCublasStub compiles testdata/stub into out with the given -D defines.
func buildCublasStub(out string, defines ...string) (string, error) {
	return buildC(out, filepath.Join("testdata", "stub"), defines...)
}

// buildC compiles every .c file in srcDir into the shared object out.
func buildC(out, srcDir string, defines ...string) (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("the stubs are Linux shared objects; this is %s", runtime.GOOS)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no C compiler (%s) to build the stubs: %v", cc, err)
	}
	srcs, err := filepath.Glob(filepath.Join(srcDir, "*.c"))
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("no stub sources in %s: %v", srcDir, err)
	}
	args := []string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror", "-o", out}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	args = append(append(args, srcs...), "-lm", "-lpthread")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", filepath.Base(out), err, b)
	}
	return out, nil
}

func bindHooks(path string) error {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	hooks := []struct {
		fn   any
		name string
	}{
		{&stub.reset, "stub_cublas_reset"},
		{&stub.calls, "stub_cublas_calls"},
		{&stub.decoys, "stub_cublas_decoys"},
		{&stub.live, "stub_cublas_live"},
		{&stub.failNext, "stub_cublas_fail_next"},
		{&stub.last, "stub_cublas_last"},
		{&stub.useCtx, "stub_cublas_use_ctx"},
	}
	for _, hk := range hooks {
		addr, err := purego.Dlsym(h, hk.name)
		if err != nil {
			return fmt.Errorf("stub hook %s: %w", hk.name, err)
		}
		purego.RegisterFunc(hk.fn, addr)
	}
	return nil
}

// needStubs skips the test when the stubs could not be built, and fails it
// under CI=true, where a missing C compiler is a broken setup.
func needStubs(t testing.TB) {
	t.Helper()
	if stub.skip == "" {
		stub.reset()
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("stubs unavailable under CI=true: %s", stub.skip)
	}
	t.Skip("stubs unavailable: " + stub.skip)
}

// stubHandle retains the stub driver's primary context on device 0 and
// creates a handle on it, both released when the test ends.
func stubHandle(t testing.TB) (*Handle, cuda.Context) {
	t.Helper()
	needStubs(t)
	ctx, err := cuda.PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Release() })
	h, err := Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Destroy() })
	return h, ctx
}

// useLibrary makes lib the library Create uses, for the test.
func useLibrary(t testing.TB, lib *library) {
	prev := active.Swap(lib)
	t.Cleanup(func() { active.Swap(prev) })
}

// upload copies xs into new device memory of ctx, freed when the test ends.
func upload[T any](t testing.TB, ctx cuda.Context, xs []T) cuda.DevicePtr {
	t.Helper()
	var p cuda.DevicePtr
	err := ctx.Do(func() (err error) {
		if p, err = cuda.MemAlloc(uint64(max(len(xs), 1)) * uint64(unsafe.Sizeof(xs[0]))); err != nil {
			return err
		}
		return cuda.CopyHtoD(p, xs)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Do(func() error { return cuda.MemFree(p) }) })
	return p
}

// download reads n elements of device memory.
func download[T any](t testing.TB, ctx cuda.Context, p cuda.DevicePtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := ctx.Do(func() error { return cuda.CopyDtoH(out, p) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// gemmRecord is what the stub saw in the last GEMM.
type gemmRecord struct {
	call                                         string
	transA, transB, m, n, k, lda, ldb, ldc       int32
	aType, bType, cType, compute, algo, mathMode int32
	alpha, beta                                  float64
	stream                                       cuda.Stream
}

func lastGemm() gemmRecord {
	var name [32]byte
	var v [14]int32
	var scal [2]float64
	var s uintptr
	stub.last(&name[0], int32(len(name)), &v[0], &scal[0], &s)
	n := 0
	for n < len(name) && name[n] != 0 {
		n++
	}
	return gemmRecord{call: string(name[:n]),
		transA: v[0], transB: v[1], m: v[2], n: v[3], k: v[4], lda: v[5], ldb: v[6], ldc: v[7],
		aType: v[8], bType: v[9], cType: v[10], compute: v[11], algo: v[12], mathMode: v[13],
		alpha: scal[0], beta: scal[1], stream: cuda.Stream(s)}
}
