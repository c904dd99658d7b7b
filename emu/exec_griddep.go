package emu

// griddepcontrol.wait and griddepcontrol.launch_dependents (programmatic
// dependent launch, PTX ISA 7.8, sm_90). The emulator runs a stream's
// launches one after another, each to completion, so the kernels a wait
// waits for are always complete and their writes visible: both are no-ops,
// checked for form. The wait marks its lanes for Options.PDLcheck.
func decGridDep(d *decoder, s *astStmt, m *mods, in *inst) {
	action := m.oneOf("wait", "launch_dependents")
	if action == "" || len(m.words) > 0 || len(m.types) > 0 {
		d.errorf("%s: want griddepcontrol.wait or griddepcontrol.launch_dependents", s.op)
		m.words, m.types = nil, nil
		return
	}
	if !d.want(s, 0) {
		return
	}
	in.fn = func(*warp, *inst, uint32) error { return nil }
	if action == "wait" {
		in.fn = func(w *warp, _ *inst, m uint32) error {
			w.waited |= m // for PDLcheck
			return nil
		}
	}
}
