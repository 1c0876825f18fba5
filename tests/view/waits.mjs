// Drives plx view's wait states in a real headless Chromium (playwright-core, real clicks and
// keys) and prints what the page showed as JSON, beside the server's answers: the waits drawn at
// the whole run, a late-sender wait zoomed to, hovered and clicked (its cause in the details),
// a closer zoom, and the overlay switched off with its key. Screenshots at the three zoom levels
// go to OUTDIR. Usage: node waits.mjs URL CHROMIUM OUTDIR RANK (the rank whose late_sender
// wait, on its thread 0, is clicked)

import { join } from "node:path";
import { launch } from "./browser.mjs";

const [url, executablePath, outdir, rankArg] = process.argv.slice(2);
const rank = Number(rankArg);
const { ctx, close } = await launch("waits", executablePath);
const out = { errors: [] };
const page = ctx.pages()[0] ?? (await ctx.newPage());
page.on("pageerror", (e) => out.errors.push(String(e)));

// the window answered and drawn, and its waits loaded and drawn
const settled = async () => {
  await page.waitForFunction(() => {
    const c = document.getElementById("timeline");
    return c && c.dataset.loading === "0" && c.dataset.waitsLoading === "0" && c.dataset.waitsTotal !== "";
  }, null, { timeout: 120000 });
  await page.waitForTimeout(150);
  await page.waitForFunction(() => {
    const c = document.getElementById("timeline");
    return c.dataset.loading === "0" && c.dataset.waitsLoading === "0";
  });
};
const data = () => page.evaluate(() => ({ ...document.getElementById("timeline").dataset, url: location.search }));
const api = (path) => page.evaluate(async (path) => {
  const token = new URLSearchParams(location.search).get("token");
  return (await fetch(`${path}${path.includes("?") ? "&" : "?"}token=${token}`)).json();
}, path);
const setWindow = async (t0, t1) => {
  await page.evaluate(([a, b]) => window.plxView.setWindow(a, b), [t0, t1]);
  await settled();
};
const drawnWaits = () => page.evaluate(() => window.plxView.waits.drawn.map((d) => ({ ...d })));
const box = async () => page.locator("#timeline").boundingBox();

try {
  await page.goto(url);
  await settled();
  out.whole = { page: await data(), drawn: await drawnWaits() };
  const span = +(await page.evaluate(() => window.plxView.meta.span));
  out.api = await api(`api/waits?t0=0&t1=${span}&max=5000`);
  await page.screenshot({ path: join(outdir, "waits-whole.png") });

  // the late_sender wait of the rank: zoomed to (a quarter of the window each side)
  const track = await page.evaluate((r) => window.plxView.meta.tracks.findIndex((t) => t.rank === r && t.thread === 0), rank);
  const ls = out.api.patterns.indexOf("late_sender");
  const w = out.api.waits.find((x) => x[1] === track && x[2] === ls);
  out.target = w;
  const pad = (w[4] - w[3]) * 0.5;
  await setWindow(w[3] - pad, w[4] + pad);
  out.zoomed = { page: await data(), drawn: await drawnWaits() };
  await page.screenshot({ path: join(outdir, "waits-zoomed.png") });
  const d = out.zoomed.drawn.find((x) => x.id === w[0]);
  const b = await box();
  // hover, then click the middle of the wait
  await page.mouse.move(b.x + d.x + d.w / 2, b.y + d.y + d.h / 2);
  await page.waitForTimeout(100);
  out.tip = await page.evaluate(() => {
    const t = document.getElementById("tooltip");
    return { kind: t.dataset.kind, text: t.textContent, shown: t.style.display };
  });
  await page.mouse.click(b.x + d.x + d.w / 2, b.y + d.y + d.h / 2);
  await page.waitForSelector("#detail-name[data-pattern]", { timeout: 60000 });
  out.detail = await page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const late = q("#wait-late");
    return {
      pattern: q("#detail-name").dataset.pattern, ns: +q("#detail-duration").dataset.ns,
      where: q("#wait-where").textContent,
      late: late ? { location: late.dataset.location, callpath: late.dataset.callpath } : null,
      causes: [...document.querySelectorAll("#wait-causes tr[data-location]")].map((tr) => ({
        location: tr.dataset.location, callpath: tr.dataset.callpath, kind: tr.dataset.kind, ns: +tr.dataset.ns })),
    };
  });
  out.wait_api = await api(`api/wait?id=${w[0]}`);
  // every wait of the run, one by one
  out.all = [];
  for (const x of out.api.waits) out.all.push(await api(`api/wait?id=${x[0]}`));
  await page.screenshot({ path: join(outdir, "waits-clicked.png") });

  // closer: the first tenth of the wait
  await setWindow(w[3] - (w[4] - w[3]) * 0.02, w[3] + (w[4] - w[3]) * 0.1);
  out.close = { page: await data(), drawn: await drawnWaits() };
  await page.screenshot({ path: join(outdir, "waits-close.png") });

  // the overlay off with its key, kept in the URL
  await setWindow(0, span);
  await page.focus("#timeline");
  await page.keyboard.press("x");
  await page.waitForTimeout(200);
  out.off = await data();
} finally {
  await close();
}
console.log(JSON.stringify(out));
