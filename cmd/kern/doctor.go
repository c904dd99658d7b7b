package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/internal/ptxas"
	"github.com/gokern/kern/nccl"
)

// doctor reports what kern can use on this machine: the driver and its
// GPUs, NCCL, ptxas, and the device kern.Open would pick.
func doctor(stdout io.Writer) error {
	fmt.Fprintln(stdout, "kern doctor")
	if err := cuda.Init(); err != nil {
		fmt.Fprintf(stdout, "  CUDA driver: not available (%v)\n", err)
		fmt.Fprintln(stdout, "    Without an NVIDIA driver kern runs kernels on its PTX emulator (KERN_DEVICE=emu)")
		fmt.Fprintln(stdout, "    or as Go code (KERN_DEVICE=native). Both work everywhere; the emulator runs the")
		fmt.Fprintln(stdout, "    exact PTX a GPU would, with sanitizers and a profiler.")
	} else {
		v, _ := cuda.DriverVersion()
		fmt.Fprintf(stdout, "  CUDA driver: %s, API version %d.%d\n", cuda.Library(), v/1000, v%1000/10)
		n, err := cuda.DeviceCount()
		if err != nil {
			return err
		}
		for i := range n {
			d, err := cuda.DeviceGet(i)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  GPU %d: %s, sm_%d%d, %d SMs, %.1f GiB, %d KiB shared/block (opt-in)\n",
				i, info.Name, info.Major, info.Minor, info.Multiprocessors, float64(info.TotalMem)/(1<<30), info.SharedPerBlockOptin/1024)
		}
	}
	fmt.Fprintln(stdout, "  NCCL: "+ncclStatus())
	if p, err := ptxas.Find(); err == nil {
		fmt.Fprintf(stdout, "  ptxas: %s\n", p)
	} else {
		fmt.Fprintln(stdout, "  ptxas: not found (only tests need it: scripts/fetch-ptxas.sh fetches it)")
	}
	dev, err := kern.Open()
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "  kern.Open() picks: %s\n", dev)
		if dev.Kind() == "cuda" {
			pdl := "off (needs compute capability 9.0+ and CUDA 12.3+; KERN_PDL=0 turns it off)"
			if dev.PDL() {
				pdl = "on for pdl kernels"
			}
			fmt.Fprintf(stdout, "  programmatic dependent launch: %s\n", pdl)
		}
		dev.Close()
	case errors.Is(err, kern.ErrNoDriver):
		fmt.Fprintln(stdout, "  kern.Open() fails: no GPU (set KERN_DEVICE=emu or native)")
	default:
		fmt.Fprintf(stdout, "  kern.Open() fails: %v\n", err)
	}
	if d := os.Getenv("KERN_DEVICE"); d != "" {
		fmt.Fprintf(stdout, "  KERN_DEVICE=%s\n", d)
	}
	return nil
}

// ncclStatus is NCCL's line: the library and its version, or why not
// (tensor parallelism over several GPUs needs it; one GPU does not).
func ncclStatus() string {
	if err := nccl.Load(); err != nil {
		return fmt.Sprintf("not available (%v); only tensor parallelism over several GPUs needs it", err)
	}
	v, err := nccl.Version()
	if err != nil {
		return fmt.Sprintf("%s, version unknown (%v)", nccl.Library(), err)
	}
	return fmt.Sprintf("%s, version %s", nccl.Library(), nccl.VersionString(v))
}
