//go:build linux && (amd64 || arm64) && !gpu

package nccl

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// The tests run on a stub libnccl built from C with the system compiler
// (testdata/stub), loaded the way users load the real one, through
// KERN_LIBNCCL. Its "device pointers" are host pointers and its ranks are
// threads, so a clique here is goroutines of this test.

var stub struct {
	skip     string
	path     string
	failNext func(name string, code int32)
	groups   func() int64
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kern-nccl-stub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := setupStub(dir); err != nil {
		stub.skip = err.Error()
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func setupStub(dir string) error {
	lib, err := buildStub(filepath.Join(dir, "libnccl_stub.so"))
	if err != nil {
		return err
	}
	os.Setenv(LibraryEnv, lib)
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	for _, hk := range []struct {
		fn   any
		name string
	}{{&stub.failNext, "stub_nccl_fail_next"}, {&stub.groups, "stub_nccl_groups"}} {
		addr, err := purego.Dlsym(h, hk.name)
		if err != nil {
			return fmt.Errorf("stub hook %s: %w", hk.name, err)
		}
		purego.RegisterFunc(hk.fn, addr)
	}
	stub.path = lib
	return nil
}

// buildStub compiles testdata/stub into out with the given -D defines.
func buildStub(out string, defines ...string) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no C compiler (%s) to build the stub: %v", cc, err)
	}
	args := []string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror", "-o", out}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	args = append(args, filepath.Join("testdata", "stub", "libnccl_stub.c"), "-lm", "-lpthread")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", filepath.Base(out), err, b)
	}
	return out, nil
}

// needStub skips the test when the stub could not be built, and fails it
// under CI=true, where a missing C compiler is a broken setup.
func needStub(t testing.TB) {
	t.Helper()
	if stub.skip == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("stub unavailable under CI=true: %s", stub.skip)
	}
	t.Skip("stub unavailable: " + stub.skip)
}

func TestLoadUsesTheEnvironmentAndReportsTheVersion(t *testing.T) {
	needStub(t)
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if Library() != stub.path {
		t.Errorf("Library() = %q, want $%s = %q", Library(), LibraryEnv, stub.path)
	}
	v, err := Version()
	if err != nil || v != 22105 || VersionString(v) != "2.21.5" {
		t.Errorf("Version() = %d (%s), %v; want 22105 (2.21.5)", v, VersionString(v), err)
	}
	if s := VersionString(2708); s != "2.7.8" {
		t.Errorf("VersionString(2708) = %s, want the pre-2.9 encoding 2.7.8", s)
	}
	t.Setenv(LibraryEnv, "")
	if got := what.Candidates(defaultLibraries); len(got) < 2 || got[0] != "libnccl.so.2" {
		t.Errorf("default candidates = %v", got)
	}
}

func TestNoLibraryNamesWhatWasTried(t *testing.T) {
	_, err := loadLibrary([]string{"/nonexistent/libnccl.so.2", "libnccl_does_not_exist.so"})
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want ErrNoLibrary", err)
	}
	for _, want := range []string{"/nonexistent/libnccl.so.2", "libnccl_does_not_exist.so", LibraryEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}

func TestMissingRequiredSymbol(t *testing.T) {
	needStub(t)
	path, err := buildStub(filepath.Join(t.TempDir(), "libnccl_noallgather.so"), "STUB_OMIT_ALLGATHER")
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadLibrary([]string{path})
	var le *LoadError
	if !errors.As(err, &le) || !slices.Equal(le.Missing, []string{"ncclAllGather"}) || le.Library != path {
		t.Fatalf("loading an NCCL without ncclAllGather: %v (%+v)", err, le)
	}
	if errors.Is(err, ErrNoLibrary) {
		t.Error("a library that opened matches ErrNoLibrary")
	}
}

