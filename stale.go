package kern

// Stale generated code. kern gen records in each KernelSpec the functions
// the kernel was compiled from and a hash of their text
// (internal/srchash). If the kernel is edited and go generate is not run
// again, the emulator and the GPU would run the old PTX while native mode
// runs the new Go: silently different results. So the first launch of
// each kernel, on any device, hashes those functions again from the
// source files beside the generated file and refuses to run on a
// mismatch. Where the source is not there (a binary built with -trimpath
// or run on another machine) there is nothing to compare and the launch
// goes ahead; KERN_SOURCE_CHECK=off skips the check.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/gokern/kern/internal/srchash"
)

// ErrStaleKernel is wrapped by the error of a launch whose generated code
// is older than the kernel's source.
var ErrStaleKernel = errors.New("generated code is older than the kernel's source")

// sourceCheck is the result of a kernel's source check, run once.
type sourceCheck struct {
	once sync.Once
	err  error
}

// checkSource compares the kernel's recorded source hash with its source
// files; it runs once per kernel.
func (k *Kernel) checkSource() error {
	k.source.once.Do(func() { k.source.err = k.staleError() })
	return k.source.err
}

func (k *Kernel) staleError() error {
	s := &k.spec
	if s.SourceHash == "" || len(s.Source) == 0 || s.Native == nil || os.Getenv("KERN_SOURCE_CHECK") == "off" {
		return nil
	}
	// The Native closure is declared in the generated file, so its
	// position names the package directory as it was at build time.
	fn := runtime.FuncForPC(reflect.ValueOf(s.Native).Pointer())
	if fn == nil {
		return nil
	}
	file, _ := fn.FileLine(fn.Entry())
	dir := filepath.Dir(file)
	if _, err := os.Stat(file); err != nil {
		return nil // built elsewhere or with -trimpath: nothing to compare
	}
	got, err := srchash.SumDir(dir, s.Source)
	if err == nil && got == s.SourceHash {
		return nil
	}
	why := "changed"
	if err != nil {
		why = fmt.Sprintf("cannot be matched (%v)", err)
	}
	return fmt.Errorf("kern: kernel %s: %w: %s %s since kern gen wrote %s; run `go generate` in %s (or `go tool kern gen`), or set KERN_SOURCE_CHECK=off to launch the old code",
		k.spec.Name, ErrStaleKernel, sourceList(s.Source), why, filepath.Base(file), dir)
}

// sourceList spells "file.go:A", "file.go:B", "util.go:C" as
// "file.go (A, B), util.go (C)".
func sourceList(funcs []string) string {
	var b strings.Builder
	last := ""
	for _, f := range funcs {
		file, name, _ := strings.Cut(f, ":")
		switch {
		case file == last:
			b.WriteString(", " + name)
		case last == "":
			b.WriteString(file + " (" + name)
		default:
			b.WriteString("), " + file + " (" + name)
		}
		last = file
	}
	if last != "" {
		b.WriteString(")")
	}
	return b.String()
}
