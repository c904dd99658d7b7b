package compiler

// racecheck with mbarrier ordering, end to end: a producer warp TMA-loads
// tiles into a two-stage ring guarded by "full" and "empty" mbarriers and
// a consumer warp sums them. Correct, nothing is reported (no bar.sync
// orders any of it); with a planted bug — the consumer skips its wait on
// "full", or releases a stage on "empty" before reading it — racecheck
// reports the hazard, and so does synccheck on its own.

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

const ringKernel = `//kern:arch sm_90a
package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func Ring(t gpu.Thread, tmap []uint64, out []float32, ntiles, bug int) {
	tiles := gpu.Shared[gpu.Half](t, 2*64*64) // two stages of a 64×64 f16 box
	bars := gpu.Shared[uint64](t, 4)           // full[0..1], empty[0..1]
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bars[0], 1)
		gpu.MbarrierInit(t, &bars[1], 1)
		gpu.MbarrierInit(t, &bars[2], 32)
		gpu.MbarrierInit(t, &bars[3], 32)
	}
	t.Sync()
	if t.Warp() == 1 {
		if t.Lane() == 0 && len(tmap) >= 16 {
			for j := 0; j < ntiles; j++ {
				s := j % 2
				if j >= 2 {
					for !gpu.MbarrierTryWait(t, &bars[2+s], (j/2-1)&1) {
					}
				}
				gpu.MbarrierArriveExpectTx(t, &bars[s], 64*64*2)
				gpu.TMALoad2D(t, &tiles[s*4096], &tmap[0], 0, 64*j, &bars[s])
			}
		}
		return
	}
	sum := float32(0)
	for j := 0; j < ntiles; j++ {
		s := j % 2
		if bug != 1 {
			for !gpu.MbarrierTryWait(t, &bars[s], (j/2)&1) {
			}
		}
		if bug == 2 {
			gpu.MbarrierArrive(t, &bars[2+s])
		}
		for e := i; e < 4096; e += 32 {
			sum += tiles[s*4096+e].Float32()
		}
		if bug != 2 {
			gpu.MbarrierArrive(t, &bars[2+s])
		}
	}
	if i < len(out) {
		out[i] = sum
	}
}
`

func TestRacecheckTMARing(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(ringKernel))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const ntiles, rows = 5, 5 * 64
	run := func(bug int, opts emu.Options) ([]float32, []emu.Finding, error) {
		dev := emu.NewDevice(opts)
		src := make([]byte, rows*128)
		for i := range rows * 64 {
			binary.LittleEndian.PutUint16(src[2*i:], uint16(gpu.ToHalf(float32(i%7))))
		}
		base, _ := dev.Alloc(len(src))
		if err := dev.Write(base, src); err != nil {
			t.Fatal(err)
		}
		words, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(base), ElemBytes: 2, Dims: [2]int{64, rows},
			RowBytes: 128, Box: [2]int{64, 64}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			t.Fatal(err)
		}
		mapRaw := make([]byte, 8*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint64(mapRaw[8*i:], w)
		}
		mp, _ := dev.Alloc(len(mapRaw))
		op, _ := dev.Alloc(4 * 32)
		if err := dev.Write(mp, mapRaw); err != nil {
			t.Fatal(err)
		}
		var params []byte
		for _, v := range []uint64{mp, uint64(len(words)), op, 32, ntiles, uint64(bug)} {
			params = binary.LittleEndian.AppendUint64(params, v)
		}
		err = dev.Launch(mod, "Ring", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{64, 1, 1}, Params: params})
		var rep *emu.Report
		var found []emu.Finding
		if errors.As(err, &rep) {
			found = rep.Findings
			if err == error(rep) {
				err = nil
			}
		}
		raw := make([]byte, 4*32)
		if err := dev.Read(op, raw); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 32)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, found, err
	}
	both := emu.Options{Racecheck: true, Synccheck: true}
	out, found, err := run(0, both)
	if err != nil || len(found) != 0 {
		t.Fatalf("correct ring: err %v, findings %v", err, found)
	}
	// Each lane sums a swizzled slice of every tile; all lanes together
	// sum the tiles whatever the layout (small integers: exact).
	got, want := 0.0, 0.0
	for l := range 32 {
		got += float64(out[l])
	}
	for e := range ntiles * 4096 {
		want += float64(e % 7)
	}
	if got != want {
		t.Fatalf("sum of the tiles %v, want %v", got, want)
	}
	// synccheck alone reports the TMA hand-over hazards too.
	if _, found, err := run(0, emu.Options{Synccheck: true}); err != nil || len(found) != 0 {
		t.Fatalf("correct ring under synccheck: err %v, findings %v", err, found)
	}
	for bug, name := range map[int]string{1: "skipped wait on full", 2: "early release of empty"} {
		for tool, opts := range map[string]emu.Options{"racecheck": both, "synccheck": {Synccheck: true}} {
			_, found, _ := run(bug, opts)
			ok := false
			for _, f := range found {
				if f.Tool == tool && strings.Contains(f.What, "hazard") {
					ok = true
					t.Logf("%s: %s", name, f.String())
					break
				}
			}
			if !ok {
				t.Errorf("%s: no %s hazard reported (findings %v)", name, tool, found)
			}
		}
	}
}
