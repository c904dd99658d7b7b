package dynlib

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// What names a library in the errors of a package that loads it.
type What struct {
	Pkg     string // the package, the messages' prefix: "cublas"
	Name    string // the library's own name: "cuBLAS"
	Install string // how to get it: "install the CUDA toolkit's cuBLAS"
	Env     string // the variable that names the one library to try
	TooOld  string // why entry points would be missing: "cuBLAS older than 11?"
	// NoLibrary is what errors.Is matches when no library opened at all;
	// Unsupported is the reason when the OS has no names to try.
	NoLibrary, Unsupported error
}

// LoadError says why a library could not be used: every candidate that
// failed to open (Tried), or the one that opened but lacks required entry
// points (Library, Missing).
type LoadError struct {
	What What
	// Tried lists each library that failed to open, with the loader's reason.
	Tried []error
	// Library is the library that opened but lacks entry points, if any.
	Library string
	// Missing lists the required entry points Library does not export.
	Missing []string
}

func (e *LoadError) Error() string {
	w := e.What
	if e.Library != "" {
		return fmt.Sprintf("%s: %s lacks required entry points %s (%s)",
			w.Pkg, e.Library, strings.Join(e.Missing, ", "), w.TooOld)
	}
	msgs := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%s: no %s library could be loaded (%s, or set %s): %s",
		w.Pkg, w.Name, w.Install, w.Env, strings.Join(msgs, "; "))
}

// Is makes errors.Is(err, What.NoLibrary) true when no library opened.
func (e *LoadError) Is(target error) bool {
	return target != nil && target == e.What.NoLibrary && e.Library == ""
}

// Candidates is what a package tries: $w.Env alone when set, otherwise
// the OS's usual names.
func (w What) Candidates(defaults func() []string) []string {
	if p := os.Getenv(w.Env); p != "" {
		return []string{p}
	}
	return defaults()
}

// OpenLibrary loads the first of names that opens and resolves (Load),
// turning a failure into a *LoadError. resolve fills in a new L and
// returns the required entry points missing; path is the candidate that
// loaded.
func OpenLibrary[L any](w What, names []string, prepare func(string), resolve func(lib *L, lookup func(string) uintptr) (missing []string)) (lib *L, path string, err error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, "", &LoadError{What: w, Tried: []error{fmt.Errorf("%s needs a 64-bit process", w.Name)}}
	}
	r := Load(names, prepare, func(lookup func(string) uintptr) []string {
		lib = new(L)
		return resolve(lib, lookup)
	})
	switch {
	case r.OK():
		return lib, r.Library, nil
	case r.Library != "":
		return nil, "", &LoadError{What: w, Library: r.Library, Missing: r.Missing}
	case len(r.Tried) == 0:
		return nil, "", &LoadError{What: w, Tried: []error{w.Unsupported}}
	}
	return nil, "", &LoadError{What: w, Tried: r.Tried}
}

// Lazy holds a library loaded once per process, on first use.
type Lazy[L any] struct {
	load func() (*L, error)
	once sync.Once
	err  error
	lib  atomic.Pointer[L]
}

// NewLazy returns a Lazy whose Load calls load.
func NewLazy[L any](load func() (*L, error)) *Lazy[L] { return &Lazy[L]{load: load} }

// Load loads the library, once; later calls return the first call's result.
func (z *Lazy[L]) Load() error {
	z.once.Do(func() {
		lib, err := z.load()
		if err != nil {
			z.err = err
			return
		}
		z.lib.Store(lib)
	})
	return z.err
}

// Loaded returns the library, or nil before a successful Load.
func (z *Lazy[L]) Loaded() *L { return z.lib.Load() }

// Get loads the library if needed and returns it.
func (z *Lazy[L]) Get() (*L, error) {
	if lib := z.lib.Load(); lib != nil {
		return lib, nil
	}
	if err := z.Load(); err != nil {
		return nil, err
	}
	return z.lib.Load(), nil
}

// Swap makes lib the loaded library and returns the previous one, for
// tests that put a stub library in place.
func (z *Lazy[L]) Swap(lib *L) *L { return z.lib.Swap(lib) }
