package compiler

// Uniformity analysis: which values and blocks may differ between the
// threads of a block or of a warp.
//
// A barrier (t.Sync, block reductions) must be reached by every thread of
// the block, and a warp collective (shuffles, votes, mma, ldmatrix) by
// every lane of the warp; otherwise the GPU deadlocks or computes garbage
// (PTX ISA §9.7.13.4: bar.sync in conditional code requires the condition
// to be uniform across the CTA). The analysis assigns each SSA value a
// level, Uniform < WarpUniform < Varying, and each block the highest level
// of the branch conditions it is control-dependent on. Lowering rejects a
// barrier in a block above Uniform and a warp collective in a block above
// WarpUniform.
//
// It runs per inlined activation, because a helper's parameters may be
// uniform at one call site and varying at another, and a helper called
// under a divergent branch is divergent throughout.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

type level uint8

const (
	uniform     level = iota // the same in every thread of the block
	warpUniform              // the same in every lane of a warp
	varying                  // may differ between lanes
)

func (l level) String() string {
	return [...]string{"uniform", "warp-uniform", "varying"}[l]
}

// uniformity is the analysis result for one activation of a function.
type uniformity struct {
	vals  map[ssa.Value]level
	block []level // divergence level of each block, by index
	ret   level   // level of the function's results
}

// intrinsicLevel is the level of a gpu intrinsic's result regardless of
// its arguments, for those whose result is not simply the join of the
// arguments'.
var intrinsicLevel = map[string]level{
	"Thread.ThreadIdx": varying, "Thread.GlobalX": varying, "Thread.GlobalY": varying,
	"Thread.GlobalZ": varying, "Thread.LinearIdx": varying, "Thread.Lane": varying,
	"Thread.Warp":     warpUniform,
	"Thread.BlockIdx": uniform, "Thread.BlockDim": uniform, "Thread.GridDim": uniform,
	"WarpSum": warpUniform, "WarpMax": warpUniform, "WarpMin": warpUniform,
	"Ballot": warpUniform, "Any": warpUniform, "All": warpUniform,
	"BlockSum": uniform, "BlockMax": uniform, "BlockMin": uniform,
	"ShflXor": varying, "ShflDown": varying, "ShflUp": varying, "ShflIdx": varying,
	"AtomicAdd": varying, "AtomicMax": varying, "AtomicMin": varying, "AtomicCAS": varying, "AtomicExch": varying,
	"MMAF16": varying, "MMABF16": varying, "MMAS8": varying,
	"LdMatrixX1": varying, "LdMatrixX2": varying, "LdMatrixX4": varying,
	"LdMatrixX1Trans": varying, "LdMatrixX2Trans": varying, "LdMatrixX4Trans": varying,
	"Shared": uniform, "DynShared": uniform,
}

// analyzeUniformity computes levels for fn given its parameters' levels
// and the divergence level of the call site (base).
func (c *pkgCtx) analyzeUniformity(fn *ssa.Function, params []level, base level) *uniformity {
	key := uniKey{fn, levelsKey(params), base}
	if u, ok := c.uniMemo[key]; ok {
		return u
	}
	u := &uniformity{vals: map[ssa.Value]level{}, block: make([]level, len(fn.Blocks))}
	for i, p := range fn.Params {
		if i < len(params) {
			u.vals[p] = params[i]
		}
	}
	cd := controlDeps(fn)
	for changed := true; changed; {
		changed = false
		for _, b := range fn.Blocks {
			bl := base
			for _, dep := range cd[b.Index] {
				// The branch's condition, and whatever the branch itself
				// is under: a uniform test nested in a divergent one
				// still runs in only some threads.
				l := max(u.get(dep.Instrs[len(dep.Instrs)-1].(*ssa.If).Cond), u.block[dep.Index])
				if l > bl {
					bl = l
				}
			}
			if bl > u.block[b.Index] {
				u.block[b.Index], changed = bl, true
			}
			for _, instr := range b.Instrs {
				v, ok := instr.(ssa.Value)
				if !ok {
					continue
				}
				// A value computed where only some threads are is as
				// divergent as its block: a loop counter read after a
				// thread-dependent break differs between threads
				// (temporal divergence). Inside the block it changes
				// nothing, since collectives there are rejected anyway.
				l := max(c.valueLevel(u, cd, v), u.block[b.Index])
				if l > u.vals[v] {
					u.vals[v], changed = l, true
				}
			}
		}
	}
	for _, b := range fn.Blocks {
		if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			l := u.block[b.Index]
			for _, v := range r.Results {
				l = max(l, u.get(v))
			}
			u.ret = max(u.ret, l)
		}
	}
	if c.uniMemo == nil {
		c.uniMemo = map[uniKey]*uniformity{}
	}
	c.uniMemo[key] = u
	return u
}

