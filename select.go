// Command selection and inspection shared by Linux and macOS:
// command-execution.md, "Working directory and search path", "Selected
// executable", "Executable inspection and revalidation" and "Approval
// context" (stream kinds and the launcher chain). The platform files
// (select_linux.go, select_darwin.go) supply the primitives: open a
// candidate, name it, read it, and read a launcher's executable.

package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// maxScriptContents is the largest script sent whole as script_contents.
const maxScriptContents = 16 << 10

// executable is the selected top-level command, retained from selection to
// process replacement.
type executable struct {
	fd        int    // retained descriptor (O_PATH on Linux, O_EXEC on macOS)
	candidate string // pathname that selected it; relative ones start at the retained directory
	path      string // absolute path reported to the device
	dev, ino  uint64 // identity of the retained object
	hash      []byte // SHA-256 of the contents, nil when not readable
	size      int64  // bytes hashed at inspection; revalidation reads no more
	script    bool   // starts with "#!"
	shebang   string // the #! line as the kernel reads it (its first execHeaderSize bytes)
	contents  *string
	// executeOnly: the permissions let this user execute it but not read
	// it, so hash and script are unknown (checkExecuteOnly probes it).
	executeOnly bool
	// readable is the same object opened for reading (Linux), retained
	// from inspection to revalidation; nil until then or when unreadable.
	readable *rawFile //lint:ignore U1000 Linux only
}

// rawFile reads a descriptor opened O_NONBLOCK with read(2) itself, never
// through the runtime's poller (which would need descriptors of its own,
// see exec_linux.go), and within a time bound as well as the size bound of
// its callers. O_NONBLOCK stays set: a regular file ignores it, and a
// pseudo-file that reports itself regular but whose read would wait (a
// tracefs trace_pipe, /proc/kmsg) then answers EAGAIN at once instead of
// holding the run, and the approval, for as long as it likes. The time
// bound ends a file that trickles its bytes; a single read that a file
// system never finishes, ignoring O_NONBLOCK (a hung network mount or
// FUSE daemon), is not interrupted.
type rawFile struct {
	fd       int
	deadline time.Time
}

// hashReadBound is how long reading a file of size bytes may take: 10 s,
// and 1 s more for each 10 MiB (a slow disk's pace).
//
//lint:ignore U1000 Linux only (macOS reads through os.File, select_darwin.go)
func hashReadBound(size int64) time.Duration {
	return 10*time.Second + time.Duration(size/(10<<20))*time.Second
}

var (
	errReadWouldWait = errors.New("it reports itself as a regular file, but reading it would wait (a pseudo-file such as a kernel trace pipe, whose contents never end)")
	errReadTooSlow   = errors.New("reading it took longer than its time bound")
)

func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if time.Now().After(f.deadline) {
			return 0, errReadTooSlow
		}
		n, err := unix.Read(f.fd, p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, errReadWouldWait
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return unix.Close(f.fd) }

// workdir is the retained working directory.
type workdir struct {
	fd   int
	path string
}

// retainWorkdir opens the current directory as the base of every relative
// lookup and names it (workdirName: getcwd on Linux, the descriptor's own
// path on macOS). A removed directory can still be opened, so the name
// decides.
func retainWorkdir() (workdir, error) {
	fd, err := unix.Open(".", workdirFlags, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return workdir{}, fmt.Errorf("can't resolve working directory: it no longer exists")
		}
		return workdir{}, fmt.Errorf("cannot open the working directory: %v", err)
	}
	path, err := workdirName(fd)
	if err == nil {
		err = checkUTF8Path(path)
	}
	if err != nil {
		// Here and on every failure path of selection, closing a
		// descriptor only we hold cannot lose anything; its error is
		// ignored.
		unix.Close(fd)
		return workdir{}, workdirError(err)
	}
	return workdir{fd: fd, path: path}, nil
}

// errWorkdirReplaced is a working-directory name that now leads to another
// directory than the one retained.
var errWorkdirReplaced = errors.New("the working directory was moved or replaced while agentknock started")

func workdirError(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("can't resolve working directory: it no longer exists")
	case errors.Is(err, errPathNotUTF8):
		return fmt.Errorf("the working directory path is not valid UTF-8, so it cannot be shown to the device")
	case errors.Is(err, errWorkdirReplaced):
		return fmt.Errorf("%v", err)
	}
	return fmt.Errorf("cannot determine the working directory: %v", err)
}

