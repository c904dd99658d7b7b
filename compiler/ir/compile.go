package ir

import (
	"fmt"
	"strings"
)

// A pass transforms a Func in place. Passes run in table order, and Check
// runs after each when checking is on (tests, KERN_DEBUG=check).
type pass struct {
	name string
	fn   func(*Func)
	// why says what later stages rely on this pass for.
	why string
}

var passes = []pass{
	{"unreachable", removeUnreachable, "lowering leaves blocks no branch targets (dead iterations of unrolled loops, code after panic); PTX and Check need every block terminated, so drop them"},
	{"jumpthread", threadJumps, "lowering emits a block per SSA block and edge; retargeting branches to blocks that only jump elsewhere keeps the PTX short for the emulator, which does not optimise"},
	{"merge", mergeBlocks, "lowering makes a block per SSA block, so straight-line code (each iteration of an unrolled loop) is a chain of blocks joined by bra.uni; one block per chain drops a branch and a label each, and gives cse one block to work in"},
	{"contract", contract, "fastmath kernels only: drops .rn from float add, sub and mul, which lets ptxas fuse a mul and the add using it into one fma (PTX ISA §9.7.3.1), as clang's default -ffp-contract=fast does; other kernels keep Go's separate roundings"},
	{"repack", repackSplitWords, "gpu.Load8 of 16-bit elements splits each loaded word into halves, and PackBFloat162, PackHalf2 or Store8 packs them back (repack.go); ptxas keeps the shift and the permute of each, so reading the word instead, here before cse and dce, leaves the halves dead"},
	{"cse", eliminateCommonSubexprs, "lowering recomputes thread indices, row offsets and tile bases at each use (once per iteration of an unrolled loop) and copies SSA values between registers; using the dominating result instead shortens the PTX that is shipped and interpreted"},
	{"coalesce", coalesceCopies, "folds a phi move or copy into the instruction computing its source (add t, i, s; mov i, t becomes add i, i, s), so the PTX the emulator interprets and kern ships is shorter; ptxas makes the same SASS either way"},
	{"vcoalesce", coalesceVectorCopies, "the same for the registers of a vector destination (mma, ldmatrix), which lowering copies into the accumulator's one by one"},
	{"forward", forwardCopies, "a copy read once, soon after, in its block (an accumulator copied into an mma's C fragment) is replaced by its source in that reader"},
	{"remat", rematerializeAfterLoops, "a thread-identity value computed before a loop, unread in it and read after it (a warp's output index) holds registers through the loop, where ptxas wants them for loads in flight, and ptxas does not recompute it; computing it again after the loop (remat.go) ends its life before the loop"},
	{"dce", removeDeadCode, "deletes pure instructions whose result is never read (unused thread-index components, copies the coalesce pass bypassed); loads stay, since a faulting one must still fault"},
	{"sink", sinkLoadUses, "a warp issues in order and ptxas schedules only within the basic blocks that a bounds check's branch cuts, so arithmetic on a loaded value ahead of the next check (int(x[i]) before y[j]'s check) makes the warp wait for x[i] before it loads y[j]; moving that arithmetic down to its first use (sink.go) lets the loads go out together"},
	{"layout", layoutRPO, "orders blocks in reverse postorder, so every join point follows the paths into it: the emulator runs the lanes at the lowest PC first, which then reconverges diverged lanes at joins before a following barrier, as the GPU's convergence barriers do"},
}

// Compile runs the IR passes over f. With check set, it verifies f after
// every pass, naming the pass that broke it. (Lowering's output may hold
// empty unreachable blocks, which the first pass removes, so it is not
// checked itself.)
func Compile(f *Func, check bool) error {
	for _, p := range passes {
		p.fn(f)
		if check {
			if err := Check(f); err != nil {
				return fmt.Errorf("after pass %s: %w", p.name, err)
			}
		}
	}
	return nil
}

// byLabel indexes f's blocks by label.
func byLabel(f *Func) map[string]*Block {
	m := make(map[string]*Block, len(f.Blocks))
	for _, b := range f.Blocks {
		m[b.Label] = b
	}
	return m
}

// successors returns the labels a block may branch to.
func successors(b *Block) []string {
	var out []string
	for _, in := range b.Instrs {
		if in.Op == OpBra {
			out = append(out, in.Args[0].Sym)
		}
	}
	return out
}

