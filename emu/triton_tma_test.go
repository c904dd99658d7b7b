package emu

// Triton's sm_90 matmul (testdata/corpus/triton_matmul_tma_sm90a.ptx,
// made by triton_tma.sh): TMA tensor descriptors, mbarrier pipeline,
// wgmma m64n128k16 from shared-memory descriptors, elect.sync. Triton
// passes each descriptor as a 128-byte __grid_constant__ .param (the
// CUtensorMap, by value) followed by the tensor's shape (two i32) and
// strides (two i64) and reads the map through cvta.param: here the map is
// kern's layout (gpu.EncodeTensorMap), the one the emulator decodes.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokern/kern/gpu"
)

// tensorDesc appends a Triton tensor-descriptor argument: the map (64-byte
// aligned, 128 bytes), the shape {rows, cols} and the strides {cols, 1} of
// a row-major bf16 tensor at addr, in boxes of 128 rows × 64 values
// with swizzle sw (Triton's kernel assumes 128-byte: its wgmma
// descriptors say so).
func (p params) tensorDesc(t *testing.T, addr uint64, rows, cols int, sw gpu.Swizzle) params {
	t.Helper()
	words, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(addr), ElemBytes: 2, Dims: [2]int{cols, rows},
		RowBytes: 2 * cols, Box: [2]int{64, 128}, Swizzle: sw})
	if err != nil {
		t.Fatal(err)
	}
	p = p.align(64)
	for _, w := range words {
		p = binary.LittleEndian.AppendUint64(p, w)
	}
	return p.u32(uint32(rows)).u32(uint32(cols)).u64(uint64(cols)).u64(1)
}

// TestTritonTMAMatmul runs Triton's sm_90 matmul against an exact
// reference under memcheck, racecheck and synccheck, and with maps of the
// wrong swizzle (none), which must give wrong results.
func TestTritonTMAMatmul(t *testing.T) {
	const file = "corpus/triton_matmul_tma_sm90a.ptx"
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var ver string
	var shared, warps, stages int
	if _, err := fmt.Sscanf(string(src), "// triton %s shared=%d num_warps=%d num_stages=%d", &ver, &shared, &warps, &stages); err != nil {
		t.Fatalf("%s: no triton_gemm.py header: %v", file, err)
	}
	m := loadTestdata(t, file)
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	// M and N not multiples of the 128×128 tile, K not one of BK = 64:
	// the TMA boxes run past the tensors (zeros) and the stores are
	// masked; 5 k-steps go round the 4 stages.
	const M, N, K = 200, 136, 296
	av := func(i int) float64 { return float64(int(hash(i)%17)-8) / 8 }
	wv := func(i int) float64 { return float64(int(hash(i+7000)%9)-4) / 4 }
	bf := func(x float64) uint16 { return uint16(math.Float32bits(float32(x)) >> 16) } // exact for these values
	A, W := make([]byte, 2*M*K), make([]byte, 2*N*K)
	for i := range M * K {
		binary.LittleEndian.PutUint16(A[2*i:], bf(av(i)))
	}
	for i := range N * K {
		binary.LittleEndian.PutUint16(W[2*i:], bf(wv(i)))
	}
	pa, pw := upload(t, d, A), upload(t, d, W)
	run := func(sw gpu.Swizzle) []byte {
		pc := upload(t, d, make([]byte, 2*M*N))
		p := params{}.tensorDesc(t, pa, M, K, sw).tensorDesc(t, pw, N, K, sw).u64(pc).u32(M).u32(N).u32(K).u64(0).u64(0)
		grid := ((M + 127) / 128) * ((N + 127) / 128)
		launchOrFail(t, d, m, "matmul_tma", [3]int{grid}, [3]int{32 * warps}, shared, p)
		return download(t, d, pc, 2*M*N)
	}
	C, bad := run(gpu.Swizzle128B), run(gpu.SwizzleNone)
	wrong := 0
	for r := range M {
		for c := range N {
			var want float64
			for k := range K {
				want += av(r*K+k) * wv(c*K+k) // exact in f32: multiples of 1/32
			}
			// The f32 accumulator is exact (multiples of 1/32 below 2^10),
			// so the one rounding is the store's, to nearest even bf16.
			got := binary.LittleEndian.Uint16(C[2*(r*N+c):])
			w := uint16(narrow(want, fmtBF16, rnRN))
			if got != w {
				t.Errorf("C[%d][%d] = %#04x, want %#04x (%v rounded to bf16)", r, c, got, w, want)
			}
			if binary.LittleEndian.Uint16(bad[2*(r*N+c):]) != w {
				wrong++
			}
		}
	}
	t.Logf("with unswizzled maps: %d of %d outputs wrong", wrong, M*N)
	if wrong < M*N/2 {
		t.Errorf("with unswizzled maps only %d of %d outputs are wrong", wrong, M*N)
	}
}
