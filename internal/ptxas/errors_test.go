package ptxas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrorQuotesSource(t *testing.T) {
	ptx, err := os.ReadFile(filepath.Join("testdata", "bad.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join("testdata", "v13.5-sm_80-bad.log"))
	if err != nil {
		t.Fatal(err)
	}
	exit := errors.New("exit status 255")
	e := newError("sm_80", "bad.ptx", ptx, parseLog(string(log)), exit)
	if !errors.Is(e, exit) {
		t.Errorf("Error does not unwrap to the exit error")
	}
	if got := e.Messages[0].Source; got != "foo.bar %f1;" {
		t.Errorf("Messages[0].Source = %q, want the PTX of line 33", got)
	}
	if e.Messages[2].Source != "" {
		t.Errorf("a message without a line got source %q", e.Messages[2].Source)
	}
	msg := e.Error()
	for _, want := range []string{
		"ptxas -arch=sm_80 rejected bad.ptx (exit status 255):",
		"\nbad.ptx:33: error: Unknown modifier '.bar'\n    33 | foo.bar %f1;",
		"\nfatal: Ptx assembly aborted due to errors",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Error() lacks %q:\n%s", want, msg)
		}
	}
}

func TestErrorWithoutMessages(t *testing.T) {
	// A line number past the end of the PTX, and a log with no message
	// lines, must not panic; the raw log is shown instead.
	e := newError("sm_90", "k.ptx", []byte("one line"),
		parseLog("ptxas k.ptx, line 9; error   : odd\n"), errors.New("exit status 1"))
	if e.Messages[0].Source != "" {
		t.Errorf("line past the end quoted %q", e.Messages[0].Source)
	}
	e = newError("sm_90", "k.ptx", nil, parseLog("Segmentation fault\n"), errors.New("exit status 139"))
	if msg := e.Error(); !strings.Contains(msg, "Segmentation fault") {
		t.Errorf("Error() without messages lacks the log:\n%s", msg)
	}
}
