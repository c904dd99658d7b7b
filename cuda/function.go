package cuda

import "unsafe"

// Kernel attributes and occupancy. These need a current context.

// Attribute returns one attribute of the kernel, e.g. FuncAttrNumRegs.
func (f Function) Attribute(attr FunctionAttribute) (int, error) {
	d := current()
	var v int32
	if err := d.call(&d.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(f)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// SetAttribute sets a settable attribute: FuncAttrMaxDynamicSharedSizeBytes
// (required before launching with more than 48 KiB of dynamic shared
// memory) or FuncAttrPreferredSharedMemoryCarveout.
func (f Function) SetAttribute(attr FunctionAttribute, value int) error {
	d := current()
	return d.call(&d.cuFuncSetAttribute, uintptr(f), uintptr(attr), uintptr(int64(value)))
}

// OccupancyMaxActiveBlocksPerMultiprocessor returns how many blocks of
// blockSize threads using dynSmem bytes of dynamic shared memory fit on one
// multiprocessor at once.
func OccupancyMaxActiveBlocksPerMultiprocessor(f Function, blockSize int, dynSmem uint64) (int, error) {
	d := current()
	var n int32
	if err := d.call(&d.cuOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), uintptr(f),
		uintptr(blockSize), uintptr(dynSmem)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// OccupancyMaxPotentialBlockSize returns the block size that maximizes
// occupancy for f with a fixed dynSmem bytes of dynamic shared memory, and
// the smallest grid that reaches full occupancy with it. blockSizeLimit 0
// means no limit.
func OccupancyMaxPotentialBlockSize(f Function, dynSmem uint64, blockSizeLimit int) (minGridSize, blockSize int, err error) {
	d := current()
	var out [2]int32
	if err := d.call(&d.cuOccupancyMaxPotentialBlockSize, uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1])),
		uintptr(f), 0, uintptr(dynSmem), uintptr(blockSizeLimit)); err != nil {
		return 0, 0, err
	}
	return int(out[0]), int(out[1]), nil
}
