package gpu_test

// Tests of native-mode tensor-core operations and cp.async. Each lane
// builds its fragments from whole matrices by the layout documented in
// mma.go, and results are compared with a float64 (or int64) matrix
// product and with the documented float32 accumulation order.

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern/gpu"
)

// mmaCase is one m16n8k16 problem: A 16×16, B 16×8 (as 16-bit bits), C.
type mmaCase struct {
	A [16][16]uint16
	B [16][8]uint16
	C [16][8]float32
}

func pack(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }

// fragments returns lane l's a, b, c by the m16n8k16 layout.
func (m *mmaCase) fragments(l int) ([4]uint32, [2]uint32, [4]float32) {
	g, t := l/4, l%4
	a := [4]uint32{
		pack(m.A[g][2*t], m.A[g][2*t+1]),
		pack(m.A[g+8][2*t], m.A[g+8][2*t+1]),
		pack(m.A[g][2*t+8], m.A[g][2*t+9]),
		pack(m.A[g+8][2*t+8], m.A[g+8][2*t+9]),
	}
	b := [2]uint32{pack(m.B[2*t][g], m.B[2*t+1][g]), pack(m.B[2*t+8][g], m.B[2*t+9][g])}
	c := [4]float32{m.C[g][2*t], m.C[g][2*t+1], m.C[g+8][2*t], m.C[g+8][2*t+1]}
	return a, b, c
}

// dAt returns the (row, col) of lane l's D register r.
func dAt(l, r int) (int, int) {
	g, t := l/4, l%4
	return g + 8*(r/2), 2*t + r%2
}

func randomMMA(r *rand.Rand, bf bool) *mmaCase {
	m := &mmaCase{}
	conv := func(f float32) uint16 { return uint16(gpu.ToHalf(f)) }
	if bf {
		conv = func(f float32) uint16 { return uint16(gpu.ToBFloat16(f)) }
	}
	for i := range 16 {
		for k := range 16 {
			m.A[i][k] = conv(float32(r.NormFloat64()))
		}
	}
	for k := range 16 {
		for j := range 8 {
			m.B[k][j] = conv(float32(r.NormFloat64()))
		}
	}
	for i := range 16 {
		for j := range 8 {
			m.C[i][j] = float32(r.NormFloat64())
		}
	}
	return m
}

func testMMAF16(t *testing.T, bf bool) {
	toF := func(h uint16) float32 { return gpu.Half(h).Float32() }
	mma := gpu.MMAF16
	if bf {
		toF = func(h uint16) float32 { return gpu.BFloat16(h).Float32() }
		mma = gpu.MMABF16
	}
	r := rand.New(rand.NewPCG(5, 6))
	const warps = 3 // each warp multiplies its own matrices
	cases := make([]*mmaCase, warps)
	for w := range cases {
		cases[w] = randomMMA(r, bf)
	}
	got := make([][4]float32, 32*warps)
	err := gpu.RunNative(d3(1, 1, 1), d3(32*warps, 1, 1), 0, func(th gpu.Thread) {
		a, b, c := cases[th.Warp()].fragments(th.Lane())
		d := c
		for range 2 { // D = A·B + (A·B + C): the rendezvous works in loops
			d = mma(th, a, b, d)
		}
		got[th.LinearIdx()] = d
	})
	if err != nil {
		t.Fatal(err)
	}
	for w, m := range cases {
		// Reference: the documented float32 order, and float64.
		var d32 [16][8]float32
		var d64, mag [16][8]float64
		for i := range 16 {
			for j := range 8 {
				acc := m.C[i][j]
				for round := range 2 {
					if round == 1 {
						acc = d32[i][j]
					}
					for k := range 16 {
						acc += float32(toF(m.A[i][k]) * toF(m.B[k][j]))
					}
					d32[i][j] = acc
				}
				s := float64(m.C[i][j])
				for k := range 16 {
					p := float64(toF(m.A[i][k])) * float64(toF(m.B[k][j]))
					s += 2 * p
					mag[i][j] += 2 * math.Abs(p)
				}
				d64[i][j] = s
				mag[i][j] += math.Abs(float64(m.C[i][j]))
			}
		}
		for l := range 32 {
			for reg := range 4 {
				i, j := dAt(l, reg)
				g := got[32*w+l][reg]
				if g != d32[i][j] {
					t.Fatalf("warp %d lane %d reg %d (D[%d][%d]): %v, want %v in the documented order", w, l, reg, i, j, g, d32[i][j])
				}
				// 33 roundings of at most 2^-24 relative each.
				if tol := 33 * 0x1p-24 * mag[i][j]; math.Abs(float64(g)-d64[i][j]) > tol {
					t.Fatalf("warp %d D[%d][%d] = %v, float64 %v, beyond %g", w, i, j, g, d64[i][j], tol)
				}
			}
		}
	}
}

