//go:build linux && (amd64 || arm64) && !gpu

package tp

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/cudastub"
	"github.com/gokern/kern/nccl"
)

// The NCCL communicator on package cuda's stub driver (two devices whose
// memory is host memory) and package nccl's stub library (ranks are
// threads), both built here from their C sources: every collective goes
// through kern.CUDAPointer/CUDAStream, the context's Do and the binding.
func TestNCCLCommOnTheStubs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KERN_LIBCUDA", cudastub.Libcuda(t))
	t.Setenv(nccl.LibraryEnv, cudastub.Build(t, "libnccl_stub.so", filepath.Join("nccl", "testdata", "stub")))
	// Each goroutine plays one process of the one-process-per-GPU
	// layout: JoinNCCL hands rank 0's id over a Unix socket.
	sock := filepath.Join(dir, "rank0.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 2
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = ncclRank(ctx, r, n, sock)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func ncclRank(ctx context.Context, r, n int, sock string) error {
	dev, err := kern.OpenCUDA(r)
	if err != nil {
		return err
	}
	defer dev.Close()
	c, err := JoinNCCL(ctx, dev, "unix", sock, r, n)
	if err != nil {
		return err
	}
	st, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	x, _ := kern.Upload(dev, []float32{float32(r + 1), 10})
	if err := c.AllReduceSumF32(st, x); err != nil {
		return err
	}
	if got, _ := x.Download(); fmt.Sprint(got) != "[3 20]" {
		return fmt.Errorf("all-reduce = %v", got)
	}
	b, _ := kern.Upload(dev, []gpu.BFloat16{gpu.ToBFloat16(0.5)})
	if err := c.AllReduceSumBF16(dev, b); err != nil {
		return err
	}
	if got, _ := b.Download(); got[0].Float32() != 1 {
		return fmt.Errorf("bf16 all-reduce = %v", got[0].Float32())
	}
	out, _ := kern.Alloc[float32](dev, 2*n)
	if err := c.AllGatherF32(dev, out, x); err != nil {
		return err
	}
	if got, _ := out.Download(); fmt.Sprint(got) != "[3 20 3 20]" {
		return fmt.Errorf("all-gather = %v", got)
	}
	ids, _ := kern.Upload(dev, []int32{int32(7 * r)})
	if err := c.BroadcastInt32(dev, ids, 1); err != nil {
		return err
	}
	if got, _ := ids.Download(); got[0] != 7 {
		return fmt.Errorf("broadcast = %v", got)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return c.Close()
}
