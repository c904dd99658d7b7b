package compiler

// Induction variables for the indices of guarded accesses.
//
// An edge-tile load in a K loop, `if r < m && k0+tx < k { v = a[r*k+k0+tx] }`,
// is lowered with its check lifted above the guard (liftcheck.go), but its
// index is still recomputed from scratch every iteration: a 64-bit
// multiply-add chain per load (IMAD.WIDE and two IMADs, an add with carry),
// which ptxas keeps inside the loop, and for an unrolled copy of an inner
// loop once per copy. The index is affine in the loop counter, so it can
// be walked instead, as clang's strength reduction does:
//
//	j = idx(iv0)            on the entry edge
//	j                       is idx(iv) in the body, for the check and the address
//	j += Δ                  on the back edge, Δ = coef·s
//
// where the loop's counter steps iv += s with s loop-invariant, and idx is
// built from iv, values defined before the loop, constants and the counters
// of unrolled inner loops (constant in each copy) by +, −, · (one factor
// free of iv) and << by a constant. The copies of an access in an unrolled
// inner loop share one j: each adds to it the difference its counters
// make (8·i·k for row ty+8·i of A), computed in the body from values ptxas
// reads from the constant bank, because a register pair per copy live
// across the loop cost MatMul32 24 registers and spills (ptxas 12.4).
//
// Exact: +, −, · and << are ring operations on int64 (Go's and PTX's
// arithmetic both wrap mod 2⁶⁴), so idx(iv+s) − idx(iv) = coef·s mod 2⁶⁴
// for every iv, and j equals the index the source computes in every
// iteration, wrapped or not. The check compares j and reports j, so a
// failing access reports the site, index and length it did before.
//
// Applied where liftcheck.go lifts a check above an edge-tile guard (the
// shape measured in docs/performance.md); the index arithmetic it lifts is
// then unused and the ir dce pass deletes it.

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// ivLoop is a loop whose counter iv steps by an invariant s.
type ivLoop struct {
	header *ssa.BasicBlock
	iv     *ssa.Phi
	entryI int
	step   ssa.Value
	inLoop map[*ssa.BasicBlock]bool
	// entryBra is the branch into the header on the entry edge, in block
	// entryBlk: the initial values are inserted before it once known.
	entryBlk *ir.Block
	entryBra *ir.Instr
	// closed: the back edge is lowered, so no more indices may be walked.
	closed bool
	ivs    []*guardIV
	byIA   map[*ssa.IndexAddr]*guardIV
}

// guardIV is one walked index: idx in the first unrolled copy lowered.
type guardIV struct {
	idx    ssa.Value
	consts map[*ssa.Phi]ir.Operand // the unrolled counters in this copy
	reg    ir.Reg
}

// maxIVDepth bounds the expression walked for an index.
const maxIVDepth = 12

// planIVLoops finds the loops of fr with an int64 counter stepped by an
// invariant: not unrolled, not partially unrolled, not hoisted (hoist.go
// has its own pointers), not inside an unrolled loop.
func (kb *kernelBuilder) planIVLoops(fr *frame) map[*ssa.BasicBlock]*ivLoop {
	// Not in a 32-bit entry: there the index is a mul.wide.s32 plus an
	// int32 sum (reassoc32.go), one IMAD.WIDE per copy, where a walked
	// 64-bit index costs each copy its 64-bit difference (MatMul32_i32's
	// K tile 321 SASS walked, 308 not, sm_80, ptxas 12.4).
	if !kb.bounds || kb.cfg.KeepChecks || fr.ranges == nil || kb.idx32 {
		return nil
	}
	var out map[*ssa.BasicBlock]*ivLoop
	for _, h := range fr.fn.Blocks {
		if il := planIVLoop(fr, h); il != nil {
			if out == nil {
				out = map[*ssa.BasicBlock]*ivLoop{}
			}
			out[h] = il
		}
	}
	return out
}

