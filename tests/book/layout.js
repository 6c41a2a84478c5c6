/* Run by tests/book/render.mjs in every rendered page before the page's own scripts (test_site.py::
   test_page_fits_its_width): after MathJax has typeset, it lists what overflows its container without a scroll bar,
   and writes the list to <body data-fit>. render.mjs then resizes the window and calls window.reproMeasureLayout()
   again for each other width. */
(function () {
  const SLACK = 4;   // px: sub-pixel rounding and a glyph's overhang (a hat over the last letter of inline math)
  function clipper(el, stop) {   // the nearest ancestor that does not let content spill (overflow-x not visible)
    for (let a = el.parentElement; a && a !== stop; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return a;
    }
    return null;
  }
  function scrolls(el) {
    const o = getComputedStyle(el).overflowX;
    return o === "auto" || o === "scroll";
  }
  function describe(el) {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (typeof el.className === "string" && el.className.trim()) s += "." + el.className.trim().split(/\s+/).slice(0, 2).join(".");
    return s + " «" + (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50) + "»";
  }
  function measure() {
    const article = document.querySelector("article") || document.querySelector("main") || document.body;
    const edge = article.getBoundingClientRect().right;
    const bad = [], reported = [];
    const report = (el, why) => { reported.push(el); bad.push(describe(el) + ": " + why); };
    for (const el of article.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || el.closest("mjx-assistive-mml")) continue;
      if (reported.some(p => p.contains(el))) continue;       // one line per problem: its outermost element
      const spill = el.scrollWidth - el.clientWidth;
      const box = clipper(el, article);
      if (box && scrolls(box)) continue;                       // inside a scroll container: the reader can scroll
      const limit = box ? box.getBoundingClientRect().right : edge;
      const where = box ? "clipped by " + describe(box) : "past the content column";
      if (r.right > limit + SLACK) report(el, where + " by " + Math.round(r.right - limit) + " px");
      else if (getComputedStyle(el).overflowX === "visible" && spill > SLACK && el.clientWidth > 0
               && !el.closest("mjx-container"))
        report(el, "its text is wider than its box by " + spill + " px");
    }
    const page = document.documentElement.scrollWidth - window.innerWidth;
    if (page > SLACK) bad.push("the page scrolls sideways by " + page + " px");
    document.body.setAttribute("data-fit", JSON.stringify(bad.slice(0, 12)));
  }
  window.reproMeasureLayout = measure;
  window.addEventListener("load", function () {
    const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    (typeset || Promise.resolve()).then(function () { setTimeout(measure, 100); });
  });
})();
