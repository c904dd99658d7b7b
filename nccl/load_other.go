//go:build !linux

package nccl

import "errors"

// NCCL ships for Linux only.
var errUnsupportedOS = errors.New("NCCL exists only on Linux")

func defaultLibraries() []string { return nil }
