// Reading a value from the controlling terminal without echo, for
// `secret upload --from-prompt` and `--passphrase-prompt`. Echo is turned
// off with termios ioctls and the saved settings are put back on every
// path, a SIGINT or SIGTERM during the prompt included.

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// promptHidden writes label to /dev/tty and reads one line there with echo
// off. It returns *interrupted when watch reports a signal first.
func promptHidden(watch *signalWatch, label string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return "", errors.New("there is no terminal to prompt on; use another source such as --from-file NAME=- or --passphrase-env VAR")
	}
	defer tty.Close()
	// The ioctls go through the raw connection: tty.Fd() would switch the
	// file to blocking mode, and Close could then no longer end the read
	// that an interruption abandons.
	rc, err := tty.SyscallConn()
	if err != nil {
		return "", err
	}
	var saved *unix.Termios
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) {
		saved, ioctlErr = unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	}); err != nil || ioctlErr != nil {
		return "", errors.New("/dev/tty is not a terminal")
	}
	hidden := *saved
	hidden.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK
	// ECHONL still shows the newline, so the next message starts on its
	// own line; ICANON makes the terminal deliver whole lines.
	hidden.Lflag |= unix.ECHONL | unix.ICANON
	setTermios := func(t *unix.Termios) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t) }); cerr != nil {
			return cerr
		}
		return err
	}
	if err := setTermios(&hidden); err != nil {
		return "", errors.New("cannot turn off echo on the terminal")
	}
	defer setTermios(saved)

	if _, err := io.WriteString(tty, label); err != nil {
		return "", err
	}
	line, err := interruptible(watch, func() (string, error) { return readTerminalLine(tty) })
	var intr *interrupted
	if errors.As(err, &intr) {
		// The user's line was not finished; end it before the message.
		io.WriteString(tty, "\n")
	}
	return line, err
}

// readTerminalLine reads up to a newline, which it drops with a preceding
// carriage return. End of input with nothing typed is an error, so that
// Ctrl-D does not upload an empty value by accident.
func readTerminalLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err == io.EOF && line == "" {
		return "", errors.New("the input ended before a value was entered")
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r"), nil
}
