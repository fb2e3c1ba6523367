package tasks

import (
	"slices"
	"testing"

	"github.com/runner-cli/runner/internal/statetest"
	"github.com/runner-cli/runner/runner/projects"
)

func TestWaitAllSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		specs   []string
		project string
		want    []string
	}{
		{name: "empty", want: nil},
		{name: "only active, in dispatch order",
			specs: []string{"t_b:running:p", "t_x:done:p", "t_a:queued:p:t_b", "t_o:orphaned:p", "t_i:needs_input:p"},
			want:  []string{"t_b", "t_a", "t_i"}},
		{name: "a project and what is queued behind it elsewhere, transitively",
			specs:   []string{"t_1:running:api", "t_2:running:web", "t_3:queued:web:t_1", "t_4:queued:docs:t_3", "t_5:queued:web:t_2"},
			project: "api",
			want:    []string{"t_1", "t_3", "t_4"}},
		{name: "a finished task behind the project is not waited for",
			specs:   []string{"t_1:running:api", "t_2:cancelled:web:t_1"},
			project: "api",
			want:    []string{"t_1"}},
		{name: "a project with nothing active",
			specs:   []string{"t_1:done:api", "t_2:running:web"},
			project: "api",
			want:    nil},
	} {
		var ref projects.Ref
		if tc.project != "" {
			ref.Name = tc.project
		}
		got := AllSet(statetest.Plan(tc.specs...), ref)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: AllSet = %q, want %q", tc.name, got, tc.want)
		}
	}
}
