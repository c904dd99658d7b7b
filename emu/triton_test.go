package emu

// Triton's PTX (testdata/corpus/triton_*.ptx, from triton_kernels.py for
// sm_80): the tutorials' vector add, fused softmax, an f16 tensor-core
// matmul and flash attention's forward loop, each against a Go reference.
// Triton appends two pointer parameters (global and profile scratch) that
// these kernels do not use: they are passed as 0.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// tritonShared reads the dynamic shared memory size triton_kernels.py
// recorded in the first line of a PTX file.
func tritonShared(t *testing.T, file string) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata/corpus", file))
	if err != nil {
		t.Fatal(err)
	}
	var shared, warps int
	if _, err := fmt.Sscanf(string(src), "// triton_kernels.py: shared=%d num_warps=%d", &shared, &warps); err != nil {
		t.Fatalf("%s: no triton_kernels.py header: %v", file, err)
	}
	return shared
}

func TestTritonAdd(t *testing.T) {
	m := loadTestdata(t, "corpus/triton_add.ptx")
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	const n = 3000 // not a multiple of BLOCK=1024: the masked tail
	x, y := seq(n, func(i int) float32 { return float32(i) / 7 }), seq(n, func(i int) float32 { return float32(hash(i)%100) - 50 })
	px, py, po := upload(t, d, f32bytes(x)), upload(t, d, f32bytes(y)), upload(t, d, make([]byte, 4*n+64))
	launchOrFail(t, d, m, "add_kernel", [3]int{3}, [3]int{128}, 0, params{}.u64(px).u64(py).u64(po).u32(n).u64(0).u64(0))
	out := bytesF32(download(t, d, po, 4*n+64))
	for i := 0; i < n; i++ {
		if out[i] != x[i]+y[i] {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], x[i]+y[i])
		}
	}
	for i := n; i < len(out); i++ {
		if out[i] != 0 {
			t.Fatalf("out[%d] = %v past n was written", i, out[i])
		}
	}
}

func TestTritonSoftmax(t *testing.T) {
	for _, arch := range []string{"", "_sm90"} {
		t.Run("sm80"+arch, func(t *testing.T) { testTritonSoftmax(t, "triton_softmax"+arch+".ptx") })
	}
}

func testTritonSoftmax(t *testing.T, file string) {
	m := loadTestdata(t, "corpus/"+file)
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	const rows, cols = 5, 100 // cols < BLOCK=128: masked with -inf
	x := seq(rows*cols, func(i int) float32 { return float32(hash(i)%2000)/200 - 5 })
	pi, po := upload(t, d, f32bytes(x)), upload(t, d, make([]byte, 4*rows*cols))
	launchOrFail(t, d, m, "softmax_kernel", [3]int{rows}, [3]int{128}, tritonShared(t, file),
		params{}.u64(po).u64(pi).u32(cols).u32(cols).u32(cols).u64(0).u64(0))
	out := bytesF32(download(t, d, po, 4*rows*cols))
	for r := 0; r < rows; r++ {
		mx := math.Inf(-1)
		for c := 0; c < cols; c++ {
			mx = math.Max(mx, float64(x[r*cols+c]))
		}
		var den float64
		for c := 0; c < cols; c++ {
			den += math.Exp(float64(x[r*cols+c]) - mx)
		}
		for c := 0; c < cols; c++ {
			want := math.Exp(float64(x[r*cols+c])-mx) / den
			// ex2.approx of x·log2(e) in float32 (|x - max| <= 10), a
			// float32 sum of 100 terms and a division: 2e-6 relative.
			closeF(t, "softmax", r*cols+c, float64(out[r*cols+c]), want, want, 1e-9, 2e-6)
		}
	}
}

func TestTritonMatmul(t *testing.T) {
	for _, arch := range []string{"", "_sm90"} {
		t.Run("sm80"+arch, func(t *testing.T) { testTritonMatmul(t, "triton_matmul"+arch+".ptx") })
	}
}

func testTritonMatmul(t *testing.T, file string) {
	m := loadTestdata(t, "corpus/"+file)
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	// M, K not multiples of the 32×32×32 tile: masked loads and stores.
	const M, N, K = 48, 64, 80
	av := func(i int) float64 { return float64(int(hash(i)%17)-8) / 8 }
	bv := func(i int) float64 { return float64(int(hash(i+5000)%9)-4) / 4 }
	A, B := make([]byte, 2*M*K), make([]byte, 2*K*N)
	for i := 0; i < M*K; i++ {
		h := halfBits(av(i))
		A[2*i], A[2*i+1] = byte(h), byte(h>>8)
	}
	for i := 0; i < K*N; i++ {
		h := halfBits(bv(i))
		B[2*i], B[2*i+1] = byte(h), byte(h>>8)
	}
	pa, pb, pc := upload(t, d, A), upload(t, d, B), upload(t, d, make([]byte, 2*M*N))
	grid := ((M + 31) / 32) * ((N + 31) / 32)
	launchOrFail(t, d, m, "matmul_kernel", [3]int{grid}, [3]int{128}, tritonShared(t, file),
		params{}.u64(pa).u64(pb).u64(pc).u32(M).u32(N).u32(K).u32(K).u32(1).u32(N).u32(1).u32(N).u32(1).u64(0).u64(0))
	C := download(t, d, pc, 2*M*N)
	for r := 0; r < M; r++ {
		for c := 0; c < N; c++ {
			var want float64
			for k := 0; k < K; k++ {
				want += av(r*K+k) * bv(k*N+c) // exact: the inputs are k/8 and j/4
			}
			got := halfValue(uint16(C[2*(r*N+c)]) | uint16(C[2*(r*N+c)+1])<<8)
			// The float32 accumulator is exact here; the one rounding is
			// to f16 at the store: half an ulp, 2^-11 relative.
			closeF(t, "C", r*N+c, got, want, math.Abs(want), 0, 0x1p-11)
		}
	}
}

