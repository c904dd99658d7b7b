package kern

// Programmatic dependent launch (PDL) on compute capability 9.0+: a kernel
// that waits for the kernels before it itself (KernelSpec.PDL: the
// //kern:kernel pdl option, or gpu.WaitPriorGrids in its body) is
// launched with programmatic stream serialization, so the driver may
// start it while the kernel before it on the stream is still running.
// Its blocks are scheduled as that kernel's drain, and whatever it does
// before its wait (loading weights) overlaps it. In a decode step of
// dozens of kernels of a few µs each, the gaps between kernels are a
// large share of the step (docs/performance-gpu.md).
//
// A module compiled for sm_80 carries the griddepcontrol instructions as
// comments (compiler/lower_pdl.go); on such a device it is loaded with
// them turned on (internal/ptxpatch), and only then are its PDL kernels
// launched with the attribute. KERN_PDL=0 turns PDL off (to time a
// program with and without it).
//
// A cooperative kernel (gpu.GridSync) may wait too: llm/qwen3's persistent
// layer is one such launch a layer, and the next layer's blocks take each
// SM as the layer before leaves it. A captured run of them has no memset
// between (cooperative.go), so nothing breaks the programmatic edge. A
// driver that refuses the two attributes together gets the launch again
// as a plain cooperative one, and later cooperative launches go without
// PDL; other kernels keep it.

import (
	"errors"
	"os"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/internal/ptxpatch"
)

// pdlDriverVersion is the first CUDA version whose stream capture keeps
// programmatic dependencies as graph edges (CUDA 12.3): kern captures
// decode steps into graphs, and an older driver would serialize them
// there or refuse the attribute.
const pdlDriverVersion = 12030

// pdlAvailable reports whether kernels on a GPU of compute capability
// major.x may be launched with PDL.
func pdlAvailable(major int) bool {
	if major < 9 || os.Getenv("KERN_PDL") == "0" || !cuda.CanLaunchEx() {
		return false
	}
	v, err := cuda.DriverVersion()
	return err == nil && v >= pdlDriverVersion
}

// modulePDL returns the PTX to load for m and whether its PDL kernels are
// launched with the attribute.
func (c *cudaBackend) modulePDL(m *Module) (string, bool) {
	if !c.pdl {
		return m.PTX, false
	}
	if ptxpatch.SM(m.Arch) >= 90 {
		return m.PTX, true
	}
	return ptxpatch.EnableSM90(m.PTX)
}

// PDL reports whether the device launches kernels with programmatic
// dependent launch (compute capability 9.0+, CUDA 12.3+, KERN_PDL not 0,
// and the driver has not refused it).
func (d *Device) PDL() bool {
	c, ok := d.b.(*cudaBackend)
	return ok && c.pdl && !c.pdlOff.Load()
}

// pdlRefused reports whether a launch with programmatic serialization
// failed for the attribute (a driver or configuration without it), so
// that the launch is made again without.
func pdlRefused(err error) bool {
	return errors.Is(err, cuda.ErrorNotSupported) || errors.Is(err, cuda.ErrorInvalidValue)
}
