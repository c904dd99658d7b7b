package emu

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteReport prints the kernels' timings as a table, first launched
// first, and below it the chain of round trips of each kernel with more
// than one (Timing.Chain): what kern prof -latency shows.
func (m *Latency) WriteReport(w io.Writer) error {
	return WriteTimings(w, m.Config, m.Timings())
}

// WriteTimings prints timings as WriteReport does, under a line naming
// the machine c models.
func WriteTimings(w io.Writer, c LatencyConfig, ts []Timing) error {
	fmt.Fprintf(w, "latency model: %d SMs at %.2f GHz, DRAM %d cycles, L2 %d (a model of chains of round trips, not a measurement: docs/emulator.md)\n",
		c.SMs, c.ClockGHz, c.DRAM, c.L2)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\tlaunches\tblocks\tcycles\tbw cycles\ttrips\tµs")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.2f\n", t.Kernel, t.Launches, t.Blocks, t.Cycles, t.BWCycles, t.Trips, t.Micros)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range ts {
		if len(t.Chain) > 1 {
			fmt.Fprintf(w, "%s's chain: %s\n", t.Kernel, strings.Join(t.Chain, " → "))
		}
	}
	return nil
}
