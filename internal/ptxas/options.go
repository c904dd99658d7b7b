package ptxas

// Options of Assemble.

import (
	"context"
	"strconv"
)

// config is what the Options of one Assemble call set.
type config struct {
	ctx         context.Context
	path        string // ptxas binary; "" means Find()
	optLevel    int
	maxRegs     int // 0: no -maxrregcount
	allowSpills bool
	fileName    string
	args        []string
}

func defaultConfig() config {
	return config{ctx: context.Background(), optLevel: 3, fileName: "kernel.ptx"}
}

// Option changes how Assemble runs ptxas.
type Option func(*config)

// Path runs the ptxas binary at path instead of the one Find returns.
func Path(path string) Option { return func(c *config) { c.path = path } }

// OptLevel sets ptxas's -O level (0 to 3; the default is 3).
func OptLevel(n int) Option { return func(c *config) { c.optLevel = n } }

// MaxRegCount passes -maxrregcount=n, capping registers per thread.
func MaxRegCount(n int) Option { return func(c *config) { c.maxRegs = n } }

// AllowSpills drops --warn-on-spills, so a kernel that spills registers to
// local memory assembles and its Report shows the spill bytes. By default a
// spill is a warning and -Werror makes it an error.
func AllowSpills() Option { return func(c *config) { c.allowSpills = true } }

// FileName names the temporary PTX file, and so the file that ptxas's
// messages and the Error refer to (default "kernel.ptx"). It must be a
// plain file name, without directories.
func FileName(name string) Option { return func(c *config) { c.fileName = name } }

// Args appends extra command-line arguments for ptxas.
func Args(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Context bounds the ptxas run: it is killed when ctx is done.
func Context(ctx context.Context) Option { return func(c *config) { c.ctx = ctx } }

// argv returns ptxas's arguments for one run, reading file and writing out.
func (c *config) argv(arch, file, out string) []string {
	a := []string{
		"-arch=" + arch,
		"-v",
		"-Werror",
		"-O" + strconv.Itoa(c.optLevel),
	}
	if !c.allowSpills {
		a = append(a, "--warn-on-spills")
	}
	if c.maxRegs > 0 {
		a = append(a, "-maxrregcount="+strconv.Itoa(c.maxRegs))
	}
	a = append(a, c.args...)
	return append(a, "-o", out, file)
}
