package gitsnap

// ControlFiles names what of a git directory git reads to know what to
// run or where the repository is (gitrepository-layout(5)), the folders
// and the files: a sandbox binds them read-only, so that an agent that
// may write the repository's objects and refs cannot plant a hook, an
// fsmonitor, a filter or another repository's path for the user's next
// git command. common is for the repository's common git directory (its
// worktrees' and runner's worktrees' folders, remotes and branches too);
// otherwise a worktree's own git directory (its gitdir file too).
func ControlFiles(common bool) (dirs, files []string) {
	dirs = []string{"hooks", "info", "modules"}
	files = []string{"config", "config.worktree", "commondir"}
	if common {
		return append(dirs, "worktrees", WorktreeHomeName, "remotes", "branches"), files
	}
	return dirs, append(files, "gitdir")
}