// uniKey identifies one uniformity analysis: the function, its
// parameters' levels and the divergence of its call site.
type uniKey struct {
	fn     *ssa.Function
	params string
	base   level
}

func levelsKey(ls []level) string {
	b := make([]byte, len(ls))
	for i, l := range ls {
		b[i] = byte(l)
	}
	return string(b)
}

func (u *uniformity) get(v ssa.Value) level {
	switch v.(type) {
	case *ssa.Const, *ssa.Global, *ssa.Function:
		return uniform
	}
	return u.vals[v]
}

func (c *pkgCtx) valueLevel(u *uniformity, cd [][]*ssa.BasicBlock, v ssa.Value) level {
	switch v := v.(type) {
	case *ssa.Phi:
		l := uniform
		for _, e := range v.Edges {
			l = max(l, u.get(e))
		}
		// Threads arriving along different edges of a divergent branch
		// pick different incoming values.
		own := map[*ssa.BasicBlock]bool{}
		for _, d := range cd[v.Block().Index] {
			own[d] = true
		}
		for _, p := range v.Block().Preds {
			for _, d := range cd[p.Index] {
				if !own[d] && !sameFrom(v, d) {
					l = max(l, u.get(d.Instrs[len(d.Instrs)-1].(*ssa.If).Cond))
				}
			}
			if len(p.Succs) > 1 && !own[p] && !sameFrom(v, p) {
				l = max(l, u.get(p.Instrs[len(p.Instrs)-1].(*ssa.If).Cond))
			}
		}
		return l
	case *ssa.Call:
		l := uniform
		for _, a := range v.Call.Args {
			l = max(l, u.get(a))
		}
		if _, ok := v.Call.Value.(*ssa.Builtin); ok {
			return l // len, cap, min, max: as uniform as their arguments
		}
		callee := v.Call.StaticCallee()
		if callee == nil {
			return varying
		}
		if name, ok := gpuIntrinsicName(callee); ok {
			if fixed, ok := intrinsicLevel[name]; ok {
				return fixed
			}
			return l
		}
		if p := ownerPkg(callee); p != nil && c.ownOrLib(p) && len(callee.Blocks) > 0 && !c.analyzing[callee] {
			params := make([]level, len(v.Call.Args))
			for i, a := range v.Call.Args {
				params[i] = u.get(a)
			}
			c.analyzing[callee] = true
			sub := c.analyzeUniformity(callee, params, u.block[v.Block().Index])
			delete(c.analyzing, callee)
			return sub.ret
		}
		return l
	case *ssa.UnOp:
		if v.Op == token.MUL {
			if a := rootAlloc(v.X); a != nil {
				// A thread's own variable holds what that thread stored.
				return max(u.get(v.X), u.contents(a))
			}
		}
		return u.get(v.X)
	case *ssa.Alloc:
		return uniform
	}
	l := uniform
	var ops [8]*ssa.Value
	for _, o := range v.(ssa.Instruction).Operands(ops[:0]) {
		if *o != nil {
			l = max(l, u.get(*o))
		}
	}
	return l
}

// rootAlloc returns the local variable an address points into, or nil.
func rootAlloc(p ssa.Value) *ssa.Alloc {
	for {
		switch x := p.(type) {
		case *ssa.Alloc:
			return x
		case *ssa.IndexAddr:
			p = x.X
		case *ssa.FieldAddr:
			p = x.X
		default:
			return nil
		}
	}
}

// contents is the level of what a local variable may hold: the join of
// every value stored into it and of the blocks storing them. An address
// of it passed to a call or used otherwise makes it varying.
func (u *uniformity) contents(a *ssa.Alloc) level {
	l := uniform
	seen := map[ssa.Value]bool{}
	var walk func(p ssa.Value)
	walk = func(p ssa.Value) {
		if seen[p] || l == varying {
			return
		}
		seen[p] = true
		refs := p.Referrers()
		if refs == nil {
			return
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.IndexAddr:
				walk(r)
			case *ssa.FieldAddr:
				walk(r)
			case *ssa.Store:
				if r.Addr == p {
					l = max(l, u.get(r.Val), u.get(p), u.block[r.Block().Index])
				} else {
					l = varying
				}
			case *ssa.UnOp, *ssa.DebugRef:
			default:
				l = varying
			}
		}
	}
	walk(a)
	return l
}

