package cuda

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

// LoadError says why the driver library could not be used.
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
		return fmt.Sprintf("cuda: %s lacks required entry points %s (driver too old?)",
			e.Library, strings.Join(e.Missing, ", "))
	}
	msgs := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		msgs[i] = err.Error()
	}
	return "cuda: no NVIDIA driver library could be loaded: " + strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, ErrNoDriver) true when no library opened at all.
func (e *LoadError) Is(target error) bool { return target == ErrNoDriver && e.Library == "" }

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
	if p := os.Getenv(LibraryEnv); p != "" {
		return []string{p}
	}
	return defaultLibraries
}

// loadDriver opens the first library in names that opens and resolves its
// entry points. A library that opens but lacks a required entry point is an
// error naming every missing one; the next candidate is not tried, since it
// would be the same driver under another name.
func loadDriver(names []string) (*driver, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, &LoadError{Tried: []error{errors.New("the CUDA driver API needs a 64-bit process")}}
	}
	var d *driver
	r := dynlib.Load(names, nil, func(lookup func(string) uintptr) []string {
		d = &driver{logw: os.Stderr}
		return d.resolve(lookup)
	})
	switch {
	case r.OK():
		d.lib = r.Library
		d.debug = parseDebug(os.Getenv(DebugEnv))
		return d, nil
	case r.Library != "":
		return nil, &LoadError{Library: r.Library, Missing: r.Missing}
	case len(r.Tried) == 0:
		return nil, &LoadError{Tried: []error{errUnsupportedOS}}
	}
	return nil, &LoadError{Tried: r.Tried}
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
