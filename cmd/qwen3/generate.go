package main

// qwen3 generate: one prompt in, its continuation out, then the speed.

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/tokenizer"
)

func generate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	prompt := fs.String("prompt", "", "the prompt text")
	asChat := fs.Bool("chat", false, "wrap the prompt as one user message in the chat template")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prompt == "" {
		return fmt.Errorf("generate: -prompt is required")
	}
	e, closeAll, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer closeAll()
	var ids []int32
	if *asChat {
		ids = e.ChatPrompt([]tokenizer.Message{{Role: "user", Content: *prompt}}, !c.noThink)
	} else {
		ids = e.Tok.Encode(*prompt)
	}
	if !*asChat {
		fmt.Fprint(stdout, *prompt)
	}
	res, err := e.Generate(ctx, engine.Request{Prompt: ids, MaxTokens: c.maxTokens, Sampling: c.params(e), Stop: c.stops(),
		OnText: func(s string) error { _, err := io.WriteString(stdout, s); return err }})
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	if !c.quiet {
		report(stderr, res)
	}
	return nil
}

// report prints token counts and rates.
func report(w io.Writer, res *engine.Result) {
	pre := float64(res.PromptTokens) / res.Prefill.Seconds()
	fmt.Fprintf(w, "prompt %d tokens in %.3fs (%.1f tokens/s); generated %d tokens (%s), decode %.1f tokens/s\n",
		res.PromptTokens, res.Prefill.Seconds(), pre, res.CompletionTokens, res.FinishReason, res.DecodeTokensPerSecond())
}
