package compiler

// Programmatic dependent launch (gpu/pdl.go): gpu.WaitPriorGrids and
// gpu.LaunchDependents, and the //kern:kernel pdl option that places both
// at the kernel's entry.
//
// On an sm_90 or newer target they are the griddepcontrol instructions
// (PTX ISA 7.8). An older target cannot name them (ptxas rejects
// griddepcontrol below sm_90), yet the same sm_80 module is what an H100
// runs, JIT-compiled forward. So for an older target each is written as a
// line comment, ptxpatch.PDLPrefix + "griddepcontrol.wait;", which ptxas and the
// emulator skip and which the runtime turns into the instruction when it
// loads the module on compute capability 9.0 or newer, raising .target
// to sm_90 (internal/ptxpatch). One PTX file serves both; without the
// rewrite the kernel is the same kernel minus two instructions that do
// nothing unless it was launched with PDL, which the runtime does only
// for a rewritten (or sm_90) module.

import "github.com/gokern/kern/compiler/ir"

// pdlVersion is the PTX ISA version (×10) griddepcontrol needs.
const pdlVersion = 78

var pdlIntrinsics = map[string]intrinsicFunc{
	"WaitPriorGrids": func(kb *kernelBuilder, c *icall) *val {
		kb.pdl.waitCalled = true
		kb.gridDep("griddepcontrol.wait")
		return &val{origin: -1}
	},
	"LaunchDependents": func(kb *kernelBuilder, c *icall) *val {
		kb.pdl.launchCalled = true
		kb.gridDep("griddepcontrol.launch_dependents")
		return &val{origin: -1}
	},
}

// pdlState is a kernel's use of PDL.
type pdlState struct {
	// entry holds the instructions the pdl option put at the entry, to
	// drop the one the kernel also calls itself.
	entryWait, entryLaunch   *ir.Instr
	waitCalled, launchCalled bool
}

// gridDep emits one griddepcontrol instruction (which the printer writes
// in its comment form below sm_90, compiler/ptx) and marks the kernel as one to launch with PDL.
func (kb *kernelBuilder) gridDep(text string) *ir.Instr {
	kb.k.PDL = true
	if kb.tgt.sm >= 90 {
		kb.version = max(kb.version, pdlVersion)
	}
	return kb.b.Emit(ir.OpGridDep, text)
}

// pdlEntry places the pdl option's calls at the kernel's entry: first
// let the next kernel launch (it will wait for this one to complete, so
// an early start costs nothing but its resident blocks), then wait for
// the kernels before this one.
func (kb *kernelBuilder) pdlEntry() {
	kb.pdl.entryLaunch = kb.gridDep("griddepcontrol.launch_dependents")
	kb.pdl.entryWait = kb.gridDep("griddepcontrol.wait")
}

// pdlFinish drops the entry's instructions the kernel placed itself.
func (kb *kernelBuilder) pdlFinish(entry *ir.Block) {
	drop := map[*ir.Instr]bool{}
	if kb.pdl.waitCalled && kb.pdl.entryWait != nil {
		drop[kb.pdl.entryWait] = true
	}
	if kb.pdl.launchCalled && kb.pdl.entryLaunch != nil {
		drop[kb.pdl.entryLaunch] = true
	}
	if len(drop) == 0 {
		return
	}
	out := entry.Instrs[:0]
	for _, in := range entry.Instrs {
		if !drop[in] {
			out = append(out, in)
		}
	}
	entry.Instrs = out
}
