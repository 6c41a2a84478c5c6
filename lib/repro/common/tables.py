"""Markdown tables for notebooks: ``display(Markdown(markdown_table(header, rows)))``.

Explained in chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

__all__ = ["markdown_table", "table_cell"]


def markdown_table(header, rows, note: str = "") -> str:
    """A GitHub-flavoured markdown table: ``header`` (column titles) and ``rows`` (sequences of cells).

    Explained in chapters/appendix/reproducibility.md. Cells are written with ``str``, so format numbers first;
    every row must have as many cells as the header. A ``|`` in plain text is escaped, so that it does not split the
    cell (one inside math or code is left as written). ``note``, if given, follows the table after a blank line.
    """
    header = [table_cell(h) for h in header]
    if not header:
        raise ValueError("header must name at least one column")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        cells = [table_cell(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"row {i} has {len(cells)} cells but the header has {len(header)}: {cells!r}")
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    return f"{text}\n\n{note}" if note else text


def table_cell(value) -> str:
    """`value` as one markdown table cell: ``str``, on one line, with a plain-text ``|`` escaped so that it does not
    split the cell (a cell with math or code is left as written, since ``\\|`` means something else there).

    Explained in chapters/appendix/reproducibility.md.
    """
    text = str(value).replace("\n", " ")
    if "$" in text or "`" in text:
        return text
    return text.replace("\\|", "|").replace("|", "\\|")
