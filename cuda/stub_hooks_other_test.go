//go:build !linux

package cuda

import "errors"

func bindHooks(path string) error { return errors.New("the stub libcuda is Linux-only") }
