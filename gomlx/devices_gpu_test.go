//go:build gpu

package gomlx

// Under -tags gpu (on a machine with an NVIDIA GPU), every op case and
// the transfer test also run on the GPU.
func init() { devices = append(devices, "cuda") }
