package ptxas

// Assembly failures, rendered with the PTX lines they refer to.

import (
	"fmt"
	"strings"
)

// Message is one warning or error line of ptxas output.
type Message struct {
	Severity string // "error", "warning" or "fatal"
	File     string // the PTX file named by the message, "" if none
	Line     int    // 1-based PTX line the message refers to, 0 if none
	Text     string // the message after "error   : "
	// Source is the PTX text of Line, trimmed; set on messages of an
	// *Error that name a line.
	Source string
}

// String renders the message compiler-style: "kernel.ptx:22: error: text".
func (m Message) String() string {
	var b strings.Builder
	if m.File != "" {
		b.WriteString(m.File)
		if m.Line > 0 {
			fmt.Fprintf(&b, ":%d", m.Line)
		}
		b.WriteString(": ")
	}
	b.WriteString(m.Severity)
	b.WriteString(": ")
	b.WriteString(m.Text)
	return b.String()
}

// Error is ptxas rejecting a PTX module.
type Error struct {
	Arch     string
	File     string    // the PTX file name given to ptxas, e.g. "kernel.ptx"
	Messages []Message // errors and warnings, with their PTX source lines
	// Report is what ptxas reported before it failed. It is never nil; a
	// kernel rejected for spilling still shows its spill bytes here.
	Report *Report
	Err    error // the exit status of ptxas
}

// newError builds the Error for a failed run, quoting from ptx the line of
// every message that names one.
func newError(arch, file string, ptx []byte, rep *Report, err error) *Error {
	lines := strings.Split(string(ptx), "\n")
	msgs := make([]Message, len(rep.Messages))
	for i, m := range rep.Messages {
		if m.Line > 0 && m.Line <= len(lines) {
			m.Source = strings.TrimSpace(strings.TrimRight(lines[m.Line-1], "\r"))
		}
		msgs[i] = m
	}
	rep.Messages = msgs
	return &Error{Arch: arch, File: file, Messages: msgs, Report: rep, Err: err}
}

// Error lists ptxas's messages, each followed by the PTX line it names:
//
//	ptxas -arch=sm_80 rejected kernel.ptx (exit status 255):
//	kernel.ptx:22: error: Unknown vector selector: 'q'
//	    22 | mov.u32 %r4, %tid.q;
//	fatal: Ptx assembly aborted due to errors
//
// If ptxas printed no message it recognizes, the raw log is included.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ptxas -arch=%s rejected %s (%v):", e.Arch, e.File, e.Err)
	if len(e.Messages) == 0 {
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(e.Report.Log))
		return b.String()
	}
	for _, m := range e.Messages {
		b.WriteString("\n")
		b.WriteString(m.String())
		if m.Source != "" {
			fmt.Fprintf(&b, "\n    %d | %s", m.Line, m.Source)
		}
	}
	return b.String()
}

// Unwrap returns the exit error of the ptxas process.
func (e *Error) Unwrap() error { return e.Err }

// Log is ptxas's whole output.
func (e *Error) Log() string { return e.Report.Log }
