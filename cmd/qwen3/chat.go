package main

// qwen3 chat: an interactive conversation on the terminal. Each line is a
// user message; the whole history is re-rendered with the chat template
// and prefilled (no prefix reuse yet). "/reset" clears the history, EOF
// (Ctrl-D) ends the session.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/tokenizer"
)

func chat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	system := fs.String("system", "", "a system message")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeAll, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer closeAll()
	var history []tokenizer.Message
	if *system != "" {
		history = append(history, tokenizer.Message{Role: "system", Content: *system})
	}
	base := len(history)
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		fmt.Fprint(stdout, "> ")
		if !in.Scan() {
			fmt.Fprintln(stdout)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		switch line {
		case "":
			continue
		case "/reset":
			history = history[:base]
			continue
		}
		history = append(history, tokenizer.Message{Role: "user", Content: line})
		res, err := e.Generate(ctx, engine.Request{Prompt: e.ChatPrompt(history, !c.noThink), MaxTokens: c.maxTokens,
			Sampling: c.params(e), Stop: c.stops(),
			OnText: func(s string) error { _, err := io.WriteString(stdout, s); return err }})
		fmt.Fprintln(stdout)
		if err != nil {
			return err
		}
		if !c.quiet {
			report(stderr, res)
		}
		history = append(history, tokenizer.Message{Role: "assistant", Content: res.Text})
	}
}
