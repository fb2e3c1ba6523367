// opencode-turn-end.js — an OpenCode plugin that tells runner when a turn ends.
//
// runner writes it into the task's hook directory and hands it to OpenCode
// as a file:// plugin in OPENCODE_CONFIG_CONTENT (the opencode profile's
// hook; runner/profiles_builtin.go): no config directory of the user's is
// touched, and none is added (OpenCode installs its plugin package into
// every config directory it loads, from the network). Each time a session
// goes idle it appends one JSON line to the task's events file
// ($RUNNER_EVENTS_FILE): {"hook_event_name":"Stop"|"SubagentStop",
// "session_id",...,"last_assistant_message"} — the turn then ends at once
// and the record gets the answer. A child session (a sub-agent's) gives
// SubagentStop, which does not end the turn. Outside runner's panes it does
// nothing.
import { appendFileSync } from "node:fs";
const EVENTS = process.env.RUNNER_EVENTS_FILE;
async function call(f, v1, v2) {
  try { const r = await f(v1); if (r && r.data !== undefined) return r.data; } catch (e) {}
  try { const r = await f(v2); if (r && r.data !== undefined) return r.data; return r; } catch (e) {}
  return undefined;
}
export const RunnerTurnEnd = async ({ client }) => ({
  event: async ({ event }) => {
    if (!EVENTS || !event || event.type !== "session.idle") return;
    const id = event.properties && event.properties.sessionID;
    let parent = "", answer = "";
    try {
      const s = await call((a) => client.session.get(a), { path: { id } }, { sessionID: id });
      parent = (s && (s.parentID || (s.info && s.info.parentID))) || "";
      const msgs = (await call((a) => client.session.messages(a), { path: { id } }, { sessionID: id })) || [];
      for (let i = msgs.length - 1; i >= 0; i--) {
        const m = msgs[i], info = m.info || m;
        if (info.role !== "assistant") continue;
        answer = (m.parts || []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("");
        break;
      }
    } catch (e) {}
    appendFileSync(EVENTS, JSON.stringify({ hook_event_name: parent ? "SubagentStop" : "Stop", session_id: id,
      parent_id: parent, last_assistant_message: answer }) + "\n");
  },
});
