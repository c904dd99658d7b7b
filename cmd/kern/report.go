package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
)

// assembleReport runs ptxas on a package's PTX and prints what it says
// about each kernel: the figures that decide occupancy.
func assembleReport(w io.Writer, p *compiler.Package) error {
	rep, err := ptxas.Assemble([]byte(p.PTX), p.Arch, ptxas.AllowSpills())
	if err != nil {
		return fmt.Errorf("kern check -v: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  kernel\tregisters\tshared bytes\tstack bytes\tspill bytes\tchecks proven\tchecks hoisted\tchecks kept\toccupancy\t\n")
	for _, k := range p.Kernels {
		// An idx32 kernel's 32-bit entry (docs/language.md) gets a row of
		// its own: it is what launches within 32-bit limits run.
		for _, e := range [][2]string{{k.Entry, k.Name}, {k.Entry32, k.Name + " (32-bit entry)"}} {
			f := rep.Func(e[0])
			if e[0] == "" || f == nil {
				continue
			}
			// Occupancy at the kernel's block=N shape, 256 threads without one.
			threads := max(k.Block[0], 1) * max(k.Block[1], 1) * max(k.Block[2], 1)
			if k.Block == [3]int{} {
				threads = 256
			}
			occ := occupancyText(p.Arch, f.Registers, f.SharedBytes, threads) + fmt.Sprintf(" at %d threads", threads)
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", e[1], f.Registers, f.SharedBytes, f.StackFrame, f.SpillStores+f.SpillLoads, k.Checks.Proven, k.Checks.Hoisted, k.Checks.Kept, occ)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range p.Kernels {
		for _, l := range k.TileLayouts {
			fmt.Fprintf(w, "  %s: %s\n", k.Name, l)
		}
	}
	return nil
}

// keptChecks prints each bounds check the kernels keep, one line per site
// as Go's -d=ssa/check_bce does, so an author sees what a hot loop pays,
// and each one hoisted out of its loop (tested once before it).
func keptChecks(w io.Writer, p *compiler.Package) {
	for _, k := range p.Kernels {
		for _, at := range k.Checks.HoistedAt {
			fmt.Fprintf(w, "%s: %s: bounds check hoisted\n", at, k.Name)
		}
		for _, at := range k.Checks.KeptAt {
			fmt.Fprintf(w, "%s: %s: bounds check kept\n", at, k.Name)
		}
	}
}