// nameFromBuffer is the NUL-terminated path a system call wrote into buf.
// The length the call returned is not used: macOS's getcwd(3) returns a
// pointer, F_GETPATH and proc_pidpath return no length, and Linux's getcwd
// counts the NUL. A buffer without a NUL was truncated.
func nameFromBuffer(buf []byte) (string, error) {
	i := bytes.IndexByte(buf, 0)
	if i < 0 {
		return "", unix.ENAMETOOLONG
	}
	if i == 0 || buf[0] != '/' {
		return "", fmt.Errorf("not an absolute path: %q", buf[:i])
	}
	return string(buf[:i]), nil
}

// checkWorkdirName requires that the name, looked up now (named, or lookupErr),
// is the object the retained descriptor refers to: a name reported for a
// descriptor is only a name, and a moved or removed object keeps its
// descriptor.
func checkWorkdirName(retained *unix.Stat_t, named *unix.Stat_t, lookupErr error) error {
	if lookupErr != nil {
		return lookupErr
	}
	if !sameObject(retained, named) {
		return errWorkdirReplaced
	}
	return nil
}

// sameObject compares device and inode numbers, the identity that both
// platforms retain across the approval wait.
func sameObject(a, b *unix.Stat_t) bool {
	return uint64(a.Dev) == uint64(b.Dev) && a.Ino == b.Ino
}

// dirfdFor is where a candidate's lookup starts: the root for absolute
// paths, the retained directory for relative ones.
func dirfdFor(wd workdir, candidate string) int {
	if strings.HasPrefix(candidate, "/") {
		return unix.AT_FDCWD
	}
	return wd.fd
}

func statAt(wd workdir, candidate string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfdFor(wd, candidate), candidate, &st, 0)
	return st, err
}

// missingCandidate reports an error that an ordinary PATH search treats as
// "not here, try the next directory" (glibc's execvp(3) does the same;
// macOS's also goes on after ELOOP and ENAMETOOLONG, searchGoesOnFor).
func missingCandidate(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.EACCES) || errors.Is(err, unix.ESTALE) ||
		errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ETIMEDOUT) ||
		errors.Is(err, errNotExecutable) || searchGoesOnFor(runtime.GOOS, err)
}

// errNotExecutable is a candidate that is not a regular file or that the
// effective IDs may not execute.
var errNotExecutable = errors.New("not an executable regular file")

// notExecutableOpen maps what opening a candidate for execution reports
// for an object that is not a regular file: macOS's O_EXEC open answers
// EISDIR for a directory and EOPNOTSUPP (or ENOTSUP) for a socket, where
// execve(2), and therefore execvp(3), answer EACCES and search on.
func notExecutableOpen(err error) error {
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP) {
		return errNotExecutable
	}
	return err
}

// selectExecutable finds and opens the command: directly when it contains a
// slash, else through the captured PATH in order. It never searches again
// after approval.
func selectExecutable(wd workdir, command, searchPath string) (*executable, error) {
	if strings.Contains(command, "/") {
		x, err := openCandidate(wd, command)
		if err != nil {
			return nil, describeOpenError(command, err)
		}
		return x, nil
	}
	denied, unsearchable := "", ""
	for _, dir := range strings.Split(searchPath, ":") {
		if dir == "" {
			dir = "."
		}
		candidate := strings.TrimSuffix(dir, "/") + "/" + command
		x, err := openCandidate(wd, candidate)
		if err == nil {
			return x, nil
		}
		if !missingCandidate(err) && !searchGoesOnUnreachable(runtime.GOOS, err, func() error {
			_, statErr := statAt(wd, candidate)
			return statErr
		}) {
			return nil, describeOpenError(candidate, err)
		}
		if denied == "" && (errors.Is(err, unix.EACCES) || errors.Is(err, errNotExecutable)) {
			_, statErr := statAt(wd, candidate)
			switch {
			case statErr == nil:
				denied = candidate
			case unsearchable == "" && errors.Is(statErr, unix.EACCES):
				unsearchable = dir
			}
		}
	}
	switch {
	case denied != "":
		return nil, classify(failCommandNotExecutable, fmt.Errorf("cannot run %s: permission denied (found in PATH, but it is not an executable file)", printable(denied)))
	case unsearchable != "":
		// As a shell says it (dash: "Permission denied"): the command may
		// be in a PATH directory this user may not search.
		return nil, classify(failCommandNotExecutable, fmt.Errorf("cannot run %s: permission denied (the PATH directory %s cannot be searched, and no other PATH directory has it)", quoted(command), printable(unsearchable)))
	}
	return nil, classify(failCommandNotFound, fmt.Errorf("command %s wasn't found (searched PATH=%s)", quoted(command), printable(searchPath)))
}

