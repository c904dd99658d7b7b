package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestLoadProgressNotTerminal: to a non-terminal, progress is plain
// lines, one per 10% (no bar, no carriage returns), ending at 100%.
func TestLoadProgressNotTerminal(t *testing.T) {
	var b bytes.Buffer
	p := loadProgress(&b, "m")
	const total = 1000
	for done := int64(7); done < total; done += 7 {
		p(done, total)
	}
	p(total, total)
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if strings.ContainsAny(out, "\r\x1b") || len(lines) < 10 || len(lines) > 11 {
		t.Fatalf("progress to a buffer:\n%q", out)
	}
	if last := lines[len(lines)-1]; last != "loading m: 100% of 0.0 MB" {
		t.Errorf("last line %q", last)
	}
}
