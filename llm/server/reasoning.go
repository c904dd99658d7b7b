package server

// Separating Qwen3's reasoning from its answer, as vLLM's qwen3 reasoning
// parser does, when Server.SplitReasoning is set: a reply that opens
// with <think> is reasoning up to </think> (delta.reasoning_content /
// message.reasoning_content) and content after it; a reply that does not
// open with <think> (enable_thinking=false puts an empty think block in
// the prompt instead) is all content.

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkSplitter routes streamed text to reasoning or content.
type thinkSplitter struct {
	state int    // 0: not yet known, 1: reasoning, 2: content
	held  string // text that may still be the start of a tag
	trim  bool   // newlines right after a tag are dropped
}

// add takes the next piece of text and returns what is now known to be
// reasoning and content.
func (s *thinkSplitter) add(piece string) (reasoning, content string) {
	s.held += piece
	for {
		switch s.state {
		case 0:
			t := strings.TrimLeft(s.held, " \n")
			if t == "" || strings.HasPrefix(thinkOpen, t) && t != thinkOpen {
				return reasoning, content // may still open with <think>
			}
			if strings.HasPrefix(t, thinkOpen) {
				s.state, s.held, s.trim = 1, t[len(thinkOpen):], true
				continue
			}
			s.state = 2
		case 1:
			if s.trimmed() {
				return reasoning, content
			}
			if i := strings.Index(s.held, thinkClose); i >= 0 {
				reasoning += s.held[:i]
				s.held, s.state, s.trim = s.held[i+len(thinkClose):], 2, true
				continue
			}
			keep := 0 // a suffix that may begin </think>
			for k := min(len(thinkClose)-1, len(s.held)); k > 0; k-- {
				if strings.HasSuffix(s.held, thinkClose[:k]) {
					keep = k
					break
				}
			}
			reasoning += s.held[:len(s.held)-keep]
			s.held = s.held[len(s.held)-keep:]
			return reasoning, content
		case 2:
			if s.trimmed() {
				return reasoning, content
			}
			content += s.held
			s.held = ""
			return reasoning, content
		}
	}
}

// trimmed drops newlines after a tag; it reports whether nothing else is
// held yet (the next piece may bring more newlines).
func (s *thinkSplitter) trimmed() bool {
	if !s.trim {
		return false
	}
	s.held = strings.TrimLeft(s.held, "\n")
	if s.held == "" {
		return true
	}
	s.trim = false
	return false
}

// flush returns what is held at the end of the reply.
func (s *thinkSplitter) flush() (reasoning, content string) {
	h := s.held
	s.held = ""
	if s.state == 1 {
		return h, ""
	}
	return "", h
}

// splitReasoning splits a whole reply the same way.
func splitReasoning(text string) (reasoning, content string) {
	var s thinkSplitter
	r, c := s.add(text)
	r2, c2 := s.flush()
	return r + r2, c + c2
}
