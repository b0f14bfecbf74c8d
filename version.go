// The client's version, set at release time with -ldflags=-X main.version=...
package main

var version = "dev"
