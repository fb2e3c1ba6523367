package doctor

// systemInotifyCheck is inotifyCheck on this machine's /proc.
func systemInotifyCheck() (Check, bool) { return inotifyCheck("/proc") }
