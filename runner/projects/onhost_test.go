package projects

import (
	"errors"
	"testing"

	"github.com/runner-cli/runner/runner/fault"
)

// TestOnHost: a path on a host, a path here, and a host given twice.
func TestOnHost(t *testing.T) {
	if got, err := OnHost("/srv/api", "b1"); err != nil || got != "host:b1:/srv/api" {
		t.Errorf("on b1: %q %v", got, err)
	}
	if got, err := OnHost("./api", ""); err != nil || got != "./api" {
		t.Errorf("here: %q %v", got, err)
	}
	if _, err := OnHost("host:b2:/srv/api", "b1"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("twice: %v", err)
	}
}
