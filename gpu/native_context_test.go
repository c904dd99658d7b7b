package gpu_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gokern/kern/gpu"
)

// A cancelled launch whose threads meet at barriers stops cleanly: every
// thread unwinds at its next Sync, and nothing is abandoned.
func TestContextStopsThreadsAtBarriers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := gpu.RunNativeContext(ctx, d3(4, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		for {
			th.Sync()
		}
	})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gpu.ErrAbandoned) {
		t.Fatalf("err = %v, want DeadlineExceeded without ErrAbandoned", err)
	}
}

func TestDoneContextRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := gpu.RunNativeContext(ctx, d3(1, 1, 1), d3(1, 1, 1), 0, func(gpu.Thread) { ran = true })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("err = %v, ran %v; want Canceled and nothing run", err, ran)
	}
}
