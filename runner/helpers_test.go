package runner

import (
	"errors"
	"fmt"

	"github.com/runner-cli/runner/runner/exit"
)

func fmtSscanf(s, format string, a ...any) (int, error) { return fmt.Sscanf(s, format, a...) }

func errorsIsUsage(err error) bool { return errors.Is(err, exit.ErrUsage) }
