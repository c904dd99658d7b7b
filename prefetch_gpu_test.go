//go:build gpu

package kern_test

// Run on a machine with an NVIDIA GPU: go test -tags gpu -run GPUPrefetch .

import (
	"testing"

	"github.com/gokern/kern"
)

// TestGPUPrefetchL2ChangesNothing is TestPrefetchL2ChangesNothing on the
// GPU, where the prefetches reach L2: the in-range ones must not change
// the result, the predicated-off ones must not fault.
func TestGPUPrefetchL2ChangesNothing(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	checkTwoPhasePrefetch(t, dev)
}
