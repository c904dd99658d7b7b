//go:build !gpu

package conformance

import "github.com/gokern/kern"

// gpuDevices is empty without -tags gpu.
func gpuDevices() []*kern.Device { return nil }
