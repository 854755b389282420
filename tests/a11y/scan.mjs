// Accessibility scan of a served site: axe-core in headless chromium (puppeteer-core).
// Usage: node scan.mjs BASE_URL PATH... ; prints one line per serious/critical violation
// ("path rule-id target") and exits 1 if there is any, 0 otherwise, 2 on a usage or browser error.
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

async function scan(page, path) {
  await page.goto(new URL(path, base).href, { waitUntil: "load" });
  await page.waitForFunction(() => document.querySelectorAll("div.plotly-chart[data-figure]:not(.js-plotly-plot)").length === 0,
                             { timeout: 20000 }).catch(() => {});
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
  const found = [];
  for (const v of result.violations) {
    if (!SEVERE.has(v.impact)) continue;
    for (const node of v.nodes) found.push(`${path} ${v.id} ${node.target.join(" ")}` +
      (process.env.A11Y_VERBOSE ? `\n    ${node.failureSummary.replace(/\n/g, " ")}` : ""));
  }
  return found;
}

let browser;
try {
  browser = await puppeteer.launch({ executablePath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"] });
} catch (err) {
  console.error(`cannot start ${executablePath}: ${err.message.split("\n")[0]}`);
  process.exit(2);
}
let total = 0;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  for (const path of paths) {
    const found = await scan(page, path);
    total += found.length;
    for (const line of found) console.log(line);
    console.error(`${path}: ${found.length} serious/critical`);
  }
} catch (err) {
  console.error(`scan failed: ${err.message.split("\n")[0]}`);
  await browser.close();
  process.exit(2);
}
await browser.close();
process.exit(total ? 1 : 0);
