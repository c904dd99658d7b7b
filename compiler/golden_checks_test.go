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
		// x % d after x / d is x − (x/d)·d: one division, no rem.
		mustNotContain(t, p, "IntOps", `^rem\.s64 `)
		// Signed / and % by powers of two: biased shifts, no division.
		mustNotContain(t, p, "SignedPow2", `^(div|rem)\.`)
		mustContain(t, p, "SignedPow2", `^shr\.s64 `)
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
		mustContain(t, p, "Shift8", `^shl\.b32 `)
		mustContain(t, p, "Shift8", `^shr\.s32 `)
		mustContain(t, p, "Shift8", `^shr\.u32 `)
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
		mustContain(t, p, "LoopWithGuards", `^bar\.sync 0;`)
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
	goldenChecks["math"] = func(t *testing.T, p *Package) {
		for _, re := range []string{
			`^ex2\.approx\.f32 `, `^lg2\.approx\.f32 `, `^sin\.approx\.f32 `, `^cos\.approx\.f32 `,
			`^sqrt\.rn\.f32 `, `^rsqrt\.approx\.f32 `, `^abs\.f32 `, `^cvt\.rmi\.f32\.f32 `,
			`^cvt\.rpi\.f32\.f32 `, `^min\.f32 `, `^max\.f32 `, `^fma\.rn\.f32 `,
		} {
			mustContain(t, p, "Float32", re)
		}
		// gpu.Min and gpu.Max return the non-NaN operand: plain min/max.
		mustNotContain(t, p, "Float32", `^(min|max)\.NaN`)
		// gpu.Rsqrt in float64 is 1/sqrt: a reciprocal (recip.go), not a division.
		for _, re := range []string{`^sqrt\.rn\.f64 `, `^abs\.f64 `, `^cvt\.rmi\.f64\.f64 `, `^cvt\.rpi\.f64\.f64 `, `^fma\.rn\.f64 `, `^rcp\.rn\.f64 `} {
			mustContain(t, p, "Float64", re)
		}
		mustNotContain(t, p, "StdMath", `\.approx\.`)
		mustContain(t, p, "StdMath", `^cvt\.rzi\.f64\.f64 `)
		mustContain(t, p, "StdMath", `^copysign\.f64 `)
		mustContain(t, p, "StdMath", `^setp\.nan\.f64 `)
		for _, re := range []string{`^popc\.b32 `, `^popc\.b64 `, `^clz\.b32 `, `^clz\.b64 `, `^brev\.b32 `, `^brev\.b64 `} {
			mustContain(t, p, "Bits", re)
		}
	}
	goldenChecks["devmath"] = func(t *testing.T, p *Package) {
		// float64 transcendentals are software: no approximate units.
		mustNotContain(t, p, "Float64", `\.approx\.`)
		mustNotContain(t, p, "StdMath", `\.approx\.`)
		mustContain(t, p, "Float64", `^fma\.rn\.f64 `)
		if n := countLines(p.PTX, `^\.(visible )?\.?func `); n != 0 {
			t.Errorf("%d .func in module, want devmath inlined", n)
		}
	}
	goldenChecks["half"] = func(t *testing.T, p *Package) {
		k := kernelOf(t, p, "Convert")
		if k.Params[0].GoType != "gpu.Half" || k.Params[1].GoType != "gpu.BFloat16" || k.Params[0].Size != 2 {
			t.Errorf("Convert params: %+v", k.Params)
		}
		mustContain(t, p, "Convert", `^cvt\.f32\.f16 `)
		mustContain(t, p, "Convert", `^cvt\.rn\.f16\.f32 `)
		mustContain(t, p, "Convert", `^cvt\.rn\.bf16\.f32 `)
		mustContain(t, p, "Convert", `^shl\.b32 %r\d+, %r\d+, 16;`)
		// h[2i], h[2i+1] is one aligned word (pack2.go; testdata/pack2.go
		// has the unaligned mov.b32 {lo, hi} form).
		mustContain(t, p, "Pack", `^ld\.global\.nc\.u32 `)
		if k := kernelOf(t, p, "Scalars"); k.Params[0].PTX[0].Type.String() != "u16" || k.Params[1].PTX[0].Type.String() != "u16" {
			t.Errorf("Scalars: Half and BFloat16 params are not .u16: %+v", k.Params)
		}
	}
	goldenChecks["tensor"] = func(t *testing.T, p *Package) {
		mustContain(t, p, "MMA", `^mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, \{%r\d+, %r\d+\}, \{%f\d+, %f\d+, %f\d+, %f\d+\};`)
		mustContain(t, p, "MMA", `^mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32 `)
		mustContain(t, p, "MMA", `^mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32 `)
		for _, re := range []string{`\.x1\.shared\.b16 \{%r\d+\}`, `\.x2\.shared\.b16 `, `\.x4\.shared\.b16 `, `\.x1\.trans\.shared\.b16 `, `\.x2\.trans\.shared\.b16 `, `\.x4\.trans\.shared\.b16 `} {
			mustContain(t, p, "LdMatrix", `^ldmatrix\.sync\.aligned\.m8n8`+re)
		}
		// 16-byte copies bypass L1 (.cg); smaller ones may not.
		mustContain(t, p, "CpAsync", `^cp\.async\.cg\.shared\.global \[%rd\d+\], \[%rd\d+\], 16;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.ca\.shared\.global \[%rd\d+\], \[%rd\d+\], 8;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.ca\.shared\.global \[%rd\d+\], \[%rd\d+\], 4;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.cg\.shared\.global \[%rd\d+\], \[%rd\d+\], 16, %r\d+;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.commit_group;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.wait_group 1;`)
		mustContain(t, p, "CpAsync", `^cp\.async\.wait_group 0;`)
		// cp.async reads x through the async path, never writing it.
		wantWrites(t, p, "CpAsync", "x=false out=true")
	}
	goldenChecks["vector"] = func(t *testing.T, p *Package) {
		mustContain(t, p, "Copy4", `^ld\.global\.nc\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}, \[%rd\d+\];`)
		mustContain(t, p, "Copy4", `^st\.global\.v4\.f32 `)
		mustContain(t, p, "Copy2", `^ld\.global\.nc\.v2\.f64 `)
		mustContain(t, p, "Copy2", `^st\.global\.v2\.f64 `)
		mustContain(t, p, "Copy2", `^ld\.global\.v4\.u16 `)
		// Each vector access checks its first and last element.
		if n := len(kernelOf(t, p, "Copy4").Sites); n != 4 {
			t.Errorf("Copy4: %d check sites, want 4", n)
		}
	}
	goldenChecks["hoist"] = func(t *testing.T, p *Package) {
		for k, want := range map[string][2]int{"Strided": {2, 1}, "Tiles": {3, 1}, "StoreFirst": {1, 1}, "Conditional": {0, 2}} {
			// {hoisted, kept}: out[t.GlobalX()] and x[j+off] keep theirs.
			c := kernelOf(t, p, k).Checks
			if c.Hoisted != want[0] || c.Kept != want[1] {
				t.Errorf("%s: %d checks hoisted, %d kept (%v), want %d and %d", k, c.Hoisted, c.Kept, c.KeptAt, want[0], want[1])
			}
		}
		for _, k := range []string{"Strided", "Tiles", "StoreFirst"} {
			mustContain(t, p, k, `^min\.s64 `)
		}
		for _, k := range []string{"Strided", "StoreFirst"} {
			mustContain(t, p, k, `^\$L\d+_hoisted_fault:`)
		}
		// Tiles's loop is pure (hoist_pure.go): the entry edge decides the
		// fault and the loop tests k0 < k; the others test the limit.
		mustContain(t, p, "Tiles", `^\$L\d+_hoisted_early:`)
		for _, k := range []string{"Strided", "StoreFirst"} {
			mustNotContain(t, p, k, `hoisted_early`)
		}
		// Tiles's two pointers step by 8 floats on the back edge.
		mustContain(t, p, "Tiles", `^add\.s64 %rd\d+, %rd\d+, 32;`)
		if sites := kernelOf(t, p, "StoreFirst").Sites; len(sites) != 2 || sites[0] != "hoist.go:45:6" || sites[1] != "hoist.go:46:6" {
			t.Errorf("StoreFirst: sites %q, want the hoisted out[j] (in the cold block the header lowers) and the kept out[j+off]", sites)
		}
	}
	goldenChecks["bounds"] = func(t *testing.T, p *Package) {
		for _, k := range []string{"Guarded", "EarlyReturn", "RangeLoop", "NoBounds"} {
			if sites := kernelOf(t, p, k).Sites; len(sites) != 0 {
				t.Errorf("%s: check sites %q, want none", k, sites)
			}
			mustNotContain(t, p, k, `kern_error`)
		}
		for k, want := range map[string]int{"Unguarded": 3, "WrongSlice": 1, "Signed": 1} {
			if sites := kernelOf(t, p, k).Sites; len(sites) != want {
				t.Errorf("%s: check sites %q, want %d", k, sites, want)
			}
			mustContain(t, p, k, `^atom\.global\.cas\.b32 %r\d+, \[kern_error\], 0, %r\d+;`)
		}
		if k := kernelOf(t, p, "NoBounds"); k.Bounds {
			t.Errorf("NoBounds: Kernel.Bounds is true")
		}
		if k := kernelOf(t, p, "Guarded"); !k.Bounds {
			t.Errorf("Guarded: Kernel.Bounds is false")
		}
		if sites := kernelOf(t, p, "WrongSlice").Sites; len(sites) == 1 && sites[0] != "bounds.go:55:6" {
			t.Errorf("WrongSlice: check at %s, want the store to out at bounds.go:55:6", sites[0])
		}
		if sites := kernelOf(t, p, "Panic").Sites; len(sites) != 1 || sites[0] != "panic at bounds.go:83:8: empty input" {
			t.Errorf("Panic: sites %q, want [panic at bounds.go:83:8: empty input]", sites)
		}
		mustContain(t, p, "Panic", `kern_error`)
	}
	goldenChecks["unroll"] = func(t *testing.T, p *Package) {
		mustNotContain(t, p, "Dot8", `\.local`)
		mustNotContain(t, p, "Nested", `\.local`)
		mustNotContain(t, p, "NestedRange", `\.local`)
		mustNotContain(t, p, "PastEnd", `\.local`)
		// a[4] and a[5]: two sites that fail whenever they run.
		if sites := kernelOf(t, p, "PastEnd").Sites; len(sites) != 2 {
			t.Errorf("PastEnd: check sites %q, want 2 (a[4], a[5])", sites)
		}
		mustContain(t, p, "NotUnrolled", `^ld\.local\.f32 `)
		// Unrolled: eight multiplies and no loop back edge.
		if n := countLines(entryBody(t, p, "Dot8"), `^mul\.rn\.f32 `); n != 8 {
			t.Errorf("Dot8: %d mul.rn.f32, want 8", n)
		}
		mustNotContain(t, p, "Dot8", `^setp\.lt\.s64 %p\d+, %rd\d+, 8;`)
	}
	reportChecks["unroll"] = func(t *testing.T, p *Package, rep *ptxas.Report) {
		for _, k := range []string{"Dot8", "Nested", "NestedRange", "PastEnd"} {
			if f := rep.Func(k); f != nil && f.StackFrame != 0 {
				t.Errorf("%s: %s is unrolled into registers but has a %d-byte stack frame", rep.Arch, k, f.StackFrame)
			}
		}
	}
	goldenChecks["directive"] = func(t *testing.T, p *Package) {
		for k, want := range map[string][3]int{"Block2D": {16, 16, 1}, "Block3D": {8, 8, 4}, "BlockMax": {1024, 1, 1}, "NoBlock": {}} {
			if got := kernelOf(t, p, k).Block; got != want {
				t.Errorf("%s: Block = %v, want %v", k, got, want)
			}
		}
		mustContain(t, p, "Block2D", `^\.maxntid 16, 16, 1$`)
		mustContain(t, p, "Block3D", `^\.maxntid 8, 8, 4$`)
		mustContain(t, p, "BlockMax", `^\.maxntid 1024, 1, 1$`)
		mustNotContain(t, p, "NoBlock", `\.maxntid`)
		if k := kernelOf(t, p, "BlockMax"); k.Bounds {
			t.Errorf("BlockMax: nobounds not applied")
		}
		mustContain(t, p, "Block3D", `%tid\.z`)
		mustContain(t, p, "Block3D", `%nctaid\.y`)
	}
	goldenChecks["writes"] = func(t *testing.T, p *Package) {
		wantWrites(t, p, "ThroughHelper", "x=false out=true")
		wantWrites(t, p, "ThroughReslice", "x=false out=true")
		wantWrites(t, p, "ThroughPointer", "x=false out=true")
		wantWrites(t, p, "LenOnly", "n=false out=true")
		if got := writes(kernelOf(t, p, "EitherOf")); got != "a=true b=true" {
			t.Errorf("EitherOf: slice Writes flags %s, want a=true b=true", got)
		}
		wantWrites(t, p, "InPlace", "x=true")
		mustContain(t, p, "ThroughHelper", `^ld\.global\.nc\.f32 `)
		mustContain(t, p, "InPlace", `^ld\.global\.f32 `)
		mustNotContain(t, p, "InPlace", `^ld\.global\.nc`)
	}
	goldenChecks["uniform"] = func(t *testing.T, p *Package) {
		for _, k := range []string{"AfterHelperReturn", "UnderBlockSum", "UnderParams"} {
			mustContain(t, p, k, `^bar\.sync 0;`)
		}
		mustContain(t, p, "UnderVote", `^shfl\.sync\.bfly\.b32 `)
	}
}
