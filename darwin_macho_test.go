// The declared minimum macOS of the client (command-execution.md,
// "Platform implementations": macOS 15 or later) and the darwin/arm64
// entry hook, measured on binaries built here for darwin with a Mach-O
// reader. Go's internal linker writes LC_BUILD_VERSION minos 12.0 for a
// cgo-free darwin binary and has no flag to change it, but it copies the
// platform load command of the first host object it links
// (cmd/link/internal/ld/macho.go, domacho); the minos_darwin_*.syso files
// are such objects, holding nothing but that command, and
// TestMinimumOSObjects writes them (AGENTKNOCK_UPDATE_SYSO=1) and checks
// that the committed ones are its output.

package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	machoBuildVersion = 0x32       // LC_BUILD_VERSION
	machoMain         = 0x80000028 // LC_MAIN
	machoPlatformMac  = 1
)

// darwinMinimumOS is what the client declares: macOS 15.0, for minos and
// the SDK field alike.
const darwinMinimumOS = 15<<16 | 0<<8

// minimumOSObject is a Mach-O MH_OBJECT for cpu with an empty LC_SEGMENT_64
// (the linker's loader requires one segment) and one LC_BUILD_VERSION.
func minimumOSObject(cpu macho.Cpu, subtype uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	u32 := func(v uint32) { b = le.AppendUint32(b, v) }
	u64 := func(v uint64) { b = le.AppendUint64(b, v) }
	const segmentSize, buildVersionSize = 72, 24
	// mach_header_64: magic, cputype, cpusubtype, MH_OBJECT, ncmds, sizeofcmds, flags, reserved
	u32(macho.Magic64)
	u32(uint32(cpu))
	u32(subtype)
	u32(uint32(macho.TypeObj))
	u32(2)
	u32(segmentSize + buildVersionSize)
	u32(0)
	u32(0)
	// segment_command_64 with no sections: cmd, cmdsize, segname[16],
	// vmaddr, vmsize, fileoff, filesize, maxprot, initprot, nsects, flags
	u32(uint32(macho.LoadCmdSegment64))
	u32(segmentSize)
	b = append(b, make([]byte, 16)...)
	u64(0)
	u64(0)
	u64(0)
	u64(0)
	u32(7)
	u32(7)
	u32(0)
	u32(0)
	// build_version_command: cmd, cmdsize, platform, minos, sdk, ntools
	u32(machoBuildVersion)
	u32(buildVersionSize)
	u32(machoPlatformMac)
	u32(darwinMinimumOS)
	u32(darwinMinimumOS)
	u32(0)
	return b
}

func TestMinimumOSObjects(t *testing.T) {
	for name, obj := range map[string][]byte{
		"minos_darwin_arm64.syso": minimumOSObject(macho.CpuArm64, 0),
		"minos_darwin_amd64.syso": minimumOSObject(macho.CpuAmd64, 3), // CPU_SUBTYPE_X86_64_ALL
	} {
		if os.Getenv("AGENTKNOCK_UPDATE_SYSO") == "1" {
			if err := os.WriteFile(name, obj, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, obj) {
			t.Errorf("%s is not what minimumOSObject writes (AGENTKNOCK_UPDATE_SYSO=1 go test -run TestMinimumOSObjects rewrites it)", name)
		}
		f, err := macho.NewFile(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if minos, _, ok := buildVersion(f); !ok || minos != darwinMinimumOS {
			t.Errorf("%s: minos %#x, %v", name, minos, ok)
		}
	}
}

// buildVersion is LC_BUILD_VERSION's minos and sdk for macOS.
func buildVersion(f *macho.File) (minos, sdk uint32, ok bool) {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && f.ByteOrder.Uint32(raw) == machoBuildVersion && f.ByteOrder.Uint32(raw[8:]) == machoPlatformMac {
			return f.ByteOrder.Uint32(raw[12:]), f.ByteOrder.Uint32(raw[16:]), true
		}
	}
	return 0, 0, false
}

// mainEntry is LC_MAIN's entryoff.
func mainEntry(f *macho.File) (uint64, bool) {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 16 && f.ByteOrder.Uint32(raw) == machoMain {
			return f.ByteOrder.Uint64(raw[8:]), true
		}
	}
	return 0, false
}

