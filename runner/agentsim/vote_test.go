package agentsim

import "testing"

func TestSimVote(t *testing.T) {
	ask := "\nReply with one line \"VOTE: <candidate id>\" naming the best of t_b, t_c (not your own), then one line \"REASON: …\".\n"
	for _, tc := range []struct{ prompt, want string }{
		{"Candidate t_b (agent sim): status done; check failed: exit 1 (1s)\nCandidate t_c (agent sim): status done; check passed\n" + ask, "VOTE: t_c"},
		{"Candidate t_b (agent sim): status failed; check none\nCandidate t_c (agent sim): status done; check none\n" + ask, "VOTE: t_c"},
		{"Candidate t_b (agent sim): status done; check failed: exit 2 (1s)\nCandidate t_c (agent sim): status exited; check not run\n" + ask, "VOTE: t_b"},
		{"Candidate t_b (agent sim): status failed; check none\n" + ask, "VOTE: t_b"},
	} {
		got, ok := simVote(tc.prompt)
		if !ok || len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
			t.Errorf("simVote(%q) = %q, %v; want %q…", tc.prompt, got, ok, tc.want)
		}
	}
	if _, ok := simVote("say hi\nCandidate t_b (agent sim): status done; check passed"); ok {
		t.Error("a prompt without the ballot's request line voted")
	}
}
