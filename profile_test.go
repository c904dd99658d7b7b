package kern_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// Per-kernel profiler totals from the public API: launches, instructions,
// bank conflicts and sectors, without summing the per-instruction rows.
func TestProfilerKernelTotals(t *testing.T) {
	prof := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: prof})
	const n = 1024
	x, _ := kern.Upload(dev, randFloats(n, 1))
	y, _ := kern.Upload(dev, randFloats(n, 2))
	for range 2 {
		if err := tk.AxpyKernel.Launch(dev, kern.Cover(n), 2, x, y); err != nil {
			t.Fatal(err)
		}
	}
	sums, _ := kern.Alloc[float32](dev, 4)
	if err := tk.BlockSumsKernel.Launch(dev, kern.Cover(n).WithShared(256*4), x, sums); err != nil {
		t.Fatal(err)
	}
	got := map[string]emu.KernelStats{}
	for _, k := range prof.Kernels() {
		got[k.Kernel] = k
	}
	axpy, bs := got["Axpy"], got["BlockSums"]
	if axpy.Launches != 2 || bs.Launches != 1 || len(got) != 2 {
		t.Fatalf("launches: %+v", got)
	}
	// Each launch loads x and y and stores y: 12 bytes per element, in
	// whole 32-byte sectors, one request per warp each.
	if axpy.GlobalBytes != 2*12*n || axpy.GlobalSectors != 2*12*n/32 || axpy.GlobalRequests != 2*3*n/32 || axpy.SectorEfficiency() != 1 {
		t.Errorf("Axpy global totals %+v", axpy)
	}
	if axpy.Instructions == 0 || axpy.ThreadInstructions < 32*axpy.Instructions/2 || axpy.SharedRequests != 0 {
		t.Errorf("Axpy instruction totals %+v", axpy)
	}
	// The per-instruction rows add up to the totals.
	var exec, sectors int64
	for _, s := range prof.Stats() {
		if s.Kernel == "BlockSums" {
			exec += s.Executions
			sectors += s.GlobalSectors
		}
	}
	if bs.Instructions != exec || bs.GlobalSectors != sectors || bs.SharedRequests == 0 || bs.BankConflicts() != 0 {
		t.Errorf("BlockSums totals %+v, want %d instructions and %d sectors, shared requests without conflicts", bs, exec, sectors)
	}
}

func TestProfileReportHasKernelTotals(t *testing.T) {
	prof := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: prof})
	x, _ := kern.Upload(dev, randFloats(64, 1))
	y, _ := kern.Upload(dev, randFloats(64, 2))
	for range 3 {
		if err := tk.AxpyKernel.Launch(dev, kern.Cover(64), 2, x, y); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := prof.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	_, totals, ok := strings.Cut(b.String(), "kernel totals")
	var row []string
	for _, line := range strings.Split(totals, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "Axpy" {
			row = f
		}
	}
	// Axpy: 3 launches, 18 global requests (3 accesses × 2 warps × 3
	// launches), all sector bytes used.
	if !ok || len(row) != 8 || row[1] != "3" || row[5] != "18" || row[7] != "100%" {
		t.Errorf("report lacks Axpy's totals with 3 launches:\n%s", b.String())
	}
}

// KERN_EMU_LATENCY adds the latency model beside the caller's observer:
// both see the launch, and Close writes the model's report.
func TestEmulatorLatencyReport(t *testing.T) {
	path := t.TempDir() + "/latency.txt"
	t.Setenv("KERN_EMU_LATENCY", path)
	prof := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: prof})
	const n = 1024
	x, _ := kern.Upload(dev, randFloats(n, 1))
	y, _ := kern.Upload(dev, randFloats(n, 2))
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(n), 2, x, y); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if ks := prof.Kernels(); len(ks) != 1 || ks[0].Kernel != "Axpy" {
		t.Errorf("the caller's observer saw %+v, want Axpy once", ks)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{"latency model:", "trips", "Axpy"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// A KERN_EMU_LATENCY path that cannot be written is Close's error, naming
// the report, not a silent loss.
func TestEmulatorLatencyReportUnwritable(t *testing.T) {
	t.Setenv("KERN_EMU_LATENCY", t.TempDir()+"/no/such/dir/latency.txt")
	dev := kern.OpenEmulator()
	x, _ := kern.Upload(dev, randFloats(32, 1))
	y, _ := kern.Upload(dev, randFloats(32, 2))
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(32), 2, x, y); err != nil {
		t.Fatal(err)
	}
	err := dev.Close()
	if err == nil || !strings.Contains(err.Error(), "kern: writing the latency model's report") || !strings.Contains(err.Error(), "no/such/dir") {
		t.Errorf("Close: %v, want the latency report's write error", err)
	}
}
