package emu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// aluCase is one instruction checked by TestALU: setup and op run in a
// single thread, then the register res is stored and compared with want.
type aluCase struct {
	setup string // instructions preparing the operands
	op    string // the instruction under test
	res   string // result register: %r*, %rd*, %rs*, %f*, %fd* or %p*
	want  uint64
}

func f32c(f float32) uint64 { return uint64(math.Float32bits(f)) }

var aluCases = []aluCase{
	// Shifts clamp amounts at or above the width.
	{"mov.b32 %r2, 0x80000001;", "shl.b32 %r1, %r2, 31;", "%r1", 0x80000000},
	{"mov.b32 %r2, 0x80000001;", "shl.b32 %r1, %r2, 32;", "%r1", 0},
	{"mov.b32 %r2, 0x80000001; mov.b32 %r3, 1000;", "shl.b32 %r1, %r2, %r3;", "%r1", 0},
	{"mov.b32 %r2, 0x80000000;", "shr.s32 %r1, %r2, 40;", "%r1", 0xffffffff},
	{"mov.b32 %r2, 0x80000000;", "shr.u32 %r1, %r2, 40;", "%r1", 0},
	{"mov.b32 %r2, 0x80000000;", "shr.s32 %r1, %r2, 4;", "%r1", 0xf8000000},
	{"mov.b64 %rd2, 0x8000000000000000;", "shr.s64 %rd1, %rd2, 70;", "%rd1", math.MaxUint64},
	{"mov.b16 %rs2, 0x8001;", "shl.b16 %rs1, %rs2, 1;", "%rs1", 2},
	// Multiplication forms.
	{"mov.b32 %r2, 0xffffffff;", "mul.hi.u32 %r1, %r2, %r2;", "%r1", 0xfffffffe},
	{"mov.b32 %r2, -3;", "mul.hi.s32 %r1, %r2, 5;", "%r1", 0xffffffff},
	{"mov.b32 %r2, -3;", "mul.wide.s32 %rd1, %r2, 5;", "%rd1", uint64(0xfffffffffffffff1)},
	{"mov.b32 %r2, 0xffffffff;", "mul.wide.u32 %rd1, %r2, %r2;", "%rd1", 0xfffffffe00000001},
	{"mov.b64 %rd2, -1;", "mul.hi.s64 %rd1, %rd2, %rd2;", "%rd1", 0},
	{"mov.b64 %rd2, -1;", "mul.hi.u64 %rd1, %rd2, %rd2;", "%rd1", 0xfffffffffffffffe},
	{"mov.b32 %r2, 7; mov.b64 %rd2, 100;", "mad.wide.u32 %rd1, %r2, 6, %rd2;", "%rd1", 142},
	{"mov.b32 %r2, 0x7fffffff;", "add.sat.s32 %r1, %r2, 1;", "%r1", 0x7fffffff},
	{"mov.b32 %r2, 0x80000000;", "sub.sat.s32 %r1, %r2, 1;", "%r1", 0x80000000},
	// Division and remainder truncate toward zero.
	{"mov.b32 %r2, -7;", "div.s32 %r1, %r2, 2;", "%r1", uint64(uint32(0xfffffffd))},
	{"mov.b32 %r2, -7;", "rem.s32 %r1, %r2, 2;", "%r1", 0xffffffff},
	{"mov.b32 %r2, 7;", "div.u32 %r1, %r2, 0;", "%r1", 0xffffffff},
	{"mov.b32 %r2, -5;", "abs.s32 %r1, %r2;", "%r1", 5},
	{"mov.b32 %r2, -5;", "min.s32 %r1, %r2, 3;", "%r1", uint64(uint32(0xfffffffb))},
	{"mov.b32 %r2, -5;", "min.u32 %r1, %r2, 3;", "%r1", 3},
	{"mov.b32 %r2, -5;", "max.u32 %r1, %r2, 3;", "%r1", 0xfffffffb},
	// Bit manipulation.
	{"mov.b32 %r2, 0xf0f0f0f1;", "popc.b32 %r1, %r2;", "%r1", 17},
	{"mov.b64 %rd2, 0x00f0000000000000;", "clz.b64 %r1, %rd2;", "%r1", 8},
	{"mov.b32 %r2, 0;", "clz.b32 %r1, %r2;", "%r1", 32},
	{"mov.b32 %r2, 1;", "brev.b32 %r1, %r2;", "%r1", 0x80000000},
	{"mov.b32 %r2, 0x00001000;", "bfind.u32 %r1, %r2;", "%r1", 12},
	{"mov.b32 %r2, 0;", "bfind.u32 %r1, %r2;", "%r1", 0xffffffff},
	{"mov.b32 %r2, 0xABCD1234;", "bfe.u32 %r1, %r2, 8, 12;", "%r1", 0xD12},
	{"mov.b32 %r2, 0xABCD1234;", "bfe.s32 %r1, %r2, 20, 8;", "%r1", 0xffffffBC},
	{"mov.b32 %r2, 0xABCD1234;", "bfe.s32 %r1, %r2, 28, 10;", "%r1", 0xfffffffA},
	{"mov.b32 %r2, 0xABCD1234;", "bfe.u32 %r1, %r2, 8, 0;", "%r1", 0},
	{"mov.b32 %r2, 0x5; mov.b32 %r3, 0xffffffff;", "bfi.b32 %r1, %r2, %r3, 4, 3;", "%r1", 0xffffffdf},
	{"mov.b32 %r2, 0x33221100; mov.b32 %r3, 0x77665544;", "prmt.b32 %r1, %r2, %r3, 0x7531;", "%r1", 0x77553311},
	{"mov.b32 %r2, 0x33221180; mov.b32 %r3, 0x77665544;", "prmt.b32 %r1, %r2, %r3, 0x0008;", "%r1", 0x808080ff},
	{"mov.b32 %r2, 0x33221100; mov.b32 %r3, 0x77665544;", "prmt.b32.f4e %r1, %r2, %r3, 2;", "%r1", 0x55443322},
	{"mov.b32 %r2, 0x33221100; mov.b32 %r3, 0x77665544;", "prmt.b32.rc16 %r1, %r2, %r3, 1;", "%r1", 0x33223322},
	{"mov.b32 %r2, 0x80000001; mov.b32 %r3, 0x00000003;", "shf.l.wrap.b32 %r1, %r2, %r3, 33;", "%r1", 0x00000007},
	{"mov.b32 %r2, 0x80000001; mov.b32 %r3, 0x00000003;", "shf.r.clamp.b32 %r1, %r2, %r3, 40;", "%r1", 3},
	// Comparisons: unsigned and unordered forms, combining predicates.
	{"mov.b32 %r2, -1;", "setp.lo.u32 %p1, %r2, 1;", "%p1", 0},
	{"mov.b32 %r2, -1;", "setp.lt.s32 %p1, %r2, 1;", "%p1", 1},
	{"mov.b32 %r2, -1;", "setp.hs.u32 %p1, %r2, 1;", "%p1", 1},
	{"mov.b32 %r2, -1;", "setp.hi.u32 %p1, %r2, 1;", "%p1", 1},
	{"mov.b32 %r2, 1;", "setp.ls.u32 %p1, %r2, 1;", "%p1", 1},
	{"mov.f32 %f2, 0f7FC00000;", "setp.ltu.f32 %p1, %f2, 0f3F800000;", "%p1", 1},
	{"mov.f32 %f2, 0f7FC00000;", "setp.lt.f32 %p1, %f2, 0f3F800000;", "%p1", 0},
	{"mov.f32 %f2, 0f7FC00000;", "setp.ne.f32 %p1, %f2, 0f3F800000;", "%p1", 0},
	{"mov.f32 %f2, 0f7FC00000;", "setp.neu.f32 %p1, %f2, 0f3F800000;", "%p1", 1},
	{"mov.f32 %f2, 0f7FC00000;", "setp.nan.f32 %p1, %f2, 0f3F800000;", "%p1", 1},
	{"mov.f32 %f2, 0f3F800000;", "setp.num.f32 %p1, %f2, 0f3F800000;", "%p1", 1},
	{"mov.pred %p3, 0;", "setp.eq.or.s32 %p1, 1, 1, %p3;", "%p1", 1},
	{"mov.pred %p3, 0;", "setp.eq.and.s32 %p1|%p2, 1, 2, !%p3;", "%p2", 1},
	{"mov.f64 %fd2, 0d7FF8000000000000;", "setp.geu.f64 %p1, %fd2, 0d0000000000000000;", "%p1", 1},
	{"mov.pred %p2, 1;", "selp.b32 %r1, 10, 20, %p2;", "%r1", 10},
	{"mov.pred %p2, 1;", "not.pred %p1, %p2;", "%p1", 0},
	{"mov.pred %p2, 1; mov.pred %p3, 0;", "xor.pred %p1, %p2, %p3;", "%p1", 1},
	{"mov.b32 %r2, 5;", "set.gt.u32.s32 %r1, %r2, 3;", "%r1", 0xffffffff},
	// Float min/max: NaN operands are ignored unless .NaN; -0 < +0.
	{"mov.f32 %f2, 0f7FC00000;", "min.f32 %f1, %f2, 0f40000000;", "%f1", f32c(2)},
	{"mov.f32 %f2, 0f7FC00000;", "min.NaN.f32 %f1, %f2, 0f40000000;", "%f1", canonNaN32},
	{"mov.f32 %f2, 0f80000000;", "max.f32 %f1, %f2, 0f00000000;", "%f1", 0},
	{"mov.f32 %f2, 0f80000000;", "min.f32 %f1, %f2, 0f00000000;", "%f1", 0x80000000},
	// Float arithmetic modifiers.
	{"mov.f32 %f2, 0f3F800000;", "add.sat.f32 %f1, %f2, 0f3F800000;", "%f1", f32c(1)},
	{"mov.f32 %f2, 0f00000001;", "add.ftz.f32 %f1, %f2, 0f00000001;", "%f1", 0},
	{"mov.f32 %f2, 0f00000001;", "add.f32 %f1, %f2, 0f00000001;", "%f1", 2},
	{"mov.f32 %f2, 0f3F800000;", "add.rp.f32 %f1, %f2, 0f33800000;", "%f1", f32c(1 + 0x1p-23)},
	{"mov.f32 %f2, 0f3F800000;", "add.rn.f32 %f1, %f2, 0f33800000;", "%f1", f32c(1)},
	{"mov.f32 %f2, 0fC0000000;", "sqrt.rn.f32 %f1, %f2;", "%f1", canonNaN32},
	{"mov.f32 %f2, 0f40800000;", "rsqrt.approx.f32 %f1, %f2;", "%f1", f32c(0.5)},
	{"mov.f32 %f2, 0f40400000;", "ex2.approx.ftz.f32 %f1, %f2;", "%f1", f32c(8)},
	{"mov.f32 %f2, 0f41000000;", "lg2.approx.f32 %f1, %f2;", "%f1", f32c(3)},
	{"mov.f32 %f2, 0f40400000;", "rcp.rn.f32 %f1, %f2;", "%f1", f32c(1.0 / 3)},
	{"mov.f32 %f2, 0f3F800000;", "sin.approx.f32 %f1, %f2;", "%f1", f32c(float32(math.Sin(1)))},
	{"mov.f32 %f2, 0f3F800000;", "cos.approx.ftz.f32 %f1, %f2;", "%f1", f32c(float32(math.Cos(1)))},
	{"mov.f32 %f2, 0f3F800000;", "tanh.approx.f32 %f1, %f2;", "%f1", f32c(float32(math.Tanh(1)))},
	{"mov.f32 %f2, 0f40400000;", "div.approx.f32 %f1, 0f3F800000, %f2;", "%f1", f32c(1.0 / 3)},
	{"mov.f32 %f2, 0f40800000;", "sqrt.approx.f32 %f1, %f2;", "%f1", f32c(2)},
	{"mov.f32 %f2, 0f00000000;", "lg2.approx.f32 %f1, %f2;", "%f1", f32c(float32(math.Inf(-1)))},
	{"mov.f32 %f2, 0f40000000;", "rcp.approx.ftz.f32 %f1, %f2;", "%f1", f32c(0.5)},
	{"mov.f32 %f2, 0f40400000;", "div.full.f32 %f1, 0f3F800000, %f2;", "%f1", f32c(1.0 / 3)},
	{"mov.f32 %f2, 0f40400000;", "div.rz.f32 %f1, 0f3F800000, %f2;", "%f1", f32c(1.0/3) - 1},
	{"mov.f32 %f2, 0f40400000;", "div.rp.f32 %f1, 0f3F800000, %f2;", "%f1", f32c(1.0 / 3)},
	{"mov.f32 %f2, 0fBF800000;", "copysign.f32 %f1, %f2, 0f40000000;", "%f1", f32c(-2)},
	{"mov.f32 %f2, 0fBF800000;", "abs.f32 %f1, %f2;", "%f1", f32c(1)},
	{"mov.f32 %f2, 0f7F800000;", "testp.infinite.f32 %p1, %f2;", "%p1", 1},
	{"mov.f32 %f2, 0f00000010;", "testp.subnormal.f32 %p1, %f2;", "%p1", 1},
	{"mov.f64 %fd2, 0d3FF0000000000000;", "fma.rn.f64 %fd1, %fd2, %fd2, 0d3FF0000000000000;", "%fd1", math.Float64bits(2)},
	{"mov.f64 %fd2, 0d4000000000000000;", "sqrt.rn.f64 %fd1, %fd2;", "%fd1", math.Float64bits(math.Sqrt2)},
	{"mov.f64 %fd2, 0d3FF0000000000000;", "neg.f64 %fd1, %fd2;", "%fd1", math.Float64bits(-1)},
	// Half precision.
	{"mov.b16 %rs2, 0x3C00;", "add.f16 %rs1, %rs2, %rs2;", "%rs1", 0x4000},
	{"mov.b16 %rs2, 0x3C00; mov.b16 %rs3, 0x4000;", "fma.rn.f16 %rs1, %rs2, %rs3, %rs3;", "%rs1", 0x4400},
	{"mov.b32 %r2, 0x40003C00;", "mul.f16x2 %r1, %r2, %r2;", "%r1", 0x44003C00},
	{"mov.b32 %r2, 0x3F803F80;", "fma.rn.bf16x2 %r1, %r2, %r2, %r2;", "%r1", 0x40004000},
	{"mov.f32 %f2, 0f3F800000; mov.f32 %f3, 0f40000000;", "cvt.rn.f16x2.f32 %r1, %f3, %f2;", "%r1", 0x40003C00},
	{"mov.b16 %rs2, 0x3C00;", "neg.f16 %rs1, %rs2;", "%rs1", 0xBC00},
	// Moves: pack and unpack, special registers, sign extension.
	{"mov.b32 %r2, 0x11112222; mov.b32 %r3, 0x33334444;", "mov.b64 %rd1, {%r2, %r3};", "%rd1", 0x3333444411112222},
	{"mov.b64 %rd2, 0x3333444411112222;", "mov.b64 {%r2, %r1}, %rd2;", "%r1", 0x33334444},
	{"mov.b16 %rs2, 0x1234; mov.b16 %rs3, 0xABCD;", "mov.b32 %r1, {%rs2, %rs3};", "%r1", 0xABCD1234},
	{"", "mov.u32 %r1, %nctaid.x;", "%r1", 1},
	{"", "mov.u32 %r1, %lanemask_lt;", "%r1", 0},
	{"mov.b32 %r2, -2;", "cvt.s64.s32 %rd1, %r2;", "%rd1", math.MaxUint64 - 1},
	{"mov.b32 %r2, -2;", "cvt.u64.u32 %rd1, %r2;", "%rd1", 0xfffffffe},
	{"mov.b64 %rd2, 0x1ffffffff;", "cvt.u32.u64 %r1, %rd2;", "%r1", 0xffffffff},
	{"mov.b64 %rd2, 0x1ffffffff;", "cvt.sat.u32.u64 %r1, %rd2;", "%r1", 0xffffffff},
	{"mov.b64 %rd2, -5;", "cvt.sat.u32.s64 %r1, %rd2;", "%r1", 0},
	{"mov.b64 %rd2, 0x8000000000;", "cvt.sat.s32.s64 %r1, %rd2;", "%r1", 0x7fffffff},
	{"mov.b32 %r2, 0x81;", "cvt.s8.s32 %rs1, %r2;", "%rs1", 0xff81},
}

