//go:build gpu

package nccl

// Against the real NCCL and a real GPU: go test -tags gpu ./nccl. A
// one-rank clique needs one GPU (NCCL then copies within the device), so
// any lent machine checks the binding's ABI, CommInitRank's by-value id
// included. It skips, saying why, without a driver, a device or libnccl,
// unless KERN_REQUIRE_GPU=1.

import (
	"os"
	"testing"
	"unsafe"

	"github.com/gokern/kern/cuda"
)

func gpuUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("KERN_REQUIRE_GPU") == "1" {
		t.Fatalf("KERN_REQUIRE_GPU=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

func TestOneRankCliqueOnTheGPU(t *testing.T) {
	if err := cuda.Init(); err != nil {
		gpuUnavailable(t, "no CUDA driver: %v", err)
	}
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		gpuUnavailable(t, "no CUDA device (count %d, %v)", n, err)
	}
	if err := Load(); err != nil {
		gpuUnavailable(t, "no NCCL: %v", err)
	}
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NCCL %s from %s", VersionString(v), Library())
	dev, err := cuda.DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	err = ctx.Do(func() error {
		id, err := GetUniqueID()
		if err != nil {
			return err
		}
		c, err := CommInitRank(1, id, 0)
		if err != nil {
			return err
		}
		defer c.Destroy()
		xs := []float32{1, 2, 3, 4}
		bytes := uint64(len(xs)) * 4
		src, err := cuda.MemAlloc(bytes)
		if err != nil {
			return err
		}
		defer cuda.MemFree(src)
		dst, err := cuda.MemAlloc(bytes)
		if err != nil {
			return err
		}
		defer cuda.MemFree(dst)
		if err := cuda.MemcpyHtoD(src, unsafe.Pointer(&xs[0]), bytes); err != nil {
			return err
		}
		// One rank: the sum is the input, the gather a copy.
		if err := c.AllReduce(src, dst, len(xs), Float32, Sum, 0); err != nil {
			return err
		}
		got := make([]float32, len(xs))
		if err := cuda.CopyDtoH(got, dst); err != nil {
			return err
		}
		for i := range xs {
			if got[i] != xs[i] {
				t.Errorf("one-rank all-reduce: %v, want %v", got, xs)
				break
			}
		}
		if n, err := c.Count(); err != nil || n != 1 {
			t.Errorf("Count = %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
