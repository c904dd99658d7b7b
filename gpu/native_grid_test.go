package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestNativeGridSyncOrdersPhases has every thread read, after a GridSync,
// what a thread of another block wrote before it, over several rounds.
func TestNativeGridSyncOrdersPhases(t *testing.T) {
	const blocks, threads, rounds = 7, 64, 5
	n := blocks * threads
	x := make([]int, n)
	bad := make([]int, n)
	err := RunNativeCooperative(context.Background(), Dim3{X: blocks, Y: 1, Z: 1}, Dim3{X: threads, Y: 1, Z: 1}, 0, func(th Thread) {
		i := th.GlobalX()
		for r := 0; r < rounds; r++ {
			x[i] = r*n + i
			GridSync(th)
			j := (i + (r+1)*threads) % n // a thread of another block
			if x[j] != r*n+j {
				bad[i]++
			}
			GridSync(th) // nobody writes round r+1 before every read of round r
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bad {
		if b != 0 {
			t.Fatalf("thread %d read %d stale values", i, b)
		}
	}
}

func TestNativeGridSyncDivergence(t *testing.T) {
	err := RunNativeCooperative(context.Background(), Dim3{X: 4, Y: 1, Z: 1}, Dim3{X: 32, Y: 1, Z: 1}, 0, func(th Thread) {
		if th.BlockIdx().X == 2 {
			return
		}
		GridSync(th)
	})
	var be *BarrierError
	if !errors.As(err, &be) || be.Kind != "grid barrier divergence" || !strings.Contains(be.Detail, "3 blocks at GridSync (native_grid_test.go:") || !strings.Contains(be.Detail, "1 returned") {
		t.Fatalf("got %v, want a grid barrier divergence naming the GridSync line", err)
	}
}

func TestNativeGridSyncNeedsACooperativeLaunch(t *testing.T) {
	err := RunNative(Dim3{X: 2, Y: 1, Z: 1}, Dim3{X: 32, Y: 1, Z: 1}, 0, func(th Thread) { GridSync(th) })
	var be *BarrierError
	if !errors.As(err, &be) || be.Kind != "grid sync outside a cooperative launch" || !strings.Contains(be.Detail, "native_grid_test.go:") {
		t.Fatalf("got %v", err)
	}
}

// TestNativeGridSyncUnwindsOnAPanic: a block that panics fails the launch
// and the blocks waiting at GridSync unwind instead of waiting forever.
func TestNativeGridSyncUnwindsOnAPanic(t *testing.T) {
	err := RunNativeCooperative(context.Background(), Dim3{X: 3, Y: 1, Z: 1}, Dim3{X: 32, Y: 1, Z: 1}, 0, func(th Thread) {
		if th.BlockIdx().X == 1 && th.ThreadIdx().X == 5 {
			panic("boom")
		}
		GridSync(th)
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Block.X != 1 {
		t.Fatalf("got %v, want block 1's panic", err)
	}
}
