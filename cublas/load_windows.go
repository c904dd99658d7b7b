package cublas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/gokern/kern/internal/dynlib"
)

// Windows: the toolkit installs cublas64_N.dll and cublasLt64_N.dll in
// %CUDA_PATH%\bin (bin\x64 from CUDA 13), which the installer usually puts
// on PATH. The names are tried in the same order as on Linux, then the
// same names under %CUDA_PATH% where they exist.
var dllNames = []string{"cublas64_12.dll", "cublas64_13.dll", "cublas64_11.dll"}

var errUnsupportedOS = errors.New("no cuBLAS library name to try")

func defaultLibraries() []string {
	names := append([]string(nil), dllNames...)
	if root := os.Getenv("CUDA_PATH"); root != "" {
		for _, dir := range []string{filepath.Join(root, "bin"), filepath.Join(root, "bin", "x64")} {
			for _, dll := range dllNames {
				if p := filepath.Join(dir, dll); fileExists(p) {
					names = append(names, p)
				}
			}
		}
	}
	return names
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// preloadLt loads cublasLt64_N.dll from the directory of a cublas64_N.dll
// given as a path: LoadLibrary looks for a DLL's dependencies in the
// application's directory, the system directories and PATH, not beside
// the DLL. Failures are ignored.
func preloadLt(name string) {
	dir, base := filepath.Split(name)
	lower := strings.ToLower(base)
	if dir == "" || !strings.HasPrefix(lower, "cublas") || strings.HasPrefix(lower, "cublaslt") {
		return
	}
	lt := filepath.Join(dir, "cublasLt"+base[len("cublas"):])
	if fileExists(lt) {
		_, _ = dynlib.Open(lt)
	}
}
