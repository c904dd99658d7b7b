//go:build linux && (amd64 || arm64) && !gpu

package qwen3

import (
	"fmt"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/internal/cudastub"
)

// TestStepUploadsItsTablesOnce: on the CUDA device (package cuda's stub
// driver, built here from its C source: device memory is host memory,
// kernels do nothing), a step copies its int32 tables (token ids,
// positions, slots, block table, sequence lengths, offsets) to the device
// in one copy: one cuMemcpyHtoD on the float32 path and eager steps of
// the ops path (a prefill there copies one more table), and none of its
// own for a step replayed from its decode graph, whose first node copies
// the tables from page-locked host memory. Each synchronous copy is a
// round trip to a GPU; a decode step on the ops path made nine.
func TestStepUploadsItsTablesOnce(t *testing.T) {
	if GraphCopiesOff {
		t.Skip("KERN_GRAPH_COPIES=0: the graphs hold no copies")
	}
	t.Setenv("KERN_LIBCUDA", cudastub.Libcuda(t))
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatalf("opening the stub device: %v", err)
	}
	defer dev.Close()
	h, err := purego.Dlopen(cuda.Library(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var calls func(name string) int64
	purego.RegisterLibFunc(&calls, h, "stub_calls")
	uploads := func() [2]int64 { return [2]int64{calls("cuMemcpyHtoD_v2"), calls("cuMemcpyHtoDAsync_v2")} }
	downloads := func() int64 { return calls("cuMemcpyDtoH_v2") } // synchronous: a round trip each
	waits := func() int64 { return calls("cuStreamSynchronize") + calls("cuCtxSynchronize") }

	for _, ops := range []bool{false, true} {
		m, err := NewRandom(dev, Presets["tiny"], 1)
		if err != nil {
			t.Fatal(err)
		}
		if ops {
			if err := m.UseOps(); err != nil {
				t.Fatal(err)
			}
			if err := m.EnableGraphs(); err != nil {
				t.Fatal(err)
			}
			if err := m.SetDecodeCandidates(4); err != nil {
				t.Fatal(err)
			}
		}
		pool, err := m.NewKVPool(8, DefaultPageSize)
		if err != nil {
			t.Fatal(err)
		}
		a, b := pool.NewSeq(), pool.NewSeq()
		var mark []uint64 // what the candidates' device buffer held before the step
		for i, toks := range [][][]int32{{{1, 2, 3}, {4, 5}}, {{6}, {7}}, {{8}, {9}}, {{10}, {11}}, {{12}, {13}}} {
			if w := m.ws[wsKey{2, 2, m.graphPages(pool)}]; w != nil && w.cand != nil {
				// The stub's kernels do nothing: mark the device buffer,
				// and the step's copy must bring the mark to the host.
				mark = []uint64{uint64(i)<<32 | 1, 2, 3, 4, 5, 6, 7, uint64(i)}
				if err := w.cand.CopyFrom(mark); err != nil {
					t.Fatal(err)
				}
			}
			before, down, wait := uploads(), downloads(), waits()
			if _, err := m.ForwardBatch([]*Seq{a, b}, toks); err != nil {
				t.Fatalf("ops=%v, step %d: %v", ops, i, err)
			}
			if n := waits() - wait; ops && i >= 3 && n != 1 {
				t.Errorf("ops=%v, step %d (replayed): %d waits for the device, want 1 (the graph's, which the error slots' reads join)", ops, i, n)
			}
			if n := downloads() - down; ops && i >= 3 && n != 0 {
				t.Errorf("ops=%v, step %d (replayed): %d synchronous device-to-host copies, want 0 (the candidates' copy is the graph's, the modules' error slots are read together on a stream)", ops, i, n)
			}
			if keys, _ := m.DecodeCandidates(); ops && i >= 2 && fmt.Sprint(keys) != fmt.Sprint(mark) {
				t.Errorf("ops=%v, step %d: candidates %v on the host, want the device's %v", ops, i, keys, mark)
			}
			after := uploads()
			got := [2]int64{after[0] - before[0], after[1] - before[1]}
			// [synchronous copies, queued copies]
			want := [2]int64{1, 0}
			switch {
			case ops && i == 0:
				want = [2]int64{2, 0} // a prefill on the ops path adds the slots its keys are gathered from
			case ops && i <= 2:
				want = [2]int64{0, 1} // a decode shape's first step, then its capture: the tables' copy is queued
			case ops:
				want = [2]int64{0, 0} // replayed: the copy is the graph's
			}
			if got != want {
				t.Errorf("ops=%v, step %d (%v): %v host-to-device copies (synchronous, queued), want %v", ops, i, toks, got, want)
			}
			// Whichever way they went, the device has the step's tables.
			var w *workspace
			for _, x := range m.ws {
				if x.R == len(toks[0])+len(toks[1]) && x.S == 2 {
					w = x
				}
			}
			if dev, err := w.tables.Download(); err != nil || fmt.Sprint(dev) != fmt.Sprint(w.hostTables.Data()) {
				t.Errorf("ops=%v, step %d: the device's tables are not the host's (%v)", ops, i, err)
			}
		}
		if ops && m.GraphReplays() == 0 {
			t.Errorf("ops: no decode step replayed from its graph")
		}
		pool.Free()
		m.Free()
	}
}
