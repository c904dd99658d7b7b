package nccl

import (
	"errors"
	"fmt"
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

// LoadError says why NCCL could not be used: every library that failed
// to open (Tried), or the one that opened but lacks required entry points
// (Library, Missing).
type LoadError = dynlib.LoadError

var what = dynlib.What{
	Pkg:         "nccl",
	Name:        "NCCL",
	Install:     "install libnccl2 or the nvidia-nccl-cu12 wheel",
	Env:         LibraryEnv,
	TooOld:      "NCCL older than 2.3?",
	NoLibrary:   ErrNoLibrary,
	Unsupported: errUnsupportedOS,
}

var active = dynlib.NewLazy(func() (*library, error) {
	return loadLibrary(what.Candidates(defaultLibraries))
})

// Load opens NCCL, once per process; later calls return the first
// call's result. Every other function calls it.
func Load() error { return active.Load() }

// Library returns the path or name of the library Load opened, or "".
func Library() string {
	if lib := active.Loaded(); lib != nil {
		return lib.path
	}
	return ""
}

// current loads NCCL if needed and returns the active library.
func current() (*library, error) { return active.Get() }

// loadLibrary opens the first of names that opens and resolves its entry
// points. A library that opens but lacks a required entry point is an
// error naming every missing one; later candidates are not tried, since
// they would hide what is wrong with the first.
func loadLibrary(names []string) (*library, error) {
	lib, path, err := dynlib.OpenLibrary(what, names, nil, (*library).resolve)
	if err != nil {
		return nil, err
	}
	lib.path = path
	return lib, nil
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
