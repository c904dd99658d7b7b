// Constants: typed and untyped, large, negative, float bit patterns, iota.
package consts

import "github.com/gokern/kern/gpu"

const (
	scale    = 1.0 / 3.0
	big      = 1 << 40
	maskHigh = 0xffffffff00000000
)

type mode int32

const (
	modeA mode = iota
	modeB
	modeC
)

//kern:kernel
func Consts(t gpu.Thread, f []float32, d []float64, i []int64, u []uint64, m []int32) {
	k := t.GlobalX()
	if k < len(f) && k < len(d) && k < len(i) && k < len(u) && k < len(m) {
		f[k] = f[k]*scale + 1e-30 - 3.4e38 + 0.1
		d[k] = d[k]*scale + 1e-300 - 1.7e308 + 0.1
		i[k] = i[k] + big - 1<<62 - -9223372036854775808
		u[k] = u[k]&maskHigh | 1<<63 | 0xdeadbeef
		m[k] = int32(modeC) - int32(modeB)*m[k] + -2147483648
	}
}

//kern:kernel
func SpecialFloats(t gpu.Thread, f []float32) {
	k := t.GlobalX()
	if k < len(f) {
		var zero float32
		f[k] = f[k]*0 + 1/zero - -1/zero + zero/zero + -zero
	}
}
