package emu

// Temporary: families not yet implemented.

type asyncState struct{}

func (w *warp) finishAsync(m uint32) error { return nil }

func notYet(d *decoder, s *astStmt, m *mods, in *inst) {
	m.words = nil
	d.errorf("%s: not implemented yet", s.op)
}

var (
	decAtom       = notYet
	decShfl       = notYet
	decVote       = notYet
	decActivemask = notYet
	decRedux      = notYet
	decMatch      = notYet
	decMma        = notYet
	decLdmatrix   = notYet
	decCp         = notYet
)
