package kern

import (
	"math"

	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/launchfact"
)

// A kernel marked //kern:kernel ... idx32 has a second entry in its
// module, KernelSpec.Entry32, compiled assuming what index32Fits checks
// (compiler/index32.go): there the compiler may do index arithmetic in 32
// bits where those bounds prove it exact. Both entries compute the same
// results and report the same faults; the 32-bit one is shorter.

// index32Max bounds what a 32-bit entry's launch may pass: slice lengths
// and 64-bit integer scalars at most 2³¹−1, and along x at most
// index32Threads / B blocks, B the kernel's block= extent along x.
const (
	index32Max     = math.MaxInt32
	index32Threads = 1 << 31
)

// entry is the PTX entry that runs l: the kernel's 32-bit entry when it
// has one, the launch fits it and its launch facts hold, else its entry.
func (k *Kernel) entry(l *launch) string {
	if k.spec.Entry32 != "" && index32Fits(&k.spec, l.args, l.blocks) && k.factsHold(l.args) {
		return k.spec.Entry32
	}
	return k.spec.Entry
}

// factsHold reports whether every launch fact of the 32-bit entry
// (KernelSpec.Facts32, internal/launchfact) holds for args. The 32-bit
// entry leaves out the checks those facts prove, so where one fails the
// launch runs the kernel's entry, which keeps them: a short slice then
// fails at the access that really fails, or nowhere. A fact that does not
// parse (a generated file from another compiler version) never holds.
func (k *Kernel) factsHold(args []argValue) bool {
	if len(k.spec.Facts32) == 0 {
		return true
	}
	k.facts.once.Do(func() {
		var list []*launchfact.Expr
		for _, f := range k.spec.Facts32 {
			e, err := launchfact.Parse(f)
			if err != nil {
				list = []*launchfact.Expr{{}} // never holds
				break
			}
			list = append(list, e)
		}
		k.facts.prog = launchfact.Compile(list)
		// Which parameters a fact may read, decided once, not per leaf.
		for _, p := range k.spec.Params {
			k.facts.isInt = append(k.facts.isInt, p.Kind == ScalarParam && p.Size == 8 && (p.Elem == "int" || p.Elem == "int64"))
			k.facts.isSlice = append(k.facts.isSlice, p.Kind == SliceParam)
		}
	})
	a := factArgs{isInt: k.facts.isInt, isSlice: k.facts.isSlice, args: args}
	// Launches repeat their arguments (a decode step's kernels), so the
	// last answer is kept with the arguments it was for: a hit costs one
	// comparison per argument instead of the facts' evaluation.
	if last := k.facts.last.Load(); last != nil && last.sameArgs(args) {
		return last.holds
	}
	holds := k.facts.prog.Holds(a)
	memo := &factMemo{holds: holds, args: make([]factKey, len(args))}
	for i, v := range args {
		memo.args[i] = factKey{v.bits, v.n}
	}
	k.facts.last.Store(memo)
	return holds
}

// factMemo is the answer of factsHold for one launch's arguments, each
// kept as its bits (a scalar) and length (a slice).
type factMemo struct {
	args  []factKey
	holds bool
}

type factKey struct {
	bits uint64
	n    int
}

func (m *factMemo) sameArgs(args []argValue) bool {
	if len(args) != len(m.args) {
		return false
	}
	for i, v := range args {
		if m.args[i] != (factKey{v.bits, v.n}) {
			return false
		}
	}
	return true
}

// factArgs is a launch's arguments as launch facts read them: isInt and
// isSlice say which parameters are 64-bit signed integers and slices.
type factArgs struct {
	isInt, isSlice []bool
	args           []argValue
}

func (a factArgs) Value(i int) (int64, bool) {
	if i < 0 || i >= len(a.args) || i >= len(a.isInt) || !a.isInt[i] {
		return 0, false
	}
	return int64(a.args[i].bits), true
}

func (a factArgs) Len(i int) (int64, bool) {
	if i < 0 || i >= len(a.args) || i >= len(a.isSlice) || !a.isSlice[i] {
		return 0, false
	}
	return int64(a.args[i].n), true
}

// index32Fits reports whether a launch with args over blocks meets the
// assumptions of a 32-bit entry (docs/language.md, "idx32"): every slice
// argument has fewer than 2³¹ elements, every 64-bit integer scalar lies
// in int32's range, and the grid holds at most 2³¹ / B blocks along x,
// where B is the block= directive's extent along x (1024 without one), so
// that t.GlobalX() < 2³¹.
func index32Fits(s *KernelSpec, args []argValue, blocks gpu.Dim3) bool {
	bx := s.Block.X
	if s.Block == (gpu.Dim3{}) || bx < 1 {
		bx = 1024
	}
	if blocks.X > index32Threads/bx {
		return false
	}
	for i, p := range s.Params {
		a := args[i]
		if p.Kind == SliceParam {
			if a.n > index32Max {
				return false
			}
			continue
		}
		if p.Size != 8 {
			continue // narrower ints are bounded by their type
		}
		switch p.Elem {
		case "int", "int64":
			if v := int64(a.bits); v < math.MinInt32 || v > math.MaxInt32 {
				return false
			}
		case "uint", "uint64", "uintptr":
			if a.bits > index32Max {
				return false
			}
		}
	}
	return true
}
