package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/budget"
	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/confine"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
	launchpkg "github.com/runner-cli/runner/runner/launch"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/reconcile"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/runner/settings"
	"github.com/runner-cli/runner/runner/taskbook"

	"github.com/runner-cli/runner/runner/monitor"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/runner/supervisor"

	"github.com/runner-cli/runner/state"
)

// Supervise drives a task from wherever it is: waits for the agent to be
// ready (accepting a trust dialog on --yes-trust), delivers the awareness
// block and the task, monitors the turn until done, needs_input, exit,
// timeout or cancellation, and records the outcome, the commit and the
// notification. It is what a foreground dispatch runs in-process and what
// `runner supervise` (detached, or after `runner resume`) runs.
//
// lock is the project lock its dispatch handed over (dispatch --exclusive
// --detach; nil: none): let go of, with the task, as the end is recorded.
//
// The returned error maps to the exit code: nil for done, ErrNeedsInput,
// ErrTaskTimeout, ErrTaskFailed, ErrCancelled or the context's error.
func Supervise(ctx context.Context, env *Env, id string, lock *state.ProjectLock) error {
	return supervise(ctx, env, id, &given{lock: lock})
}

// given is what a foreground dispatch holds already, so that the
// supervisor it runs in-process neither looks the profile up nor decodes
// the settings again: the profile, the settings as recorded, and the
// stream of a remote task's files started with its agent (nil: none);
// and the project lock the task holds (nil: none), which the supervision
// lets go of as it records the task's end.
type given struct {
	prof  *profile.Profile
	set   settings.Run
	early *remote.Early
	lock  *state.ProjectLock
	// begin: the task is a foreground dispatch's, queued, to be started
	// here (beginHere).
	begin bool
	// started is its start under way (launch.Begin): the pane launched,
	// the snapshot and the record of the task starting still to come,
	// finished by the ready wait beside it (nil: none).
	started *launchpkg.Started
}

// supervise is Supervise, with what the caller holds already (g nil:
// everything is read from the task's record).
func supervise(ctx context.Context, env *Env, id string, g *given) (err error) {
	t, err := env.Record().Task(ctx, id)
	if err != nil {
		return err
	}
	if g == nil {
		g = &given{}
	}
	if g.prof == nil {
		if g.set, err = settings.Of(t); err != nil {
			return err
		}
		if g.prof, err = profile.FindProfile(env.Profiles, t.Agent); err != nil {
			return fmt.Errorf("task %s: %w", id, err)
		}
	}
	set, prof := g.set, g.prof
	unlock := g.lock.Unlock
	defer func() { unlock() }()
	if g.begin && t.Tmux.Pane == "" {
		if t, err = beginHere(ctx, env, t, g); err != nil {
			return err
		}
		if g.started != nil {
			defer func() { err = finishHere(ctx, env, id, g.started, err) }()
		}
	}
	if t.Status == state.StatusQueued && t.Tmux.Pane == "" {
		// Queued behind other tasks (dispatch --after): wait, then start.
		queued, err := startQueued(ctx, env, t, prof, set)
		if err != nil {
			return err
		}
		if queued != nil {
			unlock = queued
		}
		if t, err = env.Record().Task(ctx, id); err != nil {
			return err
		}
	}
	if t.Tmux.Pane == "" {
		return fmt.Errorf("task %s has no pane (it never started)", id)
	}
	if t.Status.IsTerminal() {
		// Cancelled between the start of this supervisor and now.
		return fmt.Errorf("task %s already ended (%s): nothing to supervise", id, t.Status)
	}
	timeout := set.TaskTimeout()
	if err := takeOver(ctx, env, t); err != nil {
		return err
	}
	s, stop, err := newSupervisor(ctx, env, t, prof, set, g.early)
	if err != nil {
		return unreachableAtStart(ctx, env, t, err)
	}
	defer stop()
	s.book.Free, s.started, s.Snapshotted = unlock, g.started, g.started.Committed // nil: nothing to wait for
	s.stopTrack = s.trackWhileWorking(s.runCtx, t)
	defer func() { s.stopTrack() }()
	s.timeout = timeout
	// The task's time (--timeout) counts from the delivery of its text
	// (run starts the clock); the start-up has --ready-timeout. A task
	// delivered already (a follow-up or message turn, a resume) gets its
	// time from now.
	tctx, cancel := context.WithCancel(s.runCtx)
	if t.Delivery != "" {
		cancel()
		tctx, cancel = s.StartClock(s.runCtx, timeout)
	}
	defer cancel()
	err = s.hostLost(s.run(tctx, t))
	if g.started != nil && g.started.Finish(ctx) != nil {
		return err // a failed start is not concluded: finishHere records it
	}
	return s.concludeAll(ctx, err)
}

