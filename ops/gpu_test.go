//go:build gpu

package ops

// With -tags gpu every op test also runs on the first CUDA GPU:
//
//	go test -tags gpu ./ops

import "github.com/gokern/kern"

func init() {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		panic("ops tests with -tags gpu: " + err.Error())
	}
	testDevices = append(testDevices, struct {
		name string
		dev  *kern.Device
	}{"cuda", dev})
}
