/* The book's own script (copied into the rendered book by repro.book.stage; jupyter-book loads _static/*.js).
   A notebook page's download menu offers the executed notebook (.ipynb, with its outputs) and, beside it, the
   notebook's source as the book keeps it (.md, MyST Markdown that jupytext opens as a notebook). */
document.addEventListener("DOMContentLoaded", function () {
  const ipynb = document.querySelector(".dropdown-download-buttons a.btn-download-source-button");
  if (!ipynb || !/\.ipynb$/.test(ipynb.getAttribute("href"))) return;
  ipynb.title = "Download the executed notebook, with its outputs";
  const item = ipynb.closest("li").cloneNode(true);
  const md = item.querySelector("a");
  md.setAttribute("href", ipynb.getAttribute("href").replace("_sources/", "_static/sources/").replace(/\.ipynb$/, ".md"));
  md.title = "Download the source (MyST Markdown; jupytext opens it as a notebook)";
  md.classList.add("btn-download-md-source-button");
  md.querySelector(".btn__text-container").textContent = ".md";
  ipynb.closest("li").after(item);
});