// takeOver makes this process task t's supervisor, unless another live
// supervisor has it (the process that started this one, a runner msg or
// send, is expected). A foreground dispatch recorded itself as the owner
// with the task: nothing to take over, no write.
func takeOver(ctx context.Context, env *Env, t *state.Task) error {
	if t.SupervisorPID == os.Getpid() && t.SupervisorStart == reconcile.SelfIdentity() {
		return nil
	}
	owner := 0
	if err := env.Record().UpdateTaskDurably(ctx, "task "+t.ID+": take over", t.ID, func(x *state.Task) error {
		owner = 0
		if p := x.SupervisorPID; p != 0 && p != os.Getpid() && p != os.Getppid() && reconcile.SupervisorAlive(x) {
			owner = p
			return nil
		}
		x.SupervisorPID, x.SupervisorStart = os.Getpid(), reconcile.SelfIdentity()
		return nil
	}); err != nil {
		return err
	}
	if owner != 0 {
		return fmt.Errorf("task %s is supervised by process %d already", t.ID, owner)
	}
	return nil
}

// newSupervisor makes the supervisor of t's pane as it is now. For a task
// on a host it streams the host's files into their local copies (the
// stream early started with the agent, else a new one), which its monitor
// watches as a local task's; stop ends that.
func newSupervisor(ctx context.Context, env *Env, t *state.Task, prof *profile.Profile, set settings.Run, early *remote.Early) (s *supervision, stop func(), err error) {
	// Checked by Dispatch: an error here is a record edited by hand, and
	// approves nothing.
	rules, _ := config.CompileApproveRules("approve_rules", set.ApproveRules)
	mon := &monitor.Monitor{TC: env.TC, Pane: t.Tmux.Pane, Profile: prof, Transcript: t.Transcript,
		Events: env.Store.TaskFile(state.FileEvents, t.ID), Died: env.Store.PaneDiedFile(), Settle: set.SettleFor(prof), Idle: set.Idle,
		Skipped: func(ev profile.HookEvent, why string) {
			env.Say("task %s: hook event %s not taken: %s", t.ID, ev.Name, why)
		},
		LongLine: func(file string, off int64) {
			env.Say("task %s: the line at byte %d of %s is over %d bytes: skipped", t.ID, off, file, monitor.MaxLine)
		}}
	if !set.Detached {
		// Its caller waits for this process's exit.
		mon.PollFirst = monitor.ForegroundPoll
	}
	book := &taskbook.Book{ID: t.ID, Profile: prof, Set: set, Record: env.Record(), Log: env.Say,
		Tell:          func(ctx context.Context, t *state.Task) { Notify(ctx, env, t, set) },
		Git:           env.GitContext,
		Look:          env.changes().Look,
		StopForBudget: func(ctx context.Context, stops []budget.Stop) { stopForBudget(ctx, env, stops) }}
	wrote, liveWrote := make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(chs ...chan struct{}) func() {
		return func() {
			for _, ch := range chs {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}
	// What the agent prints, or a hook's line (usage so far), is what can
	// make its running turn's spend worth reading again.
	mon.Wrote, mon.HookWrote = signal(wrote, liveWrote), signal(liveWrote)
	s = &supervision{env: env, book: book, set: set, runCtx: ctx, wrote: wrote, Supervisor: &supervisor.Supervisor{
		ID: t.ID, Profile: prof, PaneID: t.Tmux.Pane, Mon: supervisor.Watch(mon), Book: book, AgentEnv: confine.AgentEnv(t.HomeCopies, filepath.Join(env.Store.TaskFile(state.FileHomeDir, t.ID), "home")), AgentPath: confine.AgentPath(t.HomeCopies), Wrote: liveWrote,
		Settings: supervisor.Settings{ReadyTimeout: set.ReadyTimeout, YesTrust: set.YesTrust, WaitInput: set.WaitInput,
			Detached: set.Detached, Approve: rules, Commit: set.Commit, UseHook: set.Start != nil && set.Start.UseHook}}}
	tc, err := env.PaneClient(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	s.TC = tc
	if t.Tmux.Host == "" {
		if len(t.Sandbox) > 0 {
			// A sandboxed agent reaches runner only through its door,
			// served while this supervisor runs.
			dctx, stopDoor := context.WithCancel(ctx)
			go serveDoor(dctx, env, t, nil)
			return s, stopDoor, nil
		}
		return s, func() {}, nil
	}
	if s.host, err = env.Hosts.Conn(ctx, t.Tmux.Host); err != nil {
		return nil, nil, err
	}
	runCtx, stop, ok := early.Take()
	if !ok {
		if runCtx, stop, err = startMirror(ctx, env, t); err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	if len(t.Sandbox) > 0 { // its door, here, forwarded there; it ends with the stream (runCtx)
		go serveDoor(runCtx, env, t, s.host)
	}
	s.runCtx = runCtx
	// The hook's events (from the host's runner binary) stream into the
	// task's usual events file.
	mon.TC, mon.Remote, mon.Died = tc, true, remote.DiedFile(env.Store, t.ID)
	s.AgentEnv = nil // the agent's files are on its host
	return s, stop, nil
}

// hostLost is the error a supervision ends with: one wrapping
// remote.ErrHostLost, marked supervisor.Orphaned, when the connection to
// its host was lost meanwhile (the stream stayed down, or a tmux call
// failed and the host does not answer now), else err.
func (s *supervision) hostLost(err error) error {
	if cause := context.Cause(s.runCtx); errors.Is(cause, remote.ErrHostLost) {
		return supervisor.Orphaned(cause)
	}
	var eo *supervisor.Ended
	if s.host == nil || err == nil || (errors.As(err, &eo) && eo.Status != state.StatusFailed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// The probe races the stream's own verdict (its lost-timer, bounded):
	// a probe waiting ssh's ConnectTimeout, after a tmux call that waited
	// the keepalive and one more connection, does not add to it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), 15*time.Second)
	defer cancel()
	probe := make(chan error, 1)
	go func() {
		_, perr := s.host.Run(ctx, "true")
		probe <- perr
	}()
	select {
	case perr := <-probe:
		if errors.Is(perr, hosts.ErrUnreachable) {
			return supervisor.Orphaned(remote.Lost(s.host.Host().Name, s.host.Host().Destination, clock.Now(), fmt.Errorf("%w: %s (while: %s)", remote.ErrHostLost, textutil.Headline(perr.Error(), 200), textutil.Headline(err.Error(), 120))))
		}
	case <-s.runCtx.Done():
		if cause := context.Cause(s.runCtx); errors.Is(cause, remote.ErrHostLost) {
			return supervisor.Orphaned(cause)
		}
	}
	return err
}

// unreachableAtStart records task t orphaned when its supervision could
// not start (err) because its host does not answer: not left active with
// no supervisor until a listing notices. Any other err is returned as it
// is.
func unreachableAtStart(ctx context.Context, env *Env, t *state.Task, err error) error {
	if t.Tmux.Host == "" || !errors.Is(err, hosts.ErrUnreachable) {
		return err
	}
	dest := "?"
	if all, herr := env.Store.Hosts(ctx); herr == nil && all[t.Tmux.Host] != nil {
		dest = all[t.Tmux.Host].Destination
	}
	why := remote.Lost(t.Tmux.Host, dest, clock.Now(), fmt.Errorf("%w: the supervisor could not start: %w", remote.ErrHostLost, err))
	_ = env.Record().SetStatus(context.WithoutCancel(ctx), t.ID, state.StatusOrphaned, why.Error()+" (runner resume "+t.ID+" reconnects)", nil)
	return supervisor.Orphaned(why)
}

// concludeAll concludes a turn and, while messages are waiting for the
// task when a turn ends done, delivers them as the next turn (each with the
// task's timeout) and concludes that one.
func (s *supervision) concludeAll(ctx context.Context, err error) error {
	cancel := func() {}
	defer func() { cancel() }()
	for {
		err = s.conclude(ctx, err)
		cancel()
		var lt *supervisor.LimitedTurn
		if errors.As(err, &lt) {
			if s.set.OnLimit != settings.OnLimitWait {
				return s.endLimited(ctx, lt)
			}
			err = s.hostLost(s.limitTurn(s.runCtx, lt, &cancel))
			continue
		}
		if !errors.Is(err, supervisor.ErrMoreMessages) {
			return err
		}
		var tctx context.Context
		tctx, cancel = s.StartClock(s.runCtx, s.set.TaskTimeout())
		err = s.hostLost(s.messageTurn(tctx))
	}
}

// limitWait is how long a supervision waits out the limit of lt: until
// the reset the CLI gave (and a margin), else the settings' LimitWait.
func (s *supervision) limitWait(lt *supervisor.LimitedTurn) time.Duration {
	if !lt.Reset.IsZero() {
		return max(clock.Until(lt.Reset), 0) + settings.LimitMargin
	}
	if s.set.LimitWait > 0 {
		return s.set.LimitWait
	}
	return settings.DefaultLimitWait
}

// limitTurn waits out a usage limit (--on-limit wait), the task recorded
// limited meanwhile, then delivers the settings' LimitContinue prompt as
// the next turn, on the task's clock (cancel stops it), and monitors it.
func (s *supervision) limitTurn(ctx context.Context, lt *supervisor.LimitedTurn, cancel *func()) error {
	if err := ctxtime.Sleep(ctx, s.limitWait(lt)); err != nil {
		return err
	}
	text := s.set.LimitContinue
	if strings.TrimSpace(text) == "" {
		text = settings.DefaultLimitContinue
	}
	if err := s.WaitPromptAfterLimit(ctx); err != nil {
		return err
	}
	s.env.Say("task %s: the usage limit is waited out; delivering %q", s.ID, text)
	tctx, c := s.StartClock(ctx, s.set.TaskTimeout())
	*cancel = c
	if err := s.Deliver(tctx, text, false); err != nil {
		return err
	}
	return s.MonitorTurn(tctx, time.Time{})
}

// endLimited ends a task whose turn ended on a usage limit (--on-limit
// fail): failed, with a reason starting fault.LimitReason, its queue
// dropped; the error exits 7.
func (s *supervision) endLimited(ctx context.Context, lt *supervisor.LimitedTurn) error {
	ctx = context.WithoutCancel(ctx)
	reason := fault.LimitReason + lt.Reason + " (--on-limit fail; go on after the reset: runner send " + s.ID + " continue)"
	var dropped []*state.Message
	err := s.env.Record().UpdateDurably(ctx, "task "+s.ID+": ended on a usage limit", func(st *state.State) error {
		t := st.Task(s.ID)
		if t == nil || t.Status.IsTerminal() {
			return nil
		}
		dropped = messaging.DropQueue(st, s.ID, s.env.Time(), "task "+s.ID+" ended on a usage limit before taking it", reconcile.LiveProcs{})
		s.book.LetGo(t)
		return t.SetStatus(state.StatusFailed, s.env.Time(), reason)
	})
	s.env.Record().JournalDropped(ctx, dropped)
	if t, terr := s.env.Record().Task(ctx, s.ID); terr == nil {
		s.env.Record().Journal(ctx, t, "status", string(state.StatusFailed)+": "+reason)
		Notify(ctx, s.env, t, s.set)
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("task %s %s: %s: %w", s.ID, state.StatusFailed, reason, fault.ErrLimited)
}

// supervision is one supervisor process's hold on a task: the turn
// driver (package supervisor) plus what runs around its turns here: the
// task's clock, its host, the record of each turn's end, the commit, the
// notification and the message queue.
type supervision struct {
	*supervisor.Supervisor
	env  *Env
	book *taskbook.Book // the Supervisor's Book, as the supervisor.Ender of its turns
	set  settings.Run
	// runCtx is the supervision's context: for a task on a host, it ends
	// (cause remote.ErrHostLost) when the connection stays lost.
	runCtx context.Context
	host   *hosts.Conn // the task's host; nil for this machine
	// timeout is the task's --timeout, counted from the delivery.
	timeout time.Duration
	// wrote is signalled (never blocking) when the agent's pane prints,
	// as the monitor sees it: what wakes the change tracking.
	wrote chan struct{}
	// stopTrack ends the change tracking (trackWhileWorking).
	stopTrack func()
	// started is the start finished beside the ready wait (given.started;
	// nil: the task was recorded starting before its supervision).
	started *launchpkg.Started
}

func (s *supervision) run(ctx context.Context, t *state.Task) error {
	env := s.env
	switch t.Status {
	case state.StatusQueued, state.StatusStarting:
		// A first turn follows at once: its delivery records the ready
		// status with the turn it counts, in one write.
		s.FoldReady = t.Delivery == ""
		if err := s.waitReady(ctx); err != nil {
			return err
		}
		t, _ = env.Record().Task(ctx, s.ID)
		fallthrough
	case state.StatusReady:
		if t.Delivery != "" {
			// Not the first turn: `runner msg` woke an idle agent.
			return s.messageTurn(ctx)
		}
		text, err := env.Store.TaskText(t)
		if err != nil {
			return err
		}
		// Its end is concluded here, after the delivery: a quick turn's
		// delivery is recorded by its end's write.
		s.FoldRunning = true
		if err := s.Deliver(ctx, text, true); err != nil {
			return err
		}
		// The task's time counts from here.
		var cancel context.CancelFunc
		ctx, cancel = s.StartClock(ctx, s.timeout)
		defer cancel()
	case state.StatusOrphaned:
		if t.Delivery == "" {
			c := *t
			c.Status = state.StatusStarting
			return s.run(ctx, &c)
		}
		_ = env.Record().SetStatus(ctx, s.ID, state.StatusRunning, "resumed by supervisor "+strconv.Itoa(os.Getpid()), nil)
	}
	return s.MonitorTurn(ctx, time.Time{})
}
