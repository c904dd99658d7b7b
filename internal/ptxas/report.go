package ptxas

// Parsing the -v log of ptxas into a Report.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Report is what ptxas -v said about one module for one architecture.
type Report struct {
	Arch string // the -arch it was assembled for, e.g. "sm_80"
	// Funcs lists every function ptxas described, in log order: the
	// .entry kernels (Entry is true) and the .func functions they call.
	Funcs []*Func
	// GlobalBytes is the module's .global data ("N bytes gmem").
	GlobalBytes int
	// ConstBytes is the module's .const data, summed over the constant
	// banks ptxas lists beside gmem ("256 bytes cmem[3]").
	ConstBytes int
	// Messages are the warnings and errors in the log.
	Messages []Message
	Log      string // ptxas's whole output
	Cubin    []byte // the assembled module; nil if assembly failed
}

// Func is ptxas's account of one function.
type Func struct {
	Name  string
	Entry bool // an .entry (kernel), not a .func
	// Registers per thread and named barriers used; reported for entries.
	Registers int
	Barriers  int
	// StackFrame is the function's own local-memory frame in bytes: local
	// arrays plus spill slots. CumulativeStack adds its callees' frames.
	StackFrame      int
	CumulativeStack int
	// SpillStores and SpillLoads are bytes of registers spilled to and
	// reloaded from local memory.
	SpillStores int
	SpillLoads  int
	// SharedBytes is the static shared memory the function declares
	// ("N bytes smem"); dynamic shared memory is sized at launch.
	SharedBytes int
	// ConstBytes is the constant memory the function uses, summed over the
	// banks on its "Used" line; bank 0 holds the kernel parameters.
	ConstBytes int
}

// Spills reports whether the function spilled registers to local memory.
func (f *Func) Spills() bool { return f.SpillStores > 0 || f.SpillLoads > 0 }

// String is one line in the style of ptxas's own summary.
func (f *Func) String() string {
	kind := "func"
	if f.Entry {
		kind = "entry"
	}
	return fmt.Sprintf("%s %s: %d registers, %d barriers, %d bytes smem, %d bytes cmem, %d bytes stack, %d/%d bytes spill stores/loads",
		kind, f.Name, f.Registers, f.Barriers, f.SharedBytes, f.ConstBytes, f.StackFrame, f.SpillStores, f.SpillLoads)
}

// Func returns the function called name, or nil.
func (r *Report) Func(name string) *Func {
	for _, f := range r.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Entries returns the .entry functions (the kernels), in log order.
func (r *Report) Entries() []*Func {
	var out []*Func
	for _, f := range r.Funcs {
		if f.Entry {
			out = append(out, f)
		}
	}
	return out
}

// String summarizes the report, one line per function.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d bytes gmem, %d bytes cmem", r.Arch, r.GlobalBytes, r.ConstBytes)
	for _, f := range r.Funcs {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}

// The lines of ptxas -v output, as printed by CUDA 12.4 through 13.5:
//
//	ptxas info    : 64 bytes gmem, 256 bytes cmem[3]
//	ptxas info    : Compiling entry function 'add' for 'sm_80'
//	ptxas info    : Function properties for add
//	    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//	ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 372 bytes cmem[0]
//	ptxas info    : Compile time = 4.307 ms
//	ptxas kernel.ptx, line 22; error   : Unknown vector selector: 'q'
//	ptxas warning : Registers are spilled to local memory in function 'f', ...
//	ptxas fatal   : Ptx assembly aborted due to errors
//
// Older versions leave out "used N barriers"; sm_90 leaves out cmem[0].
var (
	infoRE     = regexp.MustCompile(`^ptxas info\s*: (.*)$`)
	messageRE  = regexp.MustCompile(`^ptxas (?:(.+), line (\d+); )?(error|warning|fatal)\s*: (.*)$`)
	compileRE  = regexp.MustCompile(`^Compiling entry function '(.+)' for '(.+)'$`)
	propsRE    = regexp.MustCompile(`^Function properties for (.+)$`)
	itemRE     = regexp.MustCompile(`^(?:[Uu]sed )?(\d+) (?:bytes )?(.+?)$`)
	cmemBankRE = regexp.MustCompile(`^cmem\[\d+\]$`)
)

// parseLog builds a Report from ptxas -v output. Lines it does not know are
// kept in Log only: the parse never fails, so a format change shows up as
// zero counts in tests rather than as a broken build.
func parseLog(log string) *Report {
	r := &Report{Log: log}
	var cur *Func   // the function the last "Function properties" named
	var entry *Func // the entry the last "Compiling entry function" named
	get := func(name string) *Func {
		if f := r.Func(name); f != nil {
			return f
		}
		f := &Func{Name: name}
		r.Funcs = append(r.Funcs, f)
		return f
	}
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := messageRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			r.Messages = append(r.Messages, Message{Severity: m[3], File: m[1], Line: n, Text: strings.TrimSpace(m[4])})
			continue
		}
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			// The stack/spill line under "Function properties for".
			if cur != nil {
				items(strings.TrimSpace(line), cur, nil)
			}
			continue
		}
		m := infoRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		info := strings.TrimSpace(m[1])
		switch {
		case compileRE.MatchString(info):
			entry = get(compileRE.FindStringSubmatch(info)[1])
			entry.Entry = true
		case propsRE.MatchString(info):
			cur = get(propsRE.FindStringSubmatch(info)[1])
		case strings.HasPrefix(info, "Used "):
			f := entry
			if f == nil {
				f = cur
			}
			if f != nil {
				items(info, f, nil)
			}
		case strings.Contains(info, " bytes gmem"):
			items(info, nil, r)
		}
	}
	return r
}

// items parses a comma-separated list of counts such as "Used 10 registers,
// used 1 barriers, 1024 bytes smem, 372 bytes cmem[0]" into f or, for the
// module line ("64 bytes gmem, 256 bytes cmem[3]"), into r.
func items(s string, f *Func, r *Report) {
	for _, it := range strings.Split(s, ",") {
		m := itemRE.FindStringSubmatch(strings.TrimSpace(it))
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		what := m[2]
		if r != nil {
			switch {
			case what == "gmem":
				r.GlobalBytes += n
			case cmemBankRE.MatchString(what):
				r.ConstBytes += n
			}
			continue
		}
		switch {
		case what == "registers":
			f.Registers = n
		case what == "barriers":
			f.Barriers = n
		case what == "smem":
			f.SharedBytes = n
		case cmemBankRE.MatchString(what):
			f.ConstBytes += n
		case what == "stack frame":
			f.StackFrame = n
		case what == "cumulative stack size":
			f.CumulativeStack = n
		case what == "spill stores":
			f.SpillStores = n
		case what == "spill loads":
			f.SpillLoads = n
		}
	}
}
