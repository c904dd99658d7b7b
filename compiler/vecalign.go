package compiler

// The alignment check of gpu.Load2/4/8 and gpu.Store2/4/8: a vector access
// of w bytes needs an address that is a multiple of w (PTX ISA §5.4.4,
// "vector ... accesses must be naturally aligned to the vector size");
// a GPU stops the kernel with a misaligned-address error otherwise, and
// the emulator would silently do the access. Buffers are 256-byte
// aligned, so the address is aligned when the index is a multiple of the
// vector length, and the re-slice it goes through (if any) starts at
// one: both are often provable (align.go), else a device check tests the
// address's low bits, reported as a panic at the call with the message
// native mode's gpu.Load4 (gpu/vector.go) panics with.

import (
	"strconv"

	"github.com/gokern/kern/compiler/ir"
)

// checkVecAlign emits the check that addr (the address of s[i] of call
// c) is a multiple of width bytes, unless the analysis proves it.
func (kb *kernelBuilder) checkVecAlign(c *icall, addr ir.Reg, width int) {
	need := log2Size(int64(width))
	s := c.args[0]
	elemLog := log2Size(int64(memBytes(scalarType(c.elem))))
	if max(s.align, elemLog) >= need && c.fr.align.tzAt(c.call.Call.Args[1], c.call.Block())+elemLog >= need {
		return
	}
	if !kb.bounds {
		// nobounds trusts the kernel with its indices; alignment is one.
		return
	}
	low := kb.b.New(ir.U64)
	kb.b.Arith(ir.OpAnd, ir.B64, low, ir.R(addr), ir.Imm(ir.B64, uint64(width-1)))
	bad := kb.b.New(ir.Pred)
	kb.b.Setp(ir.NE, ir.U64, bad, ir.R(low), ir.Imm(ir.U64, 0))
	zero := ir.Imm(ir.U64, 0)
	kb.failWhen(bad, "misaligned", "panic at "+kb.posString(c.call.Pos())+": "+vecAlignMessage(c.name, width), zero, zero)
}

// vecAlignMessage is the panic message of a misaligned vector access; it
// must match gpu's (vector.go) word for word, so that the DeviceError of
// every device reads the same.
func vecAlignMessage(name string, width int) string {
	return "gpu." + name + ": misaligned access: the address of s[i] must be a multiple of " + strconv.Itoa(width) + " bytes (i a multiple of the vector length)"
}
