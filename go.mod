module agentknock.dev/agentknock

go 1.26.10

require (
	github.com/cloudflare/circl v1.6.5
	github.com/coder/websocket v1.8.15
	go.etcd.io/bbolt v1.4.3
	golang.org/x/crypto v0.59.0
	golang.org/x/sys v0.50.0
)

require mvdan.cc/sh/v3 v3.14.1
