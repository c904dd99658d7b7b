package cuda

import "unsafe"

// Device and pinned host memory. Every function here needs a current
// context (see Context.Do).
//
// Host pointers are unsafe.Pointer: Go memory (&s[0] of a slice) or pinned
// memory from MemHostAlloc. A synchronous copy is done when it returns. An
// asynchronous copy from or to Go memory must keep that memory alive until
// the stream has passed the copy (runtime.KeepAlive after the
// synchronization); the driver only overlaps copies with compute when the
// host side is pinned.

// MemAlloc allocates bytes of device memory, aligned to at least 256 bytes.
func MemAlloc(bytes uint64) (DevicePtr, error) {
	d := current()
	var p DevicePtr
	if err := d.call(&d.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); err != nil {
		return 0, err
	}
	return p, nil
}

// MemFree frees memory from MemAlloc.
func MemFree(p DevicePtr) error {
	d := current()
	return d.call(&d.cuMemFree, uintptr(p))
}

// MemAllocAsync allocates from the device's memory pool in stream order
// (CUDA 11.2+).
func MemAllocAsync(bytes uint64, s Stream) (DevicePtr, error) {
	d := current()
	var p DevicePtr
	if err := d.call(&d.cuMemAllocAsync, uintptr(unsafe.Pointer(&p)), uintptr(bytes), uintptr(s)); err != nil {
		return 0, err
	}
	return p, nil
}

// MemFreeAsync frees memory in stream order (CUDA 11.2+).
func MemFreeAsync(p DevicePtr, s Stream) error {
	d := current()
	return d.call(&d.cuMemFreeAsync, uintptr(p), uintptr(s))
}

// MemGetInfo returns the free and total device memory of the current
// context's device, in bytes.
func MemGetInfo() (free, total uint64, err error) {
	d := current()
	var out [2]uint64
	if err := d.call(&d.cuMemGetInfo, uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1]))); err != nil {
		return 0, 0, err
	}
	return out[0], out[1], nil
}

// MemHostAlloc allocates page-locked host memory the device can copy from
// and to by DMA. Free it with MemFreeHost; the Go garbage collector does
// not know about it.
func MemHostAlloc(bytes uint64, flags HostAllocFlags) (unsafe.Pointer, error) {
	d := current()
	var p unsafe.Pointer
	if err := d.call(&d.cuMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes), uintptr(flags)); err != nil {
		return nil, err
	}
	return p, nil
}

// MemAllocHost is MemHostAlloc with default flags.
func MemAllocHost(bytes uint64) (unsafe.Pointer, error) { return MemHostAlloc(bytes, HostAllocDefault) }

// MemFreeHost frees memory from MemHostAlloc.
func MemFreeHost(p unsafe.Pointer) error {
	d := current()
	return d.call(&d.cuMemFreeHost, uintptr(p))
}

// MemcpyHtoD copies bytes from host memory src to device memory dst.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, bytes uint64) error {
	d := current()
	return d.call(&d.cuMemcpyHtoD, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyDtoH copies bytes from device memory src to host memory dst.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, bytes uint64) error {
	d := current()
	return d.call(&d.cuMemcpyDtoH, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyDtoD copies bytes between device allocations.
func MemcpyDtoD(dst, src DevicePtr, bytes uint64) error {
	d := current()
	return d.call(&d.cuMemcpyDtoD, uintptr(dst), uintptr(src), uintptr(bytes))
}

// MemcpyHtoDAsync queues a host-to-device copy on s.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, s Stream) error {
	d := current()
	return d.call(&d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s))
}

// MemcpyDtoHAsync queues a device-to-host copy on s.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, s Stream) error {
	d := current()
	return d.call(&d.cuMemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s))
}

// MemcpyDtoDAsync queues a device-to-device copy on s.
func MemcpyDtoDAsync(dst, src DevicePtr, bytes uint64, s Stream) error {
	d := current()
	return d.call(&d.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s))
}

// MemsetD8 sets n bytes at dst to v.
func MemsetD8(dst DevicePtr, v uint8, n uint64) error {
	d := current()
	return d.call(&d.cuMemsetD8, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD32 sets n 32-bit words at dst (4-byte aligned) to v.
func MemsetD32(dst DevicePtr, v uint32, n uint64) error {
	d := current()
	return d.call(&d.cuMemsetD32, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD8Async queues MemsetD8 on s.
func MemsetD8Async(dst DevicePtr, v uint8, n uint64, s Stream) error {
	d := current()
	return d.call(&d.cuMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s))
}

// MemsetD32Async queues MemsetD32 on s.
func MemsetD32Async(dst DevicePtr, v uint32, n uint64, s Stream) error {
	d := current()
	return d.call(&d.cuMemsetD32Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s))
}

// CopyHtoD copies the elements of src to device memory at dst.
func CopyHtoD[T any](dst DevicePtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	return MemcpyHtoD(dst, unsafe.Pointer(&src[0]), uint64(len(src))*uint64(unsafe.Sizeof(src[0])))
}

// CopyDtoH fills dst with elements read from device memory at src.
func CopyDtoH[T any](dst []T, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return MemcpyDtoH(unsafe.Pointer(&dst[0]), src, uint64(len(dst))*uint64(unsafe.Sizeof(dst[0])))
}