func buildDarwin(t *testing.T, arch string, ldflags ...string) *macho.File {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentknock")
	args := []string{"build", "-trimpath", "-o", bin}
	for _, l := range ldflags {
		args = append(args, "-ldflags="+l)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+arch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	f, err := macho.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The linked client, not only the object, must declare macOS 15.
func TestDarwinBinaryDeclaresMacOS15(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client for darwin; not in -short")
	}
	for _, arch := range []string{"arm64", "amd64"} {
		f := buildDarwin(t, arch)
		minos, sdk, ok := buildVersion(f)
		if !ok || minos != darwinMinimumOS || sdk != darwinMinimumOS {
			t.Errorf("darwin/%s: LC_BUILD_VERSION minos %#x sdk %#x (found %v), want macOS 15.0", arch, minos, sdk, ok)
		}
	}
}

// With -E=agentknock_rt0 the darwin/arm64 binary's LC_MAIN entry is the
// hook (entryoff is the entry's offset from the start of the __TEXT
// segment), the hook calls libSystem's sigaction, pthread_sigmask and
// fcntl through the stubs dyld binds (sigaction's the very stub the
// runtime's own sigaction_trampoline calls) and ends by branching to the
// runtime's entry; a build without the flag enters at _rt0_arm64_darwin.
func TestDarwinEntryHookIsTheEntryPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client for darwin; not in -short")
	}
	for _, c := range []struct {
		ldflags []string
		entry   string
	}{
		{[]string{"-E=agentknock_rt0"}, "_agentknock_rt0"},
		{nil, "__rt0_arm64_darwin"},
	} {
		f := buildDarwin(t, "arm64", c.ldflags...)
		off, ok := mainEntry(f)
		if !ok {
			t.Fatalf("%v: no LC_MAIN", c.ldflags)
		}
		text := f.Segment("__TEXT")
		if text == nil || f.Symtab == nil {
			t.Fatal("no __TEXT segment or symbol table")
		}
		var at string
		for _, s := range f.Symtab.Syms {
			if s.Value == text.Addr+off && (s.Name == "_agentknock_rt0" || s.Name == "__rt0_arm64_darwin") {
				at = s.Name
			}
		}
		if at != c.entry {
			t.Errorf("%v: LC_MAIN entryoff %#x is at %q, want %s", c.ldflags, off, at, c.entry)
		}
		if c.entry != "_agentknock_rt0" {
			continue
		}
		// What the hook calls: each BL goes to a libSystem stub, the same
		// one the runtime's sigaction_trampoline uses, and it ends with a
		// branch to the runtime's entry.
		calls, last := branchTargets(t, f, "_agentknock_rt0")
		var names []string
		for _, target := range calls {
			names = append(names, stubImport(t, f, target))
		}
		if want := []string{"_sigaction", "_pthread_sigmask", "_fcntl"}; !slices.Equal(names, want) {
			t.Errorf("the hook calls %q, want %q", names, want)
		}
		runtimeCalls, _ := branchTargets(t, f, "runtime.sigaction_trampoline.abi0")
		if len(calls) == 0 || len(runtimeCalls) == 0 || calls[0] != runtimeCalls[0] {
			t.Errorf("the hook's sigaction stub %#x is not the runtime's %#x", calls, runtimeCalls)
		}
		if at := symbolAt(f, last); at != "__rt0_arm64_darwin" {
			t.Errorf("the hook ends with a branch to %q, want __rt0_arm64_darwin", at)
		}
	}
}

// branchTargets decodes the arm64 BL instructions of the function name
// (up to the next symbol) and the target of its last instruction, a B.
func branchTargets(t *testing.T, f *macho.File, name string) (calls []uint64, last uint64) {
	t.Helper()
	start, end := uint64(0), uint64(0)
	for _, s := range f.Symtab.Syms {
		if s.Name == name {
			start = s.Value
		}
	}
	for _, s := range f.Symtab.Syms {
		if s.Value > start && (end == 0 || s.Value < end) {
			end = s.Value
		}
	}
	text := f.Section("__text")
	if start == 0 || text == nil || start < text.Addr || end > text.Addr+text.Size {
		t.Fatalf("%s not found in __text", name)
	}
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	target := func(pc uint64, insn uint32) uint64 {
		imm := int64(insn&0x03ffffff) << 38 >> 36 // imm26, signed, times 4
		return uint64(int64(pc) + imm)
	}
	for pc := start; pc+4 <= end; pc += 4 {
		insn := binary.LittleEndian.Uint32(data[pc-text.Addr:])
		switch insn & 0xfc000000 {
		case 0x94000000: // BL
			calls = append(calls, target(pc, insn))
		case 0x14000000: // B
			last = target(pc, insn)
		}
	}
	return calls, last
}

// stubImport is the imported symbol a __symbol_stub1 entry at addr binds
// (arm64 stubs are 12 bytes; the section's reserved1 indexes the indirect
// symbol table, whose entries index the symbol table).
func stubImport(t *testing.T, f *macho.File, addr uint64) string {
	t.Helper()
	le := binary.LittleEndian
	for _, l := range f.Loads {
		seg, ok := l.(*macho.Segment)
		if !ok {
			continue
		}
		raw := seg.Raw()
		for i := uint32(0); i < seg.Nsect; i++ {
			sh := raw[72+80*i:] // section_64 headers follow segment_command_64
			name := string(bytes.TrimRight(sh[:16], "\x00"))
			base, size, first := le.Uint64(sh[32:]), le.Uint64(sh[40:]), le.Uint32(sh[68:])
			if name == "__symbol_stub1" && addr >= base && addr < base+size {
				return f.Symtab.Syms[f.Dysymtab.IndirectSyms[first+uint32((addr-base)/12)]].Name
			}
		}
	}
	t.Fatalf("%#x is not a stub", addr)
	return ""
}

func symbolAt(f *macho.File, addr uint64) string {
	for _, s := range f.Symtab.Syms {
		if s.Value == addr && strings.HasPrefix(s.Name, "_") {
			return s.Name
		}
	}
	return ""
}
