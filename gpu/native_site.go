package gpu

// Source positions of call sites. Collective operations record where in the
// kernel they were called, so that a stuck or mismatched barrier can be
// reported as "Sync (k.go:12)"; panics are reported at the innermost frame
// outside this package and the Go runtime.

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// site is one source position that calls into package gpu. Sites are
// interned: two sites are the same position exactly when the pointers are
// equal.
type site struct {
	file     string
	line     int
	internal bool // the frame is in package gpu or the Go runtime
}

func (s *site) String() string {
	if s == nil || s.file == "" {
		return "unknown position"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(s.file), s.line)
}

var (
	sitesByPC  sync.Map // uintptr → *site
	sitesByPos sync.Map // "file:line" → *site
)

// gpuPrefix is the prefix of the function names of this package,
// "github.com/gokern/kern/gpu.".
var gpuPrefix = ownPrefix()

//go:noinline
func ownPrefix() string {
	pc, _, _, _ := runtime.Caller(0)
	return strings.TrimSuffix(runtime.FuncForPC(pc).Name(), "ownPrefix")
}

// isInternal reports whether the function named fn (as runtime.Frame
// spells it) belongs to package gpu or to the Go runtime.
func isInternal(fn string) bool {
	return strings.HasPrefix(fn, gpuPrefix) || strings.HasPrefix(fn, "runtime.")
}

// siteOf returns the interned site of a program counter as returned by
// runtime.Callers (one logical frame, inlining included).
func siteOf(pc uintptr) *site {
	if s, ok := sitesByPC.Load(pc); ok {
		return s.(*site)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	s := &site{file: f.File, line: f.Line, internal: isInternal(f.Function)}
	v, _ := sitesByPos.LoadOrStore(fmt.Sprintf("%s:%d", f.File, f.Line), s)
	sitesByPC.Store(pc, v)
	return v.(*site)
}

// userSite returns the site in the kernel that called into package gpu. It
// must be called directly by the runtime function that an exported
// function of this package calls (such as shuffle, called by ShflXor): it
// skips those two frames, then any further frames inside package gpu (such
// as WarpSum's call of ShflXor).
func userSite() *site {
	var pcs [3]uintptr
	// Skip runtime.Callers, userSite, the runtime function and the
	// exported function.
	n := runtime.Callers(4, pcs[:])
	var s *site
	for _, pc := range pcs[:n] {
		if s = siteOf(pc); !s.internal {
			break
		}
	}
	return s
}
