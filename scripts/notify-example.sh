#!/usr/bin/env bash
# A --notify hook (or "notify_command" in the config):
#
#   runner dispatch api --notify "$PWD/scripts/notify-example.sh" "fix the flaky test"
#
# runner runs it, without a shell and with a time limit, when a task ends or
# needs input, with these variables:
#   RUNNER_TASK_ID  RUNNER_STATUS  RUNNER_PROJECT  RUNNER_EXIT  RUNNER_RESULT_FILE
# A failing hook is recorded in the journal and never fails the task.
set -u
line="$(date -Is) task $RUNNER_TASK_ID ($RUNNER_PROJECT) is $RUNNER_STATUS (exit $RUNNER_EXIT)"
echo "$line" >>"${RUNNER_NOTIFY_LOG:-$HOME/.local/state/runner-notify.log}"
if command -v notify-send >/dev/null 2>&1 && [ -n "${DISPLAY:-}" ]; then
	notify-send "runner: $RUNNER_STATUS" "$(tail -n 5 "$RUNNER_RESULT_FILE" 2>/dev/null)"
fi
