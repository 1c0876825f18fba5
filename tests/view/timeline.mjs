// Drives plx view's timeline in a real headless Chromium (playwright-core, real clicks and keys)
// and prints what the page showed as JSON, beside the server's answers for the same windows:
// the overlays' level of detail at three zoom levels, the toggles and the state kept in the URL,
// the overview, collapse and filter, the keyboard help, tooltips, search, double-click, the
// selection's flame graph, the measurement lane and a matrix cell's messages. Screenshots go to
// OUTDIR. Usage: node timeline.mjs URL CHROMIUM OUTDIR life|many

import { join } from "node:path";
import { launch } from "./browser.mjs";

const [url, executablePath, outdir, mode] = process.argv.slice(2);
const { ctx, close } = await launch("timeline", executablePath);
const out = { errors: [] };
const page = ctx.pages()[0] ?? (await ctx.newPage());
page.on("pageerror", (e) => out.errors.push(String(e)));

const settled = async () => {
  await page.waitForFunction(() => {
    const c = document.getElementById("timeline");
    return c && c.dataset.loading === "0" && c.dataset.lines !== undefined;
  }, null, { timeout: 60000 });
  await page.waitForTimeout(150);
  await page.waitForFunction(() => document.getElementById("timeline").dataset.loading === "0");
};
const data = () => page.evaluate(() => {
  const d = { ...document.getElementById("timeline").dataset };
  const o = document.getElementById("overview");
  return { ...d, ov_x0: +o.dataset.x0, ov_x1: +o.dataset.x1, ov_width: o.clientWidth,
    width: document.getElementById("timeline").clientWidth, url: location.search };
});
// the server's window answer for what the page shows now
const api = (path) => page.evaluate(async (path) => {
  const token = new URLSearchParams(location.search).get("token");
  return (await fetch(`${path}${path.includes("?") ? "&" : "?"}token=${token}`)).json();
}, path);
const windowNow = async () => {
  const d = await data();
  return api(`api/window?t0=${d.t0}&t1=${d.t1}&width=${d.width - 170}&max=5000`);
};
const setWindow = async (t0, t1) => {
  await page.evaluate(([a, b]) => window.plxView.setWindow(a, b), [t0, t1]);
  await settled();
};
const bundles = () => page.evaluate(() => {
  const b = window.plxView.bundles();
  const f = (list) => list.map((x) => ({ x0: x.x0, y0: x.y0, x1: x.x1, y1: x.y1, count: x.count, from: x.from.size, to: x.to.size }));
  // the lines gathered into them: their ends in canvas px
  const ends = (list) => list.map((l) => [l[0], l[1], l[2], l[3]]);
  return { messages: f(b.messages), handoffs: f(b.handoffs), transfers: f(b.transfers),
    lines: { messages: ends(b.lines.messages), handoffs: ends(b.lines.handoffs) } };
});
const box = async () => page.locator("#timeline").boundingBox();

// the external series (plx import, plx run --monitor): their rows, and the value a tooltip gives
// just after each of the CSV's sample times
async function seriesFlow() {
  await page.goto(url);
  await settled();
  await page.waitForFunction(() => document.getElementById("timeline").dataset.series !== undefined, null, { timeout: 60000 });
  await settled();
  out.series_api = await api("api/series");
  out.series_rows = await page.evaluate(() => window.plxView.seriesRows());
  out.headers = await page.evaluate(() => window.plxView.headers());
  out.page = await data();
  await page.screenshot({ path: join(outdir, "series-whole.png") });
  await setWindow(-100000, 800000);
  out.zoomed = await data();
  await page.screenshot({ path: join(outdir, "series-zoomed.png") });
  const b = await box();
  const plot = out.zoomed.width - 170;
  out.hovers = [];
  const rows = await page.evaluate(() => window.plxView.seriesRows());
  for (const name of ["power", "fan"]) {
    const row = rows.find((r) => r.name === name);
    for (const t of [0, 200000, 400000, 600000]) {
      const at = t + 50000;
      const x = 170 + ((at - +out.zoomed.t0) / (+out.zoomed.t1 - +out.zoomed.t0)) * plot;
      await page.mouse.move(b.x + x, b.y + row.y + row.h / 2);
      await page.waitForTimeout(50);
      out.hovers.push({ name, t, ...(await page.evaluate(() => {
        const tip = document.getElementById("tooltip");
        return { kind: tip.dataset.kind, value: tip.dataset.value === "" ? null : +tip.dataset.value, text: tip.textContent };
      })) });
    }
  }
}

