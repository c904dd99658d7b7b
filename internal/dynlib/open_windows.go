package dynlib

import "syscall"

// Handle is an open library.
type Handle uintptr

// Open loads the DLL name (LoadLibrary's search order: the application's
// directory, the system directories, PATH).
func Open(name string) (Handle, error) {
	h, err := syscall.LoadLibrary(name)
	return Handle(h), err
}

// Lookup returns the address of name in the library, or 0.
func (h Handle) Lookup(name string) uintptr {
	addr, err := syscall.GetProcAddress(syscall.Handle(h), name)
	if err != nil {
		return 0
	}
	return addr
}
