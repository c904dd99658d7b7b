package server

import "testing"

func TestReasoningSplit(t *testing.T) {
	cases := []struct {
		pieces             []string
		reasoning, content string
	}{
		{[]string{"<think>\nstep one\n</think>\n\nThe answer."}, "step one\n", "The answer."},
		{[]string{"<th", "ink>", "\nhm", "m</th", "ink>", "\n\nok"}, "hmm", "ok"},
		{[]string{"Plain answer, no tags."}, "", "Plain answer, no tags."},
		{[]string{"<", "b>bold</b>"}, "", "<b>bold</b>"},
		{[]string{"\n", "<think>", "unfinished"}, "unfinished", ""},
		{[]string{"<think>\n\n</think>\n\nEmpty think."}, "", "Empty think."},
		{[]string{"a </think> b"}, "", "a </think> b"},
	}
	for _, c := range cases {
		var s thinkSplitter
		var r, ct string
		for _, p := range c.pieces {
			a, b := s.add(p)
			r, ct = r+a, ct+b
		}
		a, b := s.flush()
		r, ct = r+a, ct+b
		if r != c.reasoning || ct != c.content {
			t.Errorf("%q: reasoning %q content %q, want %q %q", c.pieces, r, ct, c.reasoning, c.content)
		}
		var whole string
		for _, p := range c.pieces {
			whole += p
		}
		if r2, c2 := splitReasoning(whole); r2 != c.reasoning || c2 != c.content {
			t.Errorf("%q whole: reasoning %q content %q, want %q %q", whole, r2, c2, c.reasoning, c.content)
		}
	}
}
