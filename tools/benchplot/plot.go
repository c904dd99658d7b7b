package main

// The chart: one bar panel per benchmark (memcpy, gemm, ops), stacked,
// drawn with gonum/plot and written as SVG or PNG by the file's extension.

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
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
	for _, name := range benchNames {
		var group []row
		for _, r := range rows {
			if r.Bench == name {
				group = append(group, r)
			}
		}
		if len(group) == 0 {
			continue
		}
		p, err := benchPanel(name, device, group)
		if err != nil {
			return err
		}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return fmt.Errorf("no benchmark produced a figure to plot")
	}
	const width = 9 * vg.Inch
	height := vg.Length(len(plots)) * 4 * vg.Inch
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

// benchPanel draws one benchmark's rows as bars labelled "case size".
func benchPanel(name, device string, rows []row) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("kern bench %s on %s", name, device)
	p.Y.Label.Text = rows[0].Unit
	vals := make(plotter.Values, len(rows))
	labels := make([]string, len(rows))
	for i, r := range rows {
		v := 0.0 // null: a run too short for the timer to see
		if r.Value != nil && !math.IsNaN(*r.Value) && !math.IsInf(*r.Value, 0) {
			v = *r.Value
		}
		vals[i] = v
		labels[i] = r.Name + "\n" + r.Size
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return nil, err
	}
	bars.LineStyle.Width = 0
	bars.Color = barColor(name)
	p.Add(bars, plotter.NewGrid())
	p.NominalX(labels...)
	p.X.Tick.Label.Font.Size = vg.Points(8)
	p.Y.Min = 0
	for _, v := range vals {
		p.Y.Max = max(p.Y.Max, 1.1*v)
	}
	return p, nil
}

// barColor gives each benchmark its own colour.
func barColor(name string) color.Color {
	switch name {
	case "memcpy":
		return color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	case "gemm":
		return color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}
	}
	return color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}
}
