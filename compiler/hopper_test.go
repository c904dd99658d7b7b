package compiler

// wgmma end to end: a kernel compiled for sm_90a runs on the emulator and
// its 64×N tile is compared with a float64 reference, for every swizzle
// mode, N = 64, 128 and 256, f16 and bf16, A from shared memory and from
// registers; a kernel that reads the accumulator before wgmma.wait_group
// must get it wrong.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

const wgmmaKernel = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func K(t gpu.Thread, a, b []uint16, fr []uint32, c, out []float32) {
	sa := gpu.Shared[uint16](t, 4096)
	sb := gpu.Shared[uint16](t, @NB@)
	i := t.ThreadIdx().X
	for j := i; j < len(a) && j < 4096; j += 128 {
		sa[j] = a[j]
	}
	for j := i; j < len(b) && j < @NB@; j += 128 {
		sb[j] = b[j]
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	da := gpu.WGMMADesc(t, &sa[0], @LBO@, @SBO@, @SW@)
	db := gpu.WGMMADesc(t, &sb[0], @LBO@, @SBO@, @SW@)
	w, lane := i/32, i%32
	g, q := lane/4, lane%4
	var fa [4]uint32 // the thread's A fragment for the register-A forms
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
	@WAIT@
	//kern:unroll
	for j := range @N@ / 8 {
		//kern:unroll
		for e := range 4 {
			out[(16*w+g+8*(e/2))*@N@+8*j+2*q+e%2] = acc[4*j+e]
		}
	}
}
`

type wgCase struct {
	sw         gpu.Swizzle
	n          int
	bf, regA   bool
	noWait     bool
	lbo, sbo   int
	name, call string
}

func TestWGMMAOnTheEmulator(t *testing.T) {
	var cases []wgCase
	for _, sw := range []gpu.Swizzle{gpu.SwizzleNone, gpu.Swizzle32B, gpu.Swizzle64B, gpu.Swizzle128B} {
		for _, n := range []int{64, 128, 256} {
			cases = append(cases, wgCase{sw: sw, n: n})
		}
	}
	cases = append(cases, wgCase{sw: gpu.Swizzle128B, n: 128, bf: true},
		wgCase{sw: gpu.Swizzle128B, n: 64, regA: true},
		wgCase{sw: gpu.Swizzle64B, n: 128, bf: true, regA: true})
	dev := emu.NewDevice(emu.Options{})
	for _, c := range cases {
		t.Run(fmt.Sprintf("sw%d/n%d/bf%v/regA%v", c.sw.Bytes(), c.n, c.bf, c.regA), func(t *testing.T) {
			bad, err := runWGMMA(t, dev, c)
			if err != nil {
				t.Fatal(err)
			}
			if bad != "" {
				t.Fatal(bad)
			}
		})
	}
	t.Run("missing wait_group", func(t *testing.T) {
		bad, err := runWGMMA(t, dev, wgCase{sw: gpu.Swizzle128B, n: 64, noWait: true})
		if err == nil && bad == "" {
			t.Fatal("reading the accumulator before wgmma.wait_group gave the right result on emu")
		}
	})
}

// runWGMMA compiles and runs one case; bad describes a wrong result.
func runWGMMA(t *testing.T, dev *emu.Device, c wgCase) (bad string, err error) {
	t.Helper()
	const m, k = 64, 16
	c.lbo, c.sbo = 128, 256
	if c.sw != gpu.SwizzleNone {
		c.lbo, c.sbo = 0, 8*c.sw.Bytes()
	}
	typ := "F16"
	if c.bf {
		typ = "BF16"
	}
	call := fmt.Sprintf("gpu.WGMMA%s(t, &acc, da, db, true)", typ)
	if c.regA {
		call = fmt.Sprintf("gpu.WGMMA%sRegA(t, &acc, fa, db, true)", typ)
	}
	wait := "gpu.WGMMAWaitGroup(t, 0)"
	if c.noWait {
		wait = ""
	}
	swName := map[gpu.Swizzle]string{gpu.SwizzleNone: "SwizzleNone", gpu.Swizzle32B: "Swizzle32B", gpu.Swizzle64B: "Swizzle64B", gpu.Swizzle128B: "Swizzle128B"}[c.sw]
	nb := c.n / 8 * c.sbo / 2
	src := strings.NewReplacer("@NB@", fmt.Sprint(nb), "@LBO@", fmt.Sprint(c.lbo), "@SBO@", fmt.Sprint(c.sbo), "@SW@", "gpu."+swName,
		"@N2@", fmt.Sprint(c.n/2), "@N@", fmt.Sprint(c.n), "@MMA@", call, "@WAIT@", wait).Replace(wgmmaKernel)
	p, err := CompileSource(Config{Arch: "sm_90a"}, "k.go", []byte(src))
	if os.Getenv("WGDUMP") != "" {
		os.WriteFile(os.Getenv("WGDUMP"), []byte(p.PTX), 0o644)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	r := rand.New(rand.NewSource(int64(c.n)*7 + int64(c.sw)))
	enc := func(f float32) uint16 {
		if c.bf {
			return uint16(gpu.ToBFloat16(f))
		}
		return uint16(gpu.ToHalf(f))
	}
	A := make([]float32, m*k)
	B := make([]float32, c.n*k)
	C := make([]float32, m*c.n)
	for i := range A {
		A[i] = float32(r.Intn(17)-8) / 8
	}
	for i := range B {
		B[i] = float32(r.Intn(17)-8) / 4
	}
	for i := range C {
		C[i] = float32(r.Intn(9) - 4)
	}
	desc := gpu.EncodeWGMMADesc(0, c.lbo, c.sbo, c.sw)
	abuf := make([]uint16, 4096)
	bbuf := make([]uint16, nb)
	for i, v := range A {
		abuf[gpu.WGMMAElemOffset(desc, i/k, i%k)/2] = enc(v)
	}
	for i, v := range B {
		bbuf[gpu.WGMMAElemOffset(desc, i/k, i%k)/2] = enc(v)
	}
	fr := make([]uint32, 4*128) // mma.sync m16n8k16 A fragments of each thread
	for i := range 128 {
		w, g, q := i/32, i%32/4, i%4
		for r := range 4 {
			row, col := 16*w+g+8*(r%2), 2*q+8*(r/2)
			fr[4*i+r] = uint32(enc(A[row*k+col])) | uint32(enc(A[row*k+col+1]))<<16
		}
	}
	out, err := launchWGMMA(dev, p.PTX, abuf, bbuf, fr, C)
	if err != nil {
		return "", err
	}
	// Inputs are small multiples of 1/8 and 1/4: every sum is exact in
	// float32, so emu's one rounding must give the reference exactly.
	for i := range m {
		for j := range c.n {
			want := float64(C[i*c.n+j])
			for kk := range k {
				want += float64(A[i*k+kk]) * float64(B[j*k+kk])
			}
			if got := float64(out[i*c.n+j]); got != want || math.IsNaN(got) {
				return fmt.Sprintf("D[%d][%d] = %v, want %v", i, j, got, want), nil
			}
		}
	}
	return "", nil
}

func launchWGMMA(dev *emu.Device, ptx string, a, b []uint16, fr []uint32, c []float32) ([]float32, error) {
	mod, err := emu.Load([]byte(ptx))
	if err != nil {
		return nil, err
	}
	var params []byte
	up := func(raw []byte, n int) (uint64, error) {
		p, err := dev.Alloc(len(raw))
		if err == nil {
			err = dev.Write(p, raw)
		}
		params = binary.LittleEndian.AppendUint64(params, p)
		params = binary.LittleEndian.AppendUint64(params, uint64(n))
		return p, err
	}
	u16 := func(v []uint16) []byte {
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], x)
		}
		return out
	}
	f32 := func(v []float32) []byte {
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out
	}
	if _, err := up(u16(a), len(a)); err != nil {
		return nil, err
	}
	if _, err := up(u16(b), len(b)); err != nil {
		return nil, err
	}
	frb := make([]byte, 4*len(fr))
	for i, x := range fr {
		binary.LittleEndian.PutUint32(frb[4*i:], x)
	}
	if _, err := up(frb, len(fr)); err != nil {
		return nil, err
	}
	if _, err := up(f32(c), len(c)); err != nil {
		return nil, err
	}
	outp, err := up(make([]byte, 4*len(c)), len(c))
	if err != nil {
		return nil, err
	}
	if err := dev.Launch(mod, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{128, 1, 1}, Params: params}); err != nil {
		return nil, err
	}
	raw := make([]byte, 4*len(c))
	if err := dev.Read(outp, raw); err != nil {
		return nil, err
	}
	out := make([]float32, len(c))
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// TestArchDirective: //kern:arch picks a package's default target, which
// wgmma needs; without it the same kernel is refused for sm_80 with an
// error naming the fix.
func TestArchDirective(t *testing.T) {
	const body = `
import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func K(t gpu.Thread, out []float32) {
	gpu.WGMMAFence(t)
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
}
`
	p, err := CompileSource(Config{}, "k.go", []byte("// Hopper only.\n//kern:arch sm_90a\npackage k\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	if p.Arch != "sm_90a" || !strings.Contains(p.PTX, "\n.target sm_90a\n") {
		t.Errorf("//kern:arch sm_90a compiled for %s", p.Arch)
	}
	_, err = CompileSource(Config{}, "k.go", []byte("package k\n"+body))
	if err == nil || !strings.Contains(err.Error(), "needs sm_90a") {
		t.Errorf("wgmma for sm_80: got %v, want an error saying it needs sm_90a", err)
	}
	_, err = CompileSource(Config{}, "k.go", []byte("//kern:arch sm_99\npackage k\n"+body))
	if err == nil || !strings.Contains(err.Error(), "sm_99") {
		t.Errorf("//kern:arch sm_99: got %v, want an unknown-target error", err)
	}
}

const tmaKernel = `//kern:arch sm_90a
package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func K(t gpu.Thread, tmap []uint64, out []uint16, x, y, skipWait int) {
	bar := gpu.Shared[uint64](t, 1)
	tile := gpu.Shared[uint16](t, 64*64)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 1)
	}
	t.Sync()
	if i == 0 && len(tmap) >= 16 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], 64*64*2)
		gpu.TMALoad2D(t, &tile[0], &tmap[0], x, y, &bar[0])
	}
	if skipWait == 0 {
		for !gpu.MbarrierTryWait(t, &bar[0], 0) {
		}
	}
	for j := i; j < 64*64 && j < len(out); j += 128 {
		r, c := j/64, j%64
		off := r*128 + c*2
		off ^= (off >> 7 & 7) << 4
		out[j] = tile[off/2]
	}
}
`

// TestTMAOnTheEmulator loads a 64×64 f16 box with 128-byte swizzle from a
// 150×100 tensor at a corner where part of the box is outside (zeros),
// unswizzles it in the kernel and compares with the tensor; without the
// mbarrier wait the box has not landed and the result is wrong.
func TestTMAOnTheEmulator(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(tmaKernel))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const cols, rows, pitch = 150, 100, 304 // pitch: 152 elements, a multiple of 16 bytes
	dev := emu.NewDevice(emu.Options{})
	src := make([]byte, rows*pitch)
	for r := range rows {
		for c := range cols {
			binary.LittleEndian.PutUint16(src[r*pitch+2*c:], uint16(1+r*cols+c))
		}
	}
	base, err := dev.Alloc(len(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Write(base, src); err != nil {
		t.Fatal(err)
	}
	words, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(base), ElemBytes: 2, Dims: [2]int{cols, rows},
		RowBytes: pitch, Box: [2]int{64, 64}, Swizzle: gpu.Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	run := func(x, y, skip int) []uint16 {
		var params []byte
		mapRaw := make([]byte, 8*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint64(mapRaw[8*i:], w)
		}
		mp, _ := dev.Alloc(len(mapRaw))
		if err := dev.Write(mp, mapRaw); err != nil {
			t.Fatal(err)
		}
		op, _ := dev.Alloc(2 * 64 * 64)
		for _, v := range []uint64{mp, uint64(len(words)), op, 64 * 64, uint64(x), uint64(y), uint64(skip)} {
			params = binary.LittleEndian.AppendUint64(params, v)
		}
		if err := dev.Launch(mod, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{128, 1, 1}, Params: params}); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 2*64*64)
		if err := dev.Read(op, raw); err != nil {
			t.Fatal(err)
		}
		out := make([]uint16, 64*64)
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
		return out
	}
	for _, at := range [][2]int{{0, 0}, {100, 50}, {-8, 40}} {
		got := run(at[0], at[1], 0)
		for r := range 64 {
			for c := range 64 {
				gx, gy := at[0]+c, at[1]+r
				want := uint16(0)
				if gx >= 0 && gy >= 0 && gx < cols && gy < rows {
					want = uint16(1 + gy*cols + gx)
				}
				if got[r*64+c] != want {
					t.Fatalf("box at %v: element (%d, %d) = %d, want %d", at, r, c, got[r*64+c], want)
				}
			}
		}
	}
	got := run(0, 0, 1)
	if got[1] == 2 && got[64] == 1+cols {
		t.Error("a kernel that skips the mbarrier wait read the TMA box as if it had landed")
	}
}
