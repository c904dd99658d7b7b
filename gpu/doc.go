// Package gpu is kern's kernel language.
//
// A kernel is an ordinary Go function marked //kern:kernel whose first
// parameter is a Thread. The same source is used twice:
//
//   - kern gen lowers it to PTX ahead of time (package compiler). Every
//     function and method in this package is an intrinsic there: the compiler
//     recognises it by its package path and name and emits PTX for it; the
//     Go bodies below are never translated.
//   - native mode runs the Go function itself, one goroutine per GPU thread.
//     The Go bodies in this package are what executes then, so they define the
//     reference semantics that the emulator and the GPU are compared against.
//
// The language reference is docs/language.md.
package gpu
