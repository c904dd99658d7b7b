package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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

func TestServe(t *testing.T) {
	model := fixture.Model(t, "tiny-qwen3-tied")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-device", "emu", "-q", "-model", model, "-tokenizer", fixture.Tokenizer(t), "-addr", "127.0.0.1:0"}, nil, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v (%v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	f := strings.Fields(line)
	url := strings.TrimSuffix(f[3], "/") // "serving NAME on http://ADDR (…)"
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"tiny-qwen3-tied"`) {
		t.Errorf("/v1/models: %s", body)
	}
	// /ready turns 200 once the model is loaded (it may already be).
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/ready")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode != 503 || time.Now().After(deadline) {
			t.Fatalf("/ready: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestBenchRandomWeights(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"bench", "-device", "emu", "-preset", "tiny", "-prompt", "4", "-n", "2", "-bandwidth", "100"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prefill: 4 tokens", "decode:", "tokens/s", "% of 100 GB/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(context.Background(), []string{"bench", "-device", "emu", "-preset", "nope"}, nil, &out, io.Discard); err == nil {
		t.Error("unknown preset: no error")
	}
	for _, ops := range []bool{false, true} {
		out.Reset()
		args := []string{"bench", "-device", "emu", "-preset", "tiny", "-batch", "3", "-prompt", "4", "-n", "2", "-ops=" + fmt.Sprint(ops)}
		if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, want := range []string{"3 sequences", "prefill: 3×4 tokens", "per step of 3 tokens"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	if err := run(context.Background(), []string{"bench", "-device", "emu", "-preset", "tiny", "-batch", "0"}, nil, &out, io.Discard); err == nil {
		t.Error("-batch 0: no error")
	}
	// Tokens drawn as the engine draws them: from each row's largest
	// logits (top-k 20 of 64, and greedy's one), or from whole rows.
	for _, c := range []struct{ batch, candidates, temperature, ops, want string }{
		{"1", "64", "0.6", "false", "sampling: temperature 0.6, top-k 20, top-p 0.95, each row's 64 largest logits picked on the device (ops.TopK, after the step)"},
		{"2", "64", "0.6", "false", "draws: 8 from the candidates, 0 from whole rows"}, // 2 rows × (prefill, the untimed step, 2 steps)
		{"2", "64", "0", "false", "sampling: greedy, each row's 1 largest logits picked on the device"},
		{"2", "64", "0.6", "true", "each row's 64 largest logits picked on the device (ops.TopK, in the step's graph)"},
		{"1", "0", "0.6", "false", "sampling: temperature 0.6, top-k 20, top-p 0.95, every row's logits downloaded and drawn from on the host"},
		{"2", "0", "0.6", "false", "draws: 0 from the candidates, 8 from whole rows"},
	} {
		out.Reset()
		args := []string{"bench", "-device", "emu", "-preset", "tiny", "-batch", c.batch, "-prompt", "4", "-n", "2", "-ops=" + c.ops, "-candidates", c.candidates, "-temperature", c.temperature, "-top-k", "20", "-top-p", "0.95"}
		if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, want := range []string{c.want, "decode:"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	err := run(context.Background(), []string{"bench", "-device", "emu", "-preset", "tiny", "-temperature", "0.6", "-top-p", "2"}, nil, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "top_p 2") {
		t.Errorf("-top-p 2: %v", err)
	}
}

// TestOpsFlag: -ops is auto unless given; alone it is true; it takes
// auto, true and false, and nothing else.
func TestOpsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want opsMode
	}{
		{nil, opsAuto},
		{[]string{"-ops"}, opsOn},
		{[]string{"-ops=false"}, opsOff},
		{[]string{"-ops=auto"}, opsAuto},
		{[]string{"-ops=1"}, opsOn},
	} {
		var cm common
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cm.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cm.ops != c.want {
			t.Errorf("%q: -ops %s, want %s", c.args, cm.ops, c.want)
		}
		o := cm.options(nil)
		if o.Ops != (c.want == opsOn) || o.OpsWhereFast != (c.want == opsAuto) {
			t.Errorf("%q: options Ops %v OpsWhereFast %v", c.args, o.Ops, o.OpsWhereFast)
		}
	}
	var cm common
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cm.register(fs)
	if err := fs.Parse([]string{"-ops=fast"}); err == nil || !strings.Contains(err.Error(), "want auto, true or false") {
		t.Errorf("-ops=fast: %v", err)
	}
}

// TestPersistentFlag: -persistent reaches engine.Options, and bench
// refuses it without -ops (the layer runs on the ops path).
func TestPersistentFlag(t *testing.T) {
	var cm common
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cm.register(fs)
	if err := fs.Parse([]string{"-persistent"}); err != nil {
		t.Fatal(err)
	}
	if !cm.options(nil).PersistentDecode {
		t.Error("-persistent: Options.PersistentDecode false")
	}
	t.Setenv("KERN_DEVICE", "emu") // restored after bench sets it
	var out bytes.Buffer
	err := bench(context.Background(), []string{"-device", "emu", "-preset", "tiny", "-persistent", "-prompt", "2", "-n", "1"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "add -ops") {
		t.Errorf("bench -persistent without -ops: %v", err)
	}
	err = bench(context.Background(), []string{"-device", "emu", "-preset", "tiny", "-ops", "-phases", "-prompt", "2", "-n", "1"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-persistent") {
		t.Errorf("bench -phases without -persistent: %v", err)
	}
	out.Reset()
	err = bench(context.Background(), []string{"-device", "emu", "-preset", "tiny", "-ops", "-persistent", "-phases", "-prompt", "2", "-n", "1"}, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), "persistent layer phases") || !strings.Contains(out.String(), "q/k/v GEMV") {
		t.Errorf("bench -ops -persistent -phases: %v\n%s", err, out.String())
	}
}
