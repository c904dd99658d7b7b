package cuda

import (
	"errors"
	"syscall"
)

// Windows: the driver is nvcuda.dll in System32, installed with the display
// driver. It exports the same _v2 names as libcuda.
var defaultLibraries = []string{"nvcuda.dll"}

var errUnsupportedOS = errors.New("no driver library name to try")

func openLibrary(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	return uintptr(h), err
}

// lookupSymbol returns the address of name in the library, or 0.
func lookupSymbol(handle uintptr, name string) uintptr {
	addr, err := syscall.GetProcAddress(syscall.Handle(handle), name)
	if err != nil {
		return 0
	}
	return addr
}
