// The site tests' browser (tests/book/conftest.py::render): one headless Chromium renders every page of the book, a
// few pages at a time, and reports what a reader's browser shows: the DOM after MathJax has typeset, and at each
// width what overflows its container (tests/book/layout.js, run in each page before its own scripts). A page is
// loaded once, at its first width, where layout.js measures it after MathJax; the window is then resized to each other
// width and measured again (MathJax's output does not depend on the width: typesetting twice would double the cost).
//
//   node tests/book/render.mjs JOBS.json OUT.json
//
// JOBS.json: {"chromium": path, "concurrency": n, "timeout_ms": t, "jobs": [{"key", "file", "widths": [...]}, ...]}.
// OUT.json:  {key: {"problems": {width: [...]}, "dom": "<html>..." (at the last width)} or {"error": "..."}}.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [jobsFile, outFile] = process.argv.slice(2);
const { chromium: executablePath, concurrency, timeout_ms: timeout, jobs } = JSON.parse(readFileSync(jobsFile, "utf8"));
const layoutScript = fileURLToPath(new URL("./layout.js", import.meta.url));

const measured = (page) => page.evaluate(() => JSON.parse(document.body.getAttribute("data-fit")));
const nextFrame = (page) => page.evaluate(() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(done))));

async function render(browser, job) {
  const [first, ...others] = job.widths;
  const context = await browser.newContext({ viewport: { width: first, height: 900 } });
  try {
    const page = await context.newPage();
    await page.addInitScript({ path: layoutScript });
    await page.goto(pathToFileURL(job.file).href, { waitUntil: "load", timeout });
    await page.waitForSelector("body[data-fit]", { state: "attached", timeout });
    const problems = { [first]: await measured(page) };
    for (const width of others) {
      await page.setViewportSize({ width, height: 900 });
      await nextFrame(page);
      await page.evaluate(() => window.reproMeasureLayout());
      problems[width] = await measured(page);
    }
    return { problems, dom: await page.content() };
  } catch (err) {
    return { error: String(err).slice(0, 500) };
  } finally {
    await context.close();
  }
}

const browser = await chromium.launch({
  executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"],
});
const results = {};
let next = 0;
async function worker() {
  while (next < jobs.length) {
    const job = jobs[next++];
    results[job.key] = await render(browser, job);
  }
}
try {
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
} finally {
  await browser.close();
}
writeFileSync(outFile, JSON.stringify(results));
