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
