package emu

// Sanitizer names, as KERN_EMU_CHECK and kern prof -check spell them.

import (
	"fmt"
	"strings"
)

// CheckNames are the sanitizer names ParseChecks accepts, besides "all".
// initcheck is part of memcheck (Options.Memcheck does both).
var CheckNames = []string{"memcheck", "initcheck", "racecheck", "synccheck", "pdlcheck"}

// ParseChecks turns a comma-separated list of sanitizer names ("all",
// "memcheck", "initcheck", "racecheck", "synccheck", "pdlcheck"; any case, spaces
// ignored) into Options with those checks on. An unknown name is an
// error naming it and the valid ones: a misspelt check must not run the
// kernel with no check at all.
func ParseChecks(list string) (Options, error) {
	var o Options
	for _, c := range strings.Split(list, ",") {
		switch name := strings.ToLower(strings.TrimSpace(c)); name {
		case "":
		case "all":
			o.Memcheck, o.Racecheck, o.Synccheck, o.PDLcheck = true, true, true, true
		case "memcheck", "initcheck":
			o.Memcheck = true
		case "racecheck":
			o.Racecheck = true
		case "synccheck":
			o.Synccheck = true
		case "pdlcheck":
			o.PDLcheck = true
		default:
			return Options{}, fmt.Errorf("unknown emulator check %q in %q: want all or a comma-separated list of %s", strings.TrimSpace(c), list, strings.Join(CheckNames, ", "))
		}
	}
	return o, nil
}

// Checks names the sanitizers o turns on, in a fixed order ("memcheck",
// "racecheck", "synccheck", "pdlcheck"); nil when none is.
func (o Options) Checks() []string {
	var out []string
	if o.Memcheck {
		out = append(out, "memcheck")
	}
	if o.Racecheck {
		out = append(out, "racecheck")
	}
	if o.Synccheck {
		out = append(out, "synccheck")
	}
	if o.PDLcheck {
		out = append(out, "pdlcheck")
	}
	return out
}
