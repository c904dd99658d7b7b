//go:build !linux && !windows

package cuda

import "errors"

// The NVIDIA driver API exists only on Linux and Windows; elsewhere Init
// fails with a *LoadError matching ErrNoDriver.
var defaultLibraries []string

var errUnsupportedOS = errors.New("the CUDA driver is only available on Linux and Windows")

func openLibrary(name string) (uintptr, error) { return 0, errUnsupportedOS }

func lookupSymbol(handle uintptr, name string) uintptr { return 0 }