func TestTritonAttention(t *testing.T) {
	for _, arch := range []string{"", "_sm90"} {
		t.Run("sm80"+arch, func(t *testing.T) { testTritonAttention(t, "triton_attention"+arch+".ptx") })
	}
}

func testTritonAttention(t *testing.T, file string) {
	m := loadTestdata(t, "corpus/"+file)
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	const n, dh = 128, 32 // N_CTX, HEAD_DIM; BLOCK_M = BLOCK_N = 32
	scale := float32(1 / math.Sqrt(dh))
	val := func(i, salt int) float64 { return float64(int(hash(i+salt)%33)-16) / 16 }
	mk := func(salt int) []byte {
		b := make([]byte, 2*n*dh)
		for i := 0; i < n*dh; i++ {
			h := halfBits(val(i, salt))
			b[2*i], b[2*i+1] = byte(h), byte(h>>8)
		}
		return b
	}
	pq, pk, pv := upload(t, d, mk(0)), upload(t, d, mk(10000)), upload(t, d, mk(20000))
	po := upload(t, d, make([]byte, 2*n*dh))
	launchOrFail(t, d, m, "attn_fwd", [3]int{n / 32}, [3]int{128}, tritonShared(t, file),
		params{}.u64(pq).u64(pk).u64(pv).u64(po).f32(scale).u32(n).u32(dh).u32(dh).u32(dh).u32(dh).u64(0).u64(0))
	out := download(t, d, po, 2*n*dh)
	for i := 0; i < n; i++ {
		s := make([]float64, n)
		mx := math.Inf(-1)
		for j := 0; j < n; j++ {
			for k := 0; k < dh; k++ {
				s[j] += val(i*dh+k, 0) * val(j*dh+k, 10000)
			}
			s[j] *= float64(scale)
			mx = math.Max(mx, s[j])
		}
		var den float64
		for j := range s {
			s[j] = math.Exp(s[j] - mx)
			den += s[j]
		}
		for k := 0; k < dh; k++ {
			var want float64
			for j := 0; j < n; j++ {
				want += s[j] / den * val(j*dh+k, 20000)
			}
			got := halfValue(uint16(out[2*(i*dh+k)]) | uint16(out[2*(i*dh+k)+1])<<8)
			// P is rounded to f16 (2^-11 relative) before P·V, the output
			// to f16 once more; |v| <= 1, so 2^-9 absolute covers both.
			closeF(t, "out", i*dh+k, got, want, math.Abs(want), 0x1p-9, 0x1p-11)
		}
	}
}

func TestTritonMatmul64(t *testing.T) {
	m := loadTestdata(t, "corpus/triton_matmul_pipelined.ptx")
	d := NewDevice(Options{Memcheck: true, Racecheck: true, Synccheck: true})
	const M, N, K = 128, 64, 96 // 64×64 tiles, three 32-deep K steps
	av := func(i int) float64 { return float64(int(hash(i)%17)-8) / 8 }
	bv := func(i int) float64 { return float64(int(hash(i+7000)%9)-4) / 4 }
	half := func(n int, f func(int) float64) []byte {
		b := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			h := halfBits(f(i))
			b[2*i], b[2*i+1] = byte(h), byte(h>>8)
		}
		return b
	}
	pa, pb, pc := upload(t, d, half(M*K, av)), upload(t, d, half(K*N, bv)), upload(t, d, make([]byte, 2*M*N))
	launchOrFail(t, d, m, "matmul_pipelined", [3]int{(M / 64) * (N / 64)}, [3]int{128}, tritonShared(t, "triton_matmul_pipelined.ptx"),
		params{}.u64(pa).u64(pb).u64(pc).u32(M).u32(N).u32(K).u64(0).u64(0))
	C := download(t, d, pc, 2*M*N)
	for r := 0; r < M; r++ {
		for c := 0; c < N; c++ {
			var want float64
			for k := 0; k < K; k++ {
				want += av(r*K+k) * bv(k*N+c)
			}
			got := halfValue(uint16(C[2*(r*N+c)]) | uint16(C[2*(r*N+c)+1])<<8)
			// Exact float32 accumulation, one rounding to f16.
			closeF(t, "C", r*N+c, got, want, math.Abs(want), 0, 0x1p-11)
		}
	}
}
