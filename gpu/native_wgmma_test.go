package gpu_test

// Native-mode wgmma against a float64 reference, for every swizzle mode,
// N = 64 and 128, f16 and bf16, descriptor and register A.

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gokern/kern/gpu"
)

// wgLayout is a K-major 16-bit operand layout of rows×16 elements.
type wgLayout struct {
	sw       gpu.Swizzle
	lbo, sbo int
}

// layoutFor packs 8-row groups densely: without swizzle the two core
// matrices of a group's 16 k-values are 128 bytes apart (lbo) and groups
// 256 bytes (sbo); with a swizzle of W bytes a group is 8W bytes.
func layoutFor(sw gpu.Swizzle) wgLayout {
	if sw == gpu.SwizzleNone {
		return wgLayout{sw, 128, 256}
	}
	return wgLayout{sw, 0, 8 * sw.Bytes()}
}

func (l wgLayout) desc() uint64 { return gpu.EncodeWGMMADesc(0, l.lbo, l.sbo, l.sw) }

// bytes is the size of a rows-row tile.
func (l wgLayout) bytes(rows int) int { return rows / 8 * l.sbo }

func TestWGMMANative(t *testing.T) {
	for _, sw := range []gpu.Swizzle{gpu.SwizzleNone, gpu.Swizzle32B, gpu.Swizzle64B, gpu.Swizzle128B} {
		for _, n := range []int{64, 128} {
			for _, bf := range []bool{false, true} {
				for _, regA := range []bool{false, true} {
					t.Run(fmt.Sprintf("sw%d/n%d/bf%v/regA%v", sw.Bytes(), n, bf, regA), func(t *testing.T) {
						testWGMMANative(t, sw, n, bf, regA)
					})
				}
			}
		}
	}
}

func testWGMMANative(t *testing.T, sw gpu.Swizzle, n int, bf, regA bool) {
	r := rand.New(rand.NewSource(int64(n) + int64(sw)))
	const m, k = 64, 16
	enc := func(f float32) uint16 {
		if bf {
			return uint16(gpu.ToBFloat16(f))
		}
		return uint16(gpu.ToHalf(f))
	}
	dec := func(h uint16) float64 {
		if bf {
			return float64(gpu.BFloat16(h).Float32())
		}
		return float64(gpu.Half(h).Float32())
	}
	A := make([]uint16, m*k) // row-major m×k
	B := make([]uint16, n*k) // row-major n×k (B^T)
	C := make([]float32, m*n)
	for i := range A {
		A[i] = enc(float32(r.Intn(17)-8) / 8)
	}
	for i := range B {
		B[i] = enc(float32(r.Intn(17)-8) / 4)
	}
	for i := range C {
		C[i] = float32(r.Intn(9) - 4)
	}
	lay := layoutFor(sw)
	out := make([]float32, m*n)
	err := gpu.RunNative(d3(1, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
		tid := th.ThreadIdx().X
		sa := gpu.Shared[uint16](th, 8192/2) // 64 rows in 8 groups of up to 1024 bytes
		sb := gpu.Shared[uint16](th, 16384/2)
		for i := tid; i < m*k; i += 128 {
			sa[gpu.WGMMAElemOffset(lay.desc(), i/k, i%k)/2] = A[i]
		}
		for i := tid; i < n*k; i += 128 {
			sb[gpu.WGMMAElemOffset(lay.desc(), i/k, i%k)/2] = B[i]
		}
		gpu.FenceProxyAsync(th)
		th.Sync()
		da := gpu.WGMMADesc(th, &sa[0], lay.lbo, lay.sbo, sw)
		db := gpu.WGMMADesc(th, &sb[0], lay.lbo, lay.sbo, sw)
		w, lane := tid/32, tid%32
		g, q := lane/4, lane%4
		var ar [4]uint32
		for i := range 4 {
			row := 16*w + g + 8*(i%2)
			col := 2*q + 8*(i/2)
			ar[i] = uint32(A[row*k+col]) | uint32(A[row*k+col+1])<<16
		}
		store := func(acc []float32) {
			for j := range n / 8 {
				for i := range 4 {
					out[(16*w+g+8*(i/2))*n+8*j+2*q+i%2] = acc[4*j+i]
				}
			}
		}
		load := func(acc []float32) {
			for j := range n / 8 {
				for i := range 4 {
					acc[4*j+i] = C[(16*w+g+8*(i/2))*n+8*j+2*q+i%2]
				}
			}
		}
		gpu.WGMMAFence(th)
		switch n {
		case 64:
			var acc [32]float32
			load(acc[:])
			switch {
			case regA && bf:
				gpu.WGMMABF16RegA(th, &acc, ar, db, true)
			case regA:
				gpu.WGMMAF16RegA(th, &acc, ar, db, true)
			case bf:
				gpu.WGMMABF16(th, &acc, da, db, true)
			default:
				gpu.WGMMAF16(th, &acc, da, db, true)
			}
			store(acc[:])
		case 128:
			var acc [64]float32
			load(acc[:])
			switch {
			case regA && bf:
				gpu.WGMMABF16RegA(th, &acc, ar, db, true)
			case regA:
				gpu.WGMMAF16RegA(th, &acc, ar, db, true)
			case bf:
				gpu.WGMMABF16(th, &acc, da, db, true)
			default:
				gpu.WGMMAF16(th, &acc, da, db, true)
			}
			store(acc[:])
		}
		gpu.WGMMACommitGroup(th)
		gpu.WGMMAWaitGroup(th, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Inputs are multiples of 1/8 and 1/4 with few bits: every product and
	// partial sum is exact in float32, so the comparison is exact.
	for i := range m {
		for j := range n {
			want := float64(C[i*n+j])
			for kk := range k {
				want += dec(A[i*k+kk]) * dec(B[j*k+kk])
			}
			if got := float64(out[i*n+j]); math.Abs(got-want) > 0 {
				t.Fatalf("D[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}
