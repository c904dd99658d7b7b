package compiler

// gpu.GridSync: a grid-wide barrier (gpu/grid.go). The kernel becomes
// cooperative (Kernel.Cooperative): the runtime launches it with every
// block resident and passes, as a hidden last parameter (GridParam), the
// address of two u32 words it clears before each launch. The first counts
// arrivals over the whole launch; the second is unused (kept so that the
// slot's layout does not change).
//
//	bar.sync 0                          the block's writes are done
//	thread 0 of the block:
//	  fence.acq_rel.gpu                 release the block's writes
//	  old = atom.global.add [g], 1
//	  target = old - old%blocks + blocks      the count that ends this round
//	  unless old+1 = target (the last arrival):
//	    spin, nanosleep between polls, until ld.relaxed.gpu [g] ≥ target,
//	    or until the error slot's code is set
//	  fence.acq_rel.gpu                 acquire the other blocks' writes
//	bar.red.or.pred                     the block waits for thread 0, and
//	                                    exits if it saw a failure
//
// The count only grows, so nothing is reset between rounds: a block
// cannot run a round ahead (it waits for every arrival of its own round),
// so old/blocks is the round its arrival belongs to, and a block that
// leaves first and arrives at the next barrier counts toward that round's
// target. The last arrival releases the others by its atomic alone: they
// see the count reach the target one L2 round trip later, where a
// separate generation word took the last arrival's atomic, a store, a
// fence and a second store first. 2³² arrivals a launch at most: at 132
// blocks, 32 million barriers. A device bounds check or panic that fails
// in some block ends that thread before it arrives; every other block
// then sees the error slot's code while it spins, and the whole block
// exits instead of waiting for an arrival that will never come, so the
// launch ends and the host reports the failure.
//
// PTX ISA: ld.relaxed and fence.acq_rel §9.7.9.8/§9.7.13.4 (PTX 6.0,
// sm_70), nanosleep §9.7.13.9 (PTX 6.3, sm_70), bar.red §9.7.13.1.

import "github.com/gokern/kern/compiler/ir"

// GridParam is the name of a cooperative kernel's hidden last parameter.
const GridParam = "kern_grid"

// gridVersion is the PTX ISA version (×10) GridSync's instructions need.
const gridVersion = 63

var gridIntrinsics = map[string]intrinsicFunc{
	"GridSync": (*kernelBuilder).gridSync,
}

func (kb *kernelBuilder) gridSync(c *icall) *val {
	kb.requireUniform(c, false)
	if !kb.need(c.call.Pos(), "gpu.GridSync (nanosleep, ld.relaxed.gpu)", gridVersion, 70) {
		return &val{origin: -1}
	}
	kb.k.Cooperative = true
	if !kb.gridParam {
		kb.gridParam = true
		kb.f.Params = append(kb.f.Params, ir.Param{Name: GridParam, Type: ir.U64})
	}
	b := &kb.b
	b.Emit(ir.OpBar, "bar.sync", ir.Imm(ir.U32, 0))
	abort := b.New(ir.U32)
	b.Mov(ir.U32, abort, ir.Imm(ir.U32, 0))
	lead, spin, failed, join := kb.f.NewBlock("grid_lead"), kb.f.NewBlock("grid_spin"), kb.f.NewBlock("grid_failed"), kb.f.NewBlock("grid_join")
	notLeader := b.New(ir.Pred)
	b.Setp(ir.NE, ir.U32, notLeader, ir.R(kb.leaderTest()), ir.Imm(ir.U32, 0))
	b.BraIf(notLeader, false, join)
	b.Bra(lead)

	b.B = lead
	p, g := b.New(ir.U64), b.New(ir.U64)
	b.Ld(ir.ParamSpace, false, ir.U64, ir.R(p), ir.SymAddr(GridParam, 0))
	b.Cvta(ir.Global, true, g, ir.R(p))
	b.Emit(ir.OpFence, "fence.acq_rel.gpu")
	blocks := kb.special("%nctaid.x")
	for _, d := range []string{"%nctaid.y", "%nctaid.z"} {
		b.Arith(ir.OpMul, ir.U32, blocks, ir.R(blocks), ir.R(kb.special(d)))
	}
	old := b.New(ir.U32)
	b.Atom(ir.Global, "add", ir.U32, old, ir.Addr(g, 0), ir.Imm(ir.U32, 1))
	rem, target, next := b.New(ir.U32), b.New(ir.U32), b.New(ir.U32)
	b.Arith(ir.OpRem, ir.U32, rem, ir.R(old), ir.R(blocks))
	b.Arith(ir.OpSub, ir.U32, target, ir.R(old), ir.R(rem))
	b.Arith(ir.OpAdd, ir.U32, target, ir.R(target), ir.R(blocks))
	b.Arith(ir.OpAdd, ir.U32, next, ir.R(old), ir.Imm(ir.U32, 1))
	acquire := kb.f.NewBlock("grid_acquire")
	notLast := b.New(ir.Pred)
	b.Setp(ir.NE, ir.U32, notLast, ir.R(next), ir.R(target))
	b.BraIf(notLast, false, spin)
	b.Bra(acquire)

	b.B = spin
	b.Emit(ir.OpNanosleep, "nanosleep.u32", ir.Imm(ir.U32, 100))
	code := b.New(ir.U32)
	b.Emit(ir.OpLd, "ld.relaxed.gpu.global.u32", ir.R(code), ir.SymAddr(ErrorSlot, slotCode))
	bad := b.New(ir.Pred)
	b.Setp(ir.NE, ir.U32, bad, ir.R(code), ir.Imm(ir.U32, 0))
	b.BraIf(bad, false, failed)
	cur := b.New(ir.U32)
	b.Emit(ir.OpLd, "ld.relaxed.gpu.global.u32", ir.R(cur), ir.Addr(g, 0))
	short := b.New(ir.Pred)
	b.Setp(ir.LO, ir.U32, short, ir.R(cur), ir.R(target))
	b.BraIf(short, false, spin)
	b.Bra(acquire)

	b.B = acquire
	b.Emit(ir.OpFence, "fence.acq_rel.gpu")
	b.Bra(join)

	b.B = failed
	b.Mov(ir.U32, abort, ir.Imm(ir.U32, 1))
	b.Bra(join)

	b.B = join
	q, all := b.New(ir.Pred), b.New(ir.Pred)
	b.Setp(ir.NE, ir.U32, q, ir.R(abort), ir.Imm(ir.U32, 0))
	b.Emit(ir.OpBarRed, "bar.red.or.pred", ir.R(all), ir.Imm(ir.U32, 0), ir.R(q))
	quit, cont := kb.f.NewBlock("grid_abort"), kb.f.NewBlock("grid_done")
	b.BraIf(all, false, quit)
	b.Bra(cont)
	b.B = quit
	b.Exit()
	b.B = cont
	return &val{origin: -1}
}

// leaderTest returns a register that is 0 only in the block's thread
// (0, 0, 0): tid.x | tid.y | tid.z, leaving out the dimensions the block=
// directive makes 1.
func (kb *kernelBuilder) leaderTest() ir.Reg {
	r := kb.special("%tid.x")
	blk := kb.k.Block
	for i, d := range []string{"%tid.y", "%tid.z"} {
		if blk != [3]int{} && blk[i+1] <= 1 {
			continue
		}
		kb.b.Arith(ir.OpOr, ir.B32, r, ir.R(r), ir.R(kb.special(d)))
	}
	return r
}
