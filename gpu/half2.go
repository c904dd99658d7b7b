package gpu

// Packed 16-bit float arithmetic: two halves (or two bfloat16) in one
// 32-bit register, one instruction for both lanes (PTX ISA §9.7.4, "Half
// Precision Floating-Point Instructions": add, sub, mul, fma on .f16x2 and
// .bf16x2; SASS HADD2, HMUL2, HFMA2 and HFMA2.BF16). Each lane is rounded
// once to nearest even, subnormals are kept (no .ftz), and a NaN result is
// the canonical NaN 0x7fff. On sm_80 the bf16x2 forms other than fma need
// sm_90, so Add2, Sub2 and Mul2 on BFloat162 are lowered to fma.rn.bf16x2
// with 1 or -0 as an operand, which rounds the same exact value once.

// Half2 is two Halfs in one 32-bit register (PTX .f16x2): the low lane in
// bits 0..15, the high lane in bits 16..31, as PackHalf2 packs them.
type Half2 uint32

// BFloat162 is two BFloat16 values in one 32-bit register (PTX .bf16x2),
// laid out as Half2.
type BFloat162 uint32

// Packed16 is the constraint of the packed arithmetic: Half2 or BFloat162.
type Packed16 interface{ Half2 | BFloat162 }

// FMA2 returns a*b+c in each lane, rounded once (fma.rn.f16x2,
// fma.rn.bf16x2; sm_80 for bf16x2).
func FMA2[T Packed16](a, b, c T) T { return T(fma2(uint32(a), uint32(b), uint32(c), isBF162(a))) }

// Mul2 returns a*b in each lane (mul.rn.f16x2; fma.rn.bf16x2 a, b, -0).
func Mul2[T Packed16](a, b T) T {
	return T(fma2(uint32(a), uint32(b), 0x80008000, isBF162(a)))
}

// Add2 returns a+b in each lane (add.rn.f16x2; fma.rn.bf16x2 a, 1, b).
func Add2[T Packed16](a, b T) T { return T(fma2(uint32(a), one2(isBF162(a)), uint32(b), isBF162(a))) }

// Sub2 returns a-b in each lane (sub.rn.f16x2; fma.rn.bf16x2 b, -1, a).
func Sub2[T Packed16](a, b T) T {
	return T(fma2(uint32(b), one2(isBF162(a))|0x80008000, uint32(a), isBF162(a)))
}

// Prmt picks four bytes out of the eight of b:a (a is bytes 0..3, b bytes
// 4..7): byte i of the result is byte sel>>(4i)&7 of them, or, when bit
// sel>>(4i)&8 is set, that byte's sign bit copied into all eight bits
// (prmt.b32 in its default mode, PTX ISA §9.7.8.7; SASS PRMT).
func Prmt(a, b, sel uint32) uint32 {
	src := uint64(a) | uint64(b)<<32
	var d uint32
	for i := range 4 {
		s := sel >> (4 * i) & 15
		byt := uint32(src>>(8*(s&7))) & 0xff
		if s&8 != 0 {
			byt = 0
			if src>>(8*(s&7)+7)&1 != 0 {
				byt = 0xff
			}
		}
		d |= byt << (8 * i)
	}
	return d
}
