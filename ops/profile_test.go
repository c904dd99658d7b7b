package ops

// Profile assertions, on the emulator's profiler so they hold in CI:
// element-wise ops and norms use at least 95% of the global-memory sectors
// they touch, and nothing has shared-memory bank conflicts.

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// profiled runs f on a fresh profiled emulator and returns, over every
// instruction of every kernel it launched, the global sector efficiency
// and the total bank conflicts.
func profiled(t *testing.T, f func(dev *kern.Device) error) (eff float64, conflicts int64) {
	t.Helper()
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	if err := f(dev); err != nil {
		t.Fatal(err)
	}
	var bytes, sectors int64
	for _, s := range p.Stats() {
		bytes += s.GlobalBytes
		sectors += s.GlobalSectors
		conflicts += s.BankConflicts()
	}
	if sectors == 0 {
		t.Fatal("no global accesses profiled")
	}
	return float64(bytes) / float64(32*sectors), conflicts
}

func up(dev *kern.Device, n int) *kern.Buffer[float32] {
	b, err := kern.Upload(dev, make([]float32, n))
	if err != nil {
		panic(err)
	}
	return b
}

func TestProfileMemoryEfficiency(t *testing.T) {
	const rows, cols = 16, 1024
	n := rows * cols
	cases := []struct {
		name string
		run  func(dev *kern.Device) error
	}{
		{"Add", func(d *kern.Device) error { return Add(d, up(d, n), up(d, n), up(d, n), n) }},
		{"Scale", func(d *kern.Device) error { return Scale(d, up(d, n), up(d, n), 2, n) }},
		{"SiLUMul", func(d *kern.Device) error { return SiLUMul(d, up(d, n), up(d, n), up(d, n), n) }},
		{"GELU", func(d *kern.Device) error { return GELU(d, up(d, n), up(d, n), n) }},
		{"RMSNorm", func(d *kern.Device) error { return RMSNorm(d, up(d, n), up(d, n), up(d, cols), rows, cols, 1e-6) }},
		{"AddRMSNorm", func(d *kern.Device) error {
			return AddRMSNorm(d, up(d, n), up(d, n), up(d, n), up(d, n), up(d, cols), rows, cols, 1e-6)
		}},
		{"LayerNorm", func(d *kern.Device) error {
			return LayerNorm(d, up(d, n), up(d, n), up(d, cols), up(d, cols), rows, cols, 1e-6)
		}},
		{"Softmax", func(d *kern.Device) error { return Softmax(d, up(d, n), up(d, n), rows, cols) }},
		{"RMSNorm v3 (tile)", func(d *kern.Device) error {
			return rmsNormTiled(d, up(d, n), up(d, n), up(d, cols), rows, cols, 1e-6)
		}},
		{"Softmax v3 (tile)", func(d *kern.Device) error { return softmaxTiled(d, up(d, n), up(d, n), rows, cols) }},
	}
	for _, c := range cases {
		eff, conflicts := profiled(t, c.run)
		t.Logf("%-17s sector efficiency %5.1f%%, bank conflicts %d", c.name, 100*eff, conflicts)
		if eff < 0.95 {
			t.Errorf("%s: global sector efficiency %.1f%%, want ≥ 95%%", c.name, 100*eff)
		}
		if conflicts != 0 {
			t.Errorf("%s: %d shared-memory bank conflicts, want 0", c.name, conflicts)
		}
	}
}

