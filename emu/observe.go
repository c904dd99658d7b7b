package emu

// The observer hook: the base for sanitizers and profilers. The execution
// path calls it only when Options.Observer is set.

// AccessKind says what a memory access does.
type AccessKind uint8

const (
	AccessLoad AccessKind = iota
	AccessStore
	AccessAtomic
	AccessAsync    // cp.async destination (shared) write, seen at the issuing instruction
	AccessPrefetch // a prefetch to L2 of Size bytes from each Addr; only to a PrefetchObserver
)

func (k AccessKind) String() string {
	return [...]string{"load", "store", "atomic", "async-copy", "prefetch"}[k]
}

// PrefetchObserver is an Observer that also wants global prefetches
// (prefetch.global.L2, prefetch.L1 and cp.async.bulk.prefetch), which
// read nothing and so are not Accesses: a timing model's L2. Each is a
// warp-wide Access of kind AccessPrefetch, Size the bytes from each lane's
// address (a 128-byte line for prefetch, the size for a bulk one).
type PrefetchObserver interface {
	Observer
	Prefetch(a *Access)
}

// Space is a PTX state space as an observer sees it; generic addresses
// are resolved to the space they fall in.
type Space uint8

const (
	Global Space = iota
	Shared
	Local
	ParamSpace
)

func (s Space) String() string { return [...]string{"global", "shared", "local", "param"}[s] }

// Access is one warp-wide memory instruction: the lanes in Mask each
// accessed Size bytes at Addr[lane] (in the space's own addresses: device
// addresses for global, byte offsets for shared and local).
type Access struct {
	Kernel string
	Block  [3]int
	Warp   int // warp index in the block
	PC     int // instruction index
	Line   int // PTX line
	File   string
	GoLine int // from .loc
	Instr  string
	Kind   AccessKind
	Space  Space
	Size   int
	Mask   uint32
	Addr   [32]uint64
}

// Step is one warp-instruction: the lanes in Active were at PC and the
// lanes in Exec also passed the guard predicate.
type Step struct {
	Kernel string
	Block  [3]int
	Warp   int
	PC     int
	Line   int
	Instr  string
	Active uint32
	Exec   uint32
	// The instruction's data flow (flow.go), for timing models: the
	// register slots it reads and writes, its class, whether it is in a
	// poll loop, whether it is a bulk async copy, for a branch whether
	// ptxas keeps it one (Ordered), and whether it is a register copy
	// that ptxas's allocator removes (Copy). The slices are the kernel's
	// own: read them, never keep or change them.
	Reads, Writes             []int32
	Class                     OpClass
	Spin, Bulk, Ordered, Copy bool
}

// Observer watches execution. Implementations must be safe for concurrent
// use: blocks run on several goroutines. The pointers are valid only
// during the call.
type Observer interface {
	Step(s *Step)
	Access(a *Access)
}
