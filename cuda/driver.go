package cuda

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"github.com/gokern/kern/internal/dynlib"
)

// driver is one loaded copy of libcuda: the resolved entry points and the
// debug settings read when it was loaded. The package uses a single active
// driver (set by Init); tests load others side by side.
type driver struct {
	procs
	lib      string // library it was loaded from
	unloaded bool   // the placeholder used before Init succeeds
	debug    debugMode
	logMu    sync.Mutex
	logw     interface{ Write([]byte) (int, error) }
}

// LibraryEnv names the environment variable that, when set, is the only
// driver library Init tries (a path or a name for the OS loader). Tests
// point it at the stub libcuda in testdata/stub.
const LibraryEnv = "KERN_LIBCUDA"

// DebugEnv names the environment variable that turns on call logging:
// "1" logs every driver call, its arguments and its result to stderr;
// "sync" also synchronizes the context after every kernel launch, so an
// asynchronous fault is reported by the launch that caused it.
const DebugEnv = "KERN_CUDA_DEBUG"

// ErrNoDriver is matched (with errors.Is) by the *LoadError returned when no
// driver library could be opened: no NVIDIA driver is installed, or the OS
// is not one the driver supports.
var ErrNoDriver = errors.New("cuda: no NVIDIA driver library found")

// LoadError says why the driver library could not be used: every library
// that failed to open (Tried), or the one that opened but lacks required
// entry points (Library, Missing).
type LoadError = dynlib.LoadError

var what = dynlib.What{
	Pkg:         "cuda",
	Name:        "NVIDIA driver",
	Install:     "install the NVIDIA driver",
	Env:         LibraryEnv,
	TooOld:      "driver too old?",
	NoLibrary:   ErrNoDriver,
	Unsupported: errUnsupportedOS,
}

var (
	initOnce sync.Once
	initErr  error
	active   atomic.Pointer[driver]
	// placeholder answers every call before Init succeeds with
	// CUDA_ERROR_NOT_INITIALIZED naming the call.
	placeholder = newPlaceholder()
)

func newPlaceholder() *driver {
	d := &driver{unloaded: true}
	d.resolve(func(string) uintptr { return 0 })
	return d
}

// current returns the active driver, or the placeholder before Init.
func current() *driver {
	if d := active.Load(); d != nil {
		return d
	}
	return placeholder
}

// Init loads the driver library and calls cuInit(0). It does the work once
// per process; later calls return the first call's result. Every other
// function in this package fails with CUDA_ERROR_NOT_INITIALIZED until Init
// has succeeded.
func Init() error {
	initOnce.Do(func() {
		d, err := loadDriver(libraryCandidates())
		if err == nil {
			err = d.call(&d.cuInit, 0)
		}
		if err != nil {
			initErr = err
			return
		}
		active.Store(d)
	})
	return initErr
}

// Library returns the driver library Init loaded, or "" before Init.
func Library() string { return current().lib }

// libraryCandidates is what Init tries: $KERN_LIBCUDA alone when set,
// otherwise the OS's usual names (load_<os>.go).
func libraryCandidates() []string {
	return what.Candidates(func() []string { return defaultLibraries })
}

// loadDriver opens the first library in names that opens and resolves its
// entry points. A library that opens but lacks a required entry point is an
// error naming every missing one; the next candidate is not tried, since it
// would be the same driver under another name.
func loadDriver(names []string) (*driver, error) {
	d, path, err := dynlib.OpenLibrary(what, names, nil, func(d *driver, lookup func(string) uintptr) []string {
		d.logw = os.Stderr
		return d.resolve(lookup)
	})
	if err != nil {
		return nil, err
	}
	d.lib = path
	d.debug = parseDebug(os.Getenv(DebugEnv))
	return d, nil
}

// unavailable is the error for calling a proc the driver lacks: before Init
// every proc is unavailable; after it, only optional ones can be.
func (d *driver) unavailable(p *proc) error {
	if d.unloaded {
		return &Error{Call: p.Name, Code: ErrorNotInitialized, Name: builtinName(ErrorNotInitialized),
			Text: builtinText(ErrorNotInitialized), Log: "cuda.Init has not succeeded"}
	}
	return &Error{Call: p.Name, Code: ErrorSharedObjectSymbolNotFound,
		Name: builtinName(ErrorSharedObjectSymbolNotFound), Text: builtinText(ErrorSharedObjectSymbolNotFound),
		Log: d.lib + " does not export " + p.Name + "; this feature needs a newer NVIDIA driver"}
}