// TestProfileMatmul profiles the v2 GEMM (both configs, both B layouts):
// no bank conflicts on any shared access (cp.async stores, ldmatrix, the
// epilogue's staging), and the global loads (cp.async) ≥ 95%
// sector-efficient. m is ragged (rows past it are zero-filled, not read);
// n and k are multiples of 64 and 32, as a ragged n or k reads a partial
// sector at the edge (n = 136 gives 92% with the 64×64 tile).
func TestProfileMatmul(t *testing.T) {
	const m, n, k = 200, 192, 96
	for _, cfg := range matmulConfigs {
		for _, lay := range []BLayout{WeightNK, RowMajorKN} {
			p := emu.NewProfile()
			dev := kern.OpenEmulator(emu.Options{Observer: p})
			a, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, m*k))
			b, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, n*k))
			c := alloc[gpu.BFloat16](t, dev, m*n)
			o := MatmulOpts[gpu.BFloat16]{Layout: lay}
			s := newShape("ops.Matmul")
			if err := matmulRun(s, mmV2, cfg, dev, c, a, b, m, n, k, o); err != nil {
				t.Fatal(err)
			}
			var ldBytes, ldSectors, conflicts, sharedReqs int64
			for _, st := range p.Stats() {
				conflicts += st.BankConflicts()
				sharedReqs += st.SharedRequests
				if strings.HasPrefix(st.Instr, "cp.async") || strings.HasPrefix(st.Instr, "ld.global") {
					ldBytes += st.GlobalBytes
					ldSectors += st.GlobalSectors
				}
				if st.BankConflicts() != 0 {
					t.Logf("%s line %d: %s: %d conflicts", cfg.name, st.GoLine, st.Instr, st.BankConflicts())
				}
			}
			eff := float64(ldBytes) / float64(32*ldSectors) // over 100% where lanes share a sector (v2 at M = 1: x row 0)
			t.Logf("%s %v: global load sector efficiency %.1f%%, %d shared requests, %d bank conflicts", cfg.name, lay, 100*eff, sharedReqs, conflicts)
			if eff < 0.95 {
				t.Errorf("%s %v: global load sector efficiency %.1f%%, want ≥ 95%%", cfg.name, lay, 100*eff)
			}
			if conflicts != 0 || sharedReqs == 0 {
				t.Errorf("%s %v: %d bank conflicts in %d shared requests, want 0", cfg.name, lay, conflicts, sharedReqs)
			}
		}
	}
}

// TestProfileGEMV profiles the decode GEMVs at a Qwen3-like shape:
// every weight byte is read by a 128-bit load (v1: a 16-byte cp.async;
// v2: an ld.global.nc.v4 of gpu.Load8; v3: the same with its streaming
// hints, gpu.Load8Stream), those loads are ≥ 95%
// sector-efficient, as are all global loads, and shared memory has no
// bank conflicts (v1: the stages; v2: the split-K sums).
func TestProfileGEMV(t *testing.T) {
	const n, k = 256, 1024
	for _, v := range []struct {
		v      int
		name   string
		paths  []string // the files the weights' loads are written in
		m      int
		wInstr string // the weights' load instruction
		wCall  string // on the source lines that contain this
	}{
		{mmGEMVv1, "v1", []string{"internal/gemv/gemv.go"}, 1, "cp.async.cg", "gpu.CpAsync(t, &sh[d+int32(r*gemvStep)], &w["},
		// v2's first iteration loads W through gemvdev.LoadW, the rest in
		// its own loop.
		{mmGEMV, "v2", []string{"internal/gemvtc/gemvtc.go", "internal/gemvdev/gemvdev.go"}, 1, "ld.global.nc.v4", "gpu.Load8(w,"},
		{mmGEMV, "v2", []string{"internal/gemvtc/gemvtc.go", "internal/gemvdev/gemvdev.go"}, 16, "ld.global.nc.v4", "gpu.Load8(w,"},
		// v3 in 2 splits of K (GEMVv3Splits): the partial sums' stores and
		// loads are counted with the rest.
		{mmGEMVv3, "v3", []string{"internal/gemv3/gemv3.go"}, 1, "ld.global.nc.L1::no_allocate.L2::256B.v4", "gpu.Load8Stream(w,"},
		{mmGEMVv3, "v3", []string{"internal/gemv3/gemv3.go"}, 16, "ld.global.nc.L1::no_allocate.L2::256B.v4", "gpu.Load8Stream(w,"},
	} {
		m := v.m
		GEMVv3Splits = 0
		if v.v == mmGEMVv3 {
			GEMVv3Splits = 2
		}
		t.Cleanup(func() { GEMVv3Splits = 0 })
		p := emu.NewProfile()
		dev := kern.OpenEmulator(emu.Options{Observer: p})
		x, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, m*k))
		w, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, n*k))
		c := alloc[gpu.BFloat16](t, dev, m*n)
		s := newShape("ops.Matmul")
		if err := matmulRun(s, v.v, tcConfig{}, dev, c, x, w, m, n, k, MatmulOpts[gpu.BFloat16]{}); err != nil {
			t.Fatal(err)
		}
		wLines := map[string][]int{} // file name → the lines loading W
		for _, path := range v.paths {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			file := path[strings.LastIndexByte(path, '/')+1:]
			for i, line := range strings.Split(string(src), "\n") {
				if strings.Contains(line, v.wCall) {
					wLines[file] = append(wLines[file], i+1)
				}
			}
			if len(wLines[file]) == 0 {
				t.Fatalf("%s: no %q in %s", v.name, v.wCall, path)
			}
		}
		var wide, other, wSectors, ldBytes, ldSectors, conflicts int64
		for _, st := range p.Stats() {
			conflicts += st.BankConflicts()
			onW := slices.Contains(wLines[st.File], st.GoLine)
			switch {
			case onW && strings.HasPrefix(st.Instr, v.wInstr):
				wide += st.GlobalBytes
				wSectors += st.GlobalSectors
			case onW:
				other += st.GlobalBytes
			}
			if strings.HasPrefix(st.Instr, "cp.async") || strings.HasPrefix(st.Instr, "ld.global") {
				ldBytes += st.GlobalBytes
				ldSectors += st.GlobalSectors
			}
		}
		share := float64(wide) / float64(2*n*k)
		wEff := float64(wide) / float64(32*wSectors)
		eff := float64(ldBytes) / float64(32*ldSectors) // over 100% where lanes share a sector (v2 at M = 1: x row 0)
		t.Logf("GEMV %s %dx%dx%d: %.1f%% of weight bytes by 128-bit loads, their sector efficiency %.1f%%, all loads' %.1f%%, %d bank conflicts", v.name, m, n, k, 100*share, 100*wEff, 100*eff, conflicts)
		if share < 0.95 || share > 1 || other != 0 {
			t.Errorf("%s m=%d: %.1f%% of the weight bytes read by 128-bit loads (%d bytes otherwise), want ≥ 95%%", v.name, m, 100*share, other)
		}
		if wEff < 0.95 || eff < 0.95 {
			t.Errorf("%s m=%d: sector efficiency %.1f%% (weights), %.1f%% (all loads), want ≥ 95%%", v.name, m, 100*wEff, 100*eff)
		}
		if conflicts != 0 {
			t.Errorf("%s m=%d: %d bank conflicts, want 0", v.name, m, conflicts)
		}
	}
}

