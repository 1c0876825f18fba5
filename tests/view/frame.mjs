// Measures plx view's timeline in a real headless Chromium at the whole-run zoom: the time from a
// zoom key (W, then S back to the whole run) to its answer drawn, and the time of one redraw of
// the whole-run window, each over REPS repetitions (median and max, ms). Prints JSON.
// Usage: node frame.mjs URL CHROMIUM [REPS]

import { launch } from "./browser.mjs";

const [url, executablePath, reps = "10"] = process.argv.slice(2);
const { ctx, close } = await launch("frame", executablePath);
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: +s[s.length >> 1].toFixed(2), max: +s[s.length - 1].toFixed(2), n: s.length };
};
try {
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("timeline")?.dataset.loading === "0", null, { timeout: 60000 });
  await page.waitForTimeout(500);
  const zoom = [];
  for (let i = 0; i < +reps; i++) {
    for (const key of ["w", "s"]) {
      zoom.push(await page.evaluate((key) => new Promise((done) => {
        const c = document.getElementById("timeline");
        const t = performance.now();
        let seen = false;
        c.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true }));
        const poll = () => {
          if (c.dataset.loading === "1") seen = true;
          if (seen && c.dataset.loading === "0") done(performance.now() - t);
          else requestAnimationFrame(poll);
        };
        requestAnimationFrame(poll);
      }), key));
    }
  }
  const draw = await page.evaluate((n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      window.plxView.draw();
      out.push(performance.now() - t);
    }
    return out;
  }, +reps * 2);
  console.log(JSON.stringify({ zoom_ms: stats(zoom), draw_ms: stats(draw) }));
} finally {
  await close();
}
