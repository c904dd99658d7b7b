package ptxas

// Running ptxas on one PTX module for one architecture.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// archRE is the shape of an -arch value: sm_80, sm_90, sm_90a, sm_100f.
var archRE = regexp.MustCompile(`^sm_[0-9]+[a-z]?$`)

// Assemble assembles ptx for arch (e.g. "sm_80") with
//
//	ptxas -arch=<arch> -v -Werror -O3 --warn-on-spills -o <tmp>.cubin <tmp>/kernel.ptx
//
// and returns what ptxas reported: per-function registers, spills, stack,
// shared and constant memory, the raw log and the cubin.
//
// When ptxas rejects the PTX (any error or warning, since -Werror is on) the
// error is an *Error; its message lists ptxas's messages with the PTX source
// line each refers to, and its Report field holds whatever ptxas reported
// before failing (a spilling kernel still reports its spill bytes). Other
// failures (no ptxas, a bad arch, I/O) are plain wrapped errors.
func Assemble(ptx []byte, arch string, opts ...Option) (*Report, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if !archRE.MatchString(arch) {
		return nil, fmt.Errorf("ptxas: arch %q: want sm_<number>, e.g. sm_80", arch)
	}
	if c.fileName == "" || c.fileName != filepath.Base(c.fileName) || strings.HasPrefix(c.fileName, "-") {
		return nil, fmt.Errorf("ptxas: file name %q: want a plain file name", c.fileName)
	}
	bin := c.path
	if bin == "" {
		var err error
		if bin, err = Find(); err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp("", "kern-ptxas-")
	if err != nil {
		return nil, fmt.Errorf("ptxas: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, c.fileName), ptx, 0o644); err != nil {
		return nil, fmt.Errorf("ptxas: writing PTX: %w", err)
	}
	const cubin = "out.cubin"

	// Run in dir with relative names so that messages say "kernel.ptx, line
	// N" rather than a temporary path.
	cmd := exec.CommandContext(c.ctx, bin, c.argv(arch, c.fileName, cubin)...)
	cmd.Dir = dir
	var log bytes.Buffer
	cmd.Stdout = &log
	cmd.Stderr = &log
	runErr := cmd.Run()

	rep := parseLog(log.String())
	rep.Arch = arch
	if runErr != nil {
		if ctxErr := c.ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("ptxas: %s: %w", arch, ctxErr)
		}
		var exit *exec.ExitError
		if !errors.As(runErr, &exit) {
			return nil, fmt.Errorf("ptxas: running %s: %w", bin, runErr)
		}
		return nil, newError(arch, c.fileName, ptx, rep, runErr)
	}
	rep.Cubin, err = os.ReadFile(filepath.Join(dir, cubin))
	if err != nil {
		return nil, fmt.Errorf("ptxas: reading cubin: %w", err)
	}
	return rep, nil
}
