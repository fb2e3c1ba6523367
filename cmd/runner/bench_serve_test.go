package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// BenchmarkServePageFirstPaint measures runner serve's page in headless
// Chromium (scripts/bench-page.sh runs it; only `go test -bench` does):
// a real server on 127.0.0.1 over RUNNER_BENCH_TASKS finished tasks
// (default 20), the page loaded once per iteration after a login, and per
// load, from the navigation's start (performance.timeOrigin): the first
// contentful paint, the task list rendered with every task, and the event
// stream open ("live"). Medians in milliseconds, as metrics; nothing is
// asserted on them.
func BenchmarkServePageFirstPaint(b *testing.B) {
	chromiumPath(b)
	rig := startServeRig(b)
	n := 20
	if v, err := strconv.Atoi(os.Getenv("RUNNER_BENCH_TASKS")); err == nil && v > 0 {
		n = v
	}
	for range n {
		rig.run("dispatch", rig.proj, "--detach", "--agent", "shell", "--awareness", "off", "true")
	}
	rig.run("wait", "--all", "--timeout", "5m")
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	bctx := newBrowser(b, ctx)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
	}
	rendered := fmt.Sprintf(`window.__listAt !== undefined && window.__liveAt !== undefined && document.querySelectorAll("#tasks tbody tr").length === %d`, n)
	if err := chromedp.Do(bctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(timePageScript, n)})
			return err
		}),
		chromedp.Navigate(rig.link(b)),
		poll(rendered),
	); err != nil {
		b.Fatalf("the page after the login link: %v", err)
	}
	var fcp, list, live []float64
	for b.Loop() {
		if err := chromedp.Do(bctx, chromedp.Navigate("http://"+rig.addr+"/"), poll(rendered)); err != nil {
			b.Fatalf("loading the page: %v", err)
		}
		got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify({
			fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
			list: window.__listAt, live: window.__liveAt})`))
		if err != nil {
			b.Fatal(err)
		}
		var m struct{ FCP, List, Live float64 }
		if err := json.Unmarshal([]byte(got), &m); err != nil || m.FCP == 0 {
			b.Fatalf("the page's times %q: %v", got, err)
		}
		fcp, list, live = append(fcp, m.FCP), append(list, m.List), append(live, m.Live)
	}
	b.ReportMetric(medianMs(fcp), "fcp-ms")
	b.ReportMetric(medianMs(list), "list-ms")
	b.ReportMetric(medianMs(live), "live-ms")
	b.Logf("%d tasks, %d loads: first contentful paint %v ms, list rendered %v ms, live %v ms", n, len(fcp), fcp, list, live)
}

// timePageScript, run in each new document before its scripts, records
// when the task list first holds %d rows (window.__listAt) and when the
// event stream first shows live (window.__liveAt), in ms from the
// navigation's start.
const timePageScript = `(() => {
  const want = %d;
  const mo = new MutationObserver(() => {
    if (window.__listAt === undefined && document.querySelectorAll("#tasks tbody tr").length >= want) window.__listAt = performance.now();
    const c = document.getElementById("conn");
    if (window.__liveAt === undefined && c && c.textContent === "live") window.__liveAt = performance.now();
    if (window.__listAt !== undefined && window.__liveAt !== undefined) mo.disconnect();
  });
  mo.observe(document, { childList: true, subtree: true, characterData: true });
})();`

func medianMs(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
