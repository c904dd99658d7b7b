package compiler

// Per-file assertions for the golden kernels: what each testdata file
// claims about the code the compiler emits for its construct.

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

func init() {
	goldenChecks["arith"] = func(t *testing.T, p *Package) {
		wantWrites(t, p, "IntOps", "a=false b=false out=true")
		for _, k := range []string{"IntOps", "UintOps", "Float32Ops", "Float64Ops", "MinMax", "CompoundAssign"} {
			// Every index is guarded by i < len(x): no checks remain.
			mustNotContain(t, p, k, `kern_error`)
		}
		mustContain(t, p, "IntOps", `^div\.s64 `)
		mustContain(t, p, "IntOps", `^rem\.s64 `)
		mustContain(t, p, "UintOps", `^div\.u32 `)
		mustContain(t, p, "UintOps", `^shr\.u32 `)
		// Go's float arithmetic rounds each operation: explicit .rn keeps
		// ptxas from fusing mul and add.
		mustContain(t, p, "Float32Ops", `^mul\.rn\.f32 `)
		mustNotContain(t, p, "Float32Ops", `^(fma|mad)\.`)
		mustContain(t, p, "Float64Ops", `^div\.rn\.f64 `)
		// != on floats is true for NaN: the unordered comparison.
		mustContain(t, p, "Compare", `^setp\.neu\.f32 `)
		mustContain(t, p, "Compare", `^setp\.le\.s32 `)
		// The builtin min on floats propagates NaN (min.NaN on sm_80).
		mustContain(t, p, "MinMax", `^min\.NaN\.f32 `)
		mustContain(t, p, "MinMax", `^max\.s64 `)
	}
	goldenChecks["types"] = func(t *testing.T, p *Package) {
		k := kernelOf(t, p, "Scalars")
		want := []struct{ name, goType, ptx string }{
			{"b", "bool", "u8"}, {"i8", "int8", "s8"}, {"u8", "uint8", "u8"}, {"i16", "int16", "s16"},
			{"u16", "uint16", "u16"}, {"i32", "int32", "s32"}, {"u32", "uint32", "u32"}, {"i64", "int64", "s64"},
			{"u64", "uint64", "u64"}, {"n", "int", "s64"}, {"u", "uint", "u64"}, {"f32", "float32", "f32"},
			{"f64", "float64", "f64"},
		}
		for i, w := range want {
			prm := k.Params[i]
			if prm.Name != w.name || prm.Kind != Scalar || prm.GoType != w.goType || len(prm.PTX) != 1 || prm.PTX[0].Type.String() != w.ptx {
				t.Errorf("Scalars param %d = %+v, want %s %s .%s", i, prm, w.name, w.goType, w.ptx)
			}
		}
		// 8-bit results are re-normalised after arithmetic: uint8 by
		// zero-extension, int8 by sign-extension.
		mustContain(t, p, "Wrap8", `^cvt\.u32\.u8 `)
		mustContain(t, p, "Wrap8", `^cvt\.s32\.s8 `)
		mustContain(t, p, "Wrap8", `^not\.b32 `)
		// Signed >> is arithmetic, unsigned logical; 64-bit amounts are
		// clamped to the width before they narrow to the .u32 operand.
		mustContain(t, p, "Shifts", `^shr\.s32 `)
		mustContain(t, p, "Shifts", `^shr\.u64 `)
		mustContain(t, p, "Shifts", `^min\.u64 %rd\d+, %rd\d+, 32;`)
		// Constant over-wide shifts stay in range of the instruction.
		mustContain(t, p, "Shifts", `^shl\.b32 %r\d+, %r\d+, 32;`)
		mustContain(t, p, "Shifts", `^shr\.u64 %rd\d+, %rd\d+, 64;`)
		// Float to int truncates; float to int8 narrows the 32-bit result.
		mustContain(t, p, "Convert", `^cvt\.rzi\.s32\.f32 `)
		mustContain(t, p, "Convert", `^cvt\.rn\.f32\.f64 `)
		mustContain(t, p, "Convert", `^cvt\.rn\.f32\.s64 `)
		mustContain(t, p, "Convert", `^cvt\.rzi\.u64\.f32 `)
		wantWrites(t, p, "Convert", "f=false d=true i=false out8=true outu16=true outf=true outu=true")
	}
	goldenChecks["control"] = func(t *testing.T, p *Package) {
		mustContain(t, p, "Switch", `^setp\.eq\.s32 `)
		// The early return guards x[i]; the loop over x indexes x[j] with
		// j < n, which proves nothing about len(x), so that one is checked.
		mustNotContain(t, p, "EarlyReturn", `kern_error`)
		if n := len(kernelOf(t, p, "ForLoops").Sites); n != 1 {
			t.Errorf("ForLoops: %d bounds-check sites, want 1 (x[j] under j < n)", n)
		}
	}
	goldenChecks["helpers"] = func(t *testing.T, p *Package) {
		// Helpers are inlined: the module has only the kernels' entries.
		if n := countLines(p.PTX, `^\.(visible )?\.?func `); n != 0 {
			t.Errorf("%d .func in module, want every helper inlined", n)
		}
		mustContain(t, p, "Generic", `^setp\.lt\.f64 `)
		mustContain(t, p, "Generic", `^setp\.lt\.s32 `)
		wantWrites(t, p, "RowSums", "m=false sums=true")
	}
	goldenChecks["arrays"] = func(t *testing.T, p *Package) {
		for _, k := range []string{"RegisterArray", "ArrayValue", "StructLocal"} {
			mustNotContain(t, p, k, `\.local`)
		}
		// An array value indexed by a variable is addressed in .local.
		mustContain(t, p, "ArrayIndexValue", `^ld\.local\.f32 `)
		mustContain(t, p, "DynamicIndex", `^\.local \.align 4 \.b8 local0\[64\];`)
		mustContain(t, p, "DynamicIndex", `^ld\.local\.f32 `)
		mustContain(t, p, "LocalSlice", `^st\.local\.f32 `)
		// The dynamic index into a local array is bounds-checked.
		mustContain(t, p, "DynamicIndex", `^setp\.hs\.u64 %p\d+, %rd\d+, 16;`)
	}
	reportChecks["arrays"] = func(t *testing.T, p *Package, rep *ptxas.Report) {
		for _, k := range []string{"RegisterArray", "ArrayValue", "StructLocal"} {
			if f := rep.Func(k); f != nil && f.StackFrame != 0 {
				t.Errorf("%s: %s keeps its arrays in registers but has a %d-byte stack frame", rep.Arch, k, f.StackFrame)
			}
		}
		for _, k := range []string{"DynamicIndex"} {
			if f := rep.Func(k); f != nil && f.StackFrame == 0 {
				t.Errorf("%s: %s indexes a local array dynamically but has no stack frame", rep.Arch, k)
			}
		}
	}
	goldenChecks["shared"] = func(t *testing.T, p *Package) {
		for name, want := range map[string]int{"Reverse": 1024, "Transpose": 32 * 33 * 4, "TwoArrays": 128*8 + 64*4, "Dynamic": 0, "SharedInHelper": 256} {
			if k := kernelOf(t, p, name); k.SharedBytes != want {
				t.Errorf("%s: SharedBytes = %d, want %d", name, k.SharedBytes, want)
			}
		}
		if k := kernelOf(t, p, "Dynamic"); !k.Dynamic {
			t.Errorf("Dynamic: Kernel.Dynamic is false")
		}
		if k := kernelOf(t, p, "Reverse"); k.Dynamic || k.Block != [3]int{256, 1, 1} {
			t.Errorf("Reverse: Dynamic %v, Block %v", k.Dynamic, k.Block)
		}
		if k := kernelOf(t, p, "Transpose"); k.Block != [3]int{32, 8, 1} {
			t.Errorf("Transpose: Block = %v, want [32 8 1]", k.Block)
		}
		mustContain(t, p, "Dynamic", `%dynamic_smem_size`)
		mustContain(t, p, "Reverse", `^bar\.sync 0;`)
		mustContain(t, p, "Transpose", `^ld\.shared\.f32 `)
		mustContain(t, p, "TwoArrays", `^st\.shared\.f64 `)
		if countLines(p.PTX, `^\.extern \.shared .* dynsmem\[\];`) != 1 {
			t.Errorf("dynamic shared memory is not declared once at module scope")
		}
		wantWrites(t, p, "Transpose", "in=false out=true")
	}
	goldenChecks["warp"] = func(t *testing.T, p *Package) {
		// Full-warp shuffles: clamp 31 (0 for up), member mask -1; 64-bit
		// values move as two 32-bit halves.
		mustContain(t, p, "Shuffles", `^shfl\.sync\.bfly\.b32 %r\d+, %r\d+, 1, 31, -1;`)
		mustContain(t, p, "Shuffles", `^shfl\.sync\.down\.b32 %r\d+, %r\d+, 2, 31, -1;`)
		mustContain(t, p, "Shuffles", `^shfl\.sync\.up\.b32 %f\d+, %f\d+, 4, 0, -1;`)
		mustContain(t, p, "Shuffles", `^shfl\.sync\.idx\.b32 %f\d+, %f\d+, %r\d+, 31, -1;`)
		if n := countLines(entryBody(t, p, "Shuffles"), `^shfl\.sync\.`); n != 8 {
			t.Errorf("Shuffles: %d shfl.sync, want 8 (two each for int and float64)", n)
		}
		// A butterfly of 5 steps per reduction; 64-bit types take 2 shfl.
		if n := countLines(entryBody(t, p, "Reductions"), `^shfl\.sync\.bfly`); n != 5*(1+2+1+2) {
			t.Errorf("Reductions: %d shfl.sync.bfly, want 30", n)
		}
		mustContain(t, p, "Reductions", `^max\.NaN\.f64|^max\.f64`)
		mustContain(t, p, "Votes", `^vote\.sync\.ballot\.b32 %r\d+, %p\d+, -1;`)
		mustContain(t, p, "Votes", `^vote\.sync\.any\.pred `)
		mustContain(t, p, "Votes", `^vote\.sync\.all\.pred `)
		mustContain(t, p, "Votes", `^bar\.warp\.sync -1;`)
		mustContain(t, p, "WarpUniformBranch", `^shfl\.sync\.bfly`)
	}
	goldenChecks["block"] = func(t *testing.T, p *Package) {
		// Each block reduction: a barrier after the per-warp partials and
		// one before the scratch is reused.
		if n := countLines(entryBody(t, p, "Reduce"), `^bar\.sync 0;`); n != 6 {
			t.Errorf("Reduce: %d bar.sync for three reductions, want 6", n)
		}
		if k := kernelOf(t, p, "Reduce"); k.SharedBytes != 32*8 {
			t.Errorf("Reduce: SharedBytes = %d, want the 256-byte reduction scratch", k.SharedBytes)
		}
		mustContain(t, p, "UniformSync", `^bar\.sync 0;`)
		mustContain(t, p, "SyncInHelper", `^bar\.sync 0;`)
	}
	goldenChecks["atomics"] = func(t *testing.T, p *Package) {
		for _, re := range []string{
			`^atom\.global\.add\.s32 `, `^atom\.global\.add\.u32 `, `^atom\.global\.add\.u64 `,
			`^atom\.global\.add\.f32 `, `^atom\.global\.add\.f64 `,
		} {
			mustContain(t, p, "Adds", re)
		}
		mustContain(t, p, "MaxMin", `^atom\.global\.max\.s32 `)
		mustContain(t, p, "MaxMin", `^atom\.global\.min\.s32 `)
		mustContain(t, p, "MaxMin", `^atom\.global\.max\.u64 `)
		mustContain(t, p, "CASLoop", `^atom\.global\.cas\.b32 `)
		mustContain(t, p, "Histogram", `^atom\.shared\.add\.u32 `)
		mustContain(t, p, "Histogram", `^atom\.shared\.exch\.b32 `)
		mustContain(t, p, "Histogram", `^atom\.global\.exch\.b32 `)
		mustContain(t, p, "SharedCAS", `^atom\.shared\.cas\.b64 `)
		mustContain(t, p, "SharedCAS", `^atom\.shared\.exch\.b64 `)
		// An atomic counts as a write: no ld.global.nc on those buffers.
		wantWrites(t, p, "Adds", "i32=true u32=true u64=true f32=true f64=true n=true old=true")
		wantWrites(t, p, "CASLoop", "prod=true x=false")
		wantWrites(t, p, "Histogram", "x=false hist=true flag=true")
		// Two 8-byte arrays, each 16-aligned: ptxas lays out 24 bytes.
		if k := kernelOf(t, p, "SharedCAS"); k.SharedBytes != 24 {
			t.Errorf("SharedCAS: SharedBytes = %d, want 24", k.SharedBytes)
		}
	}
}
