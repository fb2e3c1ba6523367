//go:build runner_clockahead

package clock

import "time"

// offset: a year and a day, so that a date fixed in a test is more than a
// year stale and every retention, reset and "since" is crossed.
const offset = 366 * 24 * time.Hour
