package main

// Loading progress: a progress bar (schollz/progressbar) when stderr is a
// terminal; otherwise (a log file, a pipe, a test) a plain line per 10%,
// since a bar's carriage returns and escape codes would litter a log.

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// loadProgress returns the engine's Progress callback for loading name.
func loadProgress(stderr io.Writer, name string) func(done, total int64) {
	if isTerminal(stderr) {
		var bar *progressbar.ProgressBar
		return func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total,
					progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription("loading "+name),
					progressbar.OptionShowBytes(true),
					progressbar.OptionSetWidth(30),
					progressbar.OptionThrottle(100_000_000), // 100 ms
					progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
				)
			}
			bar.Set64(done)
		}
	}
	return lineProgress(stderr, name)
}

// lineProgress prints a line per 10% loaded.
func lineProgress(stderr io.Writer, name string) func(done, total int64) {
	last := -1
	return func(done, total int64) {
		pct := int(100 * done / max(total, 1))
		if pct/10 == last/10 && done != total {
			return
		}
		last = pct
		fmt.Fprintf(stderr, "loading %s: %3d%% of %.1f MB\n", name, pct, float64(total)/1e6)
	}
}
