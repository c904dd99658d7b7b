// Package mmap maps a model file read-only into memory, so a loader
// (llm/safetensors, llm/gguf) hands out tensor data without copying it;
// where kern does not use mmap it reads the file whole instead.
package mmap
