// Accessibility scan of a served site: axe-core in headless chromium (puppeteer-core).
// Usage: node scan.mjs BASE_URL PATH... ; prints one line per serious/critical violation
// ("path rule-id target") and exits 1 if there is any, 0 otherwise, 2 on a usage or browser error.
// Every page is scanned in each of its tab states (see scan below); stderr gives one summary line per page.
// A11Y_JOBS pages (default 2) are scanned at once, each in its own tab; the output keeps the order of PATH.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const [base, ...paths] = process.argv.slice(2);
if (!base || paths.length === 0) {
  console.error("usage: node scan.mjs BASE_URL PATH...");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const SEVERE = new Set(["serious", "critical"]);

async function violations(page, path, within) {
  await page.waitForFunction(() => document.querySelectorAll("div.plotly-chart[data-figure]:not(.js-plotly-plot)").length === 0,
                             { timeout: 20000 }).catch(() => {});
  const result = await page.evaluate((within) => axe.run(within ? { include: [[within]] } : document,
                                                         { resultTypes: ["violations"] }), within);
  const found = [];
  for (const v of result.violations) {
    if (!SEVERE.has(v.impact)) continue;
    for (const node of v.nodes) found.push(`${path} ${v.id} ${node.target.join(" ")}` +
      (process.env.A11Y_VERBOSE ? `\n    ${node.failureSummary.replace(/\n/g, " ")}` : ""));
  }
  return found;
}

// axe skips what is not displayed, so a page with tabs (splits, the Live panel under each,
// the releases' tabs) is scanned once per tab position: the k-th tab of every tab set
// chosen by clicking its label, as a reader would. The whole page is scanned in the first
// position; the later positions change only what is inside the tab sets, so only the tab
// sets are scanned again. Returns the violations (each once) and the number of tab states.
async function scan(page, path) {
  await page.goto(new URL(path, base).href, { waitUntil: "load" });
  await page.evaluate(axeSource);
  const seen = new Set(await violations(page, path));
  const positions = await page.evaluate(() => Math.max(0, ...[...document.querySelectorAll(".tabbed-set")]
    .map((set) => set.querySelectorAll(":scope > input[type=radio]").length)));
  for (let k = 1; k < positions; k++) {
    await page.evaluate((k) => {
      for (const set of document.querySelectorAll(".tabbed-set")) {
        const label = set.querySelectorAll(":scope > .tabbed-labels > label")[k];
        if (label) label.click();
      }
    }, k);
    // (A label far down the page scrolls it and Material fades the header's title, but the
    // header is outside the tab sets: no need to wait for the fade to settle.)
    for (const line of await violations(page, path, ".tabbed-set")) seen.add(line);
  }
  return { found: [...seen], states: Math.max(1, positions) };
}

let browser;
try {
  browser = await puppeteer.launch({ executablePath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync",
           // the pages scanned side by side are tabs in one window: none may be throttled as hidden
           "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
           "--disable-backgrounding-occluded-windows"] });
} catch (err) {
  console.error(`cannot start ${executablePath}: ${err.message.split("\n")[0]}`);
  process.exit(2);
}
let total = 0;
try {
  const jobs = Math.max(1, Number.parseInt(process.env.A11Y_JOBS || "2", 10) || 1);
  const results = new Array(paths.length);
  let next = 0;
  let printed = 0;
  // Each worker takes the next path; results are printed as soon as every earlier one is in.
  const flush = () => {
    for (; printed < paths.length && results[printed]; printed++) {
      const { found, states } = results[printed];
      total += found.length;
      for (const line of found) console.log(line);
      console.error(`${paths[printed]}: ${found.length} serious/critical (${states} tab state${states === 1 ? "" : "s"})`);
    }
  };
  const worker = async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    while (next < paths.length) {
      const i = next++;
      results[i] = await scan(page, paths[i]);
      flush();
    }
    await page.close();
  };
  await Promise.all(Array.from({ length: Math.min(jobs, paths.length) }, worker));
} catch (err) {
  console.error(`scan failed: ${err.message.split("\n")[0]}`);
  await browser.close();
  process.exit(2);
}
await browser.close();
process.exit(total ? 1 : 0);
