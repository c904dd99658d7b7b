//go:build !linux && !windows

package cublas

import "errors"

// cuBLAS exists only on Linux and Windows; elsewhere Load fails with a
// *LoadError matching ErrNoLibrary.
func defaultLibraries() []string { return nil }

var errUnsupportedOS = errors.New("cuBLAS is only available on Linux and Windows")

func preloadLt(string) {}
