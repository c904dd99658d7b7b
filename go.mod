module github.com/gokern/kern

go 1.26.0

require (
	github.com/dlclark/regexp2 v1.11.5
	github.com/ebitengine/purego v0.11.3
	golang.org/x/text v0.28.0
	golang.org/x/tools v0.52.0
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
