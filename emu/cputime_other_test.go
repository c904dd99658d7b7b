//go:build !unix

package emu

import "time"

func cpuTime() time.Duration { return 0 }
