package gpu

// The errors a native-mode launch returns.

import (
	"fmt"
	"path/filepath"
)

// PanicError reports a panic inside a kernel thread in native mode: an index
// out of range, a nil dereference, a failed intrinsic precondition or an
// explicit panic. The first panic of a launch stops it.
type PanicError struct {
	Block  Dim3 // BlockIdx of the panicking thread
	Thread Dim3 // its ThreadIdx
	// File and Line are where the kernel panicked: the innermost frame
	// outside package gpu and the Go runtime ("" and 0 if none is known).
	File  string
	Line  int
	Value any    // the value passed to panic
	Stack string // the panicking goroutine's stack trace
}

func (e *PanicError) Error() string {
	at := ""
	if e.File != "" {
		at = fmt.Sprintf(" at %s:%d", filepath.Base(e.File), e.Line)
	}
	return fmt.Sprintf("block %s thread %s: panic%s: %v", fmtDim(e.Block), fmtDim(e.Thread), at, e.Value)
}

// Unwrap returns the panic value when it is an error, such as the
// runtime.Error of an index out of range.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// BarrierError reports a block whose threads could not all meet at a
// barrier or warp collective; see native_rendezvous.go for the rules.
type BarrierError struct {
	Block Dim3 // BlockIdx of the failed block
	// Kind is "barrier divergence" (threads wait at a block barrier that
	// others have returned without reaching), "barrier mismatch" (threads
	// meet at different barrier sites), "warp collective mismatch", or
	// "deadlock" (any other set of waits that can never complete).
	Kind string
	// Detail says who waits where, e.g.
	// "32 threads at Sync (k.go:12), 32 returned".
	Detail string
}

func (e *BarrierError) Error() string {
	return fmt.Sprintf("block %s: %s: %s", fmtDim(e.Block), e.Kind, e.Detail)
}
