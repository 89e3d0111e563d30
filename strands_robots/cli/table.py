"""The CLI's tables: rich's ``Table``, printed row by row when every cell is plain text.

rich renders each cell through its whole layout machinery (~0.1 ms a cell): ``strands-labels
show`` of 1,000 episodes (7,000 cells) took 0.6 s to print (``benchmarks/cli_wall.py``, row
``show``; docs/performance.md, "Guard rails"). Here rich still lays the table out (title,
header, borders and column widths, from one row of each column's widest line and one of its
longest word: what rich sizes a column by), and each row is padded, or folded by rich's own
``Text.wrap``, into the same lines.
"""

from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.table import Table


def _plain(cell: str) -> bool:
    """True when rich prints ``cell`` as it is: one line, no tab or control character, no
    ``:emoji:`` code to replace."""
    return cell.isprintable() and ":" not in cell


def _measure(console: Console, cell: str) -> tuple[int, int]:
    """What rich sizes a column by, for one cell: its longest word and its widest line (columns)."""
    if not _plain(cell):
        measured = console.render_str(cell).__rich_measure__(console, console.options)
        return measured.minimum, measured.maximum
    width = cell_len(cell)
    words = cell.split()
    return (max(map(cell_len, words)) if words else width), width


class FoldedTable(Table):
    """A rich table whose long cells fold onto more lines, never cut (``overflow="fold"``)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = list(zip(*(column.cells for column in self.columns), strict=True))
        if not rows or any(type(cell) is not str for row in rows for cell in row):
            yield from super().__rich_console__(console, options)  # styled cells: rich renders them
            return
        sizes = [[_measure(console, cell) for cell in row] for row in rows]
        # rich sizes a column by its widest line and its longest word: one row of each lays it out
        samples = [
            tuple(rows[max(range(len(rows)), key=lambda r: sizes[r][i][side])][i] for i in range(len(self.columns)))
            for side in (1, 0)
        ]
        layout = Table(title=self.title)
        for column in self.columns:
            layout.add_column(column.header, overflow=column.overflow)
        for sample in samples:
            layout.add_row(*sample)
        widths = layout._calculate_column_widths(console, options.update_width(options.max_width - layout._extra_width))
        if min(widths) < 3:  # no room for a character between the padding: rich crops the cells
            yield from super().__rich_console__(console, options)
            return
        assert layout.box is not None  # rich's default box
        box = layout.box.substitute(options, safe=console.safe_box)
        lines = list(Segment.split_lines(console.render(layout, options)))
        head = len(lines) - 1 - sum(len(self._row(console, widths, box, sample)) for sample in samples)
        for line in lines[:head]:  # title, top border, header
            yield from line
            yield Segment.line()
        for row in rows:
            yield Segment("\n".join(self._row(console, widths, box, row)) + "\n")
        yield from lines[-1]  # bottom border
        yield Segment.line()

    @staticmethod
    def _row(console: Console, widths: list[int], box: Any, row: tuple[str, ...]) -> list[str]:
        """One row's lines as rich prints them: each cell padded by one space each side, folded
        onto more lines where it is wider than its column, shorter cells filled below."""
        folded = [_fold(console, cell, width - 2) for cell, width in zip(row, widths, strict=True)]
        height = max(map(len, folded))
        return [
            box.mid_left
            + box.mid_vertical.join(
                f" {lines[i] if i < len(lines) else ' ' * (width - 2)} "
                for lines, width in zip(folded, widths, strict=True)
            )
            + box.mid_right
            for i in range(height)
        ]


def _fold(console: Console, cell: str, width: int) -> list[str]:
    """``cell``'s lines at ``width`` columns, each padded to it (rich's wrap where it has work to do:
    a cell wider than the column, a line break, a tab, a control character, an emoji code)."""
    if _plain(cell) and cell_len(cell) <= width:
        return [cell + " " * (width - cell_len(cell))]
    lines = console.render_str(cell).wrap(console, width, justify="left", overflow="fold")
    return [line.plain for line in lines]
