package ops

// Argument checks shared by every op: dimensions, buffer lengths and nil
// buffers, each failure an error naming the op and the argument.

import (
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// shape collects the first argument error of one op call.
type shape struct {
	op  string // "ops.RMSNorm"
	err error
}

func newShape(op string) *shape { return &shape{op: op} }

func (s *shape) fail(format string, a ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(s.op+": "+format, a...)
	}
}

// atLeast checks a dimension argument: name = v must be ≥ lo.
func (s *shape) atLeast(name string, v, lo int) {
	if v < lo {
		s.fail("%s = %d, want ≥ %d", name, v, lo)
	}
}

// mul returns a*b, failing (and returning 0) if it overflows int.
func (s *shape) mul(a, b int) int {
	if a < 0 || b < 0 {
		return 0 // reported by atLeast
	}
	if a != 0 && b > math.MaxInt/a {
		s.fail("%d×%d elements overflow int", a, b)
		return 0
	}
	return a * b
}

// buf checks that b is non-nil and holds want elements; what says where
// want comes from, e.g. "rows×cols = 3×5".
func buf[T gpu.Elem](s *shape, name string, b *kern.Buffer[T], want int, what string) {
	switch {
	case s.err != nil:
	case b == nil:
		s.fail("%s is nil", name)
	case b.Len() != want:
		if what == "" {
			s.fail("%s has %d elements, want %d", name, b.Len(), want)
		} else {
			s.fail("%s has %d elements, want %s = %d", name, b.Len(), what, want)
		}
	}
}

// notNil checks a buffer whose length is checked elsewhere.
func notNil[T gpu.Elem](s *shape, name string, b *kern.Buffer[T]) {
	if s.err == nil && b == nil {
		s.fail("%s is nil", name)
	}
}

// launch runs k and wraps a launch or device error with the op's name.
func (s *shape) launch(k *kern.Kernel, q kern.Queue, grid kern.Grid, args ...kern.Arg) error {
	if s.err != nil {
		return s.err
	}
	if q == nil {
		return fmt.Errorf("%s: nil queue", s.op)
	}
	if err := k.Launch(q, grid, args...); err != nil {
		return fmt.Errorf("%s: %w", s.op, err)
	}
	return nil
}

// Argument shorthands for launches through the untyped kernels.
func bufArg[T gpu.Elem](x *kern.Buffer[T]) kern.Arg { return kern.BufferArg(x) }
func intArg(v int) kern.Arg                         { return kern.ScalarArg(v) }
func f32Arg(v float32) kern.Arg                     { return kern.ScalarArg(v) }

// rowThreads is the block width for a kernel that reduces one row of n
// elements per block: enough warps to give each thread at least one
// element, at most maxRowThreads.
func rowThreads(n int) int {
	return min(max((n+31)/32*32, 32), maxRowThreads)
}

// rowRegs is the elements of a row each thread of a row kernel keeps in
// registers when the row fits (cols ≤ rowRegs × threads, 4096 at 256
// threads): the row is read from memory once, with all of a thread's
// loads in flight together, instead of once per pass, one dependent load
// at a time.
const rowRegs = 16

// maxRowThreads is the block of every row kernel (block=256): eight
// warps keep enough loads in flight to stream a row while leaving the
// registers of a 64k file for several resident blocks per SM.
const maxRowThreads = 256

// blocks1 is a launch of n blocks of threads threads along x.
func blocks1(n, threads int) kern.Grid {
	return kern.Blocks(gpu.Dim3{X: n, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
}
