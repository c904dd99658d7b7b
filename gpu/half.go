package gpu

// Half is an IEEE 754 binary16 value stored in its 16 bits (PTX .f16).
type Half uint16

// BFloat16 is a bfloat16 value stored in its 16 bits (PTX .bf16): the top
// half of a float32.
type BFloat16 uint16

// Float32 converts h exactly (cvt.f32.f16).
func (h Half) Float32() float32 { return halfToFloat32(uint16(h)) }

// Float32 converts b exactly (its bits shifted into a float32's top half).
func (b BFloat16) Float32() float32 { return bf16ToFloat32(uint16(b)) }

// ToHalf rounds f to the nearest Half, ties to even (cvt.rn.f16.f32);
// overflow gives ±Inf.
func ToHalf(f float32) Half { return Half(float32ToHalf(f)) }

// ToBFloat16 rounds f to the nearest BFloat16, ties to even
// (cvt.rn.bf16.f32); NaN stays NaN.
func ToBFloat16(f float32) BFloat16 { return BFloat16(float32ToBF16(f)) }

// PackHalf2 packs two halves into the 32-bit register layout tensor-core
// fragments use: lo in bits 0..15, hi in bits 16..31.
func PackHalf2(lo, hi Half) uint32 { return uint32(lo) | uint32(hi)<<16 }

// PackBFloat162 packs two bfloat16 values as PackHalf2 does.
func PackBFloat162(lo, hi BFloat16) uint32 { return uint32(lo) | uint32(hi)<<16 }
