// Package sshtest is test support, not product code: a real OpenSSH
// server on 127.0.0.1 for tests of remote hosts, with a throw-away host
// key, a throw-away client key, a high port and StrictModes off, and an
// ssh client config that reaches it as the host alias "loop".
package sshtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/runner/proctree"
)

// Server is a running sshd.
type Server struct {
	// Dir holds the keys, the configs and the server's log.
	Dir string
	// Port is where it listens on 127.0.0.1.
	Port int
	// Config is an ssh client config file that reaches the server as
	// "loop": give it with ssh -F.
	Config string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	sshd   string
}

// Alias is the host name Config gives the server.
const Alias = "loop"

// SSHArgs are the ssh arguments that reach the server: -F Config.
func (s *Server) SSHArgs() []string { return []string{"-F", s.Config} }

// Sshd returns the sshd binary, or "" when OpenSSH's server is not
// installed (Debian: apt-get install openssh-server).
func Sshd() string {
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	return ""
}

// Start starts a server for the test, stopped when it ends. Without sshd
// the test is skipped, unless $CI is set (CI installs it): then it fails.
func Start(t testing.TB) *Server {
	t.Helper()
	sshd := Sshd()
	if sshd == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("sshd not installed (CI installs openssh-server: see .ci/run)")
		}
		t.Skip("sshd not installed (apt-get install openssh-server)")
	}
	dir, err := os.MkdirTemp("/tmp", "sshd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, err := StartIn(sshd, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartIn starts sshd with its files in dir; the caller stops it.
func StartIn(sshd, dir string) (*Server, error) { return StartInWith(sshd, dir, "") }

// StartInWith is StartIn with more lines of sshd_config (e.g.
// "MaxSessions 100\n" for a pool test's many tasks on one connection).
func StartInWith(sshd, dir, extra string) (*Server, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"host", "client"} {
		out, err := subproc.Command(context.Background(), "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner-test", "-f", filepath.Join(dir, k)).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "client.pub"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory (the package makes it at
		// boot through systemd, which a container may not run).
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, Config: filepath.Join(dir, "ssh_config")}
	// SHLVL=1 passed to the login shell (SetEnv, AcceptEnv) makes bash
	// skip ~/.bashrc, which it reads for a command run by sshd: the tests
	// run the account's own rc files no more. An rc file that does real
	// work (pyenv init rehashes under a lock file) turned each command
	// into 120 ms here, and a session killed mid-rc by a test that stops
	// this server left the lock behind, hanging every later login of the
	// account. Users are told about slow rc files in the README.
	serverConfig := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PrintMotd no
LogLevel ERROR
AcceptEnv SHLVL
%s`, port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"), extra)
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(serverConfig), 0o600); err != nil {
		return nil, err
	}
	clientConfig := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  SetEnv SHLVL=1
`, Alias, port, u.Username, filepath.Join(dir, "client"))
	if err := os.WriteFile(s.Config, []byte(clientConfig), 0o600); err != nil {
		return nil, err
	}
	s.sshd = sshd
	return s, s.start()
}

// Restart starts a stopped server again: the same port, keys and
// configs, so the clients reach it as before.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}

// start runs sshd and waits until it listens.
func (s *Server) start() error {
	dir, port := s.Dir, s.Port
	logf, err := os.OpenFile(filepath.Join(dir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.cmd = subproc.Command(context.Background(), s.sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start sshd: %w", err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func() { _ = s.cmd.Wait(); logf.Close(); close(exited) }()
	for deadline := clock.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
		default:
			if clock.Now().Before(deadline) {
				continue
			}
		}
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
		return fmt.Errorf("sshd does not listen on %d: %v; its log:\n%s", port, err, log)
	}
}

// Stop stops the server and the sessions it serves (their processes are
// its descendants), so the clients' shared connections end too. It
// returns once sshd has exited.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if t, err := proctree.Read(); err == nil {
		for _, pid := range t.Descendants(s.cmd.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited: // its port is free again
	case <-time.After(5 * time.Second):
	}
}

// Pause stops sshd and every process of its connections (SIGSTOP): a host
// that went silent (a network cut, a machine off), which answers no
// keepalive and lets a new connection hang, unlike a refused one. Resume
// or Stop ends it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume lets a paused sshd and its connections go on (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(s.cmd.Process.Pid, sig)
	if t, err := proctree.Read(); err == nil {
		for _, pid := range t.Descendants(s.cmd.Process.Pid) {
			_ = syscall.Kill(pid, sig)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