func planIVLoop(fr *frame, h *ssa.BasicBlock) *ivLoop {
	if len(h.Preds) != 2 || fr.unrolled[h] != nil || fr.partial[h] != nil || fr.hoists[h] != nil {
		return nil
	}
	for _, l := range fr.unrolled {
		if l.blocks[h] {
			return nil
		}
	}
	for _, l := range fr.partial {
		if l.header == h {
			return nil
		}
	}
	il := &ivLoop{header: h, entryI: -1}
	latch := -1
	for i, p := range h.Preds {
		if h.Dominates(p) {
			latch = i
		} else {
			il.entryI = i
		}
	}
	if latch < 0 || il.entryI < 0 {
		return nil
	}
	il.inLoop = loopBlocks(h, h.Preds[latch])
	for _, in := range h.Instrs {
		phi, ok := in.(*ssa.Phi)
		if !ok {
			break
		}
		step, ok := phi.Edges[latch].(*ssa.BinOp)
		if !ok || step.Op != token.ADD || !isInt64(phi.Type()) {
			continue
		}
		s := step.Y
		if step.Y == phi {
			s = step.X
		} else if step.X != phi {
			continue
		}
		if !il.outside(s) || !isInt64(s.Type()) {
			continue
		}
		il.iv, il.step = phi, s
		return il
	}
	return nil
}

func (il *ivLoop) outside(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Const:
		return true
	case ssa.Instruction:
		return !il.inLoop[v.Block()]
	}
	return true // parameters, globals, functions
}

// degree is 0 when v is free of iv in the current copy (or in the copy
// whose unrolled counters consts holds), 1 when affine in
// it, -1 when neither or not of the walked shape.
func (il *ivLoop) degree(fr *frame, consts map[*ssa.Phi]ir.Operand, v ssa.Value, depth int) int {
	if depth > maxIVDepth || !isInt64(v.Type()) {
		return -1
	}
	if v == il.iv {
		return 1
	}
	if il.outside(v) {
		return 0
	}
	if p, ok := v.(*ssa.Phi); ok {
		if _, c := consts[p]; c || consts == nil && fr.activeCounter(p) {
			return 0
		}
	}
	b, ok := v.(*ssa.BinOp)
	if !ok {
		return -1
	}
	switch b.Op {
	case token.ADD, token.SUB:
		x, y := il.degree(fr, consts, b.X, depth+1), il.degree(fr, consts, b.Y, depth+1)
		if x < 0 || y < 0 {
			return -1
		}
		return max(x, y)
	case token.MUL:
		x, y := il.degree(fr, consts, b.X, depth+1), il.degree(fr, consts, b.Y, depth+1)
		if x < 0 || y < 0 || x+y > 1 {
			return -1
		}
		return x + y
	case token.SHL:
		c, ok := b.Y.(*ssa.Const)
		if !ok || c.Value == nil {
			return -1
		}
		if n, ok := constInt(c); !ok || n < 0 || n > 62 {
			return -1
		}
		return il.degree(fr, consts, b.X, depth+1)
	}
	return -1
}

// activeCounter reports whether p is the counter of an unrolled loop being
// lowered (a constant in the current copy).
func (fr *frame) activeCounter(p *ssa.Phi) bool {
	for _, l := range fr.active {
		if l.ind == p {
			return true
		}
	}
	return false
}

