package ptxas

// Locating the ptxas binary: environment, the fetch script's cache, $PATH.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// ErrNotFound is returned (wrapped) by Find when no ptxas binary is present.
var ErrNotFound = errors.New("ptxas not found")

// exe is the file name of the ptxas binary on this OS.
func exe() string {
	if runtime.GOOS == "windows" {
		return "ptxas.exe"
	}
	return "ptxas"
}

// Find returns the path of a ptxas binary. It looks, in order, at:
//
//  1. $KERN_PTXAS, which must name an executable file if it is set;
//  2. the cache that scripts/fetch-ptxas.sh fills,
//     ${KERN_CACHE:-$HOME/.cache/kern}/ptxas/<version>/ptxas, newest version
//     first;
//  3. ptxas on $PATH.
//
// When none is present the error wraps ErrNotFound. A $KERN_PTXAS that names
// no executable file is a different error: the user asked for that binary.
func Find() (string, error) {
	if p := os.Getenv("KERN_PTXAS"); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("ptxas: $KERN_PTXAS: %w", err)
		}
		return p, nil
	}
	if dir, err := CacheDir(); err == nil {
		if p, ok := findInCache(dir); ok {
			return p, nil
		}
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: set $KERN_PTXAS, run scripts/fetch-ptxas.sh, or put ptxas on $PATH", ErrNotFound)
}

// CacheDir returns the directory scripts/fetch-ptxas.sh fetches into:
// ${KERN_CACHE:-$HOME/.cache/kern}/ptxas. It does not check that it exists.
func CacheDir() (string, error) {
	root := os.Getenv("KERN_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("ptxas: cache dir: %w", err)
		}
		root = filepath.Join(home, ".cache", "kern")
	}
	return filepath.Join(root, "ptxas"), nil
}

// findInCache returns dir/<version>/ptxas for the newest version directory
// that holds an executable ptxas.
func findInCache(dir string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var versions []string
	for _, e := range entries {
		// The fetch script stages into .fetch.* directories; skip them.
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			versions = append(versions, e.Name())
		}
	}
	sort.Slice(versions, func(i, j int) bool { return versionLess(versions[j], versions[i]) })
	for _, v := range versions {
		p := filepath.Join(dir, v, exe())
		if executable(p) == nil {
			return p, true
		}
	}
	return "", false
}

// executable reports why path is not an executable regular file, or nil.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// versionLess orders cache directory names such as "13.5.37" and
// "debian-12.4.131~12.4.1-2" by their numeric fields, ignoring a leading
// "word-" prefix that names where the binary came from.
func versionLess(a, b string) bool {
	na, nb := versionFields(a), versionFields(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

// versionFields returns the runs of digits in a version name after its
// optional "word-" prefix.
func versionFields(s string) []int {
	if i := strings.IndexByte(s, '-'); i > 0 && !strings.ContainsAny(s[:i], "0123456789") {
		s = s[i+1:]
	}
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			n = 0 // a run of digits too long for int; treat as unordered
		}
		out = append(out, n)
	}
	return out
}