func TestMMAF16(t *testing.T)  { testMMAF16(t, false) }
func TestMMABF16(t *testing.T) { testMMAF16(t, true) }

func TestMMAS8(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var A [16][32]int8
	var B [32][8]int8
	var C [16][8]int32
	for i := range 16 {
		for k := range 32 {
			A[i][k] = int8(r.IntN(256) - 128)
		}
	}
	for k := range 32 {
		for j := range 8 {
			B[k][j] = int8(r.IntN(256) - 128)
		}
	}
	for i := range 16 {
		for j := range 8 {
			C[i][j] = int32(r.IntN(2000) - 1000)
		}
	}
	// Two results that must wrap: D[3][5] = MaxInt32-10 + 32·100·100 and
	// D[9][1] = MinInt32+10 - 32·100·100.
	C[3][5], C[9][1] = math.MaxInt32-10, math.MinInt32+10
	for k := range 32 {
		A[3][k], A[9][k], B[k][5], B[k][1] = 100, 100, 100, -100
	}
	pack4 := func(v [4]int8) uint32 {
		return uint32(uint8(v[0])) | uint32(uint8(v[1]))<<8 | uint32(uint8(v[2]))<<16 | uint32(uint8(v[3]))<<24
	}
	got := make([][4]int32, 32)
	err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		l := th.Lane()
		g, t := l/4, l%4
		var a [4]uint32
		var b [2]uint32
		for q, off := range [4][2]int{{g, 4 * t}, {g + 8, 4 * t}, {g, 4*t + 16}, {g + 8, 4*t + 16}} {
			a[q] = pack4([4]int8(A[off[0]][off[1] : off[1]+4]))
		}
		for q, k0 := range [2]int{4 * t, 4*t + 16} {
			b[q] = pack4([4]int8{B[k0][g], B[k0+1][g], B[k0+2][g], B[k0+3][g]})
		}
		c := [4]int32{C[g][2*t], C[g][2*t+1], C[g+8][2*t], C[g+8][2*t+1]}
		got[l] = gpu.MMAS8(th, a, b, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := 0
	for l := range 32 {
		for reg := range 4 {
			i, j := dAt(l, reg)
			s := int64(C[i][j])
			for k := range 32 {
				s += int64(A[i][k]) * int64(B[k][j])
			}
			if s != int64(int32(s)) {
				wrapped++
			}
			if got[l][reg] != int32(s) {
				t.Fatalf("lane %d reg %d (D[%d][%d]): %d, want %d", l, reg, i, j, got[l][reg], int32(s))
			}
		}
	}
	if wrapped < 2 {
		t.Errorf("only %d results wrapped; the test means to check wrapping", wrapped)
	}
}

// ldRows fills a shared array with 4 8×8 matrices of distinct 16-bit
// values, rows 24 elements apart (padding between them), and returns it.
func ldRows(th gpu.Thread) []uint16 {
	s := gpu.Shared[uint16](th, 4*8*24)
	for i := th.Lane(); i < len(s); i += 32 {
		s[i] = uint16(i)
	}
	th.SyncWarp()
	return s
}

// ldElem is element (r, c) of matrix i as ldRows lays it out: matrix i's
// row r starts at (i*8+r)*24.
func ldElem(i, r, c int) uint16 { return uint16((i*8+r)*24 + c) }

func TestLdMatrix(t *testing.T) {
	type res struct {
		x1, x1t uint32
		x2, x2t [2]uint32
		x4, x4t [4]uint32
	}
	got := make([]res, 32)
	err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		s := ldRows(th)
		l := th.Lane()
		row := &s[l*24] // lane l gives row l%8 of matrix l/8
		var only8, only16 *uint16
		if l < 8 {
			only8 = row // lanes past the ones that supply addresses pass nil
		}
		if l < 16 {
			only16 = row
		}
		got[l] = res{
			gpu.LdMatrixX1(th, only8), gpu.LdMatrixX1Trans(th, only8),
			gpu.LdMatrixX2(th, only16), gpu.LdMatrixX2Trans(th, only16),
			gpu.LdMatrixX4(th, row), gpu.LdMatrixX4Trans(th, row),
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for l := range 32 {
		r, c := l/4, 2*(l%4)
		reg := func(i int) uint32 { return pack(ldElem(i, r, c), ldElem(i, r, c+1)) }
		regT := func(i int) uint32 { return pack(ldElem(i, c, r), ldElem(i, c+1, r)) }
		want := res{
			reg(0), regT(0),
			[2]uint32{reg(0), reg(1)}, [2]uint32{regT(0), regT(1)},
			[4]uint32{reg(0), reg(1), reg(2), reg(3)}, [4]uint32{regT(0), regT(1), regT(2), regT(3)},
		}
		if got[l] != want {
			t.Fatalf("lane %d:\n got %+v\nwant %+v", l, got[l], want)
		}
	}
}

func TestLdMatrixBadAddress(t *testing.T) {
	global := make([]uint16, 64*8)
	for _, c := range []struct {
		name   string
		kernel func(th gpu.Thread, s []uint16) uint32
		want   string
	}{
		{"global memory", func(th gpu.Thread, s []uint16) uint32 { return gpu.LdMatrixX1(th, &global[th.Lane()%8*8]) }, "not in this block's shared memory"},
		{"misaligned", func(th gpu.Thread, s []uint16) uint32 { return gpu.LdMatrixX1(th, &s[th.Lane()%8*8+1]) }, "not 16-byte aligned"},
		{"past the end", func(th gpu.Thread, s []uint16) uint32 { return gpu.LdMatrixX1(th, &s[64]) }, "not in this block's shared memory"},
	} {
		err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
			s := gpu.Shared[uint16](th, 8*8+4) // the last row is 8 bytes short
			c.kernel(th, s)
		})
		var pe *gpu.PanicError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(pe.File, "native_mma_test.go") {
			t.Errorf("%s: err = %v, want a panic in this file with %q", c.name, err, c.want)
		}
	}
}

