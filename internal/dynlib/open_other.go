//go:build !linux && !windows

package dynlib

import "errors"

// Handle is an open library.
type Handle uintptr

// ErrUnsupportedOS is Open's error where NVIDIA ships no libraries.
var ErrUnsupportedOS = errors.New("NVIDIA's libraries exist only on Linux and Windows")

// Open fails: see ErrUnsupportedOS.
func Open(name string) (Handle, error) { return 0, ErrUnsupportedOS }

// Lookup returns 0.
func (h Handle) Lookup(name string) uintptr { return 0 }
