// Package kern runs GPU kernels written in Go.
//
// Kernels are Go functions marked //kern:kernel (see package gpu and
// docs/language.md). kern gen compiles them to PTX ahead of time and writes a
// typed launcher per kernel; this package loads that PTX on a device and
// launches it. A Device is one of: a CUDA GPU through the NVIDIA driver
// (package cuda, no cgo), the PTX emulator (package emu), or native mode,
// which runs the Go function itself, one goroutine per GPU thread.
package kern
