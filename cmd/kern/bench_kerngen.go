//go:build kerngen

package main

// The kerngen build of kern is the generator that kern's own ops packages
// run from go:generate: it leaves out the benchmarks that import ops, so
// that a kernel added to ops can be generated while ops does not yet
// compile (its host code calls the launcher kern gen is about to write).

import "errors"

var errKerngen = errors.New("kern bench: this kern was built with -tags kerngen (the generator of kern's own ops packages), which leaves out the matmul, ops and attention benchmarks; run go run ./cmd/kern bench")

func benchMatmul(*benchEnv) error    { return errKerngen }
func benchOps(*benchEnv) error       { return errKerngen }
func benchAttention(*benchEnv) error { return errKerngen }
