package ops

// Where the Hopper kernels apply. Matmul (v3, ops/internal/mmh) and
// FlashAttention (ops/internal/attnh) have sm_90a variants; an sm_90a
// module loads only on compute capability 9.0 exactly (not 8.x, not 10.0:
// the "a" features are not forward compatible), so both ops ask this one
// helper. The emulator runs every target and reports 0.0, so it runs the
// portable kernels unless a test sets forceHopper; native mode runs Go
// and never takes the Hopper path (its TMA and wgmma stand-ins are the
// emulator's business).

import "github.com/gokern/kern"

// forceHopper makes hopperKernels true on the emulator; tests set it
// (withHopper) to run the sm_90a kernels through the public ops.
var forceHopper bool

// hopperKernels reports whether the ops run their sm_90a kernels on dev.
func hopperKernels(dev *kern.Device) bool {
	if dev == nil {
		return false
	}
	switch dev.Kind() {
	case "cuda":
		major, minor := dev.ComputeCapability()
		return major == 9 && minor == 0
	case "emu":
		return forceHopper
	}
	return false
}

// queueDevice is the device of a queue.
func queueDevice(q kern.Queue) *kern.Device {
	switch v := q.(type) {
	case *kern.Device:
		return v
	case *kern.Stream:
		return v.Device()
	}
	return nil
}
