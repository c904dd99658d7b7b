package compiler

// The Hopper pieces together: a 64×128×64 f16 tile GEMM whose operands
// TMA loads into 128-byte swizzled shared memory (one mbarrier, the
// transaction bytes of both loads), whose warpgroup multiplies them with
// four m64n128k16 wgmmas (the descriptors advance 32 bytes along K inside
// the swizzled rows), and which stores D. Run on emu against float64 and
// assembled by ptxas for sm_90a with no spills.

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/ptxas"
)

const tileGEMMKernel = `//kern:arch sm_90a
package k

import "github.com/gokern/kern/gpu"

// TileGEMM: out (64×128, row-major) = A (64×64, row-major) × B, B given
// as its transpose (128×64, row-major), both through tensor maps.
//
//kern:kernel block=128
func TileGEMM(t gpu.Thread, amap, bmap []uint64, out []float32) {
	bar := gpu.Shared[uint64](t, 1)
	sa := gpu.Shared[uint16](t, 64*64)
	sb := gpu.Shared[uint16](t, 128*64)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 1)
	}
	t.Sync()
	if i == 0 && len(amap) >= 16 && len(bmap) >= 16 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], (64*64+128*64)*2)
		gpu.TMALoad2D(t, &sa[0], &amap[0], 0, 0, &bar[0])
		gpu.TMALoad2D(t, &sb[0], &bmap[0], 0, 0, &bar[0])
	}
	for !gpu.MbarrierTryWait(t, &bar[0], 0) {
	}
	da := gpu.WGMMADesc(t, &sa[0], 0, 1024, gpu.Swizzle128B)
	db := gpu.WGMMADesc(t, &sb[0], 0, 1024, gpu.Swizzle128B)
	var acc [64]float32
	gpu.WGMMAFence(t)
	//kern:unroll
	for ks := range 4 {
		gpu.WGMMAF16(t, &acc, da+uint64(2*ks), db+uint64(2*ks), true)
	}
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
	w, lane := i/32, i%32
	g, q := lane/4, lane%4
	//kern:unroll
	for j := range 16 {
		//kern:unroll
		for e := range 4 {
			o := (16*w+g+8*(e/2))*128 + 8*j + 2*q + e%2
			if o < len(out) {
				out[o] = acc[4*j+e]
			}
		}
	}
}
`

func TestHopperTileGEMM(t *testing.T) {
	const m, n, k = 64, 128, 64
	p, err := CompileSource(Config{}, "k.go", []byte(tileGEMMKernel))
	if err != nil {
		t.Fatal(err)
	}
	if rep := ptxas.Check(t, "tilegemm", []byte(p.PTX), "sm_90a")["sm_90a"]; rep != nil {
		for _, f := range rep.Funcs {
			if f.SpillStores != 0 || f.SpillLoads != 0 || f.StackFrame != 0 {
				t.Errorf("%s: %d bytes stack, %d/%d bytes spilled", f.Name, f.StackFrame, f.SpillStores, f.SpillLoads)
			}
			t.Logf("%s: %d registers", f.Name, f.Registers)
		}
	}
	mod, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.NewDevice(emu.Options{})
	r := rand.New(rand.NewSource(3))
	A := make([]float32, m*k)
	Bt := make([]float32, n*k)
	for i := range A {
		A[i] = float32(r.Intn(9)-4) / 4
	}
	for i := range Bt {
		Bt[i] = float32(r.Intn(9)-4) / 4
	}
	upload := func(raw []byte) uint64 {
		a, err := dev.Alloc(len(raw))
		if err == nil {
			err = dev.Write(a, raw)
		}
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	halfs := func(v []float32) []byte {
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(gpu.ToHalf(x)))
		}
		return out
	}
	tmap := func(base uint64, rows int) uint64 {
		w, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(base), ElemBytes: 2, Dims: [2]int{k, rows},
			RowBytes: 2 * k, Box: [2]int{k, rows}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 8*len(w))
		for i, x := range w {
			binary.LittleEndian.PutUint64(raw[8*i:], x)
		}
		return upload(raw)
	}
	amap, bmap := tmap(upload(halfs(A)), m), tmap(upload(halfs(Bt)), n)
	outp := upload(make([]byte, 4*m*n))
	var params []byte
	for _, v := range []uint64{amap, 16, bmap, 16, outp, m * n} {
		params = binary.LittleEndian.AppendUint64(params, v)
	}
	if err := dev.Launch(mod, "TileGEMM", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{128, 1, 1}, Params: params}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*m*n)
	if err := dev.Read(outp, raw); err != nil {
		t.Fatal(err)
	}
	// Multiples of 1/4 below 1 in magnitude: 64 products of multiples of
	// 1/16 sum exactly in float32, so the result must equal the reference.
	for i := range m {
		for j := range n {
			var want float64
			for kk := range k {
				want += float64(A[i*k+kk]) * float64(Bt[j*k+kk])
			}
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*n+j):])))
			if got != want {
				t.Fatalf("D[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}
