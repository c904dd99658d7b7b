package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/gokern/kern/compiler"
)

// specRE finds, in a generated file, each kernel's name and the source
// hash kern gen recorded for it.
var specRE = regexp.MustCompile(`(?m)^\tName: "(\w+)",[^\n]*\n(?:\t[^\n]*\n)*?\tSourceHash: +"([0-9a-f]+)"`)

// checkGenerated reports, for kern check, a generated file that is older
// than its package's kernels: one whose recorded source hashes differ
// from the kernels compiled now, or that lacks a kernel. A package with
// no generated file yet is not an error.
func checkGenerated(p *compiler.Package) error {
	path := filepath.Join(p.Dir, compiler.GeneratedFileName(p))
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	recorded := map[string]string{}
	for _, m := range specRE.FindAllSubmatch(src, -1) {
		recorded[string(m[1])] = string(m[2])
	}
	var stale []string
	for _, k := range p.Kernels {
		if h, ok := recorded[k.Name]; k.SourceHash != "" && (!ok || h != k.SourceHash) {
			stale = append(stale, k.Name)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return fmt.Errorf("%s is stale: kernels %v changed since kern gen wrote it; run `go generate %s` (or `go tool kern gen %[3]s`)", path, stale, relPkg(p.Dir))
}

// relPkg spells a package directory as a go command argument relative to
// the working directory where it can.
func relPkg(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil || filepath.IsAbs(rel) || len(rel) >= 2 && rel[:2] == ".." {
		return dir
	}
	if rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}
