//go:build manual

package mockapi

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestManualServe(t *testing.T) {
	cli := os.Getenv("CLI")
	home, project := "/tmp/rdm/"+cli+"-home", "/tmp/rdm/"+cli+"-proj"
	os.MkdirAll(home, 0o700)
	os.MkdirAll(project, 0o700)
	srv := Start([]Turn{
		{Match: "APPROVE-TASK", Write: &FileWrite{Path: project + "/approved.txt", Content: "hi\n"}, Shell: "printf 'hi\\n' > " + project + "/approved.txt", Escalate: cli == "codex", Text: "I wrote it for you REAL-DISPATCH-DONE", ChunkDelay: 150 * time.Millisecond},
	}, Options{Log: os.Stderr})
	env, files, err := AgentEnv(cli, srv.URL(), home, project)
	if err != nil {
		t.Fatal(err)
	}
	WriteFiles(files)
	os.WriteFile("/tmp/rdm/"+cli+".env", []byte(strings.Join(env, "\n")+"\n"), 0o600)
	time.Sleep(15 * time.Minute)
}
