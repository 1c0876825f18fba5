// Drives plx view's call-stack samples in a real headless Chromium (playwright-core, real mouse):
// the samples' strip along the bottom of each track (each stamped sample at its time) at the whole
// run and two closer windows, and a hover on a column of samples taken in alpha; then a
// shift-drag over the whole run selects it, the selected threads' sampled flame graph of the
// samples taken in the selection appears beside the interval's; a hover on its widest sampled node gives the node's call path, samples
// and estimated time. Prints what the page showed as JSON with the server's /api/samples; a
// screenshot goes to OUTDIR. Usage: node samples.mjs URL CHROMIUM OUTDIR

import { join } from "node:path";
import { launch } from "./browser.mjs";

const [url, executablePath, outdir] = process.argv.slice(2);
const { ctx, close } = await launch("samples", executablePath);
const out = { errors: [] };
const page = ctx.pages()[0] ?? (await ctx.newPage());
page.on("pageerror", (e) => out.errors.push(String(e)));
const api = (path) => page.evaluate(async (path) => {
  const token = new URLSearchParams(location.search).get("token");
  return (await fetch(`${path}${path.includes("?") ? "&" : "?"}token=${token}`)).json();
}, path);

try {
  await page.goto(url);
  await page.waitForFunction(() => {
    const c = document.getElementById("timeline");
    return c && c.dataset.loading === "0" && c.dataset.lines !== undefined;
  }, null, { timeout: 60000 });
  await page.waitForFunction(() => document.getElementById("timeline").dataset.samplesLoading === "0", null, { timeout: 60000 });
  const b = await page.locator("#timeline").boundingBox();
  const row = await page.evaluate(() => window.plxView.trackRow(0));
  out.lane_page = await page.evaluate(() => ({ ...document.getElementById("timeline").dataset }));
  out.lane_api = await api(`api/sample_lane?t0=0&t1=${out.lane_page.t1}&width=1000`);
  out.solve = await api("api/search?name=solve");
  // a hover on track 0's strip in the middle of three columns whose samples were mostly taken in
  // alpha => spin (a column is about a pixel wide: the hover lands on one of the three)
  const spot = await page.evaluate(() => {
    const v = window.plxView;
    const a = v.sampleLane.answer;
    const t = a.tracks.find((x) => x.track === 0);
    const inAlpha = (c) => c && c[2][0] && t.frames[c[2][0][0]][1].endsWith("alpha => spin");
    const by = new Map(t.columns.map((c) => [c[0], c]));
    const col = t.columns.find((c) => inAlpha(c) && inAlpha(by.get(c[0] - 1)) && inAlpha(by.get(c[0] + 1)));
    const colT = (a.t1 - a.t0) / a.width;
    return { px: v.x(a.t0 + (col[0] + 0.5) * colT), columns: [by.get(col[0] - 1), col, by.get(col[0] + 1)] };
  });
  out.lane_spot = spot;
  await page.mouse.move(b.x + spot.px, b.y + row.y + row.h - 2);
  await page.waitForTimeout(100);
  out.lane_tip = await page.evaluate(() => {
    const t = document.getElementById("tooltip");
    return { kind: t.dataset.kind, value: t.dataset.value === "" ? null : +t.dataset.value, text: t.textContent };
  });
  await page.screenshot({ path: join(outdir, "samples-lane-whole.png") });
  // two closer zoom levels: the strip's columns and their sum over each window
  const span = +out.lane_page.t1;
  out.lane_zooms = [];
  for (const [f0, f1, name] of [[0.2, 0.3, "samples-lane-zoomed.png"], [0.25, 0.251, "samples-lane-close.png"]]) {
    await page.evaluate(([a, c]) => window.plxView.setWindow(a, c), [span * f0, span * f1]);
    await page.waitForFunction(() => {
      const c = document.getElementById("timeline");
      return c.dataset.loading === "0" && c.dataset.samplesLoading === "0";
    }, null, { timeout: 60000 });
    await page.waitForTimeout(200);
    out.lane_zooms.push(await page.evaluate(() => {
      const a = window.plxView.sampleLane.answer;
      return { ...document.getElementById("timeline").dataset, lane_t0: a.t0, lane_t1: a.t1,
               in_window: a.tracks.map((t) => [t.track, t.in_window]) };
    }));
    await page.screenshot({ path: join(outdir, name) });
  }
  await page.evaluate((s) => window.plxView.setWindow(0, s), span);
  await page.waitForFunction(() => document.getElementById("timeline").dataset.samplesLoading === "0", null, { timeout: 60000 });
  // shift-drag across the whole plot inside the first track: every track, the whole window
  const y = b.y + row.y + 6;
  await page.keyboard.down("Shift");
  await page.mouse.move(b.x + 171, y);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, y, { steps: 4 });
  await page.mouse.move(b.x + b.width - 2, y, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForFunction(() => +(document.getElementById("samples")?.dataset.samples ?? 0) > 0, null, { timeout: 60000 });
  await page.waitForTimeout(100);
  out.shown = await page.evaluate(() => {
    const v = window.plxView;
    const f = v.samplesData();
    const path = (k) => { const p = []; for (let n = k; n >= 0; n = f.nodes[n][0]) p.unshift(f.names[n]); return p.join(" => "); };
    return {
      samples: +document.getElementById("samples").dataset.samples,
      title: document.querySelector("#samples h3").textContent,
      nodes: f.nodes.map((n, k) => ({ path: path(k), ns: n[2], samples: n[3], sampled: f.sampled[k] })),
      boxes: +document.getElementById("samples-graph").dataset.boxes,
    };
  });
  out.selection = await page.evaluate(() => window.plxView.state.selection);
  out.api = await api("api/samples");
  // the middle third of the run asked for directly: a trace's samples have times
  const third = Math.round(+out.lane_page.t1 / 3);
  out.api_third = { t0: third, t1: 2 * third, answer: await api(`api/samples?t0=${third}&t1=${2 * third}`) };
  // hover the widest sampled frame's box
  const target = await page.evaluate(() => {
    const v = window.plxView;
    const f = v.samplesData();
    const boxes = v.sampled.boxes.filter((x) => x.node >= 0 && f.sampled[x.node]);
    return boxes.sort((a, c) => c.w - a.w)[0];
  });
  const gb = await page.locator("#samples-graph").boundingBox();
  await page.mouse.move(gb.x + target.x + Math.min(target.w / 2, 40), gb.y + target.y + 8);
  await page.waitForTimeout(100);
  out.tip = await page.evaluate(() => {
    const t = document.getElementById("samples-tip");
    return { text: t.textContent, node: +t.dataset.node, ns: +t.dataset.ns, count: +t.dataset.count, shown: t.style.display };
  });
  out.target = target;
  await page.screenshot({ path: join(outdir, "samples-selection.png"), fullPage: true });
} finally {
  await close();
}
console.log(JSON.stringify(out));
