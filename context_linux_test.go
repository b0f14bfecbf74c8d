// The pairing metadata of a Linux host comes from the files the reference
// client reads.
package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHostInfoFromEtc(t *testing.T) {
	etc := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := hostInfoFrom(etc); got != (hostInfo{}) {
		t.Fatalf("no files gave %+v", got)
	}
	write("hostname", "build-box\n")
	write("machine-id", "0123456789abcdef0123456789abcdef\n")
	write("os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nVERSION_ID=\"13\"\nPRETTY_NAME=\"second\"\n")
	want := hostInfo{Hostname: "build-box", MachineID: "0123456789abcdef0123456789abcdef", OSVersion: "Debian GNU/Linux 13 (trixie)"}
	if got := hostInfoFrom(etc); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	write("os-release", "ID=alpine\nPRETTY_NAME=Alpine\n")
	write("hostname", "  \n")
	if got := hostInfoFrom(etc); got.OSVersion != "Alpine" || got.Hostname != "" {
		t.Fatalf("unquoted PRETTY_NAME or blank hostname: %+v", got)
	}
}
