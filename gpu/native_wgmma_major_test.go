package gpu_test

// Native-mode wgmma with MN-major (transposed) operands against a float64
// reference: every swizzle mode, each operand K- or MN-major, register A
// with an MN-major B (attention's P·V), N = 64 and 128.

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gokern/kern/gpu"
)

// mnLayout is the MN-major layout of an operand with mn values along
// M or N and 16 along K. kFirst packs the two 8-k groups of an MN block
// next to each other (the step along K is the smaller offset); otherwise
// the MN blocks of one k group come first. Both orders are legal, and
// testing both checks that lbo and sbo are not swapped.
func mnLayout(sw gpu.Swizzle, mn int, kFirst bool) (lbo, sbo int) {
	if sw == gpu.SwizzleNone { // core matrix 8 k × 8 mn = 128 bytes; sbo along MN, lbo along K
		if kFirst {
			return 128, 256
		}
		return mn / 8 * 128, 128
	}
	w := sw.Bytes() // atom: 8 k-rows of W bytes; lbo along MN, sbo along K
	blocks := max(1, mn/(w/2))
	if kFirst {
		return 16 * w, 8 * w
	}
	return 8 * w, blocks * 8 * w
}

func TestWGMMANativeMNMajor(t *testing.T) {
	for _, sw := range []gpu.Swizzle{gpu.SwizzleNone, gpu.Swizzle32B, gpu.Swizzle64B, gpu.Swizzle128B} {
		for _, c := range []struct {
			n        int
			am, bm   gpu.Major
			regA, bf bool
			kFirst   bool
		}{
			{64, gpu.MNMajor, gpu.MNMajor, false, false, true},
			{128, gpu.KMajor, gpu.MNMajor, false, true, false},
			{128, gpu.MNMajor, gpu.KMajor, false, false, false},
			{64, gpu.KMajor, gpu.MNMajor, true, false, true},
			{128, gpu.KMajor, gpu.MNMajor, true, true, false},
		} {
			t.Run(fmt.Sprintf("sw%d/n%d/a%d/b%d/regA%v", sw.Bytes(), c.n, c.am, c.bm, c.regA), func(t *testing.T) {
				testWGMMANativeMajor(t, sw, c.n, c.am, c.bm, c.regA, c.bf, c.kFirst)
			})
		}
	}
}

