package kern

// Tensor maps for TMA copies (cp.async.bulk.tensor, gpu.TMALoad2D): the
// 128-byte descriptor of a 2-D row-major tensor in a Buffer, its tile
// ("box") and shared-memory swizzle. On a GPU the driver writes it
// (cuTensorMapEncodeTiled, whose layout is NVIDIA's); on the emulator and
// in native mode gpu.EncodeTensorMap does, in kern's own layout, which
// only they read. Either way the map lives in a 16-word device buffer
// that the kernel takes as a []uint64 parameter: a map in global memory,
// which the PTX ISA allows (§9.7.9.25.5.1, "tensor-map" operand: .param,
// .const or .global). A __grid_constant__ parameter, the faster place on
// a GPU, would need 128-byte by-value parameters in kern's launch ABI and
// compiler; it is not done.
//
// The map words are cached per device and (address, element type, shape,
// box, swizzle): a map describes memory by address only, so a later
// buffer at the same address with the same shape reuses them correctly,
// and an op that builds its maps on every call costs one small upload per
// distinct shape rather than per call. The cache holds only the 128-byte
// maps, never the buffers they describe; a *TensorMap holds its buffer,
// so the memory stays allocated as long as the map is in use.

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// ErrNoTensorMaps is returned (wrapped) by Device.TensorMap on a GPU whose
// driver has no cuTensorMapEncodeTiled (older than CUDA 12.0): callers
// with a kernel that does not need TMA can fall back to it.
var ErrNoTensorMaps = errors.New("kern: the NVIDIA driver has no tensor maps (cuTensorMapEncodeTiled needs CUDA 12.0 or newer)")

// TensorMapSpec describes a 2-D row-major view of a buffer for TMA.
type TensorMapSpec struct {
	// Dims are the elements per row (the contiguous dimension) and the
	// rows.
	Dims [2]int
	// RowStride is the elements from one row to the next (0: Dims[0]).
	RowStride int
	// Box is the tile one copy moves: elements per row, rows (each 1..256;
	// a box row a multiple of 16 bytes, and no wider than the swizzle).
	Box [2]int
	// Swizzle is the shared-memory layout the box lands in.
	Swizzle gpu.Swizzle
}

// TensorMap is a tensor map in device memory: pass it as a kernel's
// []uint64 tensor-map parameter. It keeps the buffer it describes alive
// (a Free of that buffer still frees it: do not launch with the map
// afterwards).
type TensorMap struct {
	buf  *Buffer[uint64] // the map's words, shared through the cache
	src  any             // the described *Buffer, kept reachable
	spec TensorMapSpec
}

func (m *TensorMap) arg() argValue { return m.buf.arg() }

// Spec is the shape the map was made for.
func (m *TensorMap) Spec() TensorMapSpec { return m.spec }

type tensorMapKey struct {
	dev  *Device
	addr uint64
	elem string
	spec TensorMapSpec
}

// tensorMaps caches map words: tensorMapKey → *Buffer[uint64].
var tensorMaps sync.Map

