package cuda

import (
	"bytes"
	"unsafe"
)

// Device queries. None of these needs a current context.

// DriverVersion returns the CUDA version the driver supports, as
// 1000*major + 10*minor (12040 is CUDA 12.4).
func DriverVersion() (int, error) {
	d := current()
	var v int32
	if err := d.call(&d.cuDriverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	d := current()
	var n int32
	if err := d.call(&d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DeviceGet returns the device with the given ordinal, 0 ≤ ordinal < DeviceCount.
func DeviceGet(ordinal int) (Device, error) {
	d := current()
	var dev Device
	if err := d.call(&d.cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal)); err != nil {
		return 0, err
	}
	return dev, nil
}

// Name returns the device's marketing name, e.g. "NVIDIA H100 80GB HBM3".
func (dev Device) Name() (string, error) {
	d := current()
	var buf [256]byte
	if err := d.call(&d.cuDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", err
	}
	if i := bytes.IndexByte(buf[:], 0); i >= 0 {
		return string(buf[:i]), nil
	}
	return string(buf[:]), nil
}

// Attribute returns one device attribute.
func (dev Device) Attribute(attr DeviceAttribute) (int, error) {
	d := current()
	var v int32
	if err := d.call(&d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// TotalMem returns the device's global memory size in bytes.
func (dev Device) TotalMem() (uint64, error) {
	d := current()
	var n uint64
	if err := d.call(&d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev)); err != nil {
		return 0, err
	}
	return n, nil
}

// ComputeCapability returns the SM version, e.g. 8, 0 for sm_80.
func (dev Device) ComputeCapability() (major, minor int, err error) {
	if major, err = dev.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	if minor, err = dev.Attribute(AttrComputeCapabilityMinor); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// DeviceInfo is the device description a launcher needs, read in one go.
type DeviceInfo struct {
	Name               string
	Major, Minor       int    // compute capability
	TotalMem           uint64 // bytes
	Multiprocessors    int
	WarpSize           int
	MaxThreadsPerBlock int
	MaxBlockDim        [3]int
	MaxGridDim         [3]int
	// SharedPerBlock is the shared memory a block gets without opt-in;
	// SharedPerBlockOptin is the most a kernel can opt in to with
	// FuncAttrMaxDynamicSharedSizeBytes.
	SharedPerBlock, SharedPerBlockOptin int
	SharedPerMultiprocessor             int
	RegistersPerBlock                   int
	MaxThreadsPerMultiprocessor         int
	L2CacheSize                         int // bytes
	ClockRateKHz, MemoryClockRateKHz    int
	MemoryBusWidth                      int // bits
}

// Info reads the device's DeviceInfo.
func (dev Device) Info() (DeviceInfo, error) {
	var info DeviceInfo
	var err error
	if info.Name, err = dev.Name(); err != nil {
		return info, err
	}
	if info.TotalMem, err = dev.TotalMem(); err != nil {
		return info, err
	}
	fields := []struct {
		attr DeviceAttribute
		dst  *int
	}{
		{AttrComputeCapabilityMajor, &info.Major},
		{AttrComputeCapabilityMinor, &info.Minor},
		{AttrMultiprocessorCount, &info.Multiprocessors},
		{AttrWarpSize, &info.WarpSize},
		{AttrMaxThreadsPerBlock, &info.MaxThreadsPerBlock},
		{AttrMaxBlockDimX, &info.MaxBlockDim[0]},
		{AttrMaxBlockDimY, &info.MaxBlockDim[1]},
		{AttrMaxBlockDimZ, &info.MaxBlockDim[2]},
		{AttrMaxGridDimX, &info.MaxGridDim[0]},
		{AttrMaxGridDimY, &info.MaxGridDim[1]},
		{AttrMaxGridDimZ, &info.MaxGridDim[2]},
		{AttrMaxSharedMemoryPerBlock, &info.SharedPerBlock},
		{AttrMaxSharedMemoryPerBlockOptin, &info.SharedPerBlockOptin},
		{AttrMaxSharedMemoryPerMultiproc, &info.SharedPerMultiprocessor},
		{AttrMaxRegistersPerBlock, &info.RegistersPerBlock},
		{AttrMaxThreadsPerMultiprocessor, &info.MaxThreadsPerMultiprocessor},
		{AttrL2CacheSize, &info.L2CacheSize},
		{AttrClockRate, &info.ClockRateKHz},
		{AttrMemoryClockRate, &info.MemoryClockRateKHz},
		{AttrGlobalMemoryBusWidth, &info.MemoryBusWidth},
	}
	for _, f := range fields {
		if *f.dst, err = dev.Attribute(f.attr); err != nil {
			return info, err
		}
	}
	return info, nil
}
