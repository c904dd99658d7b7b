package gomlx

// Device buffers and the backends.DataInterface methods.

import (
	"fmt"
	"sync/atomic"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/x448/float16"
)

// storedDTypes are the dtypes a Buffer can hold, each as a kern.Buffer of
// its storage type: float32, float64, float16 (gpu.Half), bfloat16
// (gpu.BFloat16), int32, int64 and bool; uint32 and uint64 too, for
// random bits and the random state (few ops take them).
var storedDTypes = []dtypes.DType{dtypes.Float32, dtypes.Float64, dtypes.Float16, dtypes.BFloat16, dtypes.Int32, dtypes.Int64,
	dtypes.Bool, dtypes.Uint32, dtypes.Uint64}

// darray is a kern.Buffer of any storage type.
type darray interface {
	arg() kern.Arg
	free() error
}

type typed[T gpu.Elem] struct{ b *kern.Buffer[T] }

func (a typed[T]) arg() kern.Arg { return kern.BufferArg(a.b) }
func (a typed[T]) free() error   { return a.b.Free() }

// Buffer is a tensor on the backend's device. It implements
// backends.Buffer.
type Buffer struct {
	shape shapes.Shape
	arr   darray
	freed bool
}

func supportedDType(dt dtypes.DType) bool {
	for _, s := range storedDTypes {
		if s == dt {
			return true
		}
	}
	return false
}

// alloc returns a buffer of shape on the device: an idle one from the
// pool (pool.go), or a new, zeroed one.
func (b *Backend) alloc(shape shapes.Shape) (*Buffer, error) {
	if a, ok := b.pool.get(shape); ok {
		return &Buffer{shape: shape, arr: a}, nil
	}
	b.transfers.Allocs.Add(1)
	n := shape.Size()
	var arr darray
	var err error
	switch shape.DType {
	case dtypes.Float32:
		arr, err = allocTyped[float32](b.dev, n)
	case dtypes.Float64:
		arr, err = allocTyped[float64](b.dev, n)
	case dtypes.Float16:
		arr, err = allocTyped[gpu.Half](b.dev, n)
	case dtypes.BFloat16:
		arr, err = allocTyped[gpu.BFloat16](b.dev, n)
	case dtypes.Int32:
		arr, err = allocTyped[int32](b.dev, n)
	case dtypes.Int64:
		arr, err = allocTyped[int64](b.dev, n)
	case dtypes.Bool:
		arr, err = allocTyped[bool](b.dev, n)
	case dtypes.Uint32:
		arr, err = allocTyped[uint32](b.dev, n)
	case dtypes.Uint64:
		arr, err = allocTyped[uint64](b.dev, n)
	default:
		return nil, fmt.Errorf("backend kern: dtype %s is not supported (supported: %v)", shape.DType, storedDTypes)
	}
	if err != nil {
		return nil, fmt.Errorf("backend kern: allocating %s: %w", shape, err)
	}
	return &Buffer{shape: shape, arr: arr}, nil
}

func allocTyped[T gpu.Elem](dev *kern.Device, n int) (darray, error) {
	buf, err := kern.Alloc[T](dev, n)
	if err != nil {
		return nil, err
	}
	return typed[T]{buf}, nil
}

func (b *Backend) toBuffer(buffer backends.Buffer, op string) (*Buffer, error) {
	buf, ok := buffer.(*Buffer)
	if !ok || buf == nil {
		return nil, fmt.Errorf("backend kern: %s: buffer %T is not a kern buffer", op, buffer)
	}
	if buf.freed {
		return nil, fmt.Errorf("backend kern: %s: buffer %s was finalized", op, buf.shape)
	}
	return buf, nil
}

// BufferFinalize implements backends.DataInterface.
func (b *Backend) BufferFinalize(buffer backends.Buffer) error {
	buf, err := b.toBuffer(buffer, "BufferFinalize")
	if err != nil {
		return err
	}
	return b.release(buf)
}

// BufferShape implements backends.DataInterface.
func (b *Backend) BufferShape(buffer backends.Buffer) (shapes.Shape, error) {
	buf, err := b.toBuffer(buffer, "BufferShape")
	if err != nil {
		return shapes.Invalid(), err
	}
	return buf.shape, nil
}

// BufferDeviceNum implements backends.DataInterface: always 0.
func (b *Backend) BufferDeviceNum(buffer backends.Buffer) (backends.DeviceNum, error) {
	if _, err := b.toBuffer(buffer, "BufferDeviceNum"); err != nil {
		return 0, err
	}
	return 0, nil
}

