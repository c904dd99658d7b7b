package qwen3

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
)

// TestLatencyModelDecodeLayer prices one decode step of Qwen3-0.6B's layer
// shapes (or another preset's, KERN_LATENCY_MODEL=qwen3-4b) on the emulator's latency model (emu.Latency, an H100's
// figures): the six-launch ops path against the persistent layer, for one
// sequence or KERN_LATENCY_SEQS of them. The
// model counts chains of dependent round trips to memory and prices them;
// its times compare designs, they do not predict a GPU (emu/latency.go).
// It prints a table and checks only that both paths were timed. Minutes
// on the emulator, so it runs when KERN_LATENCY_MODEL is set.
func TestLatencyModelDecodeLayer(t *testing.T) {
	preset := os.Getenv("KERN_LATENCY_MODEL")
	switch preset {
	case "":
		t.Skip("set KERN_LATENCY_MODEL=1 (or a preset, qwen3-4b) to price a decode step on the emulator's latency model (minutes)")
	case "1":
		preset = "qwen3-0.6b"
	}
	cfg, ok := Presets[preset]
	if !ok {
		t.Fatalf("KERN_LATENCY_MODEL=%s: no such preset", preset)
	}
	cfg.NumHiddenLayers, cfg.VocabSize = 1, 2048 // one layer; a small lm_head
	const context = 64
	seqs := 1
	if v := os.Getenv("KERN_LATENCY_SEQS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > megaMaxS {
			t.Fatalf("KERN_LATENCY_SEQS=%s: want 1 to %d", v, megaMaxS)
		}
		seqs = n
	}
	var report strings.Builder
	for _, persistent := range []bool{false, true} {
		grid := 0
		if persistent {
			grid = 128 // the emulator's most co-resident blocks; an H100 holds 132
		}
		m, ts := timedDecodeStep(t, cfg, grid, context, seqs)
		name := "ops path"
		if persistent {
			name = "persistent layer"
		}
		var sum float64
		for _, k := range ts {
			sum += k.Micros * float64(k.Launches)
		}
		fmt.Fprintf(&report, "%s, %s, one decode step of %d sequences at context %d:\n", preset, name, seqs, context)
		if err := emu.WriteTimings(&report, emu.H100, ts); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&report, "sum %.2f µs (kernels only; launches and gaps not priced)\n\n", sum)
		if len(ts) == 0 {
			t.Errorf("%s: no kernel timed", name)
		}
		if persistent && m.ops.persistentSteps == 0 {
			t.Errorf("the persistent layer did not run the decode step")
		}
	}
	t.Log("\n" + report.String())
}

// TestPersistentRoundTrips holds the persistent layer's chain of
// dependent round trips to memory (emu.Latency) on a small model at a
// 16-block grid, where each projection has more units than blocks (the
// paired units) and attention splits: one decode step at context 40.
// The chain runs through the layer's five phases and four grid barriers;
// a phase that waits for each of a block's units, slices or splits in
// turn adds trips here.
func TestPersistentRoundTrips(t *testing.T) {
	_, ts := timedDecodeStep(t, roundTripModel(), 16, 40, 1)
	// 22 measured; one of slack for the emulator's order of the blocks
	// that hand off through memory (split-K's last arrival).
	holdTrips(t, ts, "megaLayer", 23)
}

// TestPersistentBatchRoundTrips holds the persistent layer's chain at 8
// sequences (the same model, grid and context as
// TestPersistentRoundTrips): the norms and the inputs' copies load every
// row at once, the attention's items are split-major, so that the used
// splits of all 8 sequences are one round of the grid, and an empty split
// costs no round trip. A row at a time, or 8 rounds of attention on the
// same blocks, adds trips a sequence.
func TestPersistentBatchRoundTrips(t *testing.T) {
	_, ts := timedDecodeStep(t, roundTripModel(), 16, 40, 8)
	// 24 measured (92 with a row at a time and the items sequence-major);
	// one of slack, as TestPersistentRoundTrips.
	holdTrips(t, ts, "megaLayer", 25)
}

// roundTripModel is the persistent round-trip tests' one-layer model:
// at a 16-block grid its projections have more units than blocks and
// its attention splits.
func roundTripModel() Config {
	cfg := Presets["tiny"]
	cfg.HiddenSize, cfg.IntermediateSize, cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = 256, 768, 128, 4, 2
	cfg.NumHiddenLayers = 1
	return cfg
}

// holdTrips fails unless the first kernel timed whose name starts with
// prefix waits on at most most dependent round trips.
func holdTrips(t *testing.T, ts []emu.Timing, prefix string, most int) {
	t.Helper()
	for _, k := range ts {
		if strings.HasPrefix(k.Kernel, prefix) {
			t.Logf("%s: %d trips, %d cycles: %s", k.Kernel, k.Trips, k.Cycles, strings.Join(k.Chain, " → "))
			if k.Trips > most {
				t.Errorf("%s waits on %d dependent round trips, want at most %d: %s", k.Kernel, k.Trips, most, strings.Join(k.Chain, " → "))
			}
			return
		}
	}
	t.Fatalf("no %s launch timed", prefix)
}

// timedDecodeStep makes a random model of cfg on an emulator watched by
// the latency model, prefills seqs sequences of context tokens and
// returns the model and the timings of one decode step of all of them
// after it; grid > 0 runs the step on the persistent layer at that grid.
func timedDecodeStep(t *testing.T, cfg Config, grid, context, seqs int) (*Model, []emu.Timing) {
	t.Helper()
	model := emu.NewLatency(emu.H100)
	m := randomOps(t, kern.OpenEmulator(emu.Options{Observer: model}), cfg, 1, false)
	if grid > 0 {
		persist(t, m, grid)
	}
	pool, err := m.NewKVPool(seqs*(context+16), 16)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	ss := make([]*Seq, seqs)
	prompts, next := make([][]int32, seqs), make([][]int32, seqs)
	for i := range ss {
		ss[i] = pool.NewSeq()
		prompts[i], next[i] = make([]int32, context), []int32{int32(1 + i)}
	}
	if _, err := m.ForwardBatch(ss, prompts); err != nil {
		t.Fatal(err)
	}
	model.Reset()
	if _, err := m.ForwardBatch(ss, next); err != nil {
		t.Fatal(err)
	}
	return m, model.Timings()
}

// TestQKVPrepRoundTrips holds the ops path's qkvPrep at one dependent
// round trip to memory (emu.Latency): the head vector, the norm weights,
// the position and the slot are all loaded before any is used. A
// conversion of a loaded word ahead of a later load's bounds check (a
// branch the warp issues in order) makes that load wait: 3 trips.
func TestQKVPrepRoundTrips(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.NumHiddenLayers = 1
	_, ts := timedDecodeStep(t, cfg, 0, 40, 1)
	holdTrips(t, ts, "qkvPrep", 1)
}
