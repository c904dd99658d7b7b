// Package exampleutil holds the one snippet every example shares: opening
// a device the way examples/hello does.
package exampleutil

import (
	"errors"
	"fmt"
	"os"

	"github.com/gokern/kern"
)

// Open opens the GPU if there is one (or the device $KERN_DEVICE names)
// and otherwise kern's PTX emulator, printing a one-line banner saying so.
// It prints the device it opened.
func Open() (*kern.Device, error) {
	dev, err := kern.Open()
	if errors.Is(err, kern.ErrNoDriver) && os.Getenv("KERN_DEVICE") == "" {
		fmt.Println("no GPU found: running on the kern PTX emulator (set KERN_DEVICE=cuda to require a GPU)")
		dev, err = kern.OpenEmulator(), nil
	}
	if err != nil {
		return nil, err
	}
	fmt.Println("device:", dev)
	return dev, nil
}

// Main opens a device, calls run with it and exits with status 1, after
// printing the error prefixed by name, if anything fails.
func Main(name string, run func(dev *kern.Device) error) {
	dev, err := Open()
	if err == nil {
		err = run(dev)
		dev.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
