//go:build linux

package kern_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// stubFaultNext binds the stub's stub_fault_next hook in the library the
// driver loaded: the next launch of kernel writes slot into its module's
// error slot, as the kernel's failed check would on a GPU.
func stubFaultNext(t *testing.T) func(kernel string, slot []byte) {
	t.Helper()
	h, err := purego.Dlopen(cuda.Library(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := purego.Dlsym(h, "stub_fault_next")
	if err != nil {
		t.Fatal(err)
	}
	var hook func(kernel string, slot *byte, n int32)
	purego.RegisterFunc(&hook, addr)
	return func(kernel string, slot []byte) { hook(kernel, &slot[0], int32(len(slot))) }
}

// slotBytes lays out an error slot as compiler.ErrorSlot documents it.
func slotBytes(kernel, site int, index, length uint64, thread, block gpu.Dim3) []byte {
	out := make([]byte, 48)
	le := binary.LittleEndian
	le.PutUint32(out[0:], uint32(kernel+1)<<16|uint32(site+1))
	le.PutUint64(out[8:], uint64(block.X)|uint64(block.Y)<<32|uint64(block.Z)<<48)
	le.PutUint64(out[16:], index)
	le.PutUint64(out[24:], length)
	le.PutUint32(out[32:], uint32(thread.X))
	le.PutUint32(out[36:], uint32(thread.Y))
	le.PutUint32(out[40:], uint32(thread.Z))
	return out
}

// Bad case 8 on the CUDA path: the error slot a GPU kernel writes comes
// back from Sync (launches are asynchronous) as the same DeviceError,
// with the 3-D block and thread.
func TestCUDAFaultsAreDeviceErrorsOnTheStubDriver(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	fault := stubFaultNext(t)
	where, _ := kern.Upload(dev, []int32{0, 0, 0, 0, 0, 0, 0, 0})
	x, _ := kern.Alloc[int32](dev, 5)
	spec := tk.FaultAtKernel.Kernel().Spec()
	// The kernel's index is its .entry's position in the module's PTX.
	kernelIndex := -1
	for i, part := range strings.Split(spec.Module.PTX, ".visible .entry ")[1:] {
		if strings.HasPrefix(part, spec.Entry+"(") {
			kernelIndex = i
		}
	}
	siteOf := func(s string) int {
		for i, site := range spec.Sites {
			if site == s {
				return i
			}
		}
		t.Fatalf("no site %q in %q", s, spec.Sites)
		return -1
	}
	block, thread := gpu.Dim3{X: 70000, Y: 3, Z: 2}, gpu.Dim3{X: 5, Y: 7, Z: 1}
	cases := []struct {
		slot    []byte
		site    string
		panic   bool
		message string
	}{
		{slotBytes(kernelIndex, siteOf("kernels.go:181:4"), 9, 5, thread, block), "kernels.go:181:4", false, "index out of range"},
		{slotBytes(kernelIndex, siteOf("panic at kernels.go:183:8: fault requested"), 0, 0, thread, block), "kernels.go:183:8", true, "fault requested"},
	}
	for _, c := range cases {
		fault("FaultAt", c.slot)
		grid := kern.Blocks(gpu.Dim3{X: 70001, Y: 4, Z: 3}, gpu.Dim3{X: 8, Y: 8, Z: 2})
		if err := tk.FaultAtKernel.Launch(dev, grid, where, x); err != nil {
			t.Fatalf("launch: %v (a GPU reports faults later)", err)
		}
		err := dev.Sync()
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Kernel != "FaultAt" || de.Site != c.site || de.Panic != c.panic || de.Message != c.message ||
			de.Block != block || de.Thread != thread {
			t.Errorf("Sync: %v (%#v), want FaultAt at %s, block %v thread %v", err, de, c.site, block, thread)
		}
		if err := dev.Sync(); err != nil {
			t.Errorf("the slot was not cleared: %v", err)
		}
	}
}
