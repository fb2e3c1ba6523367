package watch

import "time"

// PopupArgs are the flags of `runner watch` that show, in a popup, the
// view these options show: project, all, host and recent (left out when
// they are the defaults).
func PopupArgs(project string, all bool, host string, recent time.Duration) []string {
	var args []string
	if project != "" {
		args = append(args, "--project", project)
	}
	if all {
		args = append(args, "--all")
	}
	if host != "" {
		args = append(args, "--host", host)
	}
	if recent != DefaultRecent {
		args = append(args, "--recent", recent.String())
	}
	return args
}
