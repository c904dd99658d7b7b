package ptxas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The logs in testdata are real ptxas -v output (CUDA 12.4 and 13.5) for the
// PTX files beside them, so parsing is tested without ptxas.
func TestParseLog(t *testing.T) {
	tests := []struct {
		log           string
		gmem, cmem    int
		funcs         []Func // in log order
		nMsgs, msgErr int    // messages, and how many are errors or fatal
	}{
		{
			log:   "v13.5-sm_80-add.log",
			funcs: []Func{{Name: "add", Entry: true, Registers: 10, Barriers: 1, SharedBytes: 1024, ConstBytes: 372}},
		},
		{
			// CUDA 12.4 does not print "used N barriers".
			log:   "v12.4-sm_80-add.log",
			funcs: []Func{{Name: "add", Entry: true, Registers: 10, SharedBytes: 1024, ConstBytes: 372}},
		},
		{
			log: "v13.5-sm_80-call.log",
			funcs: []Func{
				{Name: "big", Entry: true, Registers: 10, StackFrame: 4160, CumulativeStack: 4160, ConstBytes: 364},
				{Name: "helper"},
			},
		},
		{
			log:  "v13.5-sm_80-two-entries.log",
			gmem: 64, cmem: 264,
			funcs: []Func{
				{Name: "add", Entry: true, Registers: 10, Barriers: 1, SharedBytes: 1024, ConstBytes: 372},
				{Name: "k", Entry: true, Registers: 10, ConstBytes: 364},
			},
		},
		{
			// sm_90 puts parameters elsewhere: no cmem on the Used line.
			log:  "v13.5-sm_90-two-entries.log",
			gmem: 64,
			funcs: []Func{
				{Name: "add", Entry: true, Registers: 10, Barriers: 1, SharedBytes: 1024},
				{Name: "k", Entry: true, Registers: 10},
			},
		},
		{
			log: "v13.5-sm_80-spill-error.log",
			funcs: []Func{{Name: "pressure", Entry: true, Registers: 32, StackFrame: 1784,
				CumulativeStack: 1784, SpillStores: 1892, SpillLoads: 2956, ConstBytes: 360}},
			nMsgs: 1, msgErr: 1,
		},
		{
			log:   "v13.5-sm_80-bad.log",
			nMsgs: 3, msgErr: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.log, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.log))
			if err != nil {
				t.Fatal(err)
			}
			r := parseLog(string(data))
			if r.Log != string(data) {
				t.Errorf("Log not kept verbatim")
			}
			if r.GlobalBytes != tt.gmem || r.ConstBytes != tt.cmem {
				t.Errorf("module: got %d bytes gmem, %d bytes cmem; want %d, %d", r.GlobalBytes, r.ConstBytes, tt.gmem, tt.cmem)
			}
			if len(r.Funcs) != len(tt.funcs) {
				t.Fatalf("got %d funcs, want %d:\n%s", len(r.Funcs), len(tt.funcs), r)
			}
			for i, want := range tt.funcs {
				if got := *r.Funcs[i]; got != want {
					t.Errorf("func %d:\n got %+v\nwant %+v", i, got, want)
				}
			}
			if len(r.Messages) != tt.nMsgs {
				t.Errorf("got %d messages, want %d: %v", len(r.Messages), tt.nMsgs, r.Messages)
			}
			errs := 0
			for _, m := range r.Messages {
				if m.Severity == "error" || m.Severity == "fatal" {
					errs++
				}
			}
			if errs != tt.msgErr {
				t.Errorf("got %d error messages, want %d", errs, tt.msgErr)
			}
		})
	}
}

func TestParseLogMessages(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v13.5-sm_80-bad.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := parseLog(string(data))
	want := []Message{
		{Severity: "error", File: "bad.ptx", Line: 33, Text: "Unknown modifier '.bar'"},
		{Severity: "error", File: "bad.ptx", Line: 33, Text: "Not a name of any known instruction: 'foo'"},
		{Severity: "fatal", Text: "Ptx assembly aborted due to errors"},
	}
	if len(r.Messages) != len(want) {
		t.Fatalf("got %d messages, want %d: %v", len(r.Messages), len(want), r.Messages)
	}
	for i := range want {
		if r.Messages[i] != want[i] {
			t.Errorf("message %d:\n got %+v\nwant %+v", i, r.Messages[i], want[i])
		}
	}
}

func TestReportLookup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v13.5-sm_80-call.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := parseLog(string(data))
	r.Arch = "sm_80"
	if f := r.Func("helper"); f == nil || f.Entry {
		t.Errorf("Func(helper) = %v, want a non-entry func", f)
	}
	if f := r.Func("nope"); f != nil {
		t.Errorf("Func(nope) = %v, want nil", f)
	}
	entries := r.Entries()
	if len(entries) != 1 || entries[0].Name != "big" {
		t.Errorf("Entries() = %v, want [big]", entries)
	}
	s := r.String()
	for _, want := range []string{"sm_80", "entry big: 10 registers", "4160 bytes stack", "func helper"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func TestParseLogGarbage(t *testing.T) {
	// Unknown lines, a Used line before any function and CRLF endings
	// must neither panic nor invent functions.
	r := parseLog("hello\r\nptxas info    : Used 3 registers\r\n  7 bytes stack frame\r\nptxas info    : something new\r\n")
	if len(r.Funcs) != 0 || len(r.Messages) != 0 {
		t.Errorf("got funcs %v messages %v, want none", r.Funcs, r.Messages)
	}
}
