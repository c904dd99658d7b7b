package nccl

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

// library is one loaded copy of libnccl. The package uses one active
// library (set by Load); tests load others side by side.
type library struct {
	procs
	path string
}

// LibraryEnv names the environment variable that, when set, is the only
// NCCL library Load tries (a path, or a name for the OS loader).
const LibraryEnv = "KERN_LIBNCCL"

// ErrNoLibrary is matched (with errors.Is) by the *LoadError returned
// when no NCCL library could be opened.
var ErrNoLibrary = errors.New("nccl: no NCCL library found")

// LoadError says why NCCL could not be used.
type LoadError struct {
	Tried   []error  // each library that failed to open, with the loader's reason
	Library string   // the library that opened but lacks entry points, if any
	Missing []string // the required entry points Library does not export
}

func (e *LoadError) Error() string {
	if e.Library != "" {
		return fmt.Sprintf("nccl: %s lacks required entry points %s (NCCL older than 2.3?)",
			e.Library, strings.Join(e.Missing, ", "))
	}
	msgs := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		msgs[i] = err.Error()
	}
	return "nccl: no NCCL library could be loaded (install libnccl2 or the nvidia-nccl-cu12 wheel, or set " +
		LibraryEnv + "): " + strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, ErrNoLibrary) true when no library opened at all.
func (e *LoadError) Is(target error) bool { return target == ErrNoLibrary && e.Library == "" }

var (
	loadOnce sync.Once
	loadErr  error
	active   atomic.Pointer[library]
)

// Load opens NCCL, once per process; later calls return the first
// call's result. Every other function calls it.
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

func current() (*library, error) {
	if lib := active.Load(); lib != nil {
		return lib, nil
	}
	if err := Load(); err != nil {
		return nil, err
	}
	return active.Load(), nil
}

// libraryCandidates is $KERN_LIBNCCL alone when set, otherwise the OS's
// usual names (load_<os>.go).
func libraryCandidates() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	return defaultLibraries()
}

// loadLibrary opens the first of names that opens and resolves it; one
// that opens but lacks a required entry point ends the search.
func loadLibrary(names []string) (*library, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, &LoadError{Tried: []error{errors.New("NCCL needs a 64-bit process")}}
	}
	var lib *library
	r := dynlib.Load(names, nil, func(lookup func(string) uintptr) []string {
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

// Version is NCCL's version as ncclGetVersion reports it: major*10000 +
// minor*100 + patch since 2.9 (22105 is 2.21.5), major*1000 + minor*100 +
// patch before.
func Version() (int, error) {
	l, err := current()
	if err != nil {
		return 0, err
	}
	var v int32
	err = l.call(&l.ncclGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), err
}

// VersionString formats a Version code as "2.21.5".
func VersionString(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code/100%10, code%100)
}
