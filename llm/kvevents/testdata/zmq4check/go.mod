module github.com/gokern/kern/llm/kvevents/testdata/zmq4check

go 1.26.0

require (
	github.com/go-zeromq/zmq4 v0.17.0
	github.com/gokern/kern v0.0.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/dlclark/regexp2 v1.11.5 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)

replace github.com/gokern/kern => ../../../..
