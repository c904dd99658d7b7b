// Package server serves an engine over HTTP with the OpenAI API:
// /v1/chat/completions and /v1/completions (JSON or server-sent events,
// with usage), /v1/models, /health, /ready and /metrics (Prometheus text
// under vLLM's metric names). docs/serving.md documents the protocol.
//
// The server can listen before its model is loaded (SetEngine installs
// it later): /health then answers 200 (the process is up) while /ready
// and the completion endpoints answer 503 until the engine is in place,
// so a Kubernetes readiness probe keeps traffic away during a cold start
// and a liveness probe does not kill a pod that is still loading.
//
// Requests are admitted to a bounded queue: when MaxQueue requests are
// already queued or running, a new one gets 429 at once rather than
// piling up memory. Admitted requests are batched continuously by the
// engine (up to its MaxBatch decode together, in arrival order). A
// request's generation stops at the next step once its client
// disconnects (the request's context is cancelled), and its KV pages go
// back to the pool.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gokern/kern/llm/engine"
)

// Server is the HTTP front of one engine.
type Server struct {
	// Engine, if set before Handler, serves from the start; otherwise
	// SetEngine installs one once it is loaded.
	Engine    *engine.Engine
	ModelName string // the id /v1/models lists and responses carry
	MaxQueue  int    // requests queued or running before 429; 0 means 64
	// MaxBody bounds a request body (0 means 1 MiB).
	MaxBody int64
	// SplitReasoning moves a chat reply's <think>…</think> block to
	// reasoning_content (reasoning.go), as vLLM's qwen3 reasoning parser.
	SplitReasoning bool
	// Healthy, if set, is asked by /health: an error turns it 503, so a
	// liveness probe restarts a server whose engine cannot recover (a
	// tensor-parallel clique with a rank gone).
	Healthy func() error

	eng     atomic.Pointer[engine.Engine]
	slots   chan struct{}
	created int64
	nextID  atomic.Int64
	m       metrics
}

type metrics struct {
	requests, rejected, failed, cancelled atomic.Int64
}

// SetEngine installs the engine once the model is loaded; /ready turns
// 200 from then on.
func (s *Server) SetEngine(e *engine.Engine) { s.eng.Store(e) }

func (s *Server) engine() *engine.Engine { return s.eng.Load() }

var errNotReady = &apiError{status: 503, Message: "the model is still loading; retry when /ready answers 200", Type: "server_error"}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	if s.MaxQueue <= 0 {
		s.MaxQueue = 64
	}
	if s.MaxBody <= 0 {
		s.MaxBody = 1 << 20
	}
	s.slots = make(chan struct{}, s.MaxQueue)
	s.created = time.Now().Unix()
	if s.Engine != nil {
		s.SetEngine(s.Engine)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if s.Healthy != nil {
			if err := s.Healthy(); err != nil {
				writeJSON(w, 503, map[string]string{"status": "unhealthy", "error": err.Error()})
				return
			}
		}
		writeJSON(w, 200, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		if s.engine() == nil {
			writeJSON(w, 503, map[string]string{"status": "loading"})
			return
		}
		writeJSON(w, 200, map[string]string{"status": "ready"})
	})
	mux.HandleFunc("POST /reset_prefix_cache", func(w http.ResponseWriter, r *http.Request) {
		e := s.engine()
		if e == nil {
			writeError(w, errNotReady)
			return
		}
		if err := e.ResetPrefixCache(); err != nil {
			writeError(w, badRequest("%v", err))
			return
		}
		writeJSON(w, 200, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: 404, Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path), Type: "invalid_request_error"})
	})
	return mux
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{
		{"id": s.ModelName, "object": "model", "created": s.created, "owned_by": "kern"},
	}})
}

// decode reads a JSON body into v; a bad body is a 400.
func (s *Server) decode(r *http.Request, v any) *apiError {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.MaxBody))
	if err != nil {
		return &apiError{status: 413, Message: fmt.Sprintf("request body: %v", err), Type: "invalid_request_error"}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("bad JSON: %v", err)
	}
	return nil
}

// admit takes a queue slot, or reports 429.
func (s *Server) admit() (release func(), err *apiError) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
		s.m.rejected.Add(1)
		return nil, &apiError{status: 429, Message: fmt.Sprintf("the server is busy: %d requests queued or running; retry later", s.MaxQueue), Type: "rate_limit_error"}
	}
}

func (s *Server) id(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, s.created, s.nextID.Add(1))
}

// run generates for one request and keeps the metrics.
func (s *Server) run(ctx context.Context, e *engine.Engine, req engine.Request) (*engine.Result, error) {
	res, err := e.Generate(ctx, req)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled), errors.Is(err, errClientGone):
		s.m.cancelled.Add(1)
	default:
		s.m.failed.Add(1)
	}
	return res, err
}

var errClientGone = errors.New("client disconnected")

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": e})
}
