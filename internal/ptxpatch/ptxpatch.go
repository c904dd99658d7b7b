// Package ptxpatch holds the one rewrite kern applies to a module's PTX
// at load time: turning on the instructions an sm_80 module carries for
// newer GPUs.
//
// A module compiled for sm_80 runs on every later GPU, JIT-compiled
// forward by the driver, but it cannot name instructions that sm_80
// lacks. Programmatic dependent launch's griddepcontrol (sm_90) is such
// an instruction, and it matters on exactly the GPUs that run the sm_80
// module forward. The compiler therefore writes it as a line comment
// starting with PDLPrefix; on compute capability 9.0 or newer the runtime
// loads the module with those comments made instructions and the target
// raised to sm_90, which the same GPU runs. Everything else is byte for
// byte what kern gen wrote, and cmd/kern's ptxas test assembles both
// forms.
package ptxpatch

import (
	"strconv"
	"strings"
)

// PDLPrefix starts the comment form of an sm_90 instruction in a module
// compiled for an older target: "\t//@sm_90 griddepcontrol.wait;".
const PDLPrefix = "//@sm_90 "

// pdlVersion is the PTX ISA version griddepcontrol needs.
const pdlMajor, pdlMinor = 7, 8

// HasSM90 reports whether ptx carries instructions for sm_90 as comments.
func HasSM90(ptx string) bool { return strings.Contains(ptx, "\t"+PDLPrefix) }

// EnableSM90 returns ptx with its sm_90 comment lines made instructions,
// a .target older than sm_90 raised to sm_90 and .version raised to at
// least 7.8; ok is false, and ptx returned unchanged, when it has no such
// lines.
func EnableSM90(ptx string) (out string, ok bool) {
	if !HasSM90(ptx) {
		return ptx, false
	}
	lines := strings.SplitAfter(ptx, "\n")
	var b strings.Builder
	b.Grow(len(ptx))
	header := true
	for _, l := range lines {
		switch {
		case header && strings.HasPrefix(l, ".version "):
			l = raiseVersion(l)
		case header && strings.HasPrefix(l, ".target "):
			l = raiseTarget(l)
			header = false
		case strings.HasPrefix(l, "\t"+PDLPrefix):
			l = "\t" + l[1+len(PDLPrefix):]
		}
		b.WriteString(l)
	}
	return b.String(), true
}

// raiseVersion rewrites ".version X.Y\n" to at least 7.8.
func raiseVersion(l string) string {
	v := strings.TrimSpace(strings.TrimPrefix(l, ".version "))
	maj, min, found := strings.Cut(v, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !found || err1 != nil || err2 != nil || a > pdlMajor || (a == pdlMajor && b >= pdlMinor) {
		return l
	}
	return ".version 7.8\n"
}

// SM is XY of a target "sm_XY" or "sm_XYa", 0 for anything else.
func SM(arch string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(arch, "sm_"), "a"))
	if err != nil || !strings.HasPrefix(arch, "sm_") {
		return 0
	}
	return n
}

// raiseTarget rewrites ".target sm_XY[...]\n" to sm_90 when XY < 90.
func raiseTarget(l string) string {
	t := strings.TrimSpace(strings.TrimPrefix(l, ".target "))
	arch, rest, _ := strings.Cut(t, ",")
	if n := SM(arch); n == 0 || n >= 90 {
		return l
	}
	if rest != "" {
		return ".target sm_90," + rest + "\n"
	}
	return ".target sm_90\n"
}
