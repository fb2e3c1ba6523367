package portprobe

import (
	"net"
	"testing"
)

// TestPortInUse: a port a listener holds, on the loopback address alone,
// is in use for the probe on every address.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	if !InUse(p) {
		t.Errorf("port %d has a listener, not seen", p)
	}
	l.Close()
	if InUse(p) {
		t.Errorf("port %d is free again, seen in use", p)
	}
}

// TestPortInUseAsListen: the probe says what net.Listen on every address
// says, for a port held on the loopback address of either family and a
// free one.
func TestPortInUseAsListen(t *testing.T) {
	var held []int
	for _, network := range []string{"tcp4", "tcp6"} {
		l, err := net.Listen(network, "localhost:0")
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		defer l.Close()
		held = append(held, l.Addr().(*net.TCPAddr).Port)
	}
	free, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	p := free.Addr().(*net.TCPAddr).Port
	free.Close()
	for _, port := range append(held, p) {
		if got, want := InUse(port), listenFails(port); got != want {
			t.Errorf("port %d: InUse %v, net.Listen fails %v", port, got, want)
		}
	}
}
