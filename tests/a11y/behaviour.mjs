// The leaderboard's metric/policy switch and the Compare page's shareable URL in chromium.
// Usage: node behaviour.mjs BASE_URL ENTRY_A ENTRY_B ; prints one JSON line of observations
// (the pytest asserts on them); exit 2 if the browser cannot start or a page fails to load.
import puppeteer from "puppeteer-core";

const [base, a, b] = process.argv.slice(2);
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
let browser;
try {
  browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
                                     args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
} catch (err) {
  console.error(`cannot start chromium: ${err.message.split("\n")[0]}`);
  process.exit(2);
}
const out = { errors: [], requests: [] };
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => out.errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") out.errors.push(m.text()); });
  // the benchmark may sit under a folder of the site (/rap/): any request to another origin is reported
  const origin = new URL(base).origin;
  page.on("request", (r) => { if (!r.url().startsWith(origin + "/") && !r.url().startsWith("data:")) out.requests.push(r.url()); });
  const cellText = () => page.$eval("table[id^=leaderboard-] tbody tr td:nth-child(5)", (e) => e.textContent);
  const chartX = () => page.$eval("figure[data-panel] div.rap-chart", (e) => (e.data ? e.data.map((t) => t.x).flat() : []));
  await page.goto(new URL("leaderboard/", base).href, { waitUntil: "load" });
  await wait(1500);
  out.lb_before = await cellText();
  out.chart_before = await chartX();
  await page.select("#lb-metric", "tv");
  await wait(400);
  out.lb_tv = await cellText();
  out.chart_tv = await chartX();
  out.lb_axis = await page.$eval("figure[data-panel] div.rap-chart", (e) => e.layout.xaxis.title.text);
  await page.select("#lb-policy", "split");
  await wait(400);
  out.lb_url = page.url();
  out.lb_status = await page.$eval("#lb-status", (e) => e.textContent);
  await page.goto(out.lb_url, { waitUntil: "load" });
  await wait(1200);
  out.lb_reloaded = await cellText();
  out.lb_reloaded_choice = await page.$eval("#lb-metric", (e) => e.value) + "/" + (await page.$eval("#lb-policy", (e) => e.value));
  // keyboard sorting: focus a header and press Enter
  await page.focus("table[id^=leaderboard-] thead th:nth-child(5)");
  await page.keyboard.press("Enter");
  out.sorted = await page.$eval("table[id^=leaderboard-] thead th:nth-child(5)", (e) => e.getAttribute("aria-sort"));
  await page.goto(new URL(`compare/?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`, base).href, { waitUntil: "load" });
  await wait(1000);
  out.cmp_choice = [await page.$eval("#cmp-a", (e) => e.value), await page.$eval("#cmp-b", (e) => e.value)];
  out.cmp_rows = await page.$$eval("#cmp-table tbody tr", (rs) => rs.map((r) => Array.from(r.children, (c) => c.textContent)));
  await page.select("#cmp-b", a);
  await wait(200);
  out.cmp_same = await page.$eval("#cmp-status", (e) => e.textContent);
  out.cmp_url = page.url();
  // the field page's forecast picker
  await page.goto(new URL("fields/", base).href, { waitUntil: "load" });
  const field = await page.$eval("#field-index tbody tr a", (e) => e.href);
  await page.goto(field, { waitUntil: "load" });
  await wait(1200);
  out.fc_options = await page.$$eval("#fc-entry option", (os) => os.map((o) => o.value));
  out.fc_before = await page.$eval("#fc-figure div.rap-chart", (e) => e.data.slice(1).map((t) => t.y));
  const other = out.fc_options.find((o) => o !== "ewma/BASE");
  if (other) {
    await page.select("#fc-entry", other);
    await wait(400);
  }
  out.fc_after = await page.$eval("#fc-figure div.rap-chart", (e) => e.data.slice(1).map((t) => t.y));
  out.fc_status = await page.$eval("#fc-status", (e) => e.textContent);
} catch (err) {
  console.error(`behaviour check failed: ${err.message.split("\n")[0]}`);
  await browser.close();
  process.exit(2);
}
await browser.close();
console.log(JSON.stringify(out));
