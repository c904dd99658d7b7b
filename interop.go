package kern

// Interop with libraries that take raw CUDA pointers and streams (cuBLAS,
// NCCL): what a Buffer and a Queue are on a CUDA device.

import (
	"fmt"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// CUDAPointer returns b's device pointer and the CUDA context it belongs
// to. Calls on the pointer must run in that context (Context.Do). It
// fails for a freed buffer and for one on the emulator or in native mode.
func CUDAPointer[T gpu.Elem](b *Buffer[T]) (cuda.DevicePtr, cuda.Context, error) {
	if err := b.check("CUDAPointer"); err != nil {
		return 0, 0, err
	}
	c, ok := b.dev.b.(*cudaBackend)
	if !ok {
		return 0, 0, fmt.Errorf("kern: CUDAPointer: %s is not a CUDA device", b.dev)
	}
	return cuda.DevicePtr(b.addr), c.ctx, nil
}

// CUDAStream returns the CUDA stream work queued on q runs on (0, the
// context's default stream, for a Device) and the device's context. It
// fails for a queue on the emulator or in native mode.
func CUDAStream(q Queue) (cuda.Stream, cuda.Context, error) {
	d := q.device()
	if err := d.usable(); err != nil {
		return 0, 0, fmt.Errorf("kern: CUDAStream: %w", err)
	}
	c, ok := d.b.(*cudaBackend)
	if !ok {
		return 0, 0, fmt.Errorf("kern: CUDAStream: %s is not a CUDA device", d)
	}
	return cudaStream(q.stream()), c.ctx, nil
}
