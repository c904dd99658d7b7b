//go:build linux && !gpu

package cublas

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokern/kern/cuda"
)

func TestLoadUsesTheEnvironment(t *testing.T) {
	needStubs(t)
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if Library() != stub.path {
		t.Errorf("Library() = %q, want $%s = %q", Library(), LibraryEnv, stub.path)
	}
	t.Setenv(LibraryEnv, "/elsewhere/libcublas.so.12")
	if got := what.Candidates(defaultLibraries); !slices.Equal(got, []string{"/elsewhere/libcublas.so.12"}) {
		t.Errorf("with %s set, candidates = %v", LibraryEnv, got)
	}
	t.Setenv(LibraryEnv, "")
	if got := what.Candidates(defaultLibraries); len(got) < 3 || got[0] != "libcublas.so.12" {
		t.Errorf("default candidates = %v", got)
	}
}

func TestNoLibrary(t *testing.T) {
	_, err := loadLibrary([]string{"/nonexistent/libcublas.so.12", "libcublas_does_not_exist.so"})
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want ErrNoLibrary", err)
	}
	for _, want := range []string{"/nonexistent/libcublas.so.12", "libcublas_does_not_exist.so", LibraryEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}

func TestMissingRequiredSymbol(t *testing.T) {
	needStubs(t)
	path, err := buildCublasStub(filepath.Join(t.TempDir(), "libcublas_nogemmex.so"), "STUB_OMIT_GEMMEX")
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadLibrary([]string{path})
	var le *LoadError
	if !errors.As(err, &le) || !slices.Equal(le.Missing, []string{"cublasGemmEx"}) || le.Library != path {
		t.Fatalf("loading a cuBLAS without cublasGemmEx: %v (%+v)", err, le)
	}
	if errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "cublasGemmEx") {
		t.Errorf("message %q", err)
	}
}

// Before cuBLAS 11.4 there is no cublasGetStatusName; errors then carry
// the built-in name and text.
func TestStatusNamesWithoutTheLibrarysTable(t *testing.T) {
	needStubs(t)
	path, err := buildCublasStub(filepath.Join(t.TempDir(), "libcublas_old.so"), "STUB_NO_STATUS_NAME")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := loadLibrary([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if lib.cublasGetStatusName.Addr != 0 {
		t.Fatal("the old stub exports cublasGetStatusName")
	}
	useLibrary(t, lib)
	h, ctx := stubHandleOn(t)
	p := upload(t, ctx, make([]float32, 4))
	err = h.Sgemm(OpN, OpN, -1, 1, 1, 1, p, 1, p, 1, 0, p, 1)
	var e *Error
	if !errors.As(err, &e) || e.Name != "CUBLAS_STATUS_INVALID_VALUE" || e.Text != statusTable.Text(StatusInvalidValue) {
		t.Errorf("error %#v", err)
	}
}

// stubHandleOn is stubHandle for a library already made active (the stub
// hooks belong to the first stub; this one is a separate copy).
func stubHandleOn(t *testing.T) (*Handle, cuda.Context) {
	t.Helper()
	return stubHandle(t)
}

func TestOptionalEntryPointMissing(t *testing.T) {
	h, _ := stubHandle(t)
	lib := *h.lib
	lib.cublasSetMathMode.Addr = 0
	h2 := *h
	h2.lib = &lib
	err := h2.SetMathMode(TF32TensorOpMath)
	if !errors.Is(err, StatusNotSupported) || !strings.Contains(err.Error(), "does not export cublasSetMathMode") {
		t.Errorf("SetMathMode without the entry point: %v", err)
	}
}
