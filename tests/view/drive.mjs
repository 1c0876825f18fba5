// Drives plx view in a real headless Chromium (playwright-core with the system browser) and
// prints what the page shows as JSON: tracks, message lines, a clicked region, the zoom, the
// profile's top row, the matrix cells, the answer without the token. Screenshots go to OUTDIR.
// Usage: node drive.mjs URL CHROMIUM OUTDIR

import { join } from "node:path";
import { launch } from "./browser.mjs";

const [url, executablePath, outdir] = process.argv.slice(2);
const { ctx, close } = await launch("chromium", executablePath);
const out = {};
try {
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const settled = async () => {
    await page.waitForFunction(() => {
      const c = document.getElementById("timeline");
      return c && c.dataset.loading === "0" && c.dataset.lines !== undefined;
    }, null, { timeout: 30000 });
    await page.waitForTimeout(100);
    await page.waitForFunction(() => document.getElementById("timeline").dataset.loading === "0");
  };
  await page.goto(url);
  await settled();
  const tl = () => page.evaluate(() => {
    const d = document.getElementById("timeline").dataset;
    return { tracks: +d.tracks, lines: +d.lines, t0: +d.t0, t1: +d.t1 };
  });
  out.full = await tl();
  await page.screenshot({ path: join(outdir, "timeline.png") });

  // IPS-2's views: the physical grouping, then the logical one chosen in the page (and in its URL)
  const grouping = () => page.evaluate(() => ({
    mode: document.getElementById("timeline").dataset.grouping,
    tree: window.plxView.groupTree,
    url_view: new URLSearchParams(location.search).get("view"),
    tracks: +document.getElementById("timeline").dataset.tracks,
  }));
  out.physical = await grouping();
  await page.selectOption("#grouping", "logical");
  await settled();
  out.logical = await grouping();
  await page.screenshot({ path: join(outdir, "timeline-logical.png") });
  await page.selectOption("#grouping", "physical");
  await settled();
  out.physical_again = await grouping();
  // a page opened with view=logical in its URL starts in the logical view
  const second = await ctx.newPage();
  await second.goto(url + "&view=logical");
  await second.waitForFunction(() => document.getElementById("timeline")?.dataset.loading === "0", null, { timeout: 30000 });
  out.logical_from_url = await second.evaluate(() => ({
    mode: document.getElementById("timeline").dataset.grouping,
    tree: window.plxView.groupTree,
    selected: document.getElementById("grouping").value,
  }));
  await second.close();

  // click the widest region drawn below the outermost level
  const target = await page.evaluate(() => {
    const v = window.plxView;
    const d = v.drawn.filter((r) => r.depth >= 1).sort((a, b) => b.w - a.w)[0];
    return d;
  });
  const box = await page.locator("#timeline").boundingBox();
  await page.mouse.click(box.x + target.x + Math.min(target.w, 400) / 2, box.y + target.y + target.h / 2);
  await page.waitForSelector("#detail-name");
  out.clicked = {
    target,
    name: await page.textContent("#detail-name"),
    duration: Number(await page.getAttribute("#detail-duration", "data-ns")),
    path: await page.textContent("#detail-path"),
    // the counters table of the details: [event, the function's count on the thread, the thread's total]
    counters: await page.evaluate(() => [...document.querySelectorAll("#detail-counters tr[data-counter]")]
      .map((tr) => [tr.dataset.counter, tr.dataset.function === undefined ? null : +tr.dataset.function,
        tr.dataset.thread === undefined ? null : +tr.dataset.thread])),
    track: await page.evaluate((t) => window.plxView.meta.tracks[t.track], target),
  };
  out.expected_click = await page.evaluate(async (t) => {
    const q = new URLSearchParams(location.search);
    const c = document.getElementById("timeline").dataset;
    const w = await (await fetch(`api/window?token=${q.get("token")}&t0=${c.t0}&t1=${c.t1}&width=${document.getElementById("timeline").clientWidth - 170}&max=5000`)).json();
    const meta = await (await fetch(`api/meta?token=${q.get("token")}`)).json();
    const r = w.tracks[t.track][t.depth].full.find((f) => f[3] === t.index);
    return { name: meta.regions[r[2]][0], duration: r[1] - r[0] };
  }, target);

  // critical path on
  await page.click("#critical-path");
  await page.waitForFunction(() => +document.getElementById("timeline").dataset.critical > 0, null, { timeout: 60000 });
  out.critical_segments = await page.evaluate(() => +document.getElementById("timeline").dataset.critical);
  await page.screenshot({ path: join(outdir, "timeline-critical-path.png") });

  // zoom in three times with W
  await page.focus("#timeline");
  for (let i = 0; i < 3; i++) await page.keyboard.press("w");
  await settled();
  out.zoomed = await tl();
  await page.screenshot({ path: join(outdir, "timeline-zoomed.png") });

  // profile: the total's top row, then the first thread's
  await page.click("#tab-profiles");
  await page.waitForSelector("#profile-table tr[data-name]");
  const top = () => page.evaluate(() => {
    const r = document.querySelector("#profile-table tr[data-name]");
    return { name: r.dataset.name, calls: +r.dataset.calls, exclusive: +r.dataset.exclusive };
  });
  out.profile_total = await top();
  await page.screenshot({ path: join(outdir, "profiles.png"), fullPage: true });
  await page.selectOption("#profile-table-select", "1");
  out.profile_first = await top();
  // the first thread's counter columns: the whole-run totals row and every function's cells
  out.profile_counters = await page.evaluate(() => {
    const cells = (tr) => Object.fromEntries([...tr.querySelectorAll("td[data-counter]")]
      .filter((td) => td.dataset.value !== undefined).map((td) => [td.dataset.counter, +td.dataset.value]));
    const thread = document.querySelector("#profile-thread-counters");
    const functions = {};
    for (const tr of document.querySelectorAll("#profile-table tr[data-name]")) {
      const c = cells(tr);
      if (Object.keys(c).length) functions[tr.dataset.name] = c;
    }
    return {
      heads: [...document.querySelectorAll("#profile-table th")].map((th) => th.textContent.replace(/ [▼▲]$/, "")),
      label: document.querySelector("#profile-table-select").selectedOptions[0].textContent,
      thread: thread ? cells(thread) : null,
      functions,
    };
  });

  await page.click("#tab-communication");
  await page.waitForSelector("#matrix td[data-from]");
  out.matrix = await page.evaluate(() => [...document.querySelectorAll("#matrix td[data-from]")]
    .map((td) => [+td.dataset.from, +td.dataset.to, +td.dataset.messages, +td.dataset.bytes]));
  await page.screenshot({ path: join(outdir, "communication.png"), fullPage: true });

  await page.click("#tab-displays");
  await page.waitForSelector("#utilization", { timeout: 60000 });
  await page.screenshot({ path: join(outdir, "displays.png"), fullPage: true });

  out.no_token = await page.evaluate(async () => (await fetch("api/meta")).status);
  out.errors = errors;
} finally {
  await close();
}
console.log(JSON.stringify(out));