async function mainFlow() {
  await page.goto(url);
  await settled();
  const meta = await api("api/meta");
  out.meta_tracks = meta.tracks.length;
  out.span = meta.span;
  out.regions = meta.regions.map((r) => r[0]);
  out.thread_names = meta.tracks.map((t) => t.thread_name);
  out.tracks = meta.tracks.map((t) => ({ pid: t.pid, thread: t.thread }));

  // three zoom levels: the whole run, the span of the messages (or hand-offs), one of them
  const levels = [];
  const whole = await windowNow();
  levels.push({ name: "whole", page: await data(), api: whole, bundles: await bundles() });
  await page.screenshot({ path: join(outdir, `${mode}-whole.png`) });
  const spans = [...whole.messages.lines.map((l) => [l[0], l[1]]), ...whole.handoffs.map((h) => [h[0], h[1]])];
  const lo = Math.min(...spans.map((s) => s[0]));
  const hi = Math.max(...spans.map((s) => s[1]));
  await setWindow(lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05);
  levels.push({ name: "mid", page: await data(), api: await windowNow(), bundles: await bundles() });
  await page.screenshot({ path: join(outdir, `${mode}-mid.png`) });
  const one = spans[Math.floor(spans.length / 2)];
  const pad = Math.max((one[1] - one[0]) * 0.5, 2000);
  await setWindow(one[0] - pad, one[1] + pad);
  levels.push({ name: "deep", page: await data(), api: await windowNow(), bundles: await bundles() });
  await page.screenshot({ path: join(outdir, `${mode}-deep.png`) });
  out.levels = levels;

  // a bundle's tooltip at the deep level
  // (a point of one on the plot, more than 4 px from every other line: the pointer lands on
  // whole pixels)
  const all = [...levels[2].bundles.messages, ...levels[2].bundles.handoffs, ...levels[2].bundles.transfers];
  const dist = (l, px, py) => {
    const dx = l.x1 - l.x0, dy = l.y1 - l.y0, len = dx * dx + dy * dy;
    const u = len === 0 ? 0 : Math.max(0, Math.min(1, ((px - l.x0) * dx + (py - l.y0) * dy) / len));
    return Math.hypot(l.x0 + u * dx - px, l.y0 + u * dy - py);
  };
  let deepB = null;
  let at = null;
  for (const x of [...levels[2].bundles.messages, ...levels[2].bundles.handoffs]) {
    for (let k = 1; k < 20 && !at; k++) {
      const px = Math.round(x.x0 + (x.x1 - x.x0) * k / 20);
      const py = Math.round(x.y0 + (x.y1 - x.y0) * k / 20);
      if (px > 180 && px < levels[2].page.width - 10 && py > 45 && dist(x, px, py) < 1 &&
          all.every((o) => o === x || dist(o, px, py) > 4)) at = [px, py];
    }
    if (at) { deepB = x; break; }
  }
  if (deepB) {
    const b = await box();
    await page.mouse.move(b.x + at[0], b.y + at[1]);
    await page.waitForTimeout(100);
    out.bundle_tip = await page.evaluate(() => {
      const t = document.getElementById("tooltip");
      return { kind: t.dataset.kind, count: t.dataset.count, text: t.textContent, shown: t.style.display };
    });
    out.bundle_tip.expected = deepB.count;
  }

  // the whole run again with the critical path: its bands and transfers against /api/critpath
  await page.click("#reset-zoom");
  await settled();
  await page.click("#critical-path");
  await page.waitForFunction(() => +document.getElementById("timeline").dataset.critical > 0, null, { timeout: 60000 });
  out.crit = { page: await data(), api: await api("api/critpath") };
  out.crit.api.profile = undefined;
  await page.screenshot({ path: join(outdir, `${mode}-critical-path.png`) });
  await page.click("#critical-path");

  // overlays off: kept in the URL, and a page opened at that URL starts so
  await page.click("#toggle-messages");
  await page.click("#toggle-handoffs");
  await settled();
  out.off = await data();
  await page.goto(page.url());
  await settled();
  out.off_reloaded = { ...(await data()),
    messages_on: await page.evaluate(() => document.getElementById("toggle-messages").classList.contains("on")),
    handoffs_on: await page.evaluate(() => document.getElementById("toggle-handoffs").classList.contains("on")) };
  await page.click("#toggle-messages");
  await page.click("#toggle-handoffs");
  await settled();

  // the overview: the window on it, a click there centres the window
  await setWindow(out.span * 0.5, out.span * 0.6);
  out.overview_zoomed = await data();
  const ov = await page.locator("#overview").boundingBox();
  await page.mouse.click(ov.x + ov.width * 0.25, ov.y + ov.height / 2);
  await settled();
  out.overview_clicked = await data();

  // the window, a selection and a search kept in the URL: a page opened there shows them
  await page.click("#reset-zoom");
  await settled();

  // collapse: a click on a group's header (a process, or a thread group), then the host
  const headers = () => page.evaluate(() => window.plxView.headers());
  out.headers = await headers();
  const target = out.headers.find((h) => h.key.startsWith(mode === "many" ? "g:" : "p:"));
  let b = await box();
  await page.mouse.click(b.x + 20, b.y + target.y + 9);
  await settled();
  out.collapsed = { page: await data(), target, bundles: await bundles() };
  await page.screenshot({ path: join(outdir, `${mode}-collapsed.png`) });
  await page.goto(page.url());
  await settled();
  out.collapsed_reloaded = await data();
  const again = (await headers()).find((h) => h.key === target.key);
  b = await box();
  await page.mouse.click(b.x + 20, b.y + again.y + 9);
  await settled();
  out.expanded = await data();
  const host = (await headers()).find((h) => h.key.startsWith("h:"));
  await page.mouse.click(b.x + 20, b.y + host.y + 9);
  await settled();
  out.host_collapsed = { page: await data(), bundles: await bundles() };
  await page.mouse.click(b.x + 20, b.y + host.y + 9);
  await settled();

  // the track filter
  const word = mode === "many" ? "work#1" : "life_worker";
  await page.fill("#track-filter", word);
  await settled();
  out.filter = { word, page: await data(), tree: await page.evaluate(() => window.plxView.groupTree) };
  await page.fill("#track-filter", "");
  await settled();

  // keyboard help
  await page.focus("#timeline");
  await page.keyboard.press("?");
  out.help = await page.evaluate(() => {
    const h = document.getElementById("help");
    return { shown: h.dataset.shown, visible: getComputedStyle(h).display !== "none", rows: h.querySelectorAll("tr").length };
  });
  await page.keyboard.press("Escape");
  out.help_closed = await page.evaluate(() => getComputedStyle(document.getElementById("help")).display !== "none");

  // shift-wheel scrolls the tracks under the axis, the window unchanged
  b = await box();
  const scrolled = async () => page.evaluate(() => ({ top: document.getElementById("timeline-scroll").scrollTop,
    header: window.plxView.headers()[0]?.y ?? null, box: document.getElementById("timeline").getBoundingClientRect().top }));
  const before = { ...(await scrolled()), ...(await data()) };
  await page.mouse.move(b.x + 600, b.y + 300);
  await page.keyboard.down("Shift");
  await page.mouse.wheel(0, 120);
  await page.keyboard.up("Shift");
  await page.waitForTimeout(150);
  out.scroll = { before, after: { ...(await scrolled()), ...(await data()) } };
  await page.evaluate(() => { document.getElementById("timeline-scroll").scrollTop = 0; });
  await page.waitForTimeout(100);

  // a tooltip on the widest region drawn below the outermost level, then a double-click on it
  // (below the outermost level when one is drawn at full detail there)
  const region = await page.evaluate(() => window.plxView.drawn.filter((r) => !r.measure)
    .sort((a, b) => Math.min(b.depth, 1) - Math.min(a.depth, 1) || b.w - a.w)[0]);
  b = await box();
  // a point of the region away from every line drawn over it
  const free = await page.evaluate((r) => {
    const b = window.plxView.bundles();
    const lines = [...b.messages, ...b.handoffs, ...b.transfers];
    const far = (px, py) => lines.every((l) => {
      const dx = l.x1 - l.x0, dy = l.y1 - l.y0, len = dx * dx + dy * dy;
      const u = len === 0 ? 0 : Math.max(0, Math.min(1, ((px - l.x0) * dx + (py - l.y0) * dy) / len));
      return Math.hypot(l.x0 + u * dx - px, l.y0 + u * dy - py) > 4;
    });
    const y = r.y + r.h / 2;
    for (let x = Math.max(r.x, 172) + 2; x < r.x + r.w - 1; x += 3) if (far(x, y)) return x;
    return r.x + Math.min(r.w, 300) / 2;
  }, region);
  const rx = b.x + free;
  const ry = b.y + region.y + region.h / 2;
  await page.mouse.move(rx, ry);
  await page.waitForTimeout(100);
  out.tooltip = { region, name: meta.regions[region.region][0],
    ...(await page.evaluate(() => {
      const t = document.getElementById("tooltip");
      return { kind: t.dataset.kind, ns: +t.dataset.ns, text: t.textContent, shown: t.style.display };
    })) };
  await page.mouse.dblclick(rx, ry);
  await settled();
  out.dblclick = await data();

  // search: every instance, stepped through
  const find = async (name) => {
    await page.fill("#search", name);
    await page.press("#search", "Enter");
    await page.waitForFunction((n) => document.getElementById("search").dataset.found !== undefined &&
      new URLSearchParams(location.search).get("find") === n, name, { timeout: 60000 });
    await settled();
    const r = { name, found: +(await page.getAttribute("#search", "data-found")),
      current: +(await page.getAttribute("#search", "data-current")), page: await data(),
      label: await page.textContent("#search-count") };
    await page.press("#search", "Enter");
    await settled();
    r.next = { current: +(await page.getAttribute("#search", "data-current")), page: await data(),
      label: await page.textContent("#search-count") };
    r.api = await api(`api/search?name=${encodeURIComponent(name)}&max=1000000`);
    r.current_outline = await page.evaluate((i) => ({ y: +document.getElementById("timeline").dataset.foundY,
      row: window.plxView.trackRow(i[0]), depth: i[1] }), r.next.current >= 0 ? sortedSecond(r) : [0, 0]);
    r.runtime_drawn = await page.evaluate(() => window.plxView.drawn
      .filter((d) => window.plxView.meta.regions[d.region][1] === "runtime")
      .map((d) => ({ measure: d.measure, y: d.y, depth: d.depth, track: d.track, row: window.plxView.trackRow(d.track) })));
    r.track_rows = await page.evaluate(() => Object.fromEntries(window.plxView.drawn.filter((d) => !d.measure)
      .map((d) => [`${d.track}:${d.depth}`, d.y])));
    return r;
  };
  // the instance stepped to second: the page orders them by start, then track
  function sortedSecond(r) {
    return [...r.api.instances].sort((x, y) => x[3] - y[3] || x[0] - y[0])[1];
  }
  out.search = [];
  for (const name of mode === "many" ? ["work", "plx_symbols"] : ["update_rows", "MPI_Isend", "plx_symbols"]) {
    out.search.push(await find(name));
  }
  await page.screenshot({ path: join(outdir, `${mode}-search.png`) });
  await page.fill("#search", "");
  await page.press("#search", "Enter");

  // a selection (shift-drag over the middle fifth of the messages' span, every track): its
  // flame graph against the interval's profile; a click on a node zooms into it
  await setWindow(lo, hi);
  b = await box();
  const plot = b.width - 170;
  await page.keyboard.down("Shift");
  await page.mouse.move(b.x + 170 + plot * 0.4, b.y + 60);
  await page.mouse.down();
  await page.mouse.move(b.x + 170 + plot * 0.5, b.y + 62, { steps: 4 });
  await page.mouse.move(b.x + 170 + plot * 0.6, b.y + 64, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForFunction(() => document.getElementById("flame-graph")?.dataset.nodes !== undefined, null, { timeout: 60000 });
  const sel = new URLSearchParams((await data()).url).get("sel").split(",").map(Number);
  out.selection = { sel, flame: await page.evaluate(() => window.plxView.flameData()),
    stats: await api(`api/stats?t0=${Math.max(0, sel[0])}&t1=${sel[1]}`) };
  const node = await page.evaluate(() => {
    const c = document.getElementById("flame-graph");
    const v = window.plxView;
    // the widest box below the top bar
    return { boxes: +c.dataset.boxes, ...v.flame.boxes.slice(1).sort((a, b) => b.w - a.w)[0] };
  });
  const fb = await page.locator("#flame-graph").boundingBox();
  await page.mouse.click(fb.x + node.x + node.w / 2, fb.y + node.y + 8);
  out.flame_click = { node, focus: +(await page.getAttribute("#flame-graph", "data-focus")) };
  await page.screenshot({ path: join(outdir, `${mode}-selection.png`) });
  await page.goto(page.url());
  await settled();
  out.selection_reloaded = await data();

  // a cell of the communication matrix: its messages on the timeline
  if (mode === "life") {
    await page.click("#tab-communication");
    await page.waitForSelector("#matrix td[data-from]");
    const cell = await page.evaluate(() => {
      const td = [...document.querySelectorAll("#matrix td[data-from]")].find((t) => +t.dataset.messages > 0);
      return { from: +td.dataset.from, to: +td.dataset.to, messages: +td.dataset.messages };
    });
    await page.click(`#matrix td[data-from="${cell.from}"][data-to="${cell.to}"]`);
    await settled();
    out.cell = { cell, page: await data(), view: await page.evaluate(() => document.body.dataset.view) };
    await page.screenshot({ path: join(outdir, `${mode}-matrix-cell.png`) });

    // the counters: a row per thread and event, each counted call's value; a tooltip on one
    await page.waitForFunction(() => document.getElementById("timeline").dataset.counterTracks !== undefined, null, { timeout: 120000 });
    await settled();
    out.counters = { page: await data(), rows: await page.evaluate(() => window.plxView.counterRows()),
      api: await api("api/counters") };
    const rows = out.counters.rows;
    const row = rows.find((r) => r.event === "page-faults" && r.calls > 0) ?? rows[0];
    const calls = out.counters.api.tracks.find((t) => t.track === row.track);
    const e = calls.events.indexOf(row.event);
    const call = calls.calls.filter((c) => c[3][e] !== null && c[3][e] !== undefined).sort((a, b) => (b[1] - b[0]) - (a[1] - a[0]))[0];
    const pad = (call[1] - call[0]) * 0.25;
    await setWindow(call[0] - pad, call[1] + pad);
    const r2 = (await page.evaluate(() => window.plxView.counterRows())).find((r) => r.track === row.track && r.event === row.event);
    const cb = await box();
    await page.mouse.move(cb.x + 170 + (cb.width - 170) / 2, cb.y + r2.y + r2.h / 2);
    await page.waitForTimeout(100);
    out.counter_tip = { call, event: row.event, e, ...(await page.evaluate(() => {
      const t = document.getElementById("tooltip");
      return { kind: t.dataset.kind, value: t.dataset.value === "" ? null : +t.dataset.value, text: t.textContent };
    })) };
    await page.screenshot({ path: join(outdir, `${mode}-counters.png`) });
  }
}

try {
  if (mode === "series") await seriesFlow(); else await mainFlow();
} finally {
  await close();
}
console.log(JSON.stringify(out));
