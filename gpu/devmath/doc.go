// Package devmath holds the device implementations of the gpu math
// functions that have no short PTX instruction sequence: float32 Tanh and
// Erf, and the float64 transcendental functions.
//
// Each routine is ordinary Go in the kernel subset. The compiler inlines
// devmath.<Name>32 or devmath.<Name>64 where a kernel calls gpu.<Name>;
// native mode never runs them (it uses package math), so the tests in this
// package run each routine as plain Go against math's results to hold it to
// the error bound documented on the gpu function. Users call package gpu,
// not this package.
package devmath
