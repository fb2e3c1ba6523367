package state

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskFileKinds: each kind has its own path in the layout, and a kind
// made by a conversion names none of runner's files (no panic).
func TestTaskFileKinds(t *testing.T) {
	s := &Store{dir: "/st"}
	want := map[TaskFileKind]string{
		FileLog: "logs/t_1.log", FileSupervisorLog: "logs/t_1.supervisor.log", FileEvents: "events/t_1.jsonl",
		FileHookDir: "hooks/t_1", FileDoorDir: "doors/t_1", FileHomeDir: "homes/t_1",
		FileText: "tasks/t_1.txt", FileChangesIndex: "tasks/t_1.index",
	}
	if len(want) != len(taskFiles) {
		t.Fatalf("%d kinds tested, %d exist", len(want), len(taskFiles))
	}
	for k, p := range want {
		if got := s.TaskFile(k, "t_1"); got != filepath.Join("/st", p) {
			t.Errorf("TaskFile(%v) = %s, want /st/%s", k, got, p)
		}
	}
	for _, k := range []TaskFileKind{-1, TaskFileKind(len(taskFiles))} {
		if got := s.TaskFile(k, "t_1"); !strings.HasPrefix(got, "/st/unknown/") {
			t.Errorf("TaskFile(%v) = %s, want a path under unknown/", k, got)
		}
	}
}
