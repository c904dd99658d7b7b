package gpu

// Source positions for native mode's error reports. A panic is reported at
// the innermost frame outside this package and the Go runtime; a stuck or
// mismatched rendezvous names the kernel line each waiting thread called
// it from.
//
// Finding a caller costs a stack unwind, too much to pay on every warp
// shuffle, so positions are found in two ways:
//
//   - Block barriers (Sync, block reductions) record the program counter of
//     the kernel's call on every arrival (callerPC, a short unwind that is
//     small next to the cost of parking), because rounds whose threads come
//     from different sites must be detected.
//   - Warp collectives record nothing; only when an error is reported are
//     the parked threads' positions read from a dump of all goroutine
//     stacks (kernelPositions), matched to threads by goroutine id.

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// site is one source position, resolved from a program counter.
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

var sitesByPC sync.Map // uintptr → *site

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
	return strings.HasPrefix(fn, gpuPrefix) || strings.HasPrefix(fn, "runtime.") || fn == "panic"
}

// siteOf returns the site of a program counter as returned by
// runtime.Callers (one logical frame, inlining included).
func siteOf(pc uintptr) *site {
	if s, ok := sitesByPC.Load(pc); ok {
		return s.(*site)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	s := &site{file: f.File, line: f.Line, internal: isInternal(f.Function)}
	sitesByPC.Store(pc, s)
	return s
}

// callerPC returns the program counter of the kernel's call of an exported
// function of this package. It must be called directly by the runtime
// function that the exported function calls (syncBlock, called by
// Thread.Sync).
func callerPC() uintptr {
	var pcs [1]uintptr
	// Skip runtime.Callers, callerPC, the runtime function and the
	// exported function.
	runtime.Callers(4, pcs[:])
	return pcs[0]
}

// goroutineID returns the id of the calling goroutine, as goroutine stack
// dumps print it.
func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	id, _ := parseGoroutineHeader(buf[:n])
	return id
}

// parseGoroutineHeader parses "goroutine 123 [state]:".
func parseGoroutineHeader(b []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0, false
	}
	num, _, _ := bytes.Cut(rest, []byte(" "))
	id, err := strconv.ParseInt(string(num), 10, 64)
	return id, err == nil
}

// kernelPositions dumps every goroutine's stack and returns, by goroutine
// id, the position ("k.go:12") of its innermost frame outside package gpu
// and the Go runtime.
func kernelPositions() map[int64]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 1<<28 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	pos := make(map[int64]string)
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		lines := strings.Split(string(g), "\n")
		id, ok := parseGoroutineHeader([]byte(lines[0]))
		if !ok {
			continue
		}
		// Frames are a function line, then "\tfile:line +0x12".
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if strings.HasPrefix(fn, "created by ") {
				break
			}
			if p := strings.LastIndexByte(fn, '('); p > 0 {
				fn = fn[:p]
			}
			if isInternal(fn) {
				continue
			}
			loc := strings.TrimSpace(lines[i+1])
			if sp := strings.LastIndexByte(loc, ' '); sp > 0 {
				loc = loc[:sp]
			}
			pos[id] = filepath.Base(loc)
			break
		}
	}
	return pos
}