func testWGMMANativeMajor(t *testing.T, sw gpu.Swizzle, n int, am, bm gpu.Major, regA, bf, kFirst bool) {
	r := rand.New(rand.NewSource(int64(n) + 10*int64(sw) + int64(am)))
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
	A := make([]uint16, m*k) // A[i*k+kk]
	B := make([]uint16, n*k) // B[j*k+kk]: column j of B
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
	layout := func(major gpu.Major, mn int, kFirst bool) (int, int) {
		if major == gpu.KMajor {
			l := layoutFor(sw)
			return l.lbo, l.sbo
		}
		return mnLayout(sw, mn, kFirst)
	}
	alb, asb := layout(am, m, kFirst)
	blb, bsb := layout(bm, n, !kFirst)
	aDesc := gpu.EncodeWGMMADesc(0, alb, asb, sw)
	bDesc := gpu.EncodeWGMMADesc(0, blb, bsb, sw)
	out := make([]float32, m*n)
	err := gpu.RunNative(d3(1, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
		tid := th.ThreadIdx().X
		sa := gpu.Shared[uint16](th, 8192/2)
		sb := gpu.Shared[uint16](th, 16384/2)
		for i := tid; i < m*k; i += 128 {
			sa[gpu.WGMMAOperandOffset(aDesc, am, i/k, i%k)/2] = A[i]
		}
		for i := tid; i < n*k; i += 128 {
			sb[gpu.WGMMAOperandOffset(bDesc, bm, i/k, i%k)/2] = B[i]
		}
		gpu.FenceProxyAsync(th)
		th.Sync()
		da := gpu.WGMMADesc(th, &sa[0], alb, asb, sw)
		db := gpu.WGMMADesc(th, &sb[0], blb, bsb, sw)
		w, lane := tid/32, tid%32
		g, q := lane/4, lane%4
		var ar [4]uint32
		for i := range 4 {
			row, col := 16*w+g+8*(i%2), 2*q+8*(i/2)
			ar[i] = uint32(A[row*k+col]) | uint32(A[row*k+col+1])<<16
		}
		rc := func(j, i int) int { return (16*w+g+8*(i/2))*n + 8*j + 2*q + i%2 }
		gpu.WGMMAFence(th)
		switch n {
		case 64:
			var acc [32]float32
			for j := range n / 8 {
				for i := range 4 {
					acc[4*j+i] = C[rc(j, i)]
				}
			}
			switch {
			case regA && bf:
				gpu.WGMMABF16RegAMajor(th, &acc, ar, db, true, bm)
			case regA:
				gpu.WGMMAF16RegAMajor(th, &acc, ar, db, true, bm)
			case bf:
				gpu.WGMMABF16Major(th, &acc, da, db, true, am, bm)
			default:
				gpu.WGMMAF16Major(th, &acc, da, db, true, am, bm)
			}
			gpu.WGMMACommitGroup(th)
			gpu.WGMMAWaitGroup(th, 0)
			for j := range n / 8 {
				for i := range 4 {
					out[rc(j, i)] = acc[4*j+i]
				}
			}
		case 128:
			var acc [64]float32
			for j := range n / 8 {
				for i := range 4 {
					acc[4*j+i] = C[rc(j, i)]
				}
			}
			switch {
			case regA && bf:
				gpu.WGMMABF16RegAMajor(th, &acc, ar, db, true, bm)
			case regA:
				gpu.WGMMAF16RegAMajor(th, &acc, ar, db, true, bm)
			case bf:
				gpu.WGMMABF16Major(th, &acc, da, db, true, am, bm)
			default:
				gpu.WGMMAF16Major(th, &acc, da, db, true, am, bm)
			}
			gpu.WGMMACommitGroup(th)
			gpu.WGMMAWaitGroup(th, 0)
			for j := range n / 8 {
				for i := range 4 {
					out[rc(j, i)] = acc[4*j+i]
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Multiples of 1/8 and 1/4 with few bits: exact in float32.
	for i := range m {
		for j := range n {
			want := float64(C[i*n+j])
			for kk := range k {
				want += dec(A[i*k+kk]) * dec(B[j*k+kk])
			}
			if got := float64(out[i*n+j]); got != want {
				t.Fatalf("D[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

// TestWGMMAOperandOffsetMN pins the MN-major layouts to independent
// statements of them: the swizzled layout is W/2-value rows of W bytes,
// one per k, in 8W-byte atoms (what a TMA box of W-byte rows writes),
// the unswizzled one 8×8 core matrices of 128 bytes.
func TestWGMMAOperandOffsetMN(t *testing.T) {
	// 128B swizzle, a V tile of 32 kv rows × 64 d values as TMA lands it:
	// row kv at 128·kv, d at 2·d, 16-byte chunk XORed with kv%8.
	desc := gpu.EncodeWGMMADesc(0, 4096, 1024, gpu.Swizzle128B)
	for kv := range 32 {
		for d := range 64 {
			want := 128*kv + (d/8^kv%8)*16 + d%8*2
			if got := gpu.WGMMAOperandOffset(desc, gpu.MNMajor, d, kv); got != want {
				t.Fatalf("sw128 (n %d, k %d) at %d, want %d", d, kv, got, want)
			}
		}
	}
	// No swizzle: sbo 256 along MN, lbo 128 along K.
	desc = gpu.EncodeWGMMADesc(0, 128, 256, gpu.SwizzleNone)
	if got := gpu.WGMMAOperandOffset(desc, gpu.MNMajor, 9, 10); got != 256+128+2*16+2 {
		t.Fatalf("no swizzle (9, 10) at %d", got)
	}
	// Every layout of the test is a bijection onto distinct 2-byte slots.
	for _, sw := range []gpu.Swizzle{gpu.SwizzleNone, gpu.Swizzle32B, gpu.Swizzle64B, gpu.Swizzle128B} {
		for _, kFirst := range []bool{false, true} {
			lbo, sbo := mnLayout(sw, 128, kFirst)
			d := gpu.EncodeWGMMADesc(0, lbo, sbo, sw)
			seen := map[int]bool{}
			for mn := range 128 {
				for k := range 16 {
					o := gpu.WGMMAOperandOffset(d, gpu.MNMajor, mn, k)
					if seen[o] || o%2 != 0 {
						t.Fatalf("sw%d kFirst %v: (%d, %d) at %d collides", sw.Bytes(), kFirst, mn, k, o)
					}
					seen[o] = true
				}
			}
		}
	}
}