// TestProfileMatmulInt4 profiles both W4A16 GEMVs at a decode shape:
// every packed weight byte is read by a 16-byte cp.async (a 128-bit
// load), the loads are ≥ 95% sector-efficient, and shared memory has no
// bank conflicts (v2: the swizzled x stores and reads, the W reads, the
// staged scales, the split-K sums).
func TestProfileMatmulInt4(t *testing.T) {
	const n, k = 64, 1024
	for _, v := range []struct {
		v    int
		name string
		file string
		m    int
	}{{w4GEMV, "v1", "w4.go", 1}, {w4GEMVTC, "v2", "tc.go", 1}, {w4GEMVTC, "v2", "tc.go", 7}} {
		m := v.m
		GEMVv3Splits = 0
		if v.v == mmGEMVv3 {
			GEMVv3Splits = 2
		}
		t.Cleanup(func() { GEMVv3Splits = 0 })
		p := emu.NewProfile()
		dev := kern.OpenEmulator(emu.Options{Observer: p})
		x, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, m*k))
		c := alloc[gpu.BFloat16](t, dev, m*n)
		if err := matmulInt4(v.v, dev, c, x, uploadT(t, dev, make([]uint8, n*k/2)), uploadT(t, dev, make([]float32, n*k/128)), m, n, k); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile("internal/w4/" + v.file)
		if err != nil {
			t.Fatal(err)
		}
		var wLines []int
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "gpu.CpAsync") && strings.Contains(line, "&packed[") {
				wLines = append(wLines, i+1)
			}
		}
		var wide, ldBytes, ldSectors, conflicts int64
		for _, st := range p.Stats() {
			conflicts += st.BankConflicts()
			if strings.HasPrefix(st.Instr, "cp.async.cg") && st.File == v.file && slices.Contains(wLines, st.GoLine) {
				wide += st.GlobalBytes
			}
			if strings.HasPrefix(st.Instr, "cp.async") || strings.HasPrefix(st.Instr, "ld.global") {
				ldBytes += st.GlobalBytes
				ldSectors += st.GlobalSectors
			}
			if st.BankConflicts() != 0 {
				t.Logf("%s line %d: %s: %d conflicts", v.name, st.GoLine, st.Instr, st.BankConflicts())
			}
		}
		share := float64(wide) / float64(n*k/2)
		eff := float64(ldBytes) / float64(32*ldSectors) // over 100% where lanes share a sector (v2 at M = 1: x row 0)
		t.Logf("W4 GEMV %s %dx%dx%d: %.1f%% of packed weight bytes by 128-bit loads, load sector efficiency %.1f%%, %d bank conflicts", v.name, m, n, k, 100*share, 100*eff, conflicts)
		if share < 0.95 || share > 1 {
			t.Errorf("%s: %.1f%% of the packed weight bytes read by 128-bit loads, want ≥ 95%%", v.name, 100*share)
		}
		if eff < 0.95 {
			t.Errorf("%s: load sector efficiency %.1f%%, want ≥ 95%%", v.name, 100*eff)
		}
		if conflicts != 0 {
			t.Errorf("%s: %d bank conflicts, want 0", v.name, conflicts)
		}
	}
}