// clique runs fn on each of n ranks of a fresh clique, each in its own
// goroutine (CommInitRank blocks until all have joined), and destroys the
// communicators afterwards.
func clique(t *testing.T, n int, fn func(c *Comm) error) {
	t.Helper()
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := CommInitRank(n, id, r)
			if err != nil {
				errs[r] = err
				return
			}
			if err := fn(c); err != nil {
				errs[r] = err
			}
			if err := c.Destroy(); err != nil && errs[r] == nil {
				errs[r] = err
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// ptr is a slice's address as a stub device pointer (the stub's device
// memory is host memory; Go's heap does not move).
func ptr[T any](xs []T) cuda.DevicePtr { return cuda.DevicePtr(uintptr(unsafe.Pointer(&xs[0]))) }

func TestCliqueOfFourRunsEveryCollective(t *testing.T) {
	needStub(t)
	const n, count = 4, 5
	results := make([][]float32, n)
	var mu sync.Mutex
	clique(t, n, func(c *Comm) error {
		r := c.Rank()
		if got, err := c.Count(); err != nil || got != n {
			return fmt.Errorf("Count = %d, %v", got, err)
		}
		if got, err := c.UserRank(); err != nil || got != r {
			return fmt.Errorf("UserRank = %d, %v", got, err)
		}
		// Sum, in place: element i of rank r is r*10 + i.
		xs := make([]float32, count)
		for i := range xs {
			xs[i] = float32(r*10 + i)
		}
		if err := c.AllReduce(ptr(xs), ptr(xs), count, Float32, Sum, 0); err != nil {
			return err
		}
		// bfloat16: each rank contributes 0.5·(r+1); the sum is exact.
		bs := []gpu.BFloat16{gpu.ToBFloat16(0.5 * float32(r+1)), gpu.ToBFloat16(-1)}
		if err := c.AllReduce(ptr(bs), ptr(bs), len(bs), BFloat16, Sum, 0); err != nil {
			return err
		}
		if bs[0].Float32() != 5 || bs[1].Float32() != -4 {
			return fmt.Errorf("bf16 all-reduce = %v, %v; want 5, -4", bs[0].Float32(), bs[1].Float32())
		}
		// Gather two elements per rank.
		mine := []float32{float32(r), float32(-r)}
		all := make([]float32, 2*n)
		if err := c.AllGather(ptr(mine), ptr(all), 2, Float32, 0); err != nil {
			return err
		}
		for q := range n {
			if all[2*q] != float32(q) || all[2*q+1] != float32(-q) {
				return fmt.Errorf("all-gather = %v", all)
			}
		}
		// Broadcast from rank 2.
		b := []int32{int32(100 + r), int32(200 + r)}
		if err := c.Broadcast(ptr(b), ptr(b), 2, Int32, 2, 0); err != nil {
			return err
		}
		if b[0] != 102 || b[1] != 202 {
			return fmt.Errorf("broadcast from rank 2 = %v", b)
		}
		mu.Lock()
		results[r] = xs
		mu.Unlock()
		return nil
	})
	for r := range n {
		for i := range count {
			want := float32(0+1+2+3)*10 + float32(n*i)
			if results[r] == nil || math.Abs(float64(results[r][i]-want)) != 0 {
				t.Fatalf("rank %d all-reduce = %v, element %d want %v", r, results[r], i, want)
			}
		}
	}
}

func TestGroupsAndErrors(t *testing.T) {
	needStub(t)
	before := stub.groups()
	if err := GroupStart(); err != nil {
		t.Fatal(err)
	}
	if err := GroupStart(); err != nil {
		t.Fatal(err)
	}
	if err := GroupEnd(); err != nil {
		t.Fatal(err)
	}
	if err := GroupEnd(); err != nil {
		t.Fatal(err)
	}
	if got := stub.groups() - before; got != 1 {
		t.Errorf("nested groups closed %d outer groups, want 1", got)
	}
	err := GroupEnd()
	if !errors.Is(err, InvalidUsage) || !strings.Contains(err.Error(), "ncclGroupEnd") {
		t.Errorf("GroupEnd without GroupStart: %v", err)
	}

	// An id NCCL never issued: the library's own message comes back.
	_, err = CommInitRank(1, UniqueID{1, 2, 3}, 0)
	var e *Error
	if !errors.As(err, &e) || e.Result != InvalidArgument || e.Call != "ncclCommInitRank" ||
		!strings.Contains(e.Text, "NCCL_DEBUG") {
		t.Errorf("CommInitRank with a forged id: %v", err)
	}
	if _, err := CommInitRank(2, UniqueID{}, 2); !errors.Is(err, InvalidArgument) || !strings.Contains(err.Error(), "rank 2 of 2") {
		t.Errorf("rank out of range: %v", err)
	}

	// A one-rank clique: an injected failure, then use after Destroy.
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CommInitRank(1, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	xs := []float32{1}
	stub.failNext("ncclAllReduce", int32(UnhandledCudaError))
	err = c.AllReduce(ptr(xs), ptr(xs), 1, Float32, Sum, 0)
	if !errors.Is(err, UnhandledCudaError) || !strings.Contains(err.Error(), "unhandled cuda error") {
		t.Errorf("injected failure: %v", err)
	}
	if err := c.Broadcast(ptr(xs), ptr(xs), 1, Float32, 1, 0); !errors.Is(err, InvalidArgument) {
		t.Errorf("broadcast from root 1 of 1: %v", err)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(ptr(xs), ptr(xs), 1, Float32, Sum, 0); !errors.Is(err, InvalidUsage) || !strings.Contains(err.Error(), "destroyed") {
		t.Errorf("all-reduce after Destroy: %v", err)
	}
	if err := c.Destroy(); !errors.Is(err, InvalidUsage) {
		t.Errorf("second Destroy: %v", err)
	}
}

// Abort ends a collective another goroutine is blocked in (its peer
// never comes) with RemoteError; later calls on the Comm, Destroy
// included, say it was aborted.
func TestAbortEndsABlockedCollective(t *testing.T) {
	needStub(t)
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*Comm, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			comms[r], errs[r] = CommInitRank(2, id, r)
		}()
	}
	wg.Wait()
	if comms[0] == nil || comms[1] == nil {
		t.Fatalf("CommInitRank: %v", errors.Join(errs...))
	}
	defer comms[1].Destroy()
	xs := []float32{1, 2}
	done := make(chan error, 1)
	go func() { done <- comms[0].AllReduce(ptr(xs), ptr(xs), 2, Float32, Sum, 0) }() // rank 1 never joins
	select {
	case err := <-done:
		t.Fatalf("an all-reduce without its peer returned: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := comms[0].Abort(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, RemoteError) {
			t.Errorf("the blocked all-reduce: %v, want ncclRemoteError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the all-reduce still blocked 10 s after Abort")
	}
	for name, err := range map[string]error{
		"AllReduce": comms[0].AllReduce(ptr(xs), ptr(xs), 2, Float32, Sum, 0),
		"Destroy":   comms[0].Destroy(),
		"Abort":     comms[0].Abort(),
	} {
		if !errors.Is(err, InvalidUsage) || !strings.Contains(err.Error(), "aborted") {
			t.Errorf("%s after Abort: %v", name, err)
		}
	}
}
