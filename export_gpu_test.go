//go:build gpu

package kern

import (
	"unsafe"

	"github.com/gokern/kern/cuda"
)

// RawErrorSlots synchronizes a CUDA device and returns every loaded
// module's error slot as the kernels left it, without clearing it: for
// tests that diagnose the device-side fault path.
func RawErrorSlots(d *Device) (map[string][5]uint64, error) {
	c, ok := d.b.(*cudaBackend)
	if !ok {
		return nil, nil
	}
	if err := c.do(cuda.CtxSynchronize); err != nil {
		return nil, err
	}
	c.mu.Lock()
	mods := append([]*cudaModule(nil), c.mods...)
	c.mu.Unlock()
	out := map[string][5]uint64{}
	for _, cm := range mods {
		var raw [errorSlotBytes]byte
		if err := c.do(func() error { return cuda.MemcpyDtoH(unsafe.Pointer(&raw[0]), cm.slot, errorSlotBytes) }); err != nil {
			return nil, err
		}
		out[cm.m.Pkg] = decodeSlot(raw[:])
	}
	return out, nil
}