func describeOpenError(candidate string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return classify(failCommandNotFound, fmt.Errorf("command %s wasn't found", quoted(candidate)))
	case errors.Is(err, errNotExecutable), errors.Is(err, unix.EACCES):
		return classify(failCommandNotExecutable, fmt.Errorf("cannot run %s: permission denied or not an executable file", printable(candidate)))
	case errors.Is(err, errPathNotUTF8):
		return fmt.Errorf("cannot run %s: its path is not valid UTF-8, so it cannot be shown to the device", printable(candidate))
	}
	return fmt.Errorf("cannot run %s: %v", printable(candidate), err)
}

var errPathNotUTF8 = errors.New("path is not valid UTF-8")

// checkUTF8Path refuses a path that the approval request could not carry.
func checkUTF8Path(p string) error {
	if !utf8.ValidString(p) {
		return errPathNotUTF8
	}
	return nil
}

// inspect reads the executable once: SHA-256 of the whole file, shebang
// detection and, for a small script, its text. An unreadable (execute-only)
// file is a binary without a hash unless checkExecuteOnly finds it is a
// script: openForReading answers EACCES or EPERM only when the file's
// permissions refuse reading.
func (x *executable) inspect() error {
	f, err := openForReading(x)
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			x.executeOnly = true
			return nil
		}
		return fmt.Errorf("cannot read %s: %v", printable(x.path), err)
	}
	defer f.Close()
	sum, head, size, err := hashStream(f)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", printable(x.path), err)
	}
	x.hash, x.size = sum, size
	x.script = len(head) >= 2 && head[0] == '#' && head[1] == '!'
	if x.script {
		x.shebang = string(head[:min(len(head), execHeaderSize)])
	}
	if x.script && size <= maxScriptContents {
		text := toValidUTF8(head)
		x.contents = &text
	}
	if !x.script && !kernelMayRun(runtime.GOOS, head[:min(len(head), execHeaderSize)]) {
		return classify(failCommandFormat, fmt.Errorf("cannot run %s: it does not start with #! and is not a program format the kernel runs (%s), so it would fail (\"exec format error\") after the approval", printable(x.path), nativeFormatName[runtime.GOOS]))
	}
	return nil
}

// checkInterpreter predicts that a script cannot start because the
// interpreter its #! line names cannot be run (missing, not an executable
// file): execve would fail with ENOENT or EACCES after the approval. The
// line is read as the kernel reads it (Linux fs/binfmt_script.c, macOS
// imgact_shell): after "#!" and blanks, the interpreter runs to the next
// blank or the end of the line, relative names start at the working
// directory, and the rest of the line is one argument. For `#!/usr/bin/env
// NAME` (one word, no option or assignment), NAME is looked up in PATH as
// env looks it up. An interpreter that is itself a script is not followed,
// and nothing is predicted for a line the kernel's buffer cuts.
func checkInterpreter(wd workdir, x *executable, searchPath string) error {
	if !x.script {
		return nil
	}
	line := strings.TrimLeft(x.shebang[2:], " \t")
	end := strings.IndexAny(line, " \t\n")
	if end < 0 {
		if len(x.shebang) == execHeaderSize {
			return nil // cut by the kernel's buffer
		}
		end = len(line)
	}
	interp := line[:end]
	if interp == "" {
		return classify(failCommandFormat, fmt.Errorf("cannot run %s: its #! line names no interpreter, so it would fail (\"exec format error\") after the approval", printable(x.path)))
	}
	arg, _, _ := strings.Cut(line[end:], "\n")
	arg = strings.Trim(arg, " \t")
	if err := checkRunnable(wd, interp); err != nil {
		crlf := ""
		if strings.HasSuffix(interp, "\r") {
			crlf = " (the line ends in CR LF, as a file saved on Windows does)"
		}
		return classify(failCommandInterpreter, fmt.Errorf("cannot run %s: the interpreter its #! line names, %s, %v%s, so it would fail after the approval", printable(x.path), printable(interp), err, crlf))
	}
	if path.Base(interp) != "env" || arg == "" || strings.ContainsAny(arg, " \t=") || strings.HasPrefix(arg, "-") {
		return nil
	}
	var err error
	if strings.Contains(arg, "/") {
		err = checkRunnable(wd, arg)
	} else if found, selErr := selectExecutable(wd, arg, searchPath); selErr != nil {
		err = errors.New("is not found in PATH or cannot be run")
	} else {
		unix.Close(found.fd)
	}
	if err != nil {
		return classify(failCommandInterpreter, fmt.Errorf("cannot run %s: its #! line runs %s %s, and %s %v, so it would fail after the approval", printable(x.path), printable(interp), printable(arg), printable(arg), err))
	}
	return nil
}

