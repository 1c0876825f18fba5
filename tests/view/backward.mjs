// Drives plx view's timeline in a real headless Chromium (playwright-core) on a run holding a
// message received before its send (engine/crates/plx-view/tests/backward.rs) and prints what the
// page showed as JSON: the lines drawn and flagged, the legend, the tooltip on the flagged line,
// the server's count for the same window, and a window and a selection restored from a URL that
// gives them backwards. Screenshots go to OUTDIR. Usage: node backward.mjs URL CHROMIUM OUTDIR

import { join } from "node:path";
import { launch } from "./browser.mjs";

const [url, executablePath, outdir] = process.argv.slice(2);
const { ctx, close } = await launch("backward", executablePath);
const out = { errors: [] };
const page = ctx.pages()[0] ?? (await ctx.newPage());
page.on("pageerror", (e) => out.errors.push(String(e)));
const settled = async () => {
  await page.waitForFunction(() => {
    const c = document.getElementById("timeline");
    return c && c.dataset.loading === "0" && c.dataset.lines !== undefined;
  }, null, { timeout: 30000 });
  await page.waitForTimeout(150);
  await page.waitForFunction(() => document.getElementById("timeline").dataset.loading === "0");
};
const shown = () => page.evaluate(() => {
  const d = document.getElementById("timeline").dataset;
  const l = document.getElementById("backward-legend");
  return { lines: d.lines, backward: d.backward, backwardDrawn: d.backwardDrawn, messagesDrawn: d.messagesDrawn,
    t0: d.t0, t1: d.t1, legend: l.textContent, legendShown: l.style.display !== "none" };
});
try {
  await page.goto(url);
  await settled();
  out.full = await shown();
  // the server's answer for the window the page shows
  out.server_backward = await page.evaluate(async () => {
    const d = document.getElementById("timeline").dataset;
    const token = new URLSearchParams(location.search).get("token");
    const a = await (await fetch(`api/window?t0=${d.t0}&t1=${d.t1}&width=500&token=${token}`)).json();
    return a.messages.backward;
  });
  await page.screenshot({ path: join(outdir, "backward.png") });
  // the tooltip at the middle of the flagged line, once the page has drawn it (a fixed 100 ms
  // was too short under load); the line's place read again and the mouse moved again (a pixel
  // apart, so that the page gets a move) while none shows: a move the page got while it was
  // still drawing an answer found no line under it (a fresh-clone run under load)
  const shownTip = () => {
    const t = document.getElementById("tooltip");
    return t.dataset.kind === "backward" && t.style.display !== "none" ? t.textContent : null;
  };
  out.tooltip = null;
  for (let i = 0; i < 5 && out.tooltip === null; i++) {
    const at = await page.evaluate(() => {
      const b = window.plxView.bundles().backward[0];
      const r = document.getElementById("timeline").getBoundingClientRect();
      return b ? { x: r.left + (b.x0 + b.x1) / 2, y: r.top + (b.y0 + b.y1) / 2 } : null;
    });
    if (!at) break;
    await page.mouse.move(at.x + (i % 2), at.y);
    await page.waitForFunction(shownTip, null, { timeout: 2000 }).catch(() => {});
    out.tooltip = await page.evaluate(shownTip);
  }
  // a window after the flagged message
  await page.evaluate(() => window.plxView.setWindow(8000, 60000));
  await settled();
  out.after = await shown();
  // a URL with the window and the selection backwards
  const u = new URL(url);
  u.searchParams.set("t0", "30000");
  u.searchParams.set("t1", "1000");
  u.searchParams.set("sel", "30000,1000");
  await page.goto(u.toString());
  await settled();
  await page.waitForFunction(() => document.querySelector("#stats-messages") !== null, null, { timeout: 30000 });
  out.restored = await page.evaluate(() => {
    const d = document.getElementById("timeline").dataset;
    return { t0: d.t0, t1: d.t1, selection: new URLSearchParams(location.search).get("sel"),
      stats: document.querySelector("#stats-messages").dataset.count };
  });
} finally {
  await close();
}
console.log(JSON.stringify(out));
