//go:build linux

package dynlib

import "github.com/ebitengine/purego"

// Handle is an open library.
type Handle uintptr

// Open dlopens name. RTLD_LOCAL keeps its symbols out of the global
// namespace, so two libraries exporting the same names (the real driver
// and a test stub, or two stubs) do not interfere.
func Open(name string) (Handle, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	return Handle(h), err
}

// Lookup returns the address of name in the library, or 0.
func (h Handle) Lookup(name string) uintptr {
	addr, err := purego.Dlsym(uintptr(h), name)
	if err != nil {
		return 0
	}
	return addr
}
