// Thread identity under a block= directive: a dimension whose extent the
// directive makes 1 has index 0 and size 1 (launch rejects larger blocks,
// package kern launch.go), so reading it, multiplying by it or storing it
// is dead work. ptxas cannot know this (.maxntid bounds only the total).

package compiler

import "github.com/gokern/kern/compiler/ir"

// storeThread writes the failing thread's index into the error slot
// (ErrorSlot, offsets 32 to 43) using the registers r. A dimension in
// which the kernel's block= directive is 1 is not read: launch rejects
// a block larger than the directive in any dimension (package kern,
// launch.go), so that index is 0, which is what the host left in the
// slot (it zeroes the slot before a launch and after reading a record).
// Under block=256 this saves two special-register reads and one or two
// stores, 3 SASS, in every kernel with a kept check.
func (kb *kernelBuilder) storeThread(r [3]ir.Reg) {
	need := [3]bool{true, true, true}
	if b := kb.k.Block; b != [3]int{} {
		need[1], need[2] = b[1] > 1, b[2] > 1
	}
	for i, sr := range []string{"%tid.x", "%tid.y", "%tid.z"} {
		if need[i] {
			kb.b.Mov(ir.U32, r[i], ir.Special(sr))
		}
	}
	if need[1] {
		kb.b.St(ir.Global, ir.U32, ir.SymAddr(ErrorSlot, slotThread), ir.Vec(r[0], r[1]))
	} else {
		kb.b.St(ir.Global, ir.U32, ir.SymAddr(ErrorSlot, slotThread), ir.R(r[0]))
	}
	if need[2] {
		kb.b.St(ir.Global, ir.U32, ir.SymAddr(ErrorSlot, slotThread+8), ir.R(r[2]))
	}
}

// linearByDirective is the linear thread index where the block= directive
// makes it shorter than linear's two mads: tid.x under an extent of 1 in
// y and z, tid.y*ntid.x + tid.x under an extent of 1 in z (launch rejects
// larger blocks, so those indices are 0).
func (kb *kernelBuilder) linearByDirective() (ir.Reg, bool) {
	b := kb.k.Block
	if b == [3]int{} || b[2] > 1 {
		return 0, false
	}
	if b[1] <= 1 {
		return kb.special("%tid.x"), true
	}
	r := kb.b.New(ir.U32)
	kb.b.Emit(ir.OpMad, "mad.lo.u32", ir.R(r), ir.R(kb.special("%tid.y")), ir.R(kb.special("%ntid.x")), ir.R(kb.special("%tid.x")))
	return r, true
}

// blockThreads is ntid.x*ntid.y*ntid.z in a fresh u32, without the
// factors the block= directive makes 1.
func (kb *kernelBuilder) blockThreads() ir.Reg {
	n := kb.b.New(ir.U32)
	b := kb.k.Block
	kb.b.Mov(ir.U32, n, ir.Special("%ntid.x"))
	for i, d := range []string{"%ntid.y", "%ntid.z"} {
		if b == [3]int{} || b[i+1] > 1 {
			kb.b.Arith(ir.OpMul, ir.U32, n, ir.R(n), ir.R(kb.special(d)))
		}
	}
	return n
}
