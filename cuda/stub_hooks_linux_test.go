package cuda

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// bindHooks binds the stub's stub_* test hooks from the library at path.
// Opening the same path again returns the handle the driver already has,
// so the hooks see the driver's state.
func bindHooks(path string) error {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	hooks := []struct {
		fn   any
		name string
	}{
		{&stub.reset, "stub_reset"},
		{&stub.calls, "stub_calls"},
		{&stub.decoyCalls, "stub_decoy_calls"},
		{&stub.failNext, "stub_fail_next"},
		{&stub.setBusy, "stub_set_busy"},
		{&stub.setParamSizes, "stub_set_param_sizes"},
		{&stub.launches, "stub_launches"},
		{&stub.lastLaunch, "stub_last_launch"},
		{&stub.lastParam, "stub_last_param"},
		{&stub.allocated, "stub_allocated"},
		{&stub.primaryRefs, "stub_primary_refs"},
		{&stub.lastPDL, "stub_last_pdl"},
		{&stub.lastPTXHas, "stub_last_ptx_has"},
	}
	for _, hk := range hooks {
		addr, err := purego.Dlsym(h, hk.name)
		if err != nil {
			return fmt.Errorf("stub hook %s: %w", hk.name, err)
		}
		purego.RegisterFunc(hk.fn, addr)
	}
	return nil
}
