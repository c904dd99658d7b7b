package kern

// ComputeCapability is the GPU's compute capability, e.g. 9, 0 on an H100
// (what decides whether an sm_90a module loads, archcheck.go). The
// emulator and native mode run every target and report 0, 0: ops that
// have architecture-specific kernels choose their portable ones there
// unless told otherwise.
func (d *Device) ComputeCapability() (major, minor int) {
	if c, ok := d.b.(*cudaBackend); ok {
		return c.info.Major, c.info.Minor
	}
	return 0, 0
}

// Multiprocessors is the GPU's SM count (what a persistent kernel sizes
// its grid by); 0 on the emulator and in native mode, which have none.
func (d *Device) Multiprocessors() int {
	if c, ok := d.b.(*cudaBackend); ok {
		return c.info.Multiprocessors
	}
	return 0
}