// BufferToFlatData implements backends.DataInterface: the one way data
// leaves the device.
func (b *Backend) BufferToFlatData(buffer backends.Buffer, flat any) error {
	buf, err := b.toBuffer(buffer, "BufferToFlatData")
	if err != nil {
		return err
	}
	c := &b.transfers.Downloads
	switch a := buf.arr.(type) {
	case typed[float32]:
		if f, ok := flat.([]float32); ok {
			return download(c, a.b, f)
		}
	case typed[float64]:
		if f, ok := flat.([]float64); ok {
			return download(c, a.b, f)
		}
	case typed[gpu.Half]:
		if f, ok := flat.([]float16.Float16); ok {
			return download(c, a.b, reinterpret[gpu.Half](f))
		}
	case typed[gpu.BFloat16]:
		if f, ok := flat.([]bfloat16.BFloat16); ok {
			return download(c, a.b, reinterpret[gpu.BFloat16](f))
		}
	case typed[int32]:
		if f, ok := flat.([]int32); ok {
			return download(c, a.b, f)
		}
	case typed[int64]:
		if f, ok := flat.([]int64); ok {
			return download(c, a.b, f)
		}
	case typed[bool]:
		if f, ok := flat.([]bool); ok {
			return download(c, a.b, f)
		}
	case typed[uint32]:
		if f, ok := flat.([]uint32); ok {
			return download(c, a.b, f)
		}
	case typed[uint64]:
		if f, ok := flat.([]uint64); ok {
			return download(c, a.b, f)
		}
	}
	return fmt.Errorf("backend kern: BufferToFlatData: buffer %s into %T", buf.shape, flat)
}

// BufferFromFlatData implements backends.DataInterface: the one way data
// reaches the device (besides graph constants).
func (b *Backend) BufferFromFlatData(deviceNum backends.DeviceNum, flat any, shape shapes.Shape) (backends.Buffer, error) {
	if deviceNum != 0 {
		return nil, fmt.Errorf("backend kern: BufferFromFlatData: device %d, the backend has only device 0", deviceNum)
	}
	return b.uploadFlat(&b.transfers.Uploads, flat, shape)
}

// uploadFlat copies a flat Go slice of shape's dtype and size to the
// device, counting the copy in c.
func (b *Backend) uploadFlat(c *atomic.Int64, flat any, shape shapes.Shape) (*Buffer, error) {
	var arr darray
	var n int
	var dt dtypes.DType
	var err error
	switch f := flat.(type) {
	case []float32:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Float32)
	case []float64:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Float64)
	case []float16.Float16:
		arr, n, dt, err = up(b.dev, c, reinterpret[gpu.Half](f), dtypes.Float16)
	case []bfloat16.BFloat16:
		arr, n, dt, err = up(b.dev, c, reinterpret[gpu.BFloat16](f), dtypes.BFloat16)
	case []int32:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Int32)
	case []int64:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Int64)
	case []bool:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Bool)
	case []uint32:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Uint32)
	case []uint64:
		arr, n, dt, err = up(b.dev, c, f, dtypes.Uint64)
	default:
		return nil, fmt.Errorf("backend kern: flat data %T for %s: not a supported dtype (%v)", flat, shape, storedDTypes)
	}
	if err != nil {
		return nil, fmt.Errorf("backend kern: uploading %s: %w", shape, err)
	}
	if n != shape.Size() || dt != shape.DType {
		arr.free()
		return nil, fmt.Errorf("backend kern: %d values of %T for shape %s", n, flat, shape)
	}
	return &Buffer{shape: shape, arr: arr}, nil
}

func up[T gpu.Elem](dev *kern.Device, c *atomic.Int64, xs []T, dt dtypes.DType) (darray, int, dtypes.DType, error) {
	buf, err := upload(dev, c, xs)
	if err != nil {
		return nil, 0, dt, err
	}
	return typed[T]{buf}, len(xs), dt, nil
}

// HasSharedBuffers implements backends.DataInterface: device memory is
// not host memory (on the emulator it is, but the backend keeps one
// behaviour for all devices).
func (b *Backend) HasSharedBuffers() bool { return false }

// NewSharedBuffer implements backends.DataInterface; see HasSharedBuffers.
func (b *Backend) NewSharedBuffer(backends.DeviceNum, shapes.Shape) (backends.Buffer, any, error) {
	return nil, nil, fmt.Errorf("backend kern: shared buffers are not supported")
}

// BufferData implements backends.DataInterface; see HasSharedBuffers.
func (b *Backend) BufferData(backends.Buffer) (any, error) {
	return nil, fmt.Errorf("backend kern: shared buffers are not supported")
}

// BufferCopyToDevice implements backends.DataInterface: there is one
// device, and copying to the same device is an error by the interface.
func (b *Backend) BufferCopyToDevice(backends.Buffer, backends.DeviceNum) (backends.Buffer, error) {
	return nil, fmt.Errorf("backend kern: BufferCopyToDevice: the backend has one device")
}
