//go:build !linux && !windows

package cuda

import "errors"

// The NVIDIA driver API exists only on Linux and Windows; elsewhere Init
// fails with a *LoadError matching ErrNoDriver.
var defaultLibraries []string

var errUnsupportedOS = errors.New("the CUDA driver is only available on Linux and Windows")
