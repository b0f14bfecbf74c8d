// The invocation service's private directory and its listeners
// (command-execution.md, "Invocation service, standard input, and SSH
// operations"): agent.sock for the temporary SSH agent, service.sock and the
// helper for Git signing, and an orderly close that lets signatures in
// flight send their completions.

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// sshAgentService is the agent socket in its private directory.
type sshAgentService struct {
	dir       string
	listeners []net.Listener
	cancel    context.CancelFunc
	conns     sync.WaitGroup // connection handlers, with their device exchanges
}

// closeWait bounds how long an exiting service lets cancelled exchanges send
// their aborted completions (the transport's own bound is 5 s).
const closeWait = 8 * time.Second

func startSSHAgent(cfg *serviceSSH, self selfImage, owner int, ownerGone <-chan struct{}) (*sshAgentService, error) {
	key, err := parseOpenSSHPublicKey(cfg.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("the SSH public key is not usable: %v", err)
	}
	base, err := serviceDirBase()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "agentknock-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "agent.sock"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ownerGone
		cancel()
	}()
	s := &sshAgentService{dir: dir, listeners: []net.Listener{ln}, cancel: cancel}
	go s.acceptLoop(ln, func(conn net.Conn) { serveAgentConn(ctx, conn, cfg, key, owner) })
	if cfg.GitSign {
		sln, err := net.Listen("unix", filepath.Join(dir, "service.sock"))
		if err == nil {
			s.listeners = append(s.listeners, sln)
			err = installGitSignHelper(filepath.Join(dir, gitSignHelperName), self)
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cannot set up Git signing: %v", err)
		}
		go s.acceptLoop(sln, func(conn net.Conn) { serveHelperConn(ctx, conn, cfg, key, owner) })
	}
	return s, nil
}

func (s *sshAgentService) acceptLoop(ln net.Listener, serve func(net.Conn)) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			serve(conn)
		}()
	}
}

// close cancels what is in flight, lets it send its aborted completions
// (bounded), and removes the directory.
func (s *sshAgentService) close() {
	s.cancel()
	for _, ln := range s.listeners {
		ln.Close()
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	os.RemoveAll(s.dir)
}
