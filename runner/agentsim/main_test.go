package agentsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"

	"github.com/runner-cli/runner/internal/testenv"
)

// TestMain lets the test binary double as the processes the tests drive:
// AGENTSIM_TEST_ROLE=sim runs Run on the terminal on stdin with the Options
// in AGENTSIM_TEST_OPTS (as `runner agent-sim` does); =hook copies stdin to
// $HOOK_OUT, prints $HOOK_STDERR to stderr and exits with $HOOK_CODE.
func TestMain(m *testing.M) {
	switch os.Getenv("AGENTSIM_TEST_ROLE") {
	case "sim":
		var o Options
		if err := json.Unmarshal([]byte(os.Getenv("AGENTSIM_TEST_OPTS")), &o); err != nil {
			fmt.Fprintln(os.Stderr, "bad AGENTSIM_TEST_OPTS:", err)
			os.Exit(99)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code, err := Run(ctx, o, os.Stdin, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(code)
	case "hook":
		b, _ := io.ReadAll(os.Stdin)
		if err := os.WriteFile(os.Getenv("HOOK_OUT"), b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(98)
		}
		fmt.Fprint(os.Stderr, os.Getenv("HOOK_STDERR"))
		code, _ := strconv.Atoi(os.Getenv("HOOK_CODE"))
		os.Exit(code)
	}
	os.Exit(testenv.Main(m))
}
