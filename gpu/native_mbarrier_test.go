package gpu_test

// Tests of native-mode mbarriers: the same producer/consumer hand-off as
// emu's testdata/mbarrier.ptx, as a Go kernel.

import (
	"context"
	"testing"
	"time"

	"github.com/gokern/kern/gpu"
)

func TestMbarrierPingpongNative(t *testing.T) {
	const rounds = 4
	out := make([]int32, 3*32)
	err := gpu.RunNative(d3(3, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		bars := gpu.Shared[uint64](th, 2)
		buf := gpu.Shared[int32](th, 32)
		full, empty := &bars[0], &bars[1]
		tid := th.ThreadIdx().X
		j := tid % 32
		if tid == 0 {
			gpu.MbarrierInit(th, full, 32)
			gpu.MbarrierInit(th, empty, 32)
		}
		th.Sync()
		if tid >= 32 { // producer warp
			for k := range rounds {
				if k > 0 {
					for !gpu.MbarrierTryWait(th, empty, (k-1)&1) {
					}
				}
				buf[j] = int32(1000*k + j)
				if j == 0 {
					gpu.MbarrierArriveExpectTx(th, full, 128)
				} else {
					gpu.MbarrierArrive(th, full)
				}
				if j == 1 {
					gpu.MbarrierCompleteTx(th, full, 128)
				}
			}
			return
		}
		var acc int32
		for k := range rounds {
			for !gpu.MbarrierTryWait(th, full, k&1) {
			}
			acc += buf[j]
			gpu.MbarrierArrive(th, empty)
		}
		out[32*th.BlockIdx().X+j] = acc
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := int32(6000 + 4*(i%32)); v != want {
			t.Errorf("block %d lane %d: sum %d, want %d", i/32, i%32, v, want)
		}
	}
}

// TestMbarrierMisuseNative: an arrival past the expected count is an
// error of the launch, not silent corruption.
func TestMbarrierMisuseNative(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := gpu.RunNativeContext(ctx, d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		bar := gpu.Shared[uint64](th, 1)
		if th.ThreadIdx().X == 0 {
			gpu.MbarrierInit(th, &bar[0], 1)
			gpu.MbarrierArriveExpectTx(th, &bar[0], 16) // phase 0 now waits for 16 bytes
			gpu.MbarrierArrive(th, &bar[0])             // a second arrival: too many
		}
	})
	if err == nil {
		t.Fatal("two arrivals at an mbarrier expecting one succeeded")
	}
	t.Log(err)
}
