package answer

import (
	"os"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) {
	LeaveWait = time.Second // the fake pane's dialog leaves at once
	os.Exit(testenv.Main(m))
}
