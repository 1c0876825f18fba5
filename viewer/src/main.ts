// plx view's page: tabs for the timeline, profiles, communication and displays, each fetched
// from the server when first shown.

import { Comm, Compare, CritPathAnswer, DisplaysAnswer, get, Meta, Profile } from "./api";
import { CommView } from "./comm";
import { displaysView } from "./displays";
import { el, time } from "./format";
import { ProfileView } from "./profile";
import { Timeline } from "./timeline";

const CSS = `
body { font: 13px system-ui, sans-serif; margin: 0; color: #222; }
header { background: #263238; color: #fff; padding: 6px 12px; display: flex; gap: 16px; align-items: center; }
header h1 { font-size: 15px; margin: 0; }
nav button { background: #37474f; color: #fff; border: 0; padding: 5px 12px; cursor: pointer; }
nav button.on { background: #ff6d00; }
.view { padding: 8px 12px; }
.toolbar { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 6px; }
.toolbar button.on { background: #ff6d00; color: #fff; }
.help { color: #666; font-size: 12px; }
.timeline-body { display: flex; gap: 10px; align-items: flex-start; }
.timeline-main { flex: 1; min-width: 0; }
#overview { display: block; width: 100%; height: 34px; border: 1px solid #ccc; border-bottom: 0; cursor: pointer; }
#timeline-scroll { overflow-y: auto; height: calc(100vh - 118px); min-height: 260px; border: 1px solid #ccc; }
#timeline { position: sticky; top: 0; display: block; outline: none; width: 100%; }
#tooltip { position: fixed; display: none; background: #263238; color: #fff; padding: 4px 6px; font-size: 12px;
  pointer-events: none; z-index: 10; max-width: 520px; }
#help { position: fixed; display: none; top: 90px; left: 50%; transform: translateX(-50%); z-index: 20;
  box-shadow: 0 4px 18px rgba(0,0,0,0.3); width: 560px; }
#flame-graph { display: block; width: 100%; cursor: pointer; }
.side { width: 320px; flex: none; display: flex; flex-direction: column; gap: 8px; }
.panel { border: 1px solid #ccc; padding: 6px; background: #fcfcfc; font-size: 12px; word-break: break-word; }
.panel h3 { margin: 2px 0 6px; font-size: 14px; }
table.grid { border-collapse: collapse; font-size: 12px; margin-bottom: 10px; }
table.grid td, table.grid th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
table.grid td:first-child { text-align: left; }
table.sortable th { cursor: pointer; background: #eef1f5; }
tr.hit td { background: #ffe0f0; }
table.matrix td, table.matrix th { border: 1px solid #ddd; padding: 4px 8px; min-width: 60px; text-align: right; }
#icicle { width: 100%; border: 1px solid #ccc; }
.stack { display: flex; width: 240px; height: 12px; }
.stack span { display: block; height: 12px; }
`;

async function main(): Promise<void> {
  const style = document.createElement("style");
  style.textContent = CSS;
  document.head.append(style);
  const app = document.getElementById("app");
  if (!app) return;
  const meta = await get<Meta>("api/meta");
  app.replaceChildren();
  const header = el("header");
  header.append(el("h1", {}, "plx view"),
    el("span", {}, `${meta.dir}: ${meta.tracks.length} tracks, ${meta.events} events, ${time(meta.span)}, ${meta.messages} messages`));
  const nav = el("nav");
  header.append(nav);
  app.append(header);
  const body = el("main");
  app.append(body);
  const timeline = new Timeline(meta);
  const views: Record<string, () => Promise<HTMLElement>> = {
    Timeline: async () => timeline.root,
    Profiles: async () => {
      const p = new ProfileView(await get<Profile>("api/profile"));
      requestAnimationFrame(() => p.drawIcicle());
      return p.root;
    },
    Communication: async () => new CommView(await get<Comm>("api/comm"), (f, t) => {
      void show("Timeline").then(() => timeline.showPair(f, t));
    }).root,
    Displays: async () => displaysView(await get<DisplaysAnswer>("api/displays", { bins: 200 }),
      await get<CritPathAnswer>("api/critpath"), await get<Compare>("api/compare")),
  };
  const made = new Map<string, HTMLElement>();
  const show = async (name: string): Promise<void> => {
    for (const b of nav.querySelectorAll("button")) b.classList.toggle("on", b.textContent === name);
    let v = made.get(name);
    if (!v) {
      const make = views[name];
      if (!make) return;
      v = await make();
      made.set(name, v);
    }
    body.replaceChildren(v);
    document.body.dataset.view = name;
    if (name === "Timeline") timeline.request();
  };
  for (const name of Object.keys(views)) {
    const b = el("button", { id: `tab-${name.toLowerCase()}` }, name);
    b.onclick = () => void show(name);
    nav.append(b);
  }
  await show("Timeline");
  timeline.start();
  // the browser tests read the drawn regions from here
  (window as unknown as { plxView: Timeline }).plxView = timeline;
}

main().catch((e: Error) => {
  const app = document.getElementById("app");
  if (app) app.textContent = `plx view: ${e.message}`;
});
