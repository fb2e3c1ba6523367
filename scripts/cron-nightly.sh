#!/usr/bin/env bash
# A nightly dispatch for cron. Example crontab line (cron has a minimal PATH
# and no TERM; give runner's absolute path):
#
#   0 3 * * *  /home/me/src/runner/scripts/cron-nightly.sh api "update dependencies and run the tests" >>/home/me/.local/state/runner-nightly.cron.log 2>&1
#
# It appends the task's --json record to a log, and on anything but success
# sends a notification (notify-send if there is a desktop, else mail, else
# the log says so). Unattended: approval dialogs stop the task (exit 4)
# unless they match an --approve-rule.
set -uo pipefail
RUNNER="${RUNNER:-$(command -v runner || echo "$HOME/go/bin/runner")}"
project="${1:?usage: cron-nightly.sh PROJECT TASK}"
task="${2:?usage: cron-nightly.sh PROJECT TASK}"
log="${RUNNER_NIGHTLY_LOG:-$HOME/.local/state/runner-nightly.jsonl}"
mkdir -p "$(dirname "$log")"

out="$("$RUNNER" dispatch "$project" --source cron --json --timeout 2h \
	--approve-rule '^Do you want to (run|make this edit)' \
	--commit-branch -- "$task")"
code=$?
printf '%s\n' "$out" | tr -d '\n' >>"$log"
echo >>"$log"

if [ "$code" -ne 0 ]; then
	msg="runner nightly on $project exited $code (see $log; 'runner status' for details)"
	if command -v notify-send >/dev/null 2>&1 && [ -n "${DISPLAY:-}" ]; then
		notify-send "runner" "$msg"
	elif command -v mail >/dev/null 2>&1; then
		printf '%s\n\n%s\n' "$msg" "$out" | mail -s "runner nightly: $project failed" "${MAILTO:-$USER}"
	else
		echo "$(date -Is) $msg" >&2
	fi
fi
exit "$code"
