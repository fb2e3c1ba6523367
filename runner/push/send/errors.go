package send

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

// permanentError is a failure another attempt would not mend (the
// receiver refused the request itself: a 4xx other than 408 and 429).
type permanentError struct{ error }

func isPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// cleanError is err without the URL Go's client puts in it (a token may
// be in its query or user).
func cleanError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer in time"
	}
	return err.Error()
}

// statusError is the error of a response with status code.
func statusError(code int) error {
	err := fmt.Errorf("HTTP %d", code)
	if code >= 400 && code < 500 && code != 408 && code != 429 {
		return permanentError{err}
	}
	return err
}