// guardIV returns ia's index in the current copy, walked: the first copy
// lowered gets the register, the others add to it the difference of
// their unrolled counters' terms (a multiple of an invariant, which ptxas
// computes from the constant bank), so one register pair per access is
// live across the loop rather than one per copy. False when ia's index is
// not walked.
func (kb *kernelBuilder) guardIV(fr *frame, ia *ssa.IndexAddr) (ir.Operand, bool) {
	var il *ivLoop
	for _, l := range fr.ivLoops {
		if l.inLoop[ia.Block()] && (il == nil || len(l.inLoop) < len(il.inLoop)) {
			il = l
		}
	}
	if il == nil || il.closed || il.entryBra == nil || !il.outside(ia.X) {
		return ir.Operand{}, false
	}
	if il.degree(fr, nil, ia.Index, 0) != 1 {
		return ir.Operand{}, false
	}
	consts := map[*ssa.Phi]ir.Operand{}
	for _, l := range fr.active {
		if !il.inLoop[l.header] {
			continue
		}
		c := kb.value(fr, l.ind).ops[0]
		if c.Kind != ir.KImm {
			return ir.Operand{}, false
		}
		consts[l.ind] = c
	}
	if len(consts) == 0 {
		// Not in an unrolled copy: one index computation saved against a
		// register pair live across the loop. gomlx's matmulTile (one A
		// load per K step) then spilled 4 bytes on sm_90 (ptxas 13.5
		// holds it at 32 registers) for no fewer SASS in the loop.
		return ir.Operand{}, false
	}
	if g := il.byIA[ia]; g != nil {
		d, ok := kb.ivDiff(fr, il, g, consts, ia.Index, 0)
		if !ok {
			return ir.Operand{}, false
		}
		return kb.add64(ir.R(g.reg), d), true
	}
	if il.byIA == nil {
		il.byIA = map[*ssa.IndexAddr]*guardIV{}
	}
	if !il.constStep(fr, consts, ia.Index) {
		return ir.Operand{}, false
	}
	g := &guardIV{idx: ia.Index, consts: consts, reg: kb.b.New(ir.S64)}
	il.byIA[ia] = g
	il.ivs = append(il.ivs, g)
	return ir.R(g.reg), true
}

// ivDiff emits v in the copy whose unrolled counters cur holds minus v in
// g's copy, where that difference is linear in the counters with
// coefficients available before the loop: counters enter through +, −,
// << by a constant and · by a value defined before the loop.
func (kb *kernelBuilder) ivDiff(fr *frame, il *ivLoop, g *guardIV, cur map[*ssa.Phi]ir.Operand, v ssa.Value, depth int) (ir.Operand, bool) {
	zero := ir.Imm(ir.S64, 0)
	if depth > maxIVDepth {
		return zero, false
	}
	if !il.countered(g, v, 0) {
		return zero, true
	}
	switch v := v.(type) {
	case *ssa.Phi:
		c0, c1 := g.consts[v], cur[v]
		t := scalarType(v.Type())
		return ir.Imm(ir.S64, signExtend(c1.Imm, t)-signExtend(c0.Imm, t)), true
	case *ssa.BinOp:
		switch v.Op {
		case token.ADD, token.SUB:
			x, ok1 := kb.ivDiff(fr, il, g, cur, v.X, depth+1)
			y, ok2 := kb.ivDiff(fr, il, g, cur, v.Y, depth+1)
			if !ok1 || !ok2 {
				return zero, false
			}
			if v.Op == token.ADD {
				return kb.add64(x, y), true
			}
			return kb.sub64(x, y), true
		case token.MUL:
			x, y := v.X, v.Y
			if il.countered(g, y, 0) {
				x, y = y, x
			}
			if il.countered(g, y, 0) || !il.outside(y) {
				return zero, false
			}
			d, ok := kb.ivDiff(fr, il, g, cur, x, depth+1)
			if !ok {
				return zero, false
			}
			return kb.mul64(d, kb.value(fr, y).ops[0]), true
		case token.SHL:
			d, ok := kb.ivDiff(fr, il, g, cur, v.X, depth+1)
			n, _ := constInt(v.Y.(*ssa.Const))
			return kb.mul64(d, ir.Imm(ir.S64, 1<<uint(n))), ok
		}
	}
	return zero, false
}

// countered reports whether v depends on an unrolled counter.
func (il *ivLoop) countered(g *guardIV, v ssa.Value, depth int) bool {
	if p, ok := v.(*ssa.Phi); ok {
		_, c := g.consts[p]
		return c
	}
	if il.outside(v) || depth > maxIVDepth {
		return false
	}
	if b, ok := v.(*ssa.BinOp); ok {
		return il.countered(g, b.X, depth+1) || il.countered(g, b.Y, depth+1)
	}
	return false
}