// checkRunnable says why a named file cannot be executed (a phrase, nil
// when it can): it is opened as a candidate is.
func checkRunnable(wd workdir, name string) error {
	found, err := openCandidate(wd, name)
	switch {
	case err == nil:
		unix.Close(found.fd)
		return nil
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return errors.New("does not exist")
	case errors.Is(err, errNotExecutable) || errors.Is(err, unix.EACCES):
		return errors.New("is not an executable file this user may run")
	}
	return err
}

// Which files the kernel can execute, predicted from their first bytes so
// that no approval is spent on an "exec format error" (ENOEXEC). A script
// is one starting with #!; anything else needs a binary format the kernel
// runs. An execute-only file cannot be read, so its first bytes say
// nothing: it may be a binary, which runs, or a script, which its
// interpreter cannot read and which therefore fails after the approval.
// On Linux a traced child tells which (checkExecuteOnly, select_linux.go);
// on macOS nothing is predicted for it (README, "Limits and bounds").

// nativeFormatName names the formats kernelMayRun accepts, for messages.
var nativeFormatName = map[string]string{"linux": "ELF", "darwin": "Mach-O"}

// execHeaderSize is how much of a file the kernel reads to choose a
// format handler (Linux's BINPRM_BUF_SIZE).
const execHeaderSize = 256

// kernelMayRun reports whether a file without #! and with these first
// bytes may be executed the way agentknock executes it.
//
// Linux runs a binary through its retained close-on-exec descriptor
// (execveat), and there only binfmt_elf can: a binfmt_misc handler (qemu
// for another architecture, Wine, Java, ...) is refused by the kernel with
// ENOENT for a file it could not reopen (BINPRM_FLAGS_PATH_INACCESSIBLE),
// whatever the handler's flags (measured on Linux 6.18 with handlers
// registered with no flag, O, F and OC; TestBinfmtMiscHandlerCannotRun).
// So /proc/sys/fs/binfmt_misc is not consulted: what it lists cannot run
// here. Any ELF file passes: its machine is not compared with this one,
// because under qemu-user (the arm64 tests) the launcher's own machine is
// not the kernel's, and a kernel may run another (i386 on amd64, 32-bit
// Arm on arm64); another machine's program fails after the approval.
//
// macOS runs Mach-O, thin or universal; its header is checked for
// nothing more (a universal file may hold this machine's slice).
func kernelMayRun(goos string, head []byte) bool {
	switch goos {
	case "linux":
		return bytes.HasPrefix(head, []byte("\x7fELF"))
	case "darwin":
		for _, magic := range [][]byte{
			{0xcf, 0xfa, 0xed, 0xfe}, {0xce, 0xfa, 0xed, 0xfe}, // MH_MAGIC_64, MH_MAGIC (little-endian)
			{0xca, 0xfe, 0xba, 0xbe}, {0xca, 0xfe, 0xba, 0xbf}, // FAT_MAGIC, FAT_MAGIC_64 (big-endian)
		} {
			if bytes.HasPrefix(head, magic) {
				return true
			}
		}
		return false
	}
	return true
}

