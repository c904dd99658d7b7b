package gpu

import "math"

// Float32Bits returns the IEEE 754 bits of f (mov.b32); Float32FromBits is
// its inverse. They are math.Float32bits and math.Float32frombits, which
// kernels may also call directly.
func Float32Bits(f float32) uint32 { return math.Float32bits(f) }

// Float32FromBits returns the float32 whose IEEE 754 bits are b.
func Float32FromBits(b uint32) float32 { return math.Float32frombits(b) }
