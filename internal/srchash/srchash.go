// Package srchash fingerprints the Go source a kernel was compiled from,
// so that generated code can tell when it is older than its source.
//
// kern gen records, per kernel, the functions its PTX came from (the
// kernel and the same-package helpers it calls, as "file.go:Name" or
// "file.go:Type.Method") and a hash of their text. At a kernel's first
// launch package kern hashes the same functions again from the files on
// disk, and kern check does too: a mismatch means the kernel was edited
// after kern gen ran, so the emulator or GPU would run the old PTX while
// native mode runs the new Go.
//
// The package-level constants and types those functions use are recorded
// too ("file.go:const N", "file.go:type T"): changing a tile size
// changes the PTX as surely as changing the code.
//
// Both sides must find the same text without sharing a parser (package
// kern does not link go/parser), so a declaration's text is found by a
// line scan that relies on gofmt's layout: the comment lines directly
// above `func Name(` or `func (r T) Name(` (they hold //kern:kernel and
// its options), through the first line that is exactly "}"; for a
// constant or type, its one-line declaration or the whole `const (` or
// `type (` group holding it (a group's iota makes every line matter).
// For source that is not gofmt'ed the scan may take in more than the
// declaration, which only makes the check stricter.
package srchash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DeclText returns the text of the top-level declaration key names in
// src: "F" or "T.M" a function or method (with the comment lines directly
// above it), "const N" or "type T" the declaration or group declaring N or
// T.
func DeclText(src []byte, key string) ([]byte, bool) {
	for _, tok := range []string{"const", "type"} {
		if name, ok := strings.CutPrefix(key, tok+" "); ok {
			return specText(bytes.SplitAfter(src, []byte("\n")), tok, name)
		}
	}
	return funcText(src, key)
}

// specText finds the const or type declaration of name: a line
// "const name ..." / "type name ..." (through its closing "}" if it opens
// a brace), or a "const (" / "type (" group with a line declaring name.
func specText(lines [][]byte, tok, name string) ([]byte, bool) {
	for i := 0; i < len(lines); i++ {
		line := string(lines[i])
		rest, ok := strings.CutPrefix(line, tok+" ")
		if !ok {
			continue
		}
		if strings.TrimSpace(rest) == "(" {
			end := i + 1
			found := false
			for ; end < len(lines) && strings.TrimRight(string(lines[end]), " \t\r\n") != ")"; end++ {
				if declares(string(lines[end]), name) {
					found = true
				}
			}
			if found {
				return bytes.Join(lines[i:min(end+1, len(lines))], nil), true
			}
			i = end
			continue
		}
		if !declares(rest, name) {
			continue
		}
		end := i
		if strings.HasSuffix(strings.TrimRight(line, " \t\r\n"), "{") {
			for end = i + 1; end < len(lines) && !endsWithBrace(lines[end]); end++ {
			}
			end = min(end, len(lines)-1)
		}
		return bytes.Join(lines[i:end+1], nil), true
	}
	return nil, false
}

// declares reports whether a spec line ("\tA, B = 1, 2", "N = 4",
// "T struct {") declares name.
func declares(line, name string) bool {
	line = strings.TrimLeft(line, " \t")
	head, _, _ := strings.Cut(line, "=")
	for _, f := range strings.Split(head, ",") {
		fs := strings.Fields(f)
		if len(fs) > 0 && strings.TrimRight(fs[0], "[") == name {
			return true
		}
		if k := strings.IndexByte(f, '['); len(fs) > 0 && k > 0 && strings.TrimSpace(f[:k]) == name {
			return true
		}
	}
	return false
}

// funcText finds a function or method ("F" or "T.M") with its doc
// comment lines.
func funcText(src []byte, key string) ([]byte, bool) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i, line := range lines {
		if !bytes.HasPrefix(line, []byte("func ")) || declKey(string(line[len("func "):])) != key {
			continue
		}
		start := i
		for start > 0 && bytes.HasPrefix(lines[start-1], []byte("//")) {
			start--
		}
		end := i
		if !endsWithBrace(line) || bytes.HasSuffix(bytes.TrimRight(line, " \t\r\n"), []byte("{")) {
			for end = i + 1; end < len(lines) && !endsWithBrace(lines[end]); end++ {
			}
			end = min(end, len(lines)-1)
		}
		return bytes.Join(lines[start:end+1], nil), true
	}
	return nil, false
}

// endsWithBrace reports whether a line closes a top-level declaration:
// it is "}" or ends in "}" (a one-line func).
func endsWithBrace(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r\n")
	return len(t) > 0 && t[len(t)-1] == '}' && (len(t) == 1 || t[0] != '\t' && t[0] != ' ')
}

// declKey reads "Name(" or "(r *T[P]) Name(" and returns "Name" or
// "T.Name".
func declKey(s string) string {
	recv := ""
	if strings.HasPrefix(s, "(") {
		depth, j := 0, 0
		for j = 0; j < len(s); j++ {
			if s[j] == '(' {
				depth++
			} else if s[j] == ')' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j == len(s) {
			return ""
		}
		fields := strings.Fields(s[1:j])
		if len(fields) == 0 {
			return ""
		}
		recv = strings.TrimPrefix(fields[len(fields)-1], "*")
		if k := strings.IndexByte(recv, '['); k >= 0 {
			recv = recv[:k]
		}
		s = strings.TrimLeft(s[j+1:], " ")
	}
	n := 0
	for n < len(s) && s[n] != '(' && s[n] != '[' && s[n] != ' ' {
		n++
	}
	if recv != "" {
		return recv + "." + s[:n]
	}
	return s[:n]
}

// Sum hashes the declarations decls ("file.go:Key") name, reading each file
// with read. The result is 16 hex digits.
func Sum(decls []string, read func(file string) ([]byte, error)) (string, error) {
	sorted := append([]string(nil), decls...)
	sort.Strings(sorted)
	h := sha256.New()
	cache := map[string][]byte{}
	for _, f := range sorted {
		file, key, ok := strings.Cut(f, ":")
		if !ok {
			return "", fmt.Errorf("srchash: %q is not file.go:Name", f)
		}
		src, seen := cache[file]
		if !seen {
			var err error
			if src, err = read(file); err != nil {
				return "", err
			}
			cache[file] = src
		}
		text, found := DeclText(src, key)
		if !found {
			return "", fmt.Errorf("%s: no %s", file, key)
		}
		fmt.Fprintf(h, "%s\n%d\n", f, len(text))
		h.Write(text)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// SumDir is Sum reading files from dir.
func SumDir(dir string, decls []string) (string, error) {
	return Sum(decls, func(file string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, file)) })
}
