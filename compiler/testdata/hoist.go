// Hoisted bounds checks (hoist.go): a counted loop's checks of x[iv+b+c]
// become one limit on the loop, computed before it, with a cold block
// that reports the access the next iteration would fault on; groups
// with an invariant b also walk a pointer (hoist_sr.go).
package hoist

import "github.com/gokern/kern/gpu"

// Strided: w[j] and s[j-off] are hoisted (s's length is a constant; b =
// 0 keeps w[j]'s address j's, b = -off walks a pointer).
//
//kern:kernel block=128
func Strided(t gpu.Thread, w, out []float32, n, off int) {
	s := gpu.Shared[float32](t, 256)
	acc := float32(0)
	for j := t.ThreadIdx().X; j < n; j += t.BlockDim().X {
		acc += w[j] + s[j-off]
	}
	out[t.GlobalX()] = acc
}

// Tiles: three accesses in two groups (b = row*k + tg, and b + k), each
// walked by a pointer advanced 8 elements per iteration. The loop only
// loads and adds, so it is pure (hoist_pure.go): the entry edge jumps to
// the cold block when some iteration would fault, and the loop tests
// k0 < k.
//
//kern:kernel block=32
func Tiles(t gpu.Thread, a, out []float32, k int) {
	row, tg := t.BlockIdx().X, t.Lane()%4
	acc := float32(0)
	for k0 := 0; k0 < k; k0 += 8 {
		i := row*k + k0 + tg
		acc += a[i] + a[i+4] + a[i+k]
	}
	out[t.GlobalX()] = acc
}

// StoreFirst: out[j] is hoisted, but the store through it is observable,
// so out[j+off] after it keeps its check.
//
//kern:kernel block=64
func StoreFirst(t gpu.Thread, out []float32, off, n int) {
	for j := t.ThreadIdx().X; j < n; j += 64 {
		out[j] = 1
		out[j+off] = 2
	}
}

// Conditional: x[j] runs only in some iterations, so it is not hoisted.
//
//kern:kernel block=64
func Conditional(t gpu.Thread, x, out []float32, n int) {
	acc := float32(0)
	for j := 0; j < n; j++ {
		if j%3 == 0 {
			acc += x[j]
		}
	}
	out[t.GlobalX()] = acc
}