// removeUnreachable deletes blocks not reachable from the entry block.
func removeUnreachable(f *Func) {
	if len(f.Blocks) == 0 {
		return
	}
	blocks := byLabel(f)
	seen := map[*Block]bool{}
	work := []*Block{f.Blocks[0]}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[b] {
			continue
		}
		seen[b] = true
		for _, l := range successors(b) {
			if s := blocks[l]; s != nil {
				work = append(work, s)
			}
		}
	}
	out := f.Blocks[:0]
	for _, b := range f.Blocks {
		if seen[b] {
			b.Index = len(out)
			out = append(out, b)
		}
	}
	f.Blocks = out
}

// threadJumps retargets branches to a block holding only an unconditional
// bra to that bra's target, then drops the blocks no longer reached.
func threadJumps(f *Func) {
	forward := map[string]string{}
	for i, b := range f.Blocks {
		if i > 0 && len(b.Instrs) == 1 && b.Instrs[0].Op == OpBra && !b.Instrs[0].Guarded {
			forward[b.Label] = b.Instrs[0].Args[0].Sym
		}
	}
	resolve := func(l string) string {
		for n := 0; n < len(forward); n++ {
			t, ok := forward[l]
			if !ok || t == l {
				break
			}
			l = t
		}
		return l
	}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if in.Op == OpBra {
				in.Args[0].Sym = resolve(in.Args[0].Sym)
			}
		}
	}
	removeUnreachable(f)
}

// layoutRPO orders the blocks in reverse postorder from the entry,
// visiting a block's branch targets in the order its branches appear.
func layoutRPO(f *Func) {
	if len(f.Blocks) == 0 {
		return
	}
	blocks := byLabel(f)
	seen := map[*Block]bool{}
	var post []*Block
	var visit func(b *Block)
	visit = func(b *Block) {
		seen[b] = true
		succ := successors(b)
		// Visit the last branch target first, so that in reverse
		// postorder a conditional branch's fall-through path comes before
		// its taken target.
		for i := len(succ) - 1; i >= 0; i-- {
			if s := blocks[succ[i]]; s != nil && !seen[s] {
				visit(s)
			}
		}
		post = append(post, b)
	}
	visit(f.Blocks[0])
	out := make([]*Block, 0, len(post))
	for i := len(post) - 1; i >= 0; i-- {
		post[i].Index = len(out)
		out = append(out, post[i])
	}
	f.Blocks = out
}

// contract drops the explicit round-to-nearest of float add, sub and mul
// in a FastMath function. Without a rounding modifier, PTX lets the
// assembler contract mul and add into fma (PTX ISA §9.7.3.1); the value
// computed is otherwise the same.
func contract(f *Func) {
	if !f.FastMath {
		return
	}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if in.Op != OpAdd && in.Op != OpSub && in.Op != OpMul {
				continue
			}
			for _, t := range []string{".rn.f32", ".rn.f64"} {
				if strings.HasSuffix(in.Text, t) {
					in.Text = strings.TrimSuffix(in.Text, t) + t[3:]
				}
			}
		}
	}
}

// mergeBlocks appends to a block ending in an unconditional branch the
// block it branches to, when that branch is the target's only way in:
// lowering makes a block per SSA block, so each iteration of an unrolled
// loop is its own block, entered from the one before.
func mergeBlocks(f *Func) {
	if len(f.Blocks) == 0 {
		return
	}
	refs := map[string]int{}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if in.Op == OpBra {
				refs[in.Args[0].Sym]++
			}
		}
	}
	blocks := byLabel(f)
	merged := map[*Block]bool{}
	for _, b := range f.Blocks {
		if merged[b] {
			continue
		}
		for {
			last := b.Instrs[len(b.Instrs)-1]
			if last.Op != OpBra || last.Guarded {
				break
			}
			t := blocks[last.Args[0].Sym]
			if t == nil || t == b || t == f.Blocks[0] || merged[t] || refs[t.Label] != 1 {
				break
			}
			b.Instrs = append(b.Instrs[:len(b.Instrs)-1], t.Instrs...)
			merged[t] = true
		}
	}
	out := f.Blocks[:0]
	for _, b := range f.Blocks {
		if !merged[b] {
			b.Index = len(out)
			out = append(out, b)
		}
	}
	f.Blocks = out
}
