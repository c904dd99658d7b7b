package compiler

// MN-major (transposed) wgmma operands end to end: a kernel compiled for
// sm_90a with gpu.WGMMA*Major runs on the emulator against a float64
// reference for every swizzle mode, each operand K- or MN-major, and
// register A with an MN-major B (attention's P·V); the PTX carries the
// imm-trans immediates.

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

const wgmmaMajorKernel = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func K(t gpu.Thread, a, b []uint16, fr []uint32, c, out []float32) {
	sa := gpu.Shared[uint16](t, 4096)
	sb := gpu.Shared[uint16](t, 4096)
	i := t.ThreadIdx().X
	for j := i; j < len(a) && j < 4096; j += 128 {
		sa[j] = a[j]
	}
	for j := i; j < len(b) && j < 4096; j += 128 {
		sb[j] = b[j]
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	da := gpu.WGMMADesc(t, &sa[0], @ALBO@, @ASBO@, @SW@)
	db := gpu.WGMMADesc(t, &sb[0], @BLBO@, @BSBO@, @SW@)
	w, lane := i/32, i%32
	g, q := lane/4, lane%4
	var fa [4]uint32
	if 4*i+3 < len(fr) {
		fa = [4]uint32{fr[4*i], fr[4*i+1], fr[4*i+2], fr[4*i+3]}
	}
	var acc [@N2@]float32
	//kern:unroll
	for j := range @N@ / 8 {
		//kern:unroll
		for e := range 4 {
			acc[4*j+e] = c[(16*w+g+8*(e/2))*@N@+8*j+2*q+e%2]
		}
	}
	_, _ = fa, da
	gpu.WGMMAFence(t)
	@MMA@
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
	//kern:unroll
	for j := range @N@ / 8 {
		//kern:unroll
		for e := range 4 {
			out[(16*w+g+8*(e/2))*@N@+8*j+2*q+e%2] = acc[4*j+e]
		}
	}
}
`

// mnOperandLayout is the MN-major layout of an operand with mn values
// along M or N and 16 along K, packed densely in one of the two orders
// (see gpu's native test of the same name).
func mnOperandLayout(sw gpu.Swizzle, mn int, kFirst bool) (lbo, sbo int) {
	if sw == gpu.SwizzleNone {
		if kFirst {
			return 128, 256
		}
		return mn / 8 * 128, 128
	}
	w := sw.Bytes()
	if kFirst {
		return 16 * w, 8 * w
	}
	return 8 * w, max(1, mn/(w/2)) * 8 * w
}

func TestWGMMAMajorOnTheEmulator(t *testing.T) {
	type mcase struct {
		n        int
		am, bm   gpu.Major
		regA, bf bool
		kFirst   bool
	}
	dev := emu.NewDevice(emu.Options{})
	for _, sw := range []gpu.Swizzle{gpu.SwizzleNone, gpu.Swizzle32B, gpu.Swizzle64B, gpu.Swizzle128B} {
		for _, c := range []mcase{
			{64, gpu.MNMajor, gpu.MNMajor, false, false, true},
			{128, gpu.KMajor, gpu.MNMajor, false, true, false},
			{64, gpu.MNMajor, gpu.KMajor, false, false, false},
			{64, gpu.KMajor, gpu.MNMajor, true, false, true},
			{128, gpu.KMajor, gpu.MNMajor, true, true, false},
		} {
			t.Run(fmt.Sprintf("sw%d/n%d/a%d/b%d/regA%v", sw.Bytes(), c.n, c.am, c.bm, c.regA), func(t *testing.T) {
				runWGMMAMajor(t, dev, sw, c.n, c.am, c.bm, c.regA, c.bf, c.kFirst)
			})
		}
	}
}

func runWGMMAMajor(t *testing.T, dev *emu.Device, sw gpu.Swizzle, n int, am, bm gpu.Major, regA, bf, kFirst bool) {
	const m, k = 64, 16
	layout := func(major gpu.Major, mn int, kFirst bool) (int, int) {
		if major == gpu.KMajor {
			if sw == gpu.SwizzleNone {
				return 128, 256
			}
			return 0, 8 * sw.Bytes()
		}
		return mnOperandLayout(sw, mn, kFirst)
	}
	alb, asb := layout(am, m, kFirst)
	blb, bsb := layout(bm, n, !kFirst)
	typ := "F16"
	if bf {
		typ = "BF16"
	}
	majName := map[gpu.Major]string{gpu.KMajor: "gpu.KMajor", gpu.MNMajor: "gpu.MNMajor"}
	call := fmt.Sprintf("gpu.WGMMA%sMajor(t, &acc, da, db, true, %s, %s)", typ, majName[am], majName[bm])
	if regA {
		call = fmt.Sprintf("gpu.WGMMA%sRegAMajor(t, &acc, fa, db, true, %s)", typ, majName[bm])
	}
	swName := map[gpu.Swizzle]string{gpu.SwizzleNone: "SwizzleNone", gpu.Swizzle32B: "Swizzle32B", gpu.Swizzle64B: "Swizzle64B", gpu.Swizzle128B: "Swizzle128B"}[sw]
	src := strings.NewReplacer("@ALBO@", fmt.Sprint(alb), "@ASBO@", fmt.Sprint(asb), "@BLBO@", fmt.Sprint(blb), "@BSBO@", fmt.Sprint(bsb),
		"@SW@", "gpu."+swName, "@N2@", fmt.Sprint(n/2), "@N@", fmt.Sprint(n), "@MMA@", call).Replace(wgmmaMajorKernel)
	p, err := CompileSource(Config{Arch: "sm_90a"}, "k.go", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	trans := fmt.Sprintf(", 1, 1, %d, %d;", am, bm)
	if regA {
		trans = fmt.Sprintf(", 1, 1, %d;", bm)
	}
	if !strings.Contains(p.PTX, trans) {
		t.Fatalf("the wgmma in the PTX does not end with %q", trans)
	}
	r := rand.New(rand.NewSource(int64(n)*7 + int64(sw) + 3*int64(am)))
	enc := func(f float32) uint16 {
		if bf {
			return uint16(gpu.ToBFloat16(f))
		}
		return uint16(gpu.ToHalf(f))
	}
	A := make([]float32, m*k)
	B := make([]float32, n*k) // B[j*k+kk]: column j
	C := make([]float32, m*n)
	for i := range A {
		A[i] = float32(r.Intn(17)-8) / 8
	}
	for i := range B {
		B[i] = float32(r.Intn(17)-8) / 4
	}
	for i := range C {
		C[i] = float32(r.Intn(9) - 4)
	}
	aDesc := gpu.EncodeWGMMADesc(0, alb, asb, sw)
	bDesc := gpu.EncodeWGMMADesc(0, blb, bsb, sw)
	abuf := make([]uint16, 4096)
	bbuf := make([]uint16, 4096)
	for i, v := range A {
		abuf[gpu.WGMMAOperandOffset(aDesc, am, i/k, i%k)/2] = enc(v)
	}
	for i, v := range B {
		bbuf[gpu.WGMMAOperandOffset(bDesc, bm, i/k, i%k)/2] = enc(v)
	}
	fr := make([]uint32, 4*128)
	for i := range 128 {
		w, g, q := i/32, i%32/4, i%4
		for r := range 4 {
			row, col := 16*w+g+8*(r%2), 2*q+8*(r/2)
			fr[4*i+r] = uint32(enc(A[row*k+col])) | uint32(enc(A[row*k+col+1]))<<16
		}
	}
	out, err := launchWGMMA(dev, p.PTX, abuf, bbuf, fr, C)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		for j := range n {
			want := float64(C[i*n+j])
			for kk := range k {
				want += float64(A[i*k+kk]) * float64(B[j*k+kk])
			}
			if got := float64(out[i*n+j]); got != want || math.IsNaN(got) {
				t.Fatalf("D[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

// TestWGMMAMajorNeedsConstant: the layout is an immediate of the
// instruction, so a variable is refused with the fix in the message.
func TestWGMMAMajorNeedsConstant(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func K(t gpu.Thread, out []float32, m int) {
	sb := gpu.Shared[uint16](t, 4096)
	db := gpu.WGMMADesc(t, &sb[0], 0, 1024, gpu.Swizzle128B)
	var acc [32]float32
	gpu.WGMMAF16RegAMajor(t, &acc, [4]uint32{}, db, false, gpu.Major(m))
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
	out[0] = acc[0]
}
`
	_, err := CompileSource(Config{Arch: "sm_90a"}, "k.go", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "gpu.KMajor or gpu.MNMajor") {
		t.Fatalf("err = %v, want the constant-layout error", err)
	}
}
