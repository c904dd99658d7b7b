package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

func TestGenerateAndChatOnEmulator(t *testing.T) {
	model := fixture.Model(t, "tiny-qwen3-tied")
	tok := fixture.Tokenizer(t)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"generate", "-device", "emu", "-model", model, "-tokenizer", tok,
		"-prompt", "hello world", "-n", "8"}, nil, &out, &errb)
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "hello world") || len(out.String()) <= len("hello world\n") {
		t.Errorf("generate printed %q", out.String())
	}
	if !strings.Contains(errb.String(), "tokens/s") || !strings.Contains(errb.String(), "PTX emulator") {
		t.Errorf("stderr lacks the device or the rate:\n%s", errb.String())
	}

	out.Reset()
	errb.Reset()
	err = run(context.Background(), []string{"chat", "-device", "native", "-model", model, "-tokenizer", tok, "-n", "4",
		"-temperature", "0.8", "-seed", "3", "-q"}, strings.NewReader("hi there\n/reset\nsecond question\n"), &out, &errb)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errb.String())
	}
	if n := strings.Count(out.String(), "> "); n < 3 {
		t.Errorf("chat printed %d prompts:\n%s", n, out.String())
	}

	if err := run(context.Background(), []string{"generate", "-device", "emu", "-prompt", "x"}, nil, &out, &errb); err == nil {
		t.Error("generate without -model: no error")
	}
	if err := run(context.Background(), []string{"bogus"}, nil, &out, &errb); err == nil {
		t.Error("unknown mode: no error")
	}
}
