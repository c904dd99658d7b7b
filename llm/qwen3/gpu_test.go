//go:build gpu

package qwen3

// With -tags gpu the forward-pass tests also run on the first CUDA GPU:
//
//	go test -tags gpu ./llm/qwen3

import "github.com/gokern/kern"

func init() {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		panic("qwen3 tests with -tags gpu: " + err.Error())
	}
	testDevices = append(testDevices, struct {
		name string
		dev  *kern.Device
	}{"cuda", dev})
}
