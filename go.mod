module github.com/gokern/kern

go 1.26.0

require (
	github.com/dlclark/regexp2 v1.11.5
	github.com/ebitengine/purego v0.11.3
	golang.org/x/text v0.28.0
	golang.org/x/tools v0.52.0
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/schollz/progressbar/v3 v3.19.1 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.44.0 // indirect
)