// aluKernel assembles the cases into one single-thread kernel that stores
// case i's result at out[8i].
func aluKernel(cases []aluCase) string {
	var b strings.Builder
	b.WriteString(`.version 7.0
.target sm_80
.address_size 64

.visible .entry alu(
	.param .u64 out_ptr
)
{
	.reg .pred %p<4>;
	.reg .b16 %rs<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<4>;
	.reg .f64 %fd<4>;
	.reg .b64 %out;

	ld.param.u64 %out, [out_ptr];
`)
	for i, c := range cases {
		fmt.Fprintf(&b, "\t// case %d\n\t%s\n\t%s\n", i, c.setup, c.op)
		st := map[byte]string{'r': "u32", 'f': "f32", 's': "u16"}
		switch {
		case strings.HasPrefix(c.res, "%rd"):
			fmt.Fprintf(&b, "\tst.global.u64 [%%out+%d], %s;\n", 8*i, c.res)
		case strings.HasPrefix(c.res, "%fd"):
			fmt.Fprintf(&b, "\tst.global.f64 [%%out+%d], %s;\n", 8*i, c.res)
		case strings.HasPrefix(c.res, "%rs"):
			fmt.Fprintf(&b, "\tst.global.u16 [%%out+%d], %s;\n", 8*i, c.res)
		case strings.HasPrefix(c.res, "%p"):
			fmt.Fprintf(&b, "\tselp.u32 %%r15, 1, 0, %s;\n\tst.global.u32 [%%out+%d], %%r15;\n", c.res, 8*i)
		default:
			fmt.Fprintf(&b, "\tst.global.%s [%%out+%d], %s;\n", st[c.res[1]], 8*i, c.res)
		}
	}
	b.WriteString("\tret;\n}\n")
	return b.String()
}

func TestALU(t *testing.T) {
	src := aluKernel(aluCases)
	m, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{})
	n := len(aluCases)
	pout := upload(t, d, make([]byte, 8*n))
	if err := d.Launch(m, "alu", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := download(t, d, pout, 8*n)
	for i, c := range aluCases {
		if got := loadLE(out[8*i:], 8); got != c.want {
			t.Errorf("case %d: %s %s -> %s = %#x, want %#x", i, c.setup, c.op, c.res, got, c.want)
		}
	}
}

func TestALUAssembles(t *testing.T) {
	ptxas.Check(t, "alu.ptx", []byte(aluKernel(aluCases)), "sm_80")
}
