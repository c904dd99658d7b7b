package cublas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/gokern/kern/internal/dynlib"
)

// Linux: the toolkit and the nvidia-cublas wheels install libcublas.so.N
// with libcublasLt.so.N beside it. CUDA 12's is tried first because the
// most drivers in use run it (CUDA 13's needs a driver from 2025 on);
// then 13, then 11. Toolkit directories not in the loader's cache follow,
// as paths, where they exist.
var sonames = []string{"libcublas.so.12", "libcublas.so.13", "libcublas.so.11"}

var errUnsupportedOS = errors.New("no cuBLAS library name to try")

func defaultLibraries() []string {
	names := append([]string(nil), sonames...)
	var dirs []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := os.Getenv(env); d != "" {
			dirs = append(dirs, filepath.Join(d, "lib64"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	for _, dir := range dirs {
		for _, so := range sonames {
			if p := filepath.Join(dir, so); fileExists(p) {
				names = append(names, p)
			}
		}
	}
	return names
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// preloadLt opens libcublasLt from the directory of a libcublas given as a
// path, so that libcublas's dependency on it is met even when that
// directory is not on the loader's search path. A name without a
// directory is left to the loader; failures are ignored (opening
// libcublas then reports the missing dependency itself).
func preloadLt(name string) {
	dir, base := filepath.Split(name)
	if dir == "" || !strings.HasPrefix(base, "libcublas") || strings.HasPrefix(base, "libcublasLt") {
		return
	}
	lt := filepath.Join(dir, "libcublasLt"+strings.TrimPrefix(base, "libcublas"))
	if fileExists(lt) {
		_, _ = dynlib.Open(lt)
	}
}