// constStep reports whether idx's coefficient of iv and the loop's step
// are constants, so that the back edge adds an immediate. A run-time step
// (B's 32·n in MatMul32's `b[(k0+r)*n+col]`) needs a register pair of its
// own live across the loop beside j: walking B's indices too cost MatMul32
// 4 to 16 spilled words (ptxas 12.4, sm_80) for 5 SASS per K tile.
func (il *ivLoop) constStep(fr *frame, consts map[*ssa.Phi]ir.Operand, idx ssa.Value) bool {
	if _, ok := il.step.(*ssa.Const); !ok {
		return false
	}
	return il.constCoef(fr, consts, idx, 0)
}

// constCoef reports whether v's coefficient of iv is a constant: iv
// reaches it through +, −, << and · by constants only.
func (il *ivLoop) constCoef(fr *frame, consts map[*ssa.Phi]ir.Operand, v ssa.Value, depth int) bool {
	if v == il.iv || il.degree(fr, consts, v, depth) == 0 {
		return true
	}
	b, ok := v.(*ssa.BinOp)
	if !ok || depth > maxIVDepth {
		return false
	}
	switch b.Op {
	case token.ADD, token.SUB:
		return il.constCoef(fr, consts, b.X, depth+1) && il.constCoef(fr, consts, b.Y, depth+1)
	case token.MUL:
		x, y := b.X, b.Y
		if il.degree(fr, consts, x, depth+1) == 0 {
			x, y = y, x
		}
		_, c := y.(*ssa.Const)
		return c && il.constCoef(fr, consts, x, depth+1)
	case token.SHL:
		return il.constCoef(fr, consts, b.X, depth+1)
	}
	return false
}

// ivEdge records the entry edge's branch, or on the back edge steps the
// walked indices and inserts their initial values before the loop.
func (kb *kernelBuilder) ivEdge(fr *frame, il *ivLoop, from *ssa.BasicBlock, bra func()) {
	if from == il.header.Preds[il.entryI] {
		bra()
		blk := kb.b.B
		il.entryBlk, il.entryBra = blk, blk.Instrs[len(blk.Instrs)-1]
		return
	}
	il.closed = true
	if len(il.ivs) > 0 && il.entryBra != nil {
		steps := kb.emitIVInits(fr, il)
		for i, g := range il.ivs {
			if steps[i].Kind == ir.KImm && steps[i].Imm == 0 {
				continue
			}
			kb.b.Arith(ir.OpAdd, ir.S64, g.reg, ir.R(g.reg), steps[i])
		}
	}
	bra()
}

// emitIVInits inserts j = idx(iv0) and Δ = coef·s for each walked index
// before the entry edge's branch, returning the Δs.
func (kb *kernelBuilder) emitIVInits(fr *frame, il *ivLoop) []ir.Operand {
	blk := il.entryBlk
	at := -1
	for i, in := range blk.Instrs {
		if in == il.entryBra {
			at = i
		}
	}
	if at < 0 {
		kb.d.errorf(il.header.Parent().Pos(), UnsupportedConstruct, "internal error: guardiv.go lost the loop's entry branch")
		return make([]ir.Operand, len(il.ivs))
	}
	saved, savedPos := kb.b.B, kb.b.Pos
	n := len(blk.Instrs)
	kb.b.B, kb.b.Pos = blk, il.entryBra.Pos
	iv0 := kb.value(fr, il.iv.Edges[il.entryI]).ops[0]
	s := kb.value(fr, il.step).ops[0]
	steps := make([]ir.Operand, len(il.ivs))
	for i, g := range il.ivs {
		kb.b.Mov(ir.S64, g.reg, kb.ivEval(fr, il, g, g.idx, iv0))
		steps[i] = kb.mul64(kb.ivCoef(fr, il, g, g.idx), s)
	}
	added := append([]*ir.Instr(nil), blk.Instrs[n:]...)
	rest := append([]*ir.Instr(nil), blk.Instrs[at:n]...)
	blk.Instrs = append(append(blk.Instrs[:at], added...), rest...)
	kb.b.B, kb.b.Pos = saved, savedPos
	return steps
}

