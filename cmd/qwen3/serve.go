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

	"github.com/gokern/kern/llm/kvevents"
	"github.com/gokern/kern/llm/server"
	"github.com/gokern/kern/llm/tp"
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
	kvEvents := fs.String("kv-events", "", "publish prefix-cache events in vLLM's format on a ZeroMQ PUB socket at this endpoint (e.g. tcp://*:5557)")
	kvTopic := fs.String("kv-events-topic", "", "topic frame of the KV events")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kvEvents != "" {
		pub, err := kvevents.NewPublisher(*kvEvents, *kvTopic)
		if err != nil {
			return err
		}
		defer pub.Close()
		c.onKVEvents = pub.Publish
		fmt.Fprintf(stderr, "KV events: publishing to %s\n", *kvEvents)
	}
	if *name == "" {
		*name = filepath.Base(filepath.Clean(c.model))
	}
	// Listen before loading: /health answers at once and /ready once the
	// model is in place (llm/server), so an orchestrator can tell a pod
	// that is loading from one that is stuck.
	s := &server.Server{ModelName: *name, MaxQueue: *queue, SplitReasoning: *reasoning}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serving %s on http://%s (/v1/chat/completions, /v1/completions, /v1/models, /health, /ready, /metrics)\n", *name, ln.Addr())
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}
	e, closeAll, err := c.open(ctx, stderr)
	if err != nil {
		stop()
		<-served
		return err
	}
	defer closeAll()
	if l, ok := e.Model.(*tp.Leader); ok {
		s.Healthy = l.Broken
	}
	s.SetEngine(e)
	if !c.quiet {
		fmt.Fprintf(stderr, "ready: model loaded %.2f s after process start\n", time.Since(processStart).Seconds())
	}
	select {
	case <-ctx.Done():
		stop()
		<-served
		return nil
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// processStart approximates the process's start (package initialisation)
// for the cold-start figure.
var processStart = time.Now()
