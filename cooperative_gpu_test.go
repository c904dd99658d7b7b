//go:build gpu

package kern_test

// Run on a machine with an NVIDIA GPU: go test -tags gpu -run GPUGridSync .

import (
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestGPUGridSyncFullGrid runs GridRotate on the largest grid the GPU
// holds at once (MaxCooperativeBlocks): 200 rounds of two grid barriers,
// every read crossing blocks, exact integers; then times one barrier.
func TestGPUGridSyncFullGrid(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	block := gpu.Dim3{X: 64, Y: 1, Z: 1}
	blocks, err := tk.GridRotateKernel.Kernel().MaxCooperativeBlocks(dev, block, 0)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	n := blocks * 64
	want := make([]int32, n)
	for i := range want {
		for r := 0; r < rounds; r++ {
			want[i] += int32(r*n + (i+64*(r+1))%n)
		}
	}
	buf, _ := kern.Alloc[int32](dev, n)
	acc, _ := kern.Alloc[int32](dev, n)
	grid := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, block)
	start := time.Now()
	if err := tk.GridRotateKernel.Launch(dev, grid, buf, acc, rounds); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	expectScaled(t, dev.String(), acc, want, 1)
	t.Logf("%s: %d blocks, %d grid barriers in %v (%.2f µs each, launch included)", dev, blocks, 2*rounds, el, float64(el.Microseconds())/(2*rounds))
	// One block past the limit is refused before the driver sees it.
	if err := tk.GridRotateKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: blocks + 1, Y: 1, Z: 1}, block), buf, acc, 1); err == nil {
		t.Errorf("a grid of %d blocks (limit %d) was launched", blocks+1, blocks)
	}
}
