package qwen3

import (
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/internal/fixture"
)

// TestDecodeGraphMatchesEager decodes two sequences together on the ops
// path, once eagerly and once through decode graphs, and checks every
// step's logits are bit-identical and that the graph was replayed (the
// first step of the shape runs eagerly, the second is captured), with
// decode attention split in two (split-K). A
// replay that read stale tables (positions, slots, lengths) or a
// captured scalar that should have changed would show here as different
// logits after the first replayed step.
func TestDecodeGraphMatchesEager(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-tied")
	// Not native mode: it records and replays graphs through the same
	// host code (kern.Stream) as the emulator, and takes twice as long
	// here. With -tags gpu this runs on CUDA too: a driver graph.
	for _, d := range testDevices {
		if d.name == "native" {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			run := func(graphs bool) ([][]float32, int) {
				m, err := Load(d.dev, dir, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				if err := m.UseOps(); err != nil {
					t.Fatal(err)
				}
				// Split-K every 64 positions: the page table holds 128, so
				// decode attention runs 2 splits, both used by the first
				// sequence (70 positions and up) and one by the second.
				m.ops.partition = 64
				if graphs {
					if err := m.EnableGraphs(); err != nil {
						t.Fatal(err)
					}
				}
				pool, err := m.NewKVPool(8, DefaultPageSize)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Free()
				a, b := pool.NewSeq(), pool.NewSeq()
				var out [][]float32
				step := func(toks [][]int32) {
					t.Helper()
					lg, err := m.ForwardBatch([]*Seq{a, b}, toks)
					if err != nil {
						t.Fatal(err)
					}
					xs, err := lg.Download()
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, xs)
				}
				long := make([]int32, 70)
				for i := range long {
					long[i] = int32((i*37 + 5) % 1000)
				}
				step([][]int32{long, {535, 897}})
				V := m.Config.VocabSize
				// 6 steps: the first sequence crosses a page boundary (80).
				for i := 0; i < 6; i++ {
					last := out[len(out)-1]
					step([][]int32{{argmax(last[:V])}, {argmax(last[V:])}})
				}
				return out, m.GraphReplays()
			}
			eager, n0 := run(false)
			graph, n := run(true)
			if n0 != 0 || n != 5 {
				t.Errorf("graph replays: %d without graphs, %d with, want 0 and 5 (6 decode steps, the first eager)", n0, n)
			}
			for s := range eager {
				for j := range eager[s] {
					if eager[s][j] != graph[s][j] {
						t.Fatalf("step %d logit %d: graph %g, eager %g", s, j, graph[s][j], eager[s][j])
					}
				}
			}
		})
	}
}

// TestDecodeGraphSurvivesPrefills: prefills of many lengths (each a
// workspace shape of its own) evict other shapes before a decode shape
// whose graph was captured, so decoding resumes from the graph.
func TestDecodeGraphSurvivesPrefills(t *testing.T) {
	m, err := NewRandom(testDevices[0].dev, Presets["tiny"], 3)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UseOps(); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableGraphs(); err != nil {
		t.Fatal(err)
	}
	pool, err := m.NewKVPool(8, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	a := pool.NewSeq()
	step := func(s *Seq, ids []int32) {
		t.Helper()
		if _, err := m.ForwardBatch([]*Seq{s}, [][]int32{ids}); err != nil {
			t.Fatal(err)
		}
	}
	step(a, []int32{1, 2, 3})
	for range 3 { // eager, captured, replayed
		step(a, []int32{4})
	}
	before := m.GraphReplays()
	for n := 1; n <= maxWorkspaces+1; n++ {
		b := pool.NewSeq()
		step(b, make([]int32, n+1)) // prefill shapes (rows n+1)
		b.Release()
	}
	step(a, []int32{5})
	if got := m.GraphReplays() - before; got != 1 {
		t.Errorf("the decode step after %d prefill shapes: %d graph replays, want 1", maxWorkspaces+1, got)
	}
}

// TestOpsDecodeKeepsThePDLContract runs prefill and decode steps of the
// ops path (split-K attention reduced in the kernel, graphs) on the
// emulator's pdlcheck, which models programmatic dependent launch: no
// kernel of the step reads, before its gpu.WaitPriorGrids, memory the
// kernels before it write (the GEMV's early weight loads included), nor
// writes before it.
func TestOpsDecodeKeepsThePDLContract(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{PDLcheck: true})
	defer dev.Close()
	m, err := Load(dev, fixture.Model(t, "tiny-qwen3-tied"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UseOps(); err != nil {
		t.Fatal(err)
	}
	m.ops.partition = 64
	if err := m.EnableGraphs(); err != nil {
		t.Fatal(err)
	}
	pool, err := m.NewKVPool(8, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	a, b := pool.NewSeq(), pool.NewSeq()
	long := make([]int32, 70)
	for i := range long {
		long[i] = int32((i*37 + 5) % 1000)
	}
	toks := [][]int32{long, {535, 897}}
	for i := 0; i < 4; i++ {
		if _, err := m.ForwardBatch([]*Seq{a, b}, toks); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		toks = [][]int32{{int32(11 * i)}, {int32(7 + i)}}
	}
}