func TestCpAsync(t *testing.T) {
	src := make([]float32, 64)
	for i := range src {
		src[i] = float32(i) + 0.25
	}
	got := make([]float32, 4*64)
	err := gpu.RunNative(d3(4, 1, 1), d3(16, 1, 1), 0, func(th gpu.Thread) {
		s := gpu.Shared[float32](th, 64)
		i := th.LinearIdx() * 4
		for k := range 4 { // a GPU would hold garbage; make the zero fill visible
			s[i+k] = -1
		}
		switch th.BlockIdx().X {
		case 0:
			gpu.CpAsync(th, &s[i], &src[i], 16)
		case 1:
			gpu.CpAsyncZFill(th, &s[i], &src[i], 16, 4*(th.LinearIdx()%5)) // 0..16 bytes
		case 2:
			gpu.CpAsyncZFill[float32](th, &s[i], nil, 16, 0) // src is not read
		case 3:
			gpu.CpAsync(th, &s[i], &src[i], 8)
			gpu.CpAsync(th, &s[i+2], &src[i+2], 4)
		}
		gpu.CpAsyncCommit(th)
		gpu.CpAsyncWait(th, 0)
		th.Sync()
		copy(got[th.BlockIdx().X*64+i:][:4], s[i:i+4])
	})
	if err != nil {
		t.Fatal(err)
	}
	for b := range 4 {
		for i := range 64 {
			want := src[i]
			switch {
			case b == 1 && i%4 >= i/4%5:
				want = 0
			case b == 2:
				want = 0
			case b == 3 && i%4 == 3:
				want = -1 // not copied
			}
			if g := got[b*64+i]; g != want {
				t.Fatalf("block %d element %d: %v, want %v", b, i, g, want)
			}
		}
	}
}

