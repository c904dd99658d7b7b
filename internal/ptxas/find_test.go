package ptxas

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// writeExe creates an executable file (a shell script on Unix) at path.
func writeExe(t *testing.T, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// isolate points every place Find looks at empty temporary directories.
func isolate(t *testing.T) (cache string) {
	t.Helper()
	cache = t.TempDir()
	t.Setenv("KERN_PTXAS", "")
	t.Setenv("KERN_CACHE", cache)
	t.Setenv("PATH", t.TempDir())
	return cache
}

func TestFindOrder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake ptxas binaries are shell scripts")
	}
	cache := isolate(t)

	if _, err := Find(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find with nothing installed: err = %v, want ErrNotFound", err)
	}

	// $PATH is the last resort.
	pathDir := t.TempDir()
	writeExe(t, filepath.Join(pathDir, "ptxas"), "exit 0")
	t.Setenv("PATH", pathDir)
	if got, err := Find(); err != nil || got != filepath.Join(pathDir, "ptxas") {
		t.Fatalf("Find = %q, %v; want the ptxas on $PATH", got, err)
	}

	// The cache wins over $PATH, newest version first; staging
	// directories and non-executable files are skipped.
	dir := filepath.Join(cache, "ptxas")
	writeExe(t, filepath.Join(dir, "12.4.1", "ptxas"), "exit 0")
	writeExe(t, filepath.Join(dir, "13.5.37", "ptxas"), "exit 0")
	writeExe(t, filepath.Join(dir, "debian-12.4.131~12.4.1-2", "ptxas"), "exit 0")
	writeExe(t, filepath.Join(dir, ".fetch.abc", "ptxas"), "exit 0")
	if err := os.MkdirAll(filepath.Join(dir, "99.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "99.0", "ptxas"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(); err != nil || got != filepath.Join(dir, "13.5.37", "ptxas") {
		t.Fatalf("Find = %q, %v; want the newest cached ptxas", got, err)
	}

	// $KERN_PTXAS wins over everything.
	explicit := filepath.Join(t.TempDir(), "my-ptxas")
	writeExe(t, explicit, "exit 0")
	t.Setenv("KERN_PTXAS", explicit)
	if got, err := Find(); err != nil || got != explicit {
		t.Fatalf("Find = %q, %v; want $KERN_PTXAS", got, err)
	}

	// A $KERN_PTXAS that names nothing is an error of its own, not a
	// silent fallback and not ErrNotFound.
	t.Setenv("KERN_PTXAS", filepath.Join(t.TempDir(), "missing"))
	if _, err := Find(); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "KERN_PTXAS") {
		t.Fatalf("Find with a bad $KERN_PTXAS: err = %v", err)
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("KERN_CACHE", "/some/where")
	if got, err := CacheDir(); err != nil || got != filepath.Join("/some/where", "ptxas") {
		t.Errorf("CacheDir = %q, %v", got, err)
	}
	t.Setenv("KERN_CACHE", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	if got, err := CacheDir(); err != nil || got != filepath.Join(home, ".cache", "kern", "ptxas") {
		t.Errorf("CacheDir = %q, %v; want under $HOME", got, err)
	}
}

func TestVersionOrder(t *testing.T) {
	got := []string{"13.5.37", "12.4.1", "debian-12.4.131~12.4.1-2", "13.10.0", "13.5", "9.2"}
	sort.Slice(got, func(i, j int) bool { return versionLess(got[i], got[j]) })
	want := []string{"9.2", "12.4.1", "debian-12.4.131~12.4.1-2", "13.5", "13.5.37", "13.10.0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sorted versions = %v, want %v", got, want)
	}
}
