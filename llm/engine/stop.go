package engine

// Stop strings: text is passed on as it is generated, except a suffix
// that could still turn into a stop string, and it ends before the first
// stop string.

import "strings"

// stopWriter passes text on, holding back any suffix that could begin a
// stop string, and cuts the text before the first stop string.
type stopWriter struct {
	stops   []string
	onText  func(string) error
	held    string
	text    strings.Builder
	stopped bool
}

func newStopWriter(stops []string, onText func(string) error) *stopWriter {
	var s []string
	for _, x := range stops {
		if x != "" {
			s = append(s, x)
		}
	}
	return &stopWriter{stops: s, onText: onText}
}

func (w *stopWriter) emit(s string) error {
	if s == "" {
		return nil
	}
	w.text.WriteString(s)
	if w.onText != nil {
		return w.onText(s)
	}
	return nil
}

// write adds s; it reports whether a stop string was found.
func (w *stopWriter) write(s string) (bool, error) {
	if w.stopped {
		return true, nil
	}
	w.held += s
	cut := -1
	for _, st := range w.stops {
		if i := strings.Index(w.held, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		w.stopped = true
		err := w.emit(w.held[:cut])
		w.held = ""
		return true, err
	}
	keep := 0 // the longest suffix of held that is a proper prefix of a stop string
	for _, st := range w.stops {
		for k := min(len(st)-1, len(w.held)); k > keep; k-- {
			if strings.HasSuffix(w.held, st[:k]) {
				keep = k
				break
			}
		}
	}
	err := w.emit(w.held[:len(w.held)-keep])
	w.held = w.held[len(w.held)-keep:]
	return false, err
}

// flush emits what is held at the end (it did not become a stop string).
func (w *stopWriter) flush() error {
	if w.stopped {
		return nil
	}
	err := w.emit(w.held)
	w.held = ""
	return err
}
