package nccl

import (
	"errors"
	"os"
	"path/filepath"
)

// Linux: distributions and the CUDA repositories install libnccl.so.2;
// the nvidia-nccl-cu12 wheel puts it in site-packages/nvidia/nccl/lib,
// which is not on the loader's path, so $KERN_LIBNCCL names it, or a
// virtual environment's copy is found through $VIRTUAL_ENV.
var sonames = []string{"libnccl.so.2", "libnccl.so"}

var errUnsupportedOS = errors.New("no NCCL library name to try")

func defaultLibraries() []string {
	names := append([]string(nil), sonames...)
	if venv := os.Getenv("VIRTUAL_ENV"); venv != "" {
		ms, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "nvidia", "nccl", "lib", "libnccl.so.2"))
		names = append(names, ms...)
	}
	return names
}
