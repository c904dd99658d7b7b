package cuda

import (
	"errors"

	"github.com/ebitengine/purego"
)

// Linux: the driver is libcuda.so.1, installed by the NVIDIA driver package
// (never by the toolkit). libcuda.so is tried second because some container
// images only carry the unversioned name; it is the same library.
var defaultLibraries = []string{"libcuda.so.1", "libcuda.so"}

var errUnsupportedOS = errors.New("no driver library name to try")

// openLibrary dlopens name. RTLD_LOCAL keeps its symbols out of the global
// namespace, so two libraries exporting the same names (the real driver and
// a test stub, or two stubs) do not interfere.
func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// lookupSymbol returns the address of name in the library, or 0.
func lookupSymbol(handle uintptr, name string) uintptr {
	addr, err := purego.Dlsym(handle, name)
	if err != nil {
		return 0
	}
	return addr
}
