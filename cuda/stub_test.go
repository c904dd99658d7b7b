package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gokern/kern/internal/dynlib"
)

// The stub libcuda (testdata/stub/libcuda_stub.c) is built once per test
// binary into a temporary directory, loaded as its own driver instance, and
// installed as the active driver by useStub for each test that needs it.
// Its stub_* hooks are bound here so tests can read what the "driver" saw.

var stub struct {
	path   string
	skip   string // why stub tests are skipped, if they are
	driver *driver

	reset         func()
	calls         func(name string) int64
	decoyCalls    func() int64
	failNext      func(name string, code int32)
	setBusy       func(n int32)
	setParamSizes func(kernel string, n int32, sizes *int32) int32
	launches      func() int64
	lastLaunch    func(name *byte, cap int32, dims *uint32, stream *uintptr) int32
	lastParam     func(i int32, out *byte, cap int32) int32
	allocated     func() int64
	primaryRefs   func(dev int32) int32
	lastPDL       func() int32
	lastPTXHas    func(needle string) int32
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kern-cuda-stub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := setupStub(dir); err != nil {
		stub.skip = err.Error()
	}
	code := m.Run()
	if stub.driver != nil {
		if n := stub.decoyCalls(); n != 0 {
			fmt.Fprintf(os.Stderr, "FAIL: the stub's unversioned decoy entry points were called %d times\n", n)
			return 1
		}
	}
	return code
}

func setupStub(dir string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the stub libcuda is built as a Linux shared object; this is %s", runtime.GOOS)
	}
	path, err := buildStub(dir, "libcuda_stub.so")
	if err != nil {
		return err
	}
	d, err := loadDriver([]string{path})
	if err != nil {
		return fmt.Errorf("loading the stub: %w", err)
	}
	if err := d.call(&d.cuInit, 0); err != nil {
		return err
	}
	if err := bindHooks(path); err != nil {
		return err
	}
	stub.path, stub.driver = path, d
	if !gpuTag {
		// Init (tested in TestInit) loads the same library through the
		// public path; without -tags gpu there is no real driver to keep.
		os.Setenv(LibraryEnv, path)
	}
	return nil
}

// buildStub compiles the stub with the system C compiler into dir/name,
// passing each define as -D.
func buildStub(dir, name string, defines ...string) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no C compiler (%s) to build the stub libcuda: %v", cc, err)
	}
	out := filepath.Join(dir, name)
	srcs, err := filepath.Glob(filepath.Join("testdata", "stub", "*.c"))
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("no stub sources in testdata/stub: %v", err)
	}
	args := []string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror", "-o", out}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	args = append(args, srcs...)
	args = append(args, "-lpthread")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the stub libcuda: %v\n%s", err, b)
	}
	return out, nil
}

// useStub makes the stub the active driver for the test, resets its
// recorder, and restores the previous driver afterwards.
func useStub(t testing.TB) {
	t.Helper()
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	useDriver(t, stub.driver)
	stub.reset()
}

func useDriver(t testing.TB, d *driver) {
	prev := active.Swap(d)
	t.Cleanup(func() { active.Store(prev) })
}

// stubContext retains the stub's primary context on device 0 for the test.
func stubContext(t testing.TB) Context {
	t.Helper()
	useStub(t)
	ctx, err := PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return ctx
}

// do runs fn in ctx.Do and fails the test on error.
func do(t testing.TB, ctx Context, fn func() error) {
	t.Helper()
	if err := ctx.Do(fn); err != nil {
		t.Fatal(err)
	}
}

// setParamSizes registers a kernel signature with the stub.
func setParamSizes(t testing.TB, kernel string, sizes ...int32) {
	t.Helper()
	var p *int32
	if len(sizes) > 0 {
		p = &sizes[0]
	}
	if stub.setParamSizes(kernel, int32(len(sizes)), p) != 0 {
		t.Fatalf("stub rejected the signature of %s: %v", kernel, sizes)
	}
	runtime.KeepAlive(sizes)
}

// launchRecord is what the stub saw in the last executed launch.
type launchRecord struct {
	name   string
	dims   [7]uint32 // grid xyz, block xyz, shared bytes
	stream Stream
	params [][]byte
}

func lastLaunch() launchRecord {
	var name [128]byte
	var r launchRecord
	var s uintptr
	n := stub.lastLaunch(&name[0], int32(len(name)), &r.dims[0], &s)
	r.stream = Stream(s)
	r.name = dynlib.GoString(&name[0])
	for i := range n {
		var buf [64]byte
		size := stub.lastParam(i, &buf[0], int32(len(buf)))
		r.params = append(r.params, append([]byte(nil), buf[:max(size, 0)]...))
	}
	return r
}

// loadPTX loads a module from PTX text, failing the test on error.
func loadPTX(t testing.TB, ptx string) Module {
	t.Helper()
	m, err := LoadModuleData([]byte(ptx))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stubPTX declares the kernels the stub knows how to run, plus globals.
const stubPTX = `.version 8.0
.target sm_80
.address_size 64
.global .align 4 .b8 table[64];
.global .u32 counter;
.visible .entry add_one(.param .u64 p, .param .u64 n) { ret; }
.visible .entry fault() { ret; }
.visible .entry abi() { ld.global.u32 %r1, [%rd1]; ret; }
`

// bytesOf returns the little-endian bytes of v's memory.
func bytesOf[T any](v T) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))...)
}
