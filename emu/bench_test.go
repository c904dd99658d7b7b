package emu

import (
	"math"
	"testing"
)

// BenchmarkSiluGate1M runs a 1M-element element-wise kernel on one core
// and reports warp-instructions per second.
func BenchmarkSiluGate1M(b *testing.B) {
	m := loadTestdata(b, "silu.ptx")
	d := NewDevice(Options{Workers: 1})
	const n = 1 << 20
	x, g := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000)/100 - 5
		g[i] = 1.5
	}
	px, pg := upload(b, d, f32bytes(x)), upload(b, d, f32bytes(g))
	pout := upload(b, d, make([]byte, 4*n))
	p := params{}.u64(px).u64(n).u64(pg).u64(n).u64(pout).u64(n)
	cfg := LaunchConfig{Grid: [3]int{n / 256}, Block: [3]int{256}, Params: p}
	b.ResetTimer()
	start, cpu0 := d.WarpInstructions(), cpuTime()
	for i := 0; i < b.N; i++ {
		if err := d.Launch(m, "silu_gate", cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(d.WarpInstructions()-start)/b.Elapsed().Seconds(), "warp-instr/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(d.WarpInstructions()-start)/cpu.Seconds(), "warp-instr/cpu-s")
	}
	b.StopTimer()
	out := bytesF32(download(b, d, pout, 4*n))
	for _, i := range []int{0, 12345, n - 1} {
		xi := float64(x[i])
		want := xi / (1 + math.Exp(-xi)) * 1.5
		if math.Abs(float64(out[i])-want) > 1e-5*math.Max(1, math.Abs(want)) {
			b.Fatalf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
}

func TestSiluGate(t *testing.T) {
	m := loadTestdata(t, "silu.ptx")
	d := NewDevice(Options{})
	const n = 3000
	x, g := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i)/300 - 5
		g[i] = float32(i % 7)
	}
	px, pg := upload(t, d, f32bytes(x)), upload(t, d, f32bytes(g))
	pout := upload(t, d, make([]byte, 4*n))
	p := params{}.u64(px).u64(n).u64(pg).u64(n).u64(pout).u64(n)
	if err := d.Launch(m, "silu_gate", LaunchConfig{Grid: [3]int{(n + 255) / 256}, Block: [3]int{256}, Params: p}); err != nil {
		t.Fatal(err)
	}
	out := bytesF32(download(t, d, pout, 4*n))
	for i := range out {
		xi := float64(x[i])
		want := xi / (1 + math.Exp(-xi)) * float64(g[i])
		// ex2.approx is within 2 ulp on a GPU; emu's is exact: allow a few ulp.
		if math.Abs(float64(out[i])-want) > 4e-7*math.Max(1, math.Abs(want)) {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
	if d.WarpInstructions() == 0 {
		t.Error("WarpInstructions did not count")
	}
}
