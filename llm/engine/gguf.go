package engine

// Opening a single-file GGUF model: weights and tokenizer both come from
// the file.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/gguf"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/tokenizer"
)

func openGGUF(dev *kern.Device, path string, opt Options) (*Engine, error) {
	g, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer g.Close() // weights are uploaded (copied) by LoadGGUF
	tok, err := tokenizer.FromGGUF(g)
	if err != nil {
		return nil, err
	}
	m, err := qwen3.LoadGGUF(dev, g, qwen3.LoadOptions{Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	e, err := New(m, tok, opt)
	if err != nil {
		m.Free()
		return nil, err
	}
	return e, nil
}