// ivEval emits v with iv replaced by iv0 and the unrolled counters by
// their values in g's copy.
func (kb *kernelBuilder) ivEval(fr *frame, il *ivLoop, g *guardIV, v ssa.Value, iv0 ir.Operand) ir.Operand {
	if v == il.iv {
		return iv0
	}
	if p, ok := v.(*ssa.Phi); ok {
		if c, ok := g.consts[p]; ok {
			return ir.Imm(ir.S64, signExtend(c.Imm, scalarType(p.Type())))
		}
	}
	if il.outside(v) {
		return kb.value(fr, v).ops[0]
	}
	b := v.(*ssa.BinOp)
	x := kb.ivEval(fr, il, g, b.X, iv0)
	switch b.Op {
	case token.ADD:
		return kb.add64(x, kb.ivEval(fr, il, g, b.Y, iv0))
	case token.SUB:
		return kb.sub64(x, kb.ivEval(fr, il, g, b.Y, iv0))
	case token.MUL:
		return kb.mul64(x, kb.ivEval(fr, il, g, b.Y, iv0))
	}
	n, _ := constInt(b.Y.(*ssa.Const))
	return kb.mul64(x, ir.Imm(ir.S64, 1<<uint(n)))
}

// ivCoef emits the coefficient of iv in v (degree 1 or 0).
func (kb *kernelBuilder) ivCoef(fr *frame, il *ivLoop, g *guardIV, v ssa.Value) ir.Operand {
	if v == il.iv {
		return ir.Imm(ir.S64, 1)
	}
	if il.degree(fr, g.consts, v, 0) == 0 {
		return ir.Imm(ir.S64, 0)
	}
	b := v.(*ssa.BinOp)
	switch b.Op {
	case token.ADD:
		return kb.add64(kb.ivCoef(fr, il, g, b.X), kb.ivCoef(fr, il, g, b.Y))
	case token.SUB:
		return kb.sub64(kb.ivCoef(fr, il, g, b.X), kb.ivCoef(fr, il, g, b.Y))
	case token.MUL:
		if il.degree(fr, g.consts, b.X, 0) == 1 {
			return kb.mul64(kb.ivCoef(fr, il, g, b.X), kb.ivEval(fr, il, g, b.Y, ir.Imm(ir.S64, 0)))
		}
		return kb.mul64(kb.ivEval(fr, il, g, b.X, ir.Imm(ir.S64, 0)), kb.ivCoef(fr, il, g, b.Y))
	}
	n, _ := constInt(b.Y.(*ssa.Const))
	return kb.mul64(kb.ivCoef(fr, il, g, b.X), ir.Imm(ir.S64, 1<<uint(n)))
}

// sub64 returns x−y, folding constants.
func (kb *kernelBuilder) sub64(x, y ir.Operand) ir.Operand {
	switch {
	case x.Kind == ir.KImm && y.Kind == ir.KImm:
		return ir.Imm(ir.S64, x.Imm-y.Imm)
	case y.Kind == ir.KImm && y.Imm == 0:
		return x
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpSub, ir.S64, r, x, y)
	return ir.R(r)
}

// mul64 returns x·y, folding constants.
func (kb *kernelBuilder) mul64(x, y ir.Operand) ir.Operand {
	if x.Kind == ir.KImm {
		x, y = y, x
	}
	switch {
	case x.Kind == ir.KImm:
		return ir.Imm(ir.S64, x.Imm*y.Imm)
	case y.Kind == ir.KImm && y.Imm == 0:
		return y
	case y.Kind == ir.KImm && y.Imm == 1:
		return x
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpMul, ir.S64, r, x, y)
	return ir.R(r)
}