// TensorMap returns the tensor map of buf (a *Buffer of any element type)
// viewed as spec. Shapes the hardware cannot copy are an error naming the
// rule (a 16-byte aligned base and row stride, the box limits), as is a
// view that does not fit in the buffer.
func (d *Device) TensorMap(buf Arg, spec TensorMapSpec) (*TensorMap, error) {
	if buf == nil {
		return nil, fmt.Errorf("kern: TensorMap: nil buffer")
	}
	a := buf.arg()
	if a.buf == nil {
		return nil, fmt.Errorf("kern: TensorMap: the source is a scalar, want a *Buffer")
	}
	if a.dev != d {
		return nil, fmt.Errorf("kern: TensorMap of %v on %s: the buffer lives on another device", a.buf, d.label())
	}
	if err := d.usable(); err != nil {
		return nil, fmt.Errorf("kern: TensorMap: %w", err)
	}
	if !*a.live {
		return nil, fmt.Errorf("kern: TensorMap of a freed buffer")
	}
	if spec.RowStride == 0 {
		spec.RowStride = spec.Dims[0]
	}
	if spec.Dims[0] < 1 || spec.Dims[1] < 1 || spec.RowStride < spec.Dims[0] {
		return nil, fmt.Errorf("kern: TensorMap of %v: dims %v with row stride %d: want positive dims and a stride of at least a row", a.buf, spec.Dims, spec.RowStride)
	}
	if need := (spec.Dims[1]-1)*spec.RowStride + spec.Dims[0]; need > a.n {
		return nil, fmt.Errorf("kern: TensorMap of %v: dims %v with row stride %d need %d elements", a.buf, spec.Dims, spec.RowStride, need)
	}
	key := tensorMapKey{d, a.addr, a.elem, spec}
	if words, ok := tensorMaps.Load(key); ok {
		return &TensorMap{buf: words.(*Buffer[uint64]), src: a.buf, spec: spec}, nil
	}
	words, err := d.encodeTensorMap(a, spec)
	if err != nil {
		return nil, fmt.Errorf("kern: TensorMap of %v (dims %v, row stride %d, box %v, swizzle %d): %w", a.buf, spec.Dims, spec.RowStride, spec.Box, spec.Swizzle.Bytes(), err)
	}
	b, err := Upload(d, words[:])
	if err != nil {
		return nil, fmt.Errorf("kern: TensorMap: %w", err)
	}
	cached, _ := tensorMaps.LoadOrStore(key, b)
	return &TensorMap{buf: cached.(*Buffer[uint64]), src: a.buf, spec: spec}, nil
}

// encodeTensorMap asks the backend's encoder for the map's 16 words.
func (d *Device) encodeTensorMap(a argValue, spec TensorMapSpec) ([gpu.TensorMapWords]uint64, error) {
	switch b := d.b.(type) {
	case *cudaBackend:
		dt, ok := tensorDataTypes[a.elem]
		if !ok {
			return [gpu.TensorMapWords]uint64{}, fmt.Errorf("no TMA data type for %s", a.elem)
		}
		var m cuda.TensorMap
		err := b.do(func() (err error) {
			m, err = cuda.EncodeTensorMapTiled(dt, cuda.DevicePtr(a.addr),
				[]uint64{uint64(spec.Dims[0]), uint64(spec.Dims[1])}, []uint64{uint64(spec.RowStride * a.size)},
				[]uint32{uint32(spec.Box[0]), uint32(spec.Box[1])}, cuda.TensorSwizzle(spec.Swizzle))
			return
		})
		var cerr *cuda.Error
		if errors.As(err, &cerr) && cerr.Code == cuda.ErrorSharedObjectSymbolNotFound {
			err = fmt.Errorf("%w: %v", ErrNoTensorMaps, err)
		}
		return m, err
	case *emuBackend:
		return gpu.EncodeTensorMap(tensorMap2D(uintptr(a.addr), a, spec))
	case *nativeBackend:
		mem := b.hostView(a.addr)
		if len(mem) == 0 {
			return [gpu.TensorMapWords]uint64{}, fmt.Errorf("empty buffer")
		}
		return gpu.EncodeTensorMap(tensorMap2D(uintptr(unsafe.Pointer(&mem[0])), a, spec))
	}
	return [gpu.TensorMapWords]uint64{}, fmt.Errorf("%s devices have no tensor maps", d.kind)
}

func tensorMap2D(base uintptr, a argValue, spec TensorMapSpec) gpu.TensorMap2D {
	return gpu.TensorMap2D{Base: base, ElemBytes: a.size, Dims: spec.Dims, RowBytes: spec.RowStride * a.size,
		Box: spec.Box, Swizzle: spec.Swizzle}
}

// tensorDataTypes maps kern's element names to the driver's data types
// (int is Go's 64-bit int; bool has none).
var tensorDataTypes = map[string]cuda.TensorDataType{
	"uint8": cuda.TensorUint8, "int8": cuda.TensorUint8,
	"gpu.Half": cuda.TensorFloat16, "gpu.BFloat16": cuda.TensorBFloat16,
	"int32": cuda.TensorInt32, "uint32": cuda.TensorUint32,
	"int64": cuda.TensorInt64, "int": cuda.TensorInt64, "uint64": cuda.TensorUint64,
	"float32": cuda.TensorFloat32, "float64": cuda.TensorFloat64,
}

// Words reads the map back (for tests and debugging: on a GPU its layout
// is the driver's).
func (m *TensorMap) Words() ([]uint64, error) { return m.buf.Download() }
