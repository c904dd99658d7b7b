//kern:library

// Package lib is a kernel library whose functions break the kernel
// language's rules: the errors are reported at its lines when a kernel of
// package use calls them.
package lib

import "github.com/gokern/kern/gpu"

// Scratch allocates.
func Scratch(t gpu.Thread, x []float32) float32 {
	s := make([]float32, 4) // ERROR HeapAllocation "make allocates on the heap"
	s[0] = x[0]
	return s[0] + float32(t.ThreadIdx().X)
}

// SyncSome syncs under a thread-dependent condition.
func SyncSome(t gpu.Thread, x []float32) {
	if t.ThreadIdx().X < 3 {
		t.Sync() // ERROR DivergentBarrier "t.Sync\\(\\) is reached under a condition .* called at use.go:"
	}
	x[0] = 1
}

// Fine is in the kernel language.
func Fine(a, b float32) float32 { return a*b + 1 }
