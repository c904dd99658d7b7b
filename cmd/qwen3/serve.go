package main

// qwen3 serve: the OpenAI-compatible HTTP server (package llm/server).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/gokern/kern/llm/server"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	name := fs.String("name", "", "model id in /v1/models (default: the model directory's name)")
	queue := fs.Int("queue", 64, "requests queued or running before 429")
	reasoning := fs.Bool("reasoning", false, "answer a chat reply's <think> block as reasoning_content (vLLM's qwen3 reasoning parser)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, dev, err := c.open(stderr)
	if err != nil {
		return err
	}
	defer dev.Close()
	defer e.Close()
	if *name == "" {
		*name = filepath.Base(filepath.Clean(c.model))
	}
	s := &server.Server{Engine: e, ModelName: *name, MaxQueue: *queue, SplitReasoning: *reasoning}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serving %s on http://%s (/v1/chat/completions, /v1/completions, /v1/models, /health, /metrics)\n", *name, ln.Addr())
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