// sameFrom reports whether every path from branch block d reaches phi
// v's block and every edge of v from a predecessor d reaches carries the
// same value: then which way threads went at d does not change the phi,
// as for a loop's two back edges from a guarded store ending its body. A
// path that leaves (a break) keeps the phi divergent: threads that stay
// see later values than those that left (temporal divergence).
func sameFrom(v *ssa.Phi, d *ssa.BasicBlock) bool {
	reach := map[*ssa.BasicBlock]bool{d: true}
	work := []*ssa.BasicBlock{d}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if len(b.Succs) == 0 {
			return false // a return or panic: this path never reaches v
		}
		for _, s := range b.Succs {
			if s != v.Block() && !reach[s] {
				reach[s] = true
				work = append(work, s)
			}
		}
	}
	var first ssa.Value
	for i, p := range v.Block().Preds {
		if !reach[p] {
			continue
		}
		if first == nil {
			first = v.Edges[i]
		} else if !sameValue(first, v.Edges[i]) {
			return false
		}
	}
	return true
}

// controlDeps returns, for each block, the blocks ending in an If on
// which it is control-dependent: B depends on A when A has a successor
// from which B is certain to be reached (B post-dominates it) but B does
// not post-dominate A.
func controlDeps(fn *ssa.Function) [][]*ssa.BasicBlock {
	n := len(fn.Blocks)
	ipdom := postDominators(fn)
	deps := make([][]*ssa.BasicBlock, n)
	for _, a := range fn.Blocks {
		if len(a.Succs) < 2 {
			continue
		}
		for _, s := range a.Succs {
			// Walk from s up the post-dominator tree until ipdom(a).
			for x := s.Index; x != ipdom[a.Index] && x != n; x = ipdom[x] {
				deps[x] = appendOnce(deps[x], a)
				if x == ipdom[x] {
					break
				}
			}
		}
	}
	return deps
}

func appendOnce(s []*ssa.BasicBlock, b *ssa.BasicBlock) []*ssa.BasicBlock {
	for _, x := range s {
		if x == b {
			return s
		}
	}
	return append(s, b)
}

// postDominators returns each block's immediate post-dominator, with n
// (one past the last block) standing for the virtual exit that every
// return, panic and infinite loop leads to. It is the iterative algorithm
// of Cooper, Harvey and Kennedy on the reversed CFG.
func postDominators(fn *ssa.Function) []int {
	n := len(fn.Blocks)
	exit := n
	succs := func(b int) []int { // successors in the reversed graph = preds
		if b == exit {
			var out []int
			for _, blk := range fn.Blocks {
				if len(blk.Succs) == 0 {
					out = append(out, blk.Index)
				}
			}
			return out
		}
		out := make([]int, 0, len(fn.Blocks[b].Preds))
		for _, p := range fn.Blocks[b].Preds {
			out = append(out, p.Index)
		}
		return out
	}
	preds := func(b int) []int { // predecessors in the reversed graph = succs
		blk := fn.Blocks[b]
		if len(blk.Succs) == 0 {
			return []int{exit}
		}
		out := make([]int, 0, len(blk.Succs))
		for _, s := range blk.Succs {
			out = append(out, s.Index)
		}
		return out
	}
	// Reverse postorder of the reversed graph from the exit.
	order := []int{}
	seen := make([]bool, n+1)
	var dfs func(int)
	dfs = func(b int) {
		seen[b] = true
		for _, s := range succs(b) {
			if !seen[s] {
				dfs(s)
			}
		}
		order = append(order, b)
	}
	dfs(exit)
	// Blocks in infinite loops never reach the exit: attach them to it.
	for b := 0; b < n; b++ {
		if !seen[b] {
			seen[b] = true
			order = append([]int{b}, order...)
		}
	}
	rpoNum := make([]int, n+1)
	for i := range order {
		rpoNum[order[len(order)-1-i]] = i
	}
	rpo := make([]int, len(order))
	for i := range order {
		rpo[i] = order[len(order)-1-i]
	}
	idom := make([]int, n+1)
	for i := range idom {
		idom[i] = -1
	}
	idom[exit] = exit
	intersect := func(a, b int) int {
		for a != b {
			for rpoNum[a] > rpoNum[b] {
				a = idom[a]
			}
			for rpoNum[b] > rpoNum[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range rpo {
			if b == exit {
				continue
			}
			nd := -1
			for _, p := range preds(b) {
				if idom[p] == -1 {
					continue
				}
				if nd == -1 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd == -1 {
				nd = exit
			}
			if idom[b] != nd {
				idom[b], changed = nd, true
			}
		}
	}
	return idom[:n:n]
}

// gpuIntrinsicName returns "Name" or "Thread.Name" for a function or
// method of package gpu.
func gpuIntrinsicName(fn *ssa.Function) (string, bool) {
	o := fn
	if fn.Origin() != nil {
		o = fn.Origin()
	}
	obj, ok := o.Object().(*types.Func)
	if !ok || obj.Pkg() == nil || obj.Pkg().Path() != GPUPath {
		return "", false
	}
	if recv := obj.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			return n.Obj().Name() + "." + obj.Name(), true
		}
	}
	return obj.Name(), true
}
