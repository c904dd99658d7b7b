package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
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
			c := k.Checks
			if e[0] == k.Entry32 {
				c = k.Checks32
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", e[1], f.Registers, f.SharedBytes, f.StackFrame, f.SpillStores+f.SpillLoads, c.Proven, c.Hoisted, c.Kept, occ)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range p.Kernels {
		for _, l := range k.TileLayouts {
			fmt.Fprintf(w, "  %s: %s\n", k.Name, l)
		}
		// The facts a launch must meet to run the 32-bit entry
		// (compiler/launchfact.go): a launch that misses one runs the
		// kernel's entry, correct but slower.
		for _, f := range k.Facts32 {
			fmt.Fprintf(w, "  %s (32-bit entry) runs when %s\n", k.Name, factText(f, k.Params))
		}
	}
	return nil
}

// factText spells a launch fact with the kernel's parameter names:
// p2 as rows, l0 as len(in).
func factText(f string, params []compiler.Param) string {
	return factOperand.ReplaceAllStringFunc(f, func(tok string) string {
		i, err := strconv.Atoi(tok[1:])
		if err != nil || i >= len(params) {
			return tok
		}
		if tok[0] == 'l' {
			return "len(" + params[i].Name + ")"
		}
		return params[i].Name
	})
}

var factOperand = regexp.MustCompile(`\b[pl][0-9]+\b`)

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
