package cublas

import (
	"errors"

	"github.com/gokern/kern/internal/dynlib"
)

// library is one loaded copy of libcublas: the resolved entry points and
// where it came from. The package uses one active library (set by Load);
// tests load others side by side.
type library struct {
	procs
	path string
}

// LibraryEnv names the environment variable that, when set, is the only
// cuBLAS library Load tries (a path, or a name for the OS loader).
const LibraryEnv = "KERN_LIBCUBLAS"

// ErrNoLibrary is matched (with errors.Is) by the *LoadError returned when
// no cuBLAS library could be opened.
var ErrNoLibrary = errors.New("cublas: no cuBLAS library found")

// LoadError says why cuBLAS could not be used: every library that failed
// to open (Tried), or the one that opened but lacks required entry points
// (Library, Missing).
type LoadError = dynlib.LoadError

var what = dynlib.What{
	Pkg:         "cublas",
	Name:        "cuBLAS",
	Install:     "install the CUDA toolkit's cuBLAS",
	Env:         LibraryEnv,
	TooOld:      "cuBLAS older than 11?",
	NoLibrary:   ErrNoLibrary,
	Unsupported: errUnsupportedOS,
}

var active = dynlib.NewLazy(func() (*library, error) {
	return loadLibrary(what.Candidates(defaultLibraries))
})

// Load opens cuBLAS, once per process; later calls return the first call's
// result. Create calls it; call it directly to find out early whether
// cuBLAS is there.
func Load() error { return active.Load() }

// Library returns the path or name of the library Load opened, or "".
func Library() string {
	if lib := active.Loaded(); lib != nil {
		return lib.path
	}
	return ""
}

// current loads cuBLAS if needed and returns the active library.
func current() (*library, error) { return active.Get() }

// loadLibrary opens the first of names that opens and resolves its entry
// points. A library that opens but lacks a required entry point is an
// error naming every missing one; later candidates are not tried, since
// they would hide what is wrong with the first.
func loadLibrary(names []string) (*library, error) {
	lib, path, err := dynlib.OpenLibrary(what, names, preloadLt, (*library).resolve)
	if err != nil {
		return nil, err
	}
	lib.path = path
	return lib, nil
}
