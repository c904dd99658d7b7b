//go:build gpu

package kern

import (
	"unsafe"

	"github.com/gokern/kern/cuda"
)

// RawErrorSlots synchronizes a CUDA device and returns every loaded
// module's error slot as the kernels left it, without clearing it: for
// tests that diagnose the device-side fault path. The site code is
// ErrorSlotCode(slot).
func RawErrorSlots(d *Device) (map[string][]byte, error) {
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
	out := map[string][]byte{}
	for _, cm := range mods {
		var raw [errorSlotBytes]byte
		if err := c.do(func() error { return cuda.MemcpyDtoH(unsafe.Pointer(&raw[0]), cm.slot, errorSlotBytes) }); err != nil {
			return nil, err
		}
		out[cm.m.Pkg] = raw[:]
	}
	return out, nil
}

// ErrorSlotCode is the site code in a raw error slot (0: no check failed).
func ErrorSlotCode(raw []byte) uint32 { return decodeSlot(raw).code }
