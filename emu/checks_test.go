package emu

import (
	"strings"
	"testing"
)

func TestParseChecks(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"all":                   "memcheck,racecheck,synccheck,pdlcheck",
		"ALL":                   "memcheck,racecheck,synccheck,pdlcheck",
		"pdlcheck, synccheck":   "synccheck,pdlcheck",
		" RaceCheck , memcheck": "memcheck,racecheck",
		"initcheck":             "memcheck",
		"synccheck,":            "synccheck",
	} {
		o, err := ParseChecks(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := strings.Join(o.Checks(), ","); got != want {
			t.Errorf("%q: checks %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"racechek", "bogus", "memcheck,bogus", "all racecheck"} {
		_, err := ParseChecks(bad)
		if err == nil || !strings.Contains(err.Error(), "unknown emulator check") || !strings.Contains(err.Error(), "racecheck") {
			t.Errorf("%q: %v, want an error listing the valid names", bad, err)
		}
	}
}
