// Command transpose runs three matrix transposes — naive, a 32×32 shared
// tile, and a 32×33 padded tile — checks each exactly against the host,
// and profiles their memory traffic on kern's emulator: shared-memory
// bank conflicts and global-memory sector efficiency. On a GPU it also
// times them.
package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("transpose", func(dev *kern.Device) error {
		n := 8192
		if dev.Kind() != "cuda" {
			n = 1024
		}
		return run(dev, n, n, 256)
	})
}

// version is one transpose kernel; its launcher's Launch has the same
// signature for all three.
type version struct {
	name   string
	launch func(q kern.Queue, grid kern.Grid, in, out *kern.Buffer[float32], rows, cols int) error
}

var versions = []version{
	{"TransposeNaive", TransposeNaiveKernel.Launch},
	{"TransposeTiled", TransposeTiledKernel.Launch},
	{"TransposePadded", TransposePaddedKernel.Launch},
}

// grid covers a rows×cols input with one 32×8 block per 32×32 tile. Z is
// written out so that 0 rows is a grid of 0 blocks, not the shorthand
// for one row of blocks.
func grid(rows, cols int) kern.Grid {
	return kern.Blocks(gpu.Dim3{X: (cols + tile - 1) / tile, Y: (rows + tile - 1) / tile, Z: 1}, gpu.Dim3{X: 32, Y: 8})
}

// run checks every version on a rows×cols matrix on dev, profiles them on
// a profRows×profRows matrix on the emulator, and times them if dev is a
// GPU.
func run(dev *kern.Device, rows, cols, profRows int) error {
	xs := make([]float32, rows*cols)
	for i := range xs {
		xs[i] = float32(i % 1_000_003) // exact, and distinct within a row
	}
	in, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer in.Free()
	out, err := kern.Alloc[float32](dev, rows*cols)
	if err != nil {
		return err
	}
	defer out.Free()
	g := grid(rows, cols)
	// The naive kernel covers the matrix one thread per element with the
	// same 32×8 blocks.
	gNaive := kern.Cover2(cols, rows)

	for i, v := range versions {
		gv := g
		if i == 0 {
			gv = gNaive
		}
		if err := v.launch(dev, gv, in, out, rows, cols); err != nil {
			return err
		}
		ys, err := out.Download()
		if err != nil {
			return err
		}
		// A transpose moves bits: the tolerance is zero.
		for r := range rows {
			for c := range cols {
				if got, want := ys[c*rows+r], xs[r*cols+c]; got != want {
					return fmt.Errorf("%s: out[%d][%d] = %v, want %v", v.name, c, r, got, want)
				}
			}
		}
	}
	fmt.Printf("%d×%d float32 transpose: naive, 32×32 tile and 32×33 tile all match the host exactly\n", rows, cols)

	prof, err := profile(profRows)
	if err != nil {
		return err
	}
	printProfile(profRows, prof)

	if dev.Kind() != "cuda" {
		fmt.Println("(timings are only meaningful on a GPU; run there to see GB/s)")
		return nil
	}
	for i, v := range versions {
		gv := g
		if i == 0 {
			gv = gNaive
		}
		const reps = 20
		if err := dev.Sync(); err != nil {
			return err
		}
		start := time.Now()
		for range reps {
			if err := v.launch(dev, gv, in, out, rows, cols); err != nil {
				return err
			}
		}
		if err := dev.Sync(); err != nil {
			return err
		}
		sec := time.Since(start).Seconds() / reps
		fmt.Printf("%-16s %8.1f µs  %7.1f GB/s (read + write)\n", v.name, sec*1e6, float64(8*rows*cols)/sec/1e9)
	}
	return nil
}

// memStats are one kernel's memory counters from emu.Profile, each
// indexed [load, store].
type memStats struct{ sharedReq, wave, conflicts, globReq, sectors, bytes [2]int64 }

// wavefronts is the shared-memory wavefronts per request of direction d:
// 1 with no bank conflict, 32 when all 32 lanes hit one bank.
func (m *memStats) wavefronts(d int) float64 { return float64(m.wave[d]) / float64(m.sharedReq[d]) }

// efficiency is the share of the moved global sectors' bytes that the
// lanes asked for, in direction d.
func (m *memStats) efficiency(d int) float64 { return float64(m.bytes[d]) / float64(32*m.sectors[d]) }

// profile runs each version on an n×n matrix on an emulator with the
// emu.Profile observer and sums its counters per kernel.
func profile(n int) (map[string]*memStats, error) {
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	defer dev.Close()
	in, err := kern.Alloc[float32](dev, n*n)
	if err != nil {
		return nil, err
	}
	out, err := kern.Alloc[float32](dev, n*n)
	if err != nil {
		return nil, err
	}
	for i, v := range versions {
		g := grid(n, n)
		if i == 0 {
			g = kern.Cover2(n, n)
		}
		if err := v.launch(dev, g, in, out, n, n); err != nil {
			return nil, err
		}
	}
	byKernel := map[string]*memStats{}
	for _, s := range p.Stats() {
		// The profile names the entry that ran: TransposePadded (idx32)
		// runs its 32-bit entry, TransposePadded_i32, at these sizes.
		name := strings.TrimSuffix(s.Kernel, "_i32")
		m := byKernel[name]
		if m == nil {
			m = &memStats{}
			byKernel[name] = m
		}
		d := 0
		if strings.HasPrefix(s.Instr, "st.") {
			d = 1
		}
		m.sharedReq[d] += s.SharedRequests
		m.wave[d] += s.SharedWavefronts
		m.conflicts[d] += s.BankConflicts()
		m.globReq[d] += s.GlobalRequests
		m.sectors[d] += s.GlobalSectors
		m.bytes[d] += s.GlobalBytes
	}
	for _, v := range versions {
		if byKernel[v.name] == nil {
			return nil, fmt.Errorf("the profile has no %s", v.name)
		}
	}
	return byKernel, nil
}

// printProfile prints, per kernel, the shared-memory wavefronts per
// request and the global sector efficiency.
func printProfile(n int, prof map[string]*memStats) {
	fmt.Printf("emulator profile of a %d×%d transpose (emu.Profile, sm_80 memory model):\n", n, n)
	fmt.Printf("  %-16s  %-26s  %-26s  %s\n", "kernel", "shared store: wavefr./req", "shared load: wavefr./req", "global sector efficiency (load, store)")
	for _, v := range versions {
		m := prof[v.name]
		shared := func(d int) string {
			if m.sharedReq[d] == 0 {
				return "-"
			}
			return fmt.Sprintf("%5.2f (%d conflicts)", m.wavefronts(d), m.conflicts[d])
		}
		fmt.Printf("  %-16s  %-26s  %-26s  %3.0f%%, %3.0f%%\n", v.name, shared(1), shared(0), 100*m.efficiency(0), 100*m.efficiency(1))
	}
	fmt.Println("The 32×32 tile's column read is a 32-way bank conflict (32 wavefronts a request); the 33-float\n" +
		"pitch removes it. The naive kernel's writes use 4 of every 32 bytes they move.")
}