func TestCpAsyncChecks(t *testing.T) {
	global := make([]float32, 16)
	for _, c := range []struct {
		name   string
		kernel func(th gpu.Thread, s []float32)
		want   string
	}{
		{"global destination", func(th gpu.Thread, s []float32) { gpu.CpAsync(th, &global[0], &global[4], 16) }, "not in this block's shared memory"},
		{"bad size", func(th gpu.Thread, s []float32) { gpu.CpAsync(th, &s[0], &global[0], 12) }, "size 12"},
		{"bad source size", func(th gpu.Thread, s []float32) { gpu.CpAsyncZFill(th, &s[0], &global[0], 8, 9) }, "source size 9"},
		{"misaligned", func(th gpu.Thread, s []float32) { gpu.CpAsync(th, &s[1], &global[0], 8) }, "not 8-byte aligned"},
		{"past the end", func(th gpu.Thread, s []float32) { gpu.CpAsync(th, &s[4], &global[0], 16) }, "not in this block's shared memory"},
	} {
		err := gpu.RunNative(d3(1, 1, 1), d3(1, 1, 1), 0, func(th gpu.Thread) {
			c.kernel(th, gpu.Shared[float32](th, 6)) // 24 bytes
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestTensorCorePipeline is the inner step of a tiled f16 matmul: cp.async
// the A (16×16 row-major) and B (16×8 row-major) tiles into shared memory,
// LdMatrixX4 the A fragments, LdMatrixX2Trans the B fragments, and MMA.
func TestTensorCorePipeline(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m := randomMMA(r, false)
	aG := make([]uint16, 16*16)
	bG := make([]uint16, 16*8)
	for i := range 16 {
		copy(aG[i*16:], m.A[i][:])
	}
	for k := range 16 {
		copy(bG[k*8:], m.B[k][:])
	}
	got := make([][4]float32, 32)
	err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		l := th.Lane()
		as := gpu.Shared[uint16](th, 16*16)
		bs := gpu.Shared[uint16](th, 16*8)
		// 512 + 256 bytes in 16-byte chunks: 32 + 16 copies.
		gpu.CpAsync(th, &as[l*8], &aG[l*8], 16)
		if l < 16 {
			gpu.CpAsync(th, &bs[l*8], &bG[l*8], 16)
		}
		gpu.CpAsyncCommit(th)
		gpu.CpAsyncWait(th, 0)
		th.Sync()
		a := gpu.LdMatrixX4(th, &as[(l%16)*16+(l/16)*8])
		b := gpu.LdMatrixX2Trans(th, &bs[(l%16)*8])
		_, _, c := m.fragments(l)
		got[l] = gpu.MMAF16(th, a, b, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		a, b, c := m.fragments(th.Lane())
		if d := gpu.MMAF16(th, a, b, c); d != got[th.Lane()] {
			panic("fragments loaded through LdMatrix differ from the documented layout")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