// hashStream returns the SHA-256 of r, its first bytes (up to
// maxScriptContents+1) and its size, in one pass.
func hashStream(r io.Reader) (sum, head []byte, size int64, err error) {
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			if len(head) <= maxScriptContents {
				keep := min(n, maxScriptContents+1-len(head))
				head = append(head, buf[:keep]...)
			}
			size += int64(n)
		}
		if err == io.EOF {
			return h.Sum(nil), head, size, nil
		}
		if err != nil {
			return nil, nil, 0, err
		}
	}
}

// toValidUTF8 replaces each invalid byte with U+FFFD.
func toValidUTF8(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// revalidateHash recomputes the hash reported to the device, reading r no
// further than one byte past the size hashed at inspection: a file that
// grows, or never ends, is a changed file, found without reading it all.
func (x *executable) revalidateHash(r io.Reader) error {
	sum, _, size, err := hashStream(io.LimitReader(r, x.size+1))
	if err != nil {
		return fmt.Errorf("cannot read %s again before running it: %v", printable(x.path), err)
	}
	if size != x.size || string(sum) != string(x.hash) {
		return fmt.Errorf("%s changed while waiting for approval; not running it", printable(x.path))
	}
	return nil
}

// checkIdentity requires st to describe the retained object: on macOS the
// captured path is looked up again before reading and executing it.
func (x *executable) checkIdentity(st *unix.Stat_t) error {
	if uint64(st.Dev) != x.dev || st.Ino != x.ino {
		return fmt.Errorf("%s is no longer the file that was selected", printable(x.path))
	}
	return nil
}

// Approval context shared by Linux and macOS: command-execution.md,
// "Approval context". Everything here is client-reported and advisory.

// reportedStream is what the request says about standard descriptor fd: a
// descriptor the caller closed is UNKNOWN (the protocol has no kind for it;
// the runtime put /dev/null there, which the command will not get).
func (cs callerState) reportedStream(fd int) string {
	if cs.closedStd&(1<<fd) != 0 {
		return "UNKNOWN"
	}
	return streamKind(fd)
}

// streamKind classifies how a standard stream is connected.
func streamKind(fd int) string {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "UNKNOWN"
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "PIPE"
	case unix.S_IFSOCK:
		return "SOCKET"
	case unix.S_IFREG:
		return "REGULAR_FILE"
	case unix.S_IFCHR:
		if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil {
			return "TERMINAL"
		}
		var null unix.Stat_t
		if unix.Stat("/dev/null", &null) == nil && null.Mode&unix.S_IFMT == unix.S_IFCHR && null.Rdev == st.Rdev {
			return "NULL_DEVICE"
		}
	}
	return "UNKNOWN"
}

// walkLaunchers collects the executable paths of pid and its ancestors, up
// to maxLauncherChain, oldest first, as the request reports them. Missing,
// inaccessible or non-UTF-8 information, or a path that is not absolute,
// ends the chain there: the device is told less, never a guess.
func walkLaunchers(pid int, executablePath func(pid int) (string, error), parentOf func(pid int) (int, error)) []string {
	var chain []string
	for len(chain) < maxLauncherChain && pid > 0 {
		path, err := executablePath(pid)
		if err != nil || !utf8.ValidString(path) || !strings.HasPrefix(path, "/") {
			break
		}
		chain = append(chain, path)
		if pid, err = parentOf(pid); err != nil {
			break
		}
	}
	return reverseStrings(chain)
}

// reverseStrings orders a chain collected from the direct launcher upwards
// as the protocol wants it, oldest ancestor first.
func reverseStrings(s []string) []string {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}

// macOSVersionText is how the pairing metadata names a macOS release, the
// way the reference client does: "macOS" and kern.osproductversion.
func macOSVersionText(productVersion string) string {
	v := strings.TrimSpace(strings.TrimRight(productVersion, "\x00"))
	if v == "" || !utf8.ValidString(v) {
		return ""
	}
	return "macOS " + v
}

// hostInfo is what the pairing metadata tells the device about this host
// (client-device-protocol.md, "Initial pairing"); an empty member is left out.
// pairingHost (select_linux.go, select_darwin.go) takes each from the
// same source as the reference client, so the device shows the same client
// whichever of the two paired.
type hostInfo struct {
	Hostname  string
	MachineID string
	OSVersion string
}
