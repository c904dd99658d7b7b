package compiler

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// directive is a parsed //kern:kernel line.
type directive struct {
	block     [3]int
	minBlocks int
	maxRegs   int
	nobounds  bool
	fastmath  bool
	pdl       bool
	idx32     bool
}

const kernelDirective = "//kern:kernel"

// kernelDirectiveOf returns the //kern:kernel comment of a func, or nil.
func kernelDirectiveOf(fd *ast.FuncDecl) *ast.Comment {
	if fd.Doc == nil {
		return nil
	}
	for _, c := range fd.Doc.List {
		if c.Text == kernelDirective || strings.HasPrefix(c.Text, kernelDirective+" ") {
			return c
		}
	}
	return nil
}

// parseDirective parses the options after //kern:kernel:
//
//	block=256 | block=16x16 | block=8x8x4   the default launch block shape
//	nobounds                                 no device bounds checks
//	fastmath                                 float results may differ from Go's:
//	                                         mul+add contract to fma, Exp, Sin,
//	                                         Cos and Tanh use the approximate
//	                                         hardware instructions directly,
//	                                         Exp2 flushes subnormals (.ftz)
//	minblocks=N                              at least N blocks of block= must fit
//	                                         on an SM (.minnctapersm N, PTX ISA
//	                                         §11.4.3, like __launch_bounds__'s
//	                                         second argument); minblocks=1 stops
//	                                         ptxas from spilling to reach an
//	                                         occupancy the kernel does not need
//	maxregs=N                                at most N registers a thread
//	                                         (.maxnreg N, PTX ISA §11.4; like
//	                                         nvcc's -maxrregcount for one
//	                                         kernel); ptxas spills past it
//	pdl                                      launched with programmatic dependent
//	                                         launch on sm_90+: it lets the next
//	                                         kernel launch and waits for the ones
//	                                         before it at its entry (gpu/pdl.go)
//	idx32                                    a second entry, <name>_i32, compiled
//	                                         for launches whose every buffer has
//	                                         fewer than 2³¹ elements, every int
//	                                         parameter fits int32 and the grid
//	                                         fewer than 2³¹ threads along x
//	                                         (index32.go); the launch picks it
func parseDirective(d *diags, c *ast.Comment) directive {
	var dir directive
	seen := map[string]bool{}
	for _, f := range strings.Fields(strings.TrimPrefix(c.Text, kernelDirective)) {
		opt, _, _ := strings.Cut(f, "=")
		if seen[opt] {
			d.errorf(c.Pos(), BadDirective, "//kern:kernel option %s is given twice", opt)
			continue
		}
		seen[opt] = true
		switch {
		case f == "nobounds":
			dir.nobounds = true
		case f == "fastmath":
			dir.fastmath = true
		case f == "pdl":
			dir.pdl = true
		case f == "idx32":
			dir.idx32 = true
		case opt == "minblocks":
			dir.minBlocks = intOption(d, c, f, 1, 32)
		case opt == "maxregs":
			// ptxas allocates at least 16 and at most 255 per thread
			// (sm_80 and sm_90); a cap outside that is a typo.
			dir.maxRegs = intOption(d, c, f, 16, 255)
		case strings.HasPrefix(f, "block="):
			dims := strings.Split(strings.TrimPrefix(f, "block="), "x")
			if len(dims) > 3 {
				d.errorf(c.Pos(), BadDirective, "block=%s has more than 3 dimensions", strings.TrimPrefix(f, "block="))
				continue
			}
			total := 1
			for i, s := range dims {
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 || n > 1024 {
					d.errorf(c.Pos(), BadDirective, "block dimension %q is not an integer in 1..1024", s)
					n = 1
				}
				dir.block[i] = n
				total *= n
			}
			if total > 1024 {
				d.errorf(c.Pos(), BadDirective, "block=%s has %d threads; a block holds at most 1024", strings.TrimPrefix(f, "block="), total)
			}
			for i := range dir.block {
				if dir.block[i] == 0 {
					dir.block[i] = 1
				}
			}
		default:
			d.errorf(c.Pos(), BadDirective, "unknown //kern:kernel option %q (want block=N[xN[xN]], minblocks=N, maxregs=N, nobounds, fastmath, pdl or idx32)", f)
		}
	}
	if dir.minBlocks != 0 && dir.block == [3]int{} {
		// PTX ISA §11.4.3: .minnctapersm without .maxntid is ignored.
		d.errorf(c.Pos(), BadDirective, "minblocks=%d needs block=: the blocks per SM are counted in blocks of that shape", dir.minBlocks)
	}
	return dir
}

// intOption parses the value of an option name=N, which must lie in
// lo..hi; it reports a bad one and returns 0 (the option unset).
func intOption(d *diags, c *ast.Comment, f string, lo, hi int) int {
	name, v, _ := strings.Cut(f, "=")
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		d.errorf(c.Pos(), BadDirective, "%s=%s is not an integer in %d..%d", name, v, lo, hi)
		return 0
	}
	return n
}

// hasUnroll reports whether a comment group holds //kern:unroll.
func hasUnroll(cg *ast.CommentGroup) bool {
	if cg == nil {
		return false
	}
	for _, c := range cg.List {
		if strings.TrimSpace(c.Text) == "//kern:unroll" {
			return true
		}
	}
	return false
}

const archDirective = "//kern:arch"

// packageArch returns the target a package names with a //kern:arch line
// (for example "//kern:arch sm_90a" in a file's header): the default for
// packages whose kernels need an architecture newer than sm_80 (Hopper's
// wgmma is sm_90a only). An explicit Config.Arch (kern gen -arch) wins.
// Two files naming different targets are an error.
func packageArch(fset *token.FileSet, files []*ast.File) (string, error) {
	arch, where := "", ""
	for _, f := range files {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, archDirective+" ") {
					continue
				}
				a := strings.TrimSpace(strings.TrimPrefix(c.Text, archDirective))
				pos := fset.Position(c.Pos()).String()
				if _, err := lookupTarget(a); err != nil {
					return "", fmt.Errorf("%s: //kern:arch %s: %w", pos, a, err)
				}
				if arch != "" && a != arch {
					return "", fmt.Errorf("%s: //kern:arch %s, but %s says %s", pos, a, where, arch)
				}
				arch, where = a, pos
			}
		}
	}
	return arch, nil
}
