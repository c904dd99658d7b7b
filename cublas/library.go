package cublas

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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

// LoadError says why cuBLAS could not be used.
type LoadError struct {
	// Tried lists each library that failed to open, with the loader's reason.
	Tried []error
	// Library is the library that opened but lacks entry points, if any.
	Library string
	// Missing lists the required entry points Library does not export.
	Missing []string
}

func (e *LoadError) Error() string {
	if e.Library != "" {
		return fmt.Sprintf("cublas: %s lacks required entry points %s (cuBLAS older than 11?)",
			e.Library, strings.Join(e.Missing, ", "))
	}
	msgs := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		msgs[i] = err.Error()
	}
	return "cublas: no cuBLAS library could be loaded (install the CUDA toolkit's cuBLAS or set " +
		LibraryEnv + "): " + strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, ErrNoLibrary) true when no library opened at all.
func (e *LoadError) Is(target error) bool { return target == ErrNoLibrary && e.Library == "" }

var (
	loadOnce sync.Once
	loadErr  error
	active   atomic.Pointer[library]
)

// Load opens cuBLAS, once per process; later calls return the first call's
// result. Create calls it; call it directly to find out early whether
// cuBLAS is there.
func Load() error {
	loadOnce.Do(func() {
		lib, err := loadLibrary(libraryCandidates())
		if err != nil {
			loadErr = err
			return
		}
		active.Store(lib)
	})
	return loadErr
}

// Library returns the path or name of the library Load opened, or "".
func Library() string {
	if lib := active.Load(); lib != nil {
		return lib.path
	}
	return ""
}

// current loads cuBLAS if needed and returns the active library.
func current() (*library, error) {
	if lib := active.Load(); lib != nil {
		return lib, nil
	}
	if err := Load(); err != nil {
		return nil, err
	}
	return active.Load(), nil
}

// libraryCandidates is what Load tries: $KERN_LIBCUBLAS alone when set,
// otherwise the OS's usual names (load_<os>.go).
func libraryCandidates() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	return defaultLibraries()
}

// loadLibrary opens the first of names that opens and resolves its entry
// points. A library that opens but lacks a required entry point is an
// error naming every missing one; later candidates are not tried, since
// they would hide what is wrong with the first.
func loadLibrary(names []string) (*library, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, &LoadError{Tried: []error{errors.New("cuBLAS needs a 64-bit process")}}
	}
	var lib *library
	r := dynlib.Load(names, preloadLt, func(lookup func(string) uintptr) []string {
		lib = &library{}
		return lib.resolve(lookup)
	})
	switch {
	case r.OK():
		lib.path = r.Library
		return lib, nil
	case r.Library != "":
		return nil, &LoadError{Library: r.Library, Missing: r.Missing}
	case len(r.Tried) == 0:
		return nil, &LoadError{Tried: []error{errUnsupportedOS}}
	}
	return nil, &LoadError{Tried: r.Tried}
}
