package compiler

// TMA stores and bulk async-groups (PTX ISA §9.7.9.25.5.1
// "cp.async.bulk.tensor", §9.7.9.25.6 "cp.async.bulk.commit_group",
// "cp.async.bulk.wait_group"), PTX 8.0, sm_90; semantics in package gpu
// (tma_store.go). The map is in global memory (a slice parameter), as
// for loads (lower_hopper.go, tmaLoad2D).

import "github.com/gokern/kern/compiler/ir"

var tmaStoreIntrinsics = map[string]intrinsicFunc{
	"TMAStore2D": (*kernelBuilder).tmaStore2D,
	"BulkCommitGroup": func(kb *kernelBuilder, c *icall) *val {
		if kb.need(c.call.Pos(), "gpu.BulkCommitGroup (cp.async.bulk.commit_group)", 80, 90) {
			kb.b.Emit(ir.OpCpAsync, "cp.async.bulk.commit_group")
		}
		return &val{origin: -1}
	},
	"BulkWaitGroup":     func(kb *kernelBuilder, c *icall) *val { return kb.bulkWait(c, "cp.async.bulk.wait_group") },
	"BulkWaitGroupRead": func(kb *kernelBuilder, c *icall) *val { return kb.bulkWait(c, "cp.async.bulk.wait_group.read") },
}

// bulkWait lowers a bulk wait_group; its count is an immediate.
func (kb *kernelBuilder) bulkWait(c *icall, text string) *val {
	n, ok := c.constArg(1)
	if !ok || n < 0 || n > 63 {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s needs a constant group count 0..63", c.name)
		return &val{origin: -1}
	}
	if kb.need(c.call.Pos(), "gpu."+c.name+" (cp.async.bulk.wait_group)", 80, 90) {
		kb.b.Emit(ir.OpCpAsync, text, ir.Imm(ir.U32, uint64(n)))
	}
	return &val{origin: -1}
}

// tmaStore2D lowers gpu.TMAStore2D to
// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// [tmap, {x, y}], [src].
func (kb *kernelBuilder) tmaStore2D(c *icall) *val {
	if !kb.need(c.call.Pos(), "gpu.TMAStore2D (cp.async.bulk.tensor)", 80, 90) {
		return &val{origin: -1}
	}
	tmap, ok1 := kb.spaceAddr(c, c.args[1], ir.Global, "the tensor map")
	src, ok2 := kb.spaceAddr(c, c.args[4], ir.Shared, "src")
	if !ok1 || !ok2 {
		return &val{origin: -1}
	}
	coord := func(i int) ir.Reg {
		r := kb.b.New(ir.S32)
		o := kb.u32Arg(c, i)
		if o.Kind == ir.KImm {
			kb.b.Mov(ir.S32, r, ir.Imm(ir.S32, o.Imm))
		} else {
			kb.b.Mov(ir.S32, r, o)
		}
		return r
	}
	x, y := coord(2), coord(3)
	kb.b.Emit(ir.OpCpAsync, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", ir.TensorAddr(tmap.Reg, x, y), src)
	return &val{origin: -1}
}
