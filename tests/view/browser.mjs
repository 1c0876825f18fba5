// The headless Chromium that the viewer's browser tests drive (playwright-core, from the
// viewer's packages), in a profile of its own that close() removes.
// Usage: const { ctx, close } = await launch("NAME", CHROMIUM); ... await close();

import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "viewer", "package.json"));
const { chromium } = require("playwright-core");

export async function launch(name, executablePath) {
  const profile = mkdtempSync(join(tmpdir(), `plx-view-${name}-`));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath, headless: true, viewport: { width: 1400, height: 800 }, bypassCSP: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const close = async () => {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { ctx, close };
}