// TestProfileMatmulInt4GEMM profiles the W4A16 GEMM (k two groups and a
// half; m and n whole tiles, since the profile counts each lane's bytes
// and a clamped row past M would count twice): 0 bank conflicts on the
// cp.async stores, the ldmatrix loads of x and the 64-bit loads of packed
// weights, and the cp.async loads of x and packed ≥ 95% sector-efficient.
// The scale loads (4 bytes per column and group, [N, K/128] strided) are
// logged, not asserted.
func TestProfileMatmulInt4GEMM(t *testing.T) {
	const m, n, k = 128, 256, 320
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	x, _ := uploadIn[gpu.Half](t, dev, make([]float64, m*k))
	c := alloc[float32](t, dev, m*n)
	if err := matmulInt4(w4GEMM, dev, c, x, uploadT(t, dev, make([]uint8, n*k/2)), uploadT(t, dev, make([]float32, n*((k+127)/128))), m, n, k); err != nil {
		t.Fatal(err)
	}
	var ldBytes, ldSectors, scaleBytes, scaleSectors, conflicts, sharedReqs int64
	for _, st := range p.Stats() {
		conflicts += st.BankConflicts()
		sharedReqs += st.SharedRequests
		if strings.HasPrefix(st.Instr, "cp.async") {
			ldBytes += st.GlobalBytes
			ldSectors += st.GlobalSectors
		}
		if strings.HasPrefix(st.Instr, "ld.global") {
			scaleBytes += st.GlobalBytes
			scaleSectors += st.GlobalSectors
		}
		if st.BankConflicts() != 0 {
			t.Logf("line %d: %s: %d conflicts", st.GoLine, st.Instr, st.BankConflicts())
		}
	}
	eff := float64(ldBytes) / float64(32*ldSectors)
	t.Logf("W4A16 GEMM %dx%dx%d: cp.async sector efficiency %.1f%%, %d shared requests, %d bank conflicts; scale loads %d bytes (per lane) in %d sectors, against %d bytes of x and weights",
		m, n, k, 100*eff, sharedReqs, conflicts, scaleBytes, scaleSectors, ldBytes)
	if eff < 0.95 {
		t.Errorf("global load sector efficiency %.1f%%, want ≥ 95%%", 100*eff)
	}
	if conflicts != 0 || sharedReqs == 0 {
		t.Errorf("%d bank conflicts in %d shared requests, want 0", conflicts, sharedReqs)
	}
}

// TestProfileMatmulInt8V2 profiles the pipelined W8A8 GEMM (k a partial
// last tile, a multiple of 32 so that rows start on a sector; m and n
// whole tiles, since the profile counts each lane's
// bytes and a clamped row past M would count twice): 0 bank conflicts on
// the cp.async stores and ldmatrix loads, the operands' cp.async loads
// ≥ 95% sector-efficient.
func TestProfileMatmulInt8V2(t *testing.T) {
	const m, n, k = 256, 256, 224
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	c := alloc[float32](t, dev, m*n)
	err := matmulInt8(i8V2, dev, c, uploadT(t, dev, make([]int8, m*k)), uploadT(t, dev, make([]float32, m)),
		uploadT(t, dev, make([]int8, n*k)), uploadT(t, dev, make([]float32, n)), m, n, k)
	if err != nil {
		t.Fatal(err)
	}
	var ldBytes, ldSectors, conflicts, sharedReqs int64
	for _, st := range p.Stats() {
		conflicts += st.BankConflicts()
		sharedReqs += st.SharedRequests
		if strings.HasPrefix(st.Instr, "cp.async") { // the epilogue's scale loads are broadcasts, counted per lane
			ldBytes += st.GlobalBytes
			ldSectors += st.GlobalSectors
		}
		if st.BankConflicts() != 0 {
			t.Logf("line %d: %s: %d conflicts", st.GoLine, st.Instr, st.BankConflicts())
		}
	}
	eff := float64(ldBytes) / float64(32*ldSectors)
	t.Logf("W8A8 v2 %dx%dx%d: cp.async sector efficiency %.1f%%, %d shared requests, %d bank conflicts", m, n, k, 100*eff, sharedReqs, conflicts)
	if eff < 0.95 {
		t.Errorf("global load sector efficiency %.1f%%, want ≥ 95%%", 100*eff)
	}
	if conflicts != 0 || sharedReqs == 0 {
		t.Errorf("%d bank conflicts in %d shared requests, want 0", conflicts, sharedReqs)
	}
}
