package main

// The chart: one bar panel per benchmark and unit (memcpy, matmul, ops,
// attention), then one of the rows' % of DRAM peak and one of kern's %
// of cuBLAS, stacked, drawn with gonum/plot and written as SVG or PNG by
// the file's extension.

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

func writeBenchPlot(path, device string, rows []row) error {
	var plots []*plot.Plot
	widest := 0
	for _, pn := range panelsOf(rows) {
		p, err := benchPanel(pn, device)
		if err != nil {
			return err
		}
		plots = append(plots, p)
		widest = max(widest, len(pn.rows))
	}
	if len(plots) == 0 {
		return fmt.Errorf("no benchmark produced a figure to plot")
	}
	// Wide enough for the bars of the panel with the most.
	width := max(9*vg.Inch, vg.Length(widest)*vg.Inch/3)
	height := vg.Length(len(plots)) * 5 * vg.Inch
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(width, height)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		return fmt.Errorf("%s: want a .svg or .png file", path)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 8,
		PadTop: vg.Millimeter * 4, PadBottom: vg.Millimeter * 4, PadLeft: vg.Millimeter * 4, PadRight: vg.Millimeter * 4}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel is one bar chart: rows of one benchmark in one unit, or the rows
// that have a percentage (of the DRAM peak, of cuBLAS) across benchmarks.
type panel struct {
	title, unit, color string
	rows               []row
	value              func(row) *float64
}

// panelsOf groups the rows: a panel per benchmark and unit (a benchmark
// mixes units: matmul has TFLOP/s and the decode rows' GB/s), in
// benchNames' order, then one of every % of DRAM peak and one of every %
// of cuBLAS, the figures the GPU goals are stated in.
func panelsOf(rows []row) []panel {
	var order []string
	for _, r := range rows {
		if !slices.Contains(order, r.Bench) {
			order = append(order, r.Bench)
		}
	}
	rank := func(b string) int {
		if i := slices.Index(benchNames, b); i >= 0 {
			return i
		}
		return len(benchNames) + slices.Index(order, b)
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	var out []panel
	for _, b := range order {
		var units []string
		for _, r := range rows {
			if r.Bench == b && !slices.Contains(units, r.Unit) {
				units = append(units, r.Unit)
			}
		}
		for _, u := range units {
			pn := panel{title: "kern bench " + b, unit: u, color: b, value: func(r row) *float64 { return r.Value }}
			for _, r := range rows {
				if r.Bench == b && r.Unit == u {
					pn.rows = append(pn.rows, r)
				}
			}
			out = append(out, pn)
		}
	}
	for _, pc := range []panel{
		{title: "% of the DRAM peak", unit: "% of DRAM peak", color: "peak", value: func(r row) *float64 { return r.Peak }},
		{title: "kern / cuBLAS", unit: "% of cuBLAS", color: "ref", value: func(r row) *float64 { return r.Ref }},
	} {
		for _, r := range rows {
			if pc.value(r) != nil {
				r.Name = r.Bench + " " + r.Name
				pc.rows = append(pc.rows, r)
			}
		}
		if len(pc.rows) > 0 {
			out = append(out, pc)
		}
	}
	return out
}

// benchPanel draws one panel's rows as bars labelled "case size".
func benchPanel(pn panel, device string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s", pn.title, device)
	p.Y.Label.Text = pn.unit
	vals := make(plotter.Values, len(pn.rows))
	labels := make([]string, len(pn.rows))
	for i, r := range pn.rows {
		v := 0.0 // null: a run too short for the timer to see
		if x := pn.value(r); x != nil && !math.IsNaN(*x) && !math.IsInf(*x, 0) {
			v = *x
		}
		vals[i] = v
		labels[i] = r.Name + "\n" + r.Size
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return nil, err
	}
	bars.LineStyle.Width = 0
	bars.Color = barColor(pn.color)
	p.Add(bars, plotter.NewGrid())
	p.X.Tick.Label.Font.Size = vg.Points(8)
	if len(labels) > 8 {
		// Many bars: one-line labels, turned to read upwards.
		for i, l := range labels {
			labels[i] = strings.ReplaceAll(l, "\n", "  ")
		}
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	for _, v := range vals {
		p.Y.Max = max(p.Y.Max, 1.1*v)
	}
	if pn.color == "peak" || pn.color == "ref" {
		p.Y.Max = max(p.Y.Max, 110) // the 100% line in view
	}
	return p, nil
}

// barColor gives each benchmark its own colour.
func barColor(name string) color.Color {
	switch name {
	case "memcpy":
		return color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	case "matmul", "gemm":
		return color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}
	case "attention":
		return color.RGBA{R: 0x81, G: 0x72, B: 0xb3, A: 0xff}
	case "peak", "ref":
		return color.RGBA{R: 0x93, G: 0x78, B: 0x60, A: 0xff}
	}
	return color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}
}
