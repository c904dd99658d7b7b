package kern

// A 2-D tensor map of a Buffer for TMA loads (gpu.TMALoad2D), made for
// the buffer's device: by the driver (cuTensorMapEncodeTiled) on a GPU,
// in kern's own layout (gpu.EncodeTensorMap) on the emulator and in
// native mode. The map lives in a 16-word device buffer, passed to a
// kernel as a []uint64 parameter. This is the narrow form the Hopper
// attention needs; a Device-level tensor-map API (with the map as a
// __grid_constant__ parameter) is the GEMM branch's and supersedes it.

import (
	"fmt"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// TensorMap2DOf describes b as a row-major 2-D tensor of m.Dims[1] rows
// of m.Dims[0] elements, m.RowBytes apart, starting m.Base bytes into b,
// copied in boxes of m.Box with m.Swizzle; m.ElemBytes is T's size. The
// tensor must lie within b. It returns the map in a new buffer (the
// caller frees it) and an error for shapes the hardware refuses.
func TensorMap2DOf[T gpu.Elem](b *Buffer[T], m gpu.TensorMap2D) (*Buffer[uint64], error) {
	if err := b.check("TensorMap2DOf"); err != nil {
		return nil, err
	}
	es := elemSize[T]()
	if m.ElemBytes != es {
		return nil, fmt.Errorf("kern: TensorMap2DOf %s: ElemBytes %d, want %d", b, m.ElemBytes, es)
	}
	if m.Dims[0] < 1 || m.Dims[1] < 1 || int(m.Base)+(m.Dims[1]-1)*m.RowBytes+m.Dims[0]*es > b.n*es {
		return nil, fmt.Errorf("kern: TensorMap2DOf %s: a tensor of %v elements, rows %d bytes apart, from byte %d does not fit in the buffer", b, m.Dims, m.RowBytes, m.Base)
	}
	var words [gpu.TensorMapWords]uint64
	var err error
	switch b.dev.kind {
	case "cuda":
		dt := map[int]cuda.TensorDataType{1: cuda.TensorUint8, 2: cuda.TensorUint16, 4: cuda.TensorUint32, 8: cuda.TensorUint64}[es]
		switch elemName[T]() {
		case "gpu.Half":
			dt = cuda.TensorFloat16
		case "gpu.BFloat16":
			dt = cuda.TensorBFloat16
		}
		var tm cuda.TensorMap
		tm, err = cuda.EncodeTensorMapTiled(dt, cuda.DevicePtr(b.addr+uint64(m.Base)),
			[]uint64{uint64(m.Dims[0]), uint64(m.Dims[1])}, []uint64{uint64(m.RowBytes)},
			[]uint32{uint32(m.Box[0]), uint32(m.Box[1])}, cuda.TensorSwizzle(m.Swizzle))
		words = tm
	case "native":
		mem := b.dev.b.hostView(b.addr)
		if len(mem) == 0 {
			return nil, fmt.Errorf("kern: TensorMap2DOf %s: no host memory", b)
		}
		m.Base += uintptr(ptr(&mem[0]))
		words, err = gpu.EncodeTensorMap(m)
	default:
		m.Base += uintptr(b.addr)
		words, err = gpu.EncodeTensorMap(m)
	}
	if err != nil {
		return nil, fmt.Errorf("kern: TensorMap2DOf %s: %w", b, err)
	}
	return Upload(b.dev, words[:])
}
