module github.com/runner-cli/runner

go 1.26.8

require (
	github.com/creack/pty v1.1.24
	github.com/fsnotify/fsnotify v1.10.1
	github.com/gofrs/flock v0.12.1
	github.com/rogpeppe/go-internal v1.14.1
	github.com/spf13/cobra v1.10.2
	golang.org/x/sys v0.26.0
	golang.org/x/term v0.25.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
