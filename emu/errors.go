package emu

// Run-time errors: a fault names the kernel, block, thread, PTX line and
// the Go source position from .loc.

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel causes of run-time faults, for errors.Is.
var (
	ErrOutOfBounds = errors.New("out-of-bounds access")
	ErrMisaligned  = errors.New("misaligned access")
	ErrTrap        = errors.New("trap")
	ErrDeadlock    = errors.New("deadlock")
	ErrMbarrier    = errors.New("mbarrier misuse")
	ErrStepLimit   = errors.New("step limit exceeded")
	ErrReadOnly    = errors.New("write to read-only memory")
)

// Error is a fault while a kernel ran.
type Error struct {
	Kernel  string
	Block   [3]int
	Thread  [3]int // thread index in the block; -1s for block-wide faults
	PTXLine int
	Instr   string // the opcode, e.g. "ld.global.f32"
	File    string // from .loc, "" when absent
	Line    int
	Col     int
	Err     error // the cause; see the Err* sentinels
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "emu: kernel %s, block (%d,%d,%d)", e.Kernel, e.Block[0], e.Block[1], e.Block[2])
	if e.Thread[0] >= 0 {
		fmt.Fprintf(&b, ", thread (%d,%d,%d)", e.Thread[0], e.Thread[1], e.Thread[2])
	}
	if e.PTXLine > 0 {
		b.WriteString(": ")
		if e.File != "" {
			fmt.Fprintf(&b, "%s:%d", e.File, e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "%s (PTX line %d)", e.Instr, e.PTXLine)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// laneError is a fault of one lane inside an instruction handler; the
// warp turns it into an *Error.
type laneError struct {
	lane int
	err  error
}

func (e *laneError) Error() string { return fmt.Sprintf("lane %d: %v", e.lane, e.err) }

func (e *laneError) Unwrap() error { return e.err }

func faultf(lane int, cause error, format string, args ...any) error {
	return &laneError{lane, fmt.Errorf("%w: %s", cause, fmt.Sprintf(format, args...))}
}
