package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern/internal/fixture"
)

// asQwen3 makes the test binary act as the qwen3 command when rank 0
// starts it as a follower process (os.Executable is the test binary).
const asQwen3 = "KERN_TEST_AS_QWEN3"

func TestMain(m *testing.M) {
	if os.Getenv(asQwen3) == "1" {
		if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "qwen3:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startServe runs `qwen3 serve args…` and returns its URL once /ready
// answers 200, and a function that stops it and returns its error.
func startServe(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var errb strings.Builder
	var mu sync.Mutex
	stderr := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return errb.Write(b) })
	go func() {
		done <- run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), nil, pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve printed nothing: %v (%v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSuffix(strings.Fields(line)[3], "/")
	stop := func() error { cancel(); return <-done }
	deadline := time.Now().Add(120 * time.Second)
	for {
		resp, err := http.Get(url + "/ready")
		if err != nil {
			stop()
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			return url, stop
		}
		select {
		case err := <-done:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("serve %v ended before /ready: %v\n%s", args, err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("/ready: %d after 120 s", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// greedy is one greedy completion: its tokens' texts and logprobs, and
// the prompt's logprobs if asked for.
type greedy struct {
	Text     string
	Tokens   []string
	Logprobs []float64
	Prompt   []float64
}

// complete posts greedy completions of prompts at once (so they share
// engine steps) and returns them in order.
func complete(t *testing.T, url string, prompts [][]int32, n int, promptLogprobs bool) []greedy {
	t.Helper()
	out := make([]greedy, len(prompts))
	errs := make([]error, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := map[string]any{"prompt": p, "max_tokens": n, "temperature": 0, "logprobs": 0}
			if promptLogprobs {
				req["prompt_logprobs"] = 0
			}
			body, _ := json.Marshal(req)
			resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(string(body)))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			var r struct {
				Choices []struct {
					Text     string `json:"text"`
					Logprobs struct {
						Tokens        []string  `json:"tokens"`
						TokenLogprobs []float64 `json:"token_logprobs"`
					} `json:"logprobs"`
					PromptLogprobs []map[string]struct {
						Logprob float64 `json:"logprob"`
					} `json:"prompt_logprobs"`
				} `json:"choices"`
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Choices) != 1 {
				errs[i] = fmt.Errorf("prompt %d: %d %s", i, resp.StatusCode, b)
				return
			}
			c := r.Choices[0]
			out[i] = greedy{Text: c.Text, Tokens: c.Logprobs.Tokens, Logprobs: c.Logprobs.TokenLogprobs}
			if promptLogprobs && len(c.PromptLogprobs) != len(p) {
				errs[i] = fmt.Errorf("prompt %d: %d prompt logprobs for %d tokens", i, len(c.PromptLogprobs), len(p))
			}
			for k, m := range c.PromptLogprobs[min(1, len(c.PromptLogprobs)):] {
				out[i].Prompt = append(out[i].Prompt, m[fmt.Sprint(p[k+1])].Logprob)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestServeTensorParallel: `qwen3 serve -tp 2` and `-tp 4` on emu
// devices answer the same greedy tokens as `-tp 1`, through the HTTP
// server and the engine's batching, on every tiny model; their logprobs
// (the log-softmax of the logits) agree to 1e-3, the prompt logprobs
// (every row's logits) too. The ranks are
// goroutines of the server (-tp-comm local) or, for one model, processes
// started by it (-tp-comm socket: rank 0 spawns this test binary in
// qwen3's "rank" mode).
func TestServeTensorParallel(t *testing.T) {
	t.Setenv(asQwen3, "1")
	prompts := [][]int32{{3, 141, 59, 265, 358, 979, 32, 38}, {7, 7, 100, 5}, {3, 141, 59, 265, 358, 979, 32, 38, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	const n = 6
	for vi, variant := range fixture.Variants {
		model := fixture.Model(t, variant)
		base := []string{"-device", "emu", "-q", "-model", model, "-tokenizer", fixture.Tokenizer(t)}
		url, stop := startServe(t, base...)
		want := complete(t, url, prompts, n, true)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		runs := [][]string{{"-tp", "2"}, {"-tp", "4"}}
		if vi == 0 {
			runs = append(runs, []string{"-tp", "2", "-tp-comm", "socket"}, []string{"-tp", "4", "-tp-comm", "socket"})
		}
		for _, extra := range runs {
			t.Run(variant+"/"+strings.Join(extra, " "), func(t *testing.T) {
				url, stop := startServe(t, append(base, extra...)...)
				got := complete(t, url, prompts, n, true)
				rounds := []greedy{}
				if vi == 0 { // again: the second round reuses the prefix cache
					rounds = complete(t, url, prompts, n, false)
				}
				if err := stop(); err != nil {
					t.Errorf("serve: %v", err)
				}
				for i := range prompts {
					if len(want[i].Tokens) != n || len(want[i].Prompt) != len(prompts[i])-1 {
						t.Fatalf("prompt %d at -tp 1: %d tokens, %d prompt logprobs", i, len(want[i].Tokens), len(want[i].Prompt))
					}
					for k, lp := range got[i].Prompt {
						if math.Abs(lp-want[i].Prompt[k]) > 1e-3 || lp == 0 {
							t.Errorf("prompt %d position %d: prompt logprob %v, at -tp 1 %v", i, k+1, lp, want[i].Prompt[k])
						}
					}
					gs := []greedy{got[i]}
					if len(rounds) > 0 {
						gs = append(gs, rounds[i])
					}
					for _, g := range gs {
						if fmt.Sprint(g.Tokens) != fmt.Sprint(want[i].Tokens) || g.Text != want[i].Text {
							t.Errorf("prompt %d: tokens %q, at -tp 1 %q", i, g.Tokens, want[i].Tokens)
							continue
						}
						for k, lp := range g.Logprobs {
							if math.Abs(lp-want[i].Logprobs[k]) > 1e-3 {
								t.Errorf("prompt %d token %d: logprob %v, at -tp 1 %v", i, k, lp, want[i].Logprobs[k])
							}
						}
					}
				}
			})
		}
	}
}

// TestGenerateTensorParallel: `qwen3 generate -tp 2` with rank processes
// prints -tp 1's greedy continuation; a bad -tp-comm, an indivisible
// degree and a .gguf model are refused with the reason.
func TestGenerateTensorParallel(t *testing.T) {
	t.Setenv(asQwen3, "1")
	model, tok := fixture.Model(t, "tiny-qwen3-hd32"), fixture.Tokenizer(t)
	gen := func(extra ...string) (string, error) {
		var out, errb strings.Builder
		args := append([]string{"generate", "-device", "emu", "-q", "-model", model, "-tokenizer", tok, "-prompt", "hello world", "-n", "6", "-temperature", "0"}, extra...)
		err := run(context.Background(), args, nil, &out, &errb)
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, errb.String())
		}
		return out.String(), err
	}
	want, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	got, err := gen("-tp", "2", "-tp-comm", "socket")
	if err != nil {
		t.Fatal(err)
	}
	if got != want || len(want) <= len("hello world\n") {
		t.Errorf("-tp 2 printed %q, -tp 1 %q", got, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tp", "2", "-tp-comm", "carrier-pigeon"}, "want local, socket or nccl"},
		{[]string{"-tp", "3"}, "does not divide by 3"},
	} {
		if _, err := gen(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	var errb strings.Builder
	err = run(context.Background(), []string{"generate", "-device", "emu", "-model", "x.gguf", "-prompt", "x", "-tp", "2"}, nil, io.Discard, &errb)
	if err == nil || !strings.Contains(err.Error(), ".gguf model is not split") {
		t.Errorf("-tp 2 on a .gguf: %v", err)
	}
}

// With -device cuda:N (or $KERN_DEVICE), rank r's GPU is N+r.
func TestRankGPUs(t *testing.T) {
	t.Setenv("KERN_DEVICE", "")
	for _, c := range []struct {
		device, env string
		want        int
	}{{"", "", 0}, {"cuda", "", 0}, {"cuda:2", "", 2}, {"", "cuda:3", 3}, {"emu", "cuda:3", 0}} {
		t.Setenv("KERN_DEVICE", c.env)
		cm := common{device: c.device}
		if got := cm.firstGPU(); got != c.want {
			t.Errorf("-device %q, KERN_DEVICE %q: first GPU %d, want %d", c.device, c.env, got, c.want)
		}
	}
}
