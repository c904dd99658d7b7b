// Package compiler lowers Go kernels to PTX.
//
// The phases, in order:
//
//  1. Load (load.go): go/packages parses and type-checks the user's
//     package; kernels are the funcs marked //kern:kernel (directive.go).
//  2. Subset check (subset.go): an AST walk rejects constructs outside the
//     kernel language (closures, maps, goroutines, ...) at their exact
//     position, before SSA construction can obscure them.
//  3. SSA (x/tools/go/ssa, with generic instantiation): each kernel and the
//     helpers it calls, in SSA form.
//  4. Analyses on SSA: uniformity (uniform.go) decides which branches may
//     diverge between threads, and rejects barriers under them; bounds.go
//     finds index expressions that are provably in range.
//  5. Lowering (lower*.go): SSA to the register IR of package ir. Helper
//     calls are inlined; calls into package gpu are intrinsics recognised
//     by package path and name (intrinsics.go).
//  6. IR passes (ir.Compile) and PTX printing (package ptx).
//
// Every error is a Diagnostic at file:line:col; the compiler records it and
// continues, so one run reports every problem.
package compiler

import (
	"fmt"
	"go/token"

	"github.com/gokern/kern/compiler/ir"
)

// Config selects the target and options of a compilation.
type Config struct {
	// Arch is the PTX target, sm_70 through sm_90a; "" means sm_80.
	Arch string
	// Dir is the directory packages are loaded from ("" = current).
	Dir string
	// NoLineInfo omits .file/.loc directives.
	NoLineInfo bool
	// KeepChecks keeps every bounds check the range analysis would
	// prove unneeded, lowers each short-circuit condition as its own
	// branch (condmerge.go) and each check under its guard (liftcheck.go):
	// the reference the analysis is tested against.
	KeepChecks bool
}

// Package is the result of compiling one Go package.
type Package struct {
	Path    string // import path
	Name    string // package name
	Dir     string
	Arch    string
	Kernels []*Kernel
	PTX     string // one module holding every kernel's entry
	Module  *ir.Module
}

// Kernel describes one compiled kernel.
type Kernel struct {
	Name  string // Go function name
	Entry string // PTX .entry name
	// Entry32 is the .entry of the kernel's 32-bit variant (idx32,
	// index32.go), "" when it has none.
	Entry32 string
	// Facts32 are the launch facts (internal/launchfact) that prove
	// checks of the 32-bit entry (launchfact.go); a launch runs Entry32
	// only when every one holds.
	Facts32 []string
	Pos     token.Position
	Params  []Param
	// Block is the directive's block shape, [0 0 0] when none was given.
	Block [3]int
	// SharedBytes is the static shared memory the kernel declares.
	SharedBytes int
	// Dynamic reports whether the kernel uses gpu.DynShared.
	Dynamic bool
	// Bounds reports whether device bounds checks are compiled in.
	Bounds bool
	// Sites lists each bounds-check site: the value written to the error
	// slot is the site's index + 1.
	Sites []string
	// Source lists the functions the kernel was compiled from, the kernel
	// and the same-package helpers it calls, as "file.go:Name" or
	// "file.go:Type.Method"; SourceHash hashes their text
	// (internal/srchash), "" when the files could not be read.
	Source     []string
	SourceHash string
	// Checks counts the bounds-check sites by outcome (bounds.go), and
	// Checks32 those of the 32-bit entry, which launch facts may prove.
	Checks   CheckReport
	Checks32 CheckReport
	// TileLayouts describes, one line per kind of gpu/tile operation the
	// kernel uses, how its tiles map onto threads, shared memory and
	// tensor cores (tilelayout.go), for kern check -v.
	TileLayouts []string
	// PDL reports whether the kernel is launched with programmatic
	// dependent launch where the GPU has it: the pdl option, or a call of
	// gpu.WaitPriorGrids or gpu.LaunchDependents (lower_pdl.go).
	PDL bool
	// Cooperative reports whether the kernel calls gpu.GridSync: it is
	// launched with every block resident at once and takes a hidden last
	// parameter, GridParam, the address of its grid barrier
	// (lower_grid.go).
	Cooperative bool
}

// CheckReport says what became of a kernel's index bounds checks: Proven
// sites need none (the range analysis showed the index in range), Hoisted
// ones are tested once before their loop (hoist.go), Kept ones on every
// access. A site is a source position; it counts as kept when any inlined
// or unrolled copy of it keeps its check, else as hoisted when one is.
type CheckReport struct {
	Proven, Hoisted, Kept int
	// KeptAt and HoistedAt list those sites as file:line:col, in source
	// order.
	KeptAt, HoistedAt []string
}

// ParamKind says how a kernel parameter is passed.
type ParamKind uint8

const (
	Scalar ParamKind = iota
	Slice
)

// Param is a kernel parameter after the gpu.Thread.
type Param struct {
	Name   string
	Kind   ParamKind
	GoType string // element type for slices, else the type: "float32", "gpu.Half"
	Size   int    // bytes of an element or of the scalar
	PTX    []ir.Param
	Writes bool // the kernel stores to the slice or uses it in an atomic
}

// ErrorSlot is the name of the module's .global error slot (48 bytes,
// 16-byte aligned), written by the first failing device bounds check or
// panic of a launch:
//
//	 0: u32 site code, kernel index + 1 << 16 | site index + 1, set by
//	    the compare-and-swap that elects the failing thread that writes
//	    the rest; 0 while no check has failed
//	 4: u32 unused, 0
//	 8: u64 block, ctaid.x | ctaid.y<<32 | ctaid.z<<48
//	16: u64 index, u64 length of a failed bounds check   (one st.v2.u64)
//	32: u32 tid.x, tid.y                                 (one st.v2.u32)
//	40: u32 tid.z
//	44: u32 unused, 0
//
// A thread dimension in which the block= directive is 1 is not written
// (failthread.go): its index is 0, as the host left it.
// A u32 code and unpacked thread indices keep the failure handler short
// (one register per site for the code, no shifts for the thread); the
// code at offset 0 lets the atomic take the slot's address as it is (an
// ATOMG has no address offset: one at 40 cost four more instructions).
// The host zeroes the slot and reads it after launches (package kern,
// decodeSlot).
const ErrorSlot = "kern_error"

// ErrorSlotBytes is the size of the error slot.
const ErrorSlotBytes = 48

// The error slot's fields' byte offsets (see ErrorSlot).
const (
	slotCode   = 0
	slotBlock  = 8
	slotIndex  = 16
	slotThread = 32
)

func (c Config) arch() string {
	if c.Arch == "" {
		return "sm_80"
	}
	return c.Arch
}

// target is one row of the target table: what a -arch value allows.
type target struct {
	name       string
	ptxVersion int // minimum .version ×10 for the .target line
	sm         int
}

var targets = []target{
	{"sm_70", 60, 70},
	{"sm_72", 61, 72},
	{"sm_75", 63, 75},
	{"sm_80", 70, 80},
	{"sm_86", 71, 86},
	{"sm_87", 74, 87},
	{"sm_89", 78, 89},
	{"sm_90", 78, 90},
	{"sm_90a", 80, 90},
}

func lookupTarget(arch string) (target, error) {
	for _, t := range targets {
		if t.name == arch {
			return t, nil
		}
	}
	return target{}, fmt.Errorf("compiler: unknown -arch %q (want one of sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a)", arch)
}
