"""The profiler's table, laid out as PyTorch's `key_averages().table()`: one row per event
or average, sorted by a column, with the self-time total below.

Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg; Self CUDA,
Self CUDA %, CUDA total, CUDA time avg where ops ran on a GPU; CPU Mem, Self CPU Mem (and
CUDA Mem, Self CUDA Mem on a GPU) with `profile_memory`; # of Calls; Input Shapes when
grouped by them; Source Location when grouped by stack. Percentages are of the sum of
self times (so the totals of nested rows add to more than 100%, as in PyTorch).

>>> format_time(1500.0), format_time(12.25), format_memory(3 * 1024 * 1024)
('1.500ms', '12.250us', '3.00 Mb')
"""
from __future__ import annotations

__all__ = ["build_table", "format_time", "format_memory", "SORT_KEYS"]

SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time",
             "device_time_total", "self_device_time_total", "cuda_time", "cuda_time_total",
             "self_cuda_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
             "device_memory_usage", "self_device_memory_usage", "cuda_memory_usage",
             "self_cuda_memory_usage", "count")

NO_DEVICE_NOTE = ("CUDA activity was asked for, but no op ran on a CUDA GPU: "
                  "there are no CUDA times to show.")


def format_time(time_us: float) -> str:
    """Microseconds as PyTorch's profiler writes them: s, ms or us, three decimals."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes: int) -> str:
    """Bytes as PyTorch's profiler writes them: Gb, Mb, Kb (two decimals) or b."""
    for unit, size in (("Gb", 1024 ** 3), ("Mb", 1024 ** 2), ("Kb", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def build_table(events, sort_by: str | None = None, row_limit: int = 100,
                max_src_column_width: int = 75, max_name_column_width: int = 55,
                max_shapes_column_width: int = 80, header: str | None = None,
                top_level_events_only: bool = False) -> str:
    """`events` (an EventList) as a table; `sort_by` one of SORT_KEYS (descending),
    `row_limit` rows at most (<= 0: all)."""
    if sort_by is not None and sort_by not in SORT_KEYS:
        raise AttributeError(f"sort_by={sort_by!r} is no column of the profiler's table: use one "
                             f"of {', '.join(SORT_KEYS)}")
    rows = list(events)
    if top_level_events_only:
        rows = [event for event in rows if getattr(event, "cpu_parent", None) is None]
    if sort_by is not None:
        rows.sort(key=lambda event: getattr(event, sort_by), reverse=True)
    if row_limit > 0:
        rows = rows[:row_limit]
    if not rows:
        return ""
    self_cpu_total = sum(event.self_cpu_time_total for event in events)
    self_device_total = sum(event.self_device_time_total for event in events)
    on_device = events.use_device is not None and any(event.device_time_total > 0 for event in events)
    memory = events.profile_memory
    device_memory = memory and any(event.device_memory_usage != 0 for event in events)
    shapes = events.grouped_by_shapes
    stacks = events.with_stack and any(event.stack for event in events)

    name_width = min(max_name_column_width, max(len("Name"), *(len(row.key) for row in rows)) + 4)
    columns = [("Name", name_width, lambda row: _clip(row.key, name_width - 4))]
    columns += [
        ("Self CPU %", 12, lambda row: format_share(row.self_cpu_time_total, self_cpu_total)),
        ("Self CPU", 12, lambda row: format_time(row.self_cpu_time_total)),
        ("CPU total %", 12, lambda row: format_share(row.cpu_time_total, self_cpu_total)),
        ("CPU total", 12, lambda row: format_time(row.cpu_time_total)),
        ("CPU time avg", 12, lambda row: format_time(row.cpu_time_total / row.count)),
    ]
    if on_device:
        columns += [
            ("Self CUDA", 12, lambda row: format_time(row.self_device_time_total)),
            ("Self CUDA %", 12, lambda row: format_share(row.self_device_time_total, self_device_total)),
            ("CUDA total", 12, lambda row: format_time(row.device_time_total)),
            ("CUDA time avg", 13, lambda row: format_time(row.device_time_total / row.count)),
        ]
    if memory:
        columns += [("CPU Mem", 12, lambda row: format_memory(row.cpu_memory_usage)),
                    ("Self CPU Mem", 12, lambda row: format_memory(row.self_cpu_memory_usage))]
    if device_memory:
        columns += [("CUDA Mem", 12, lambda row: format_memory(row.device_memory_usage)),
                    ("Self CUDA Mem", 13, lambda row: format_memory(row.self_device_memory_usage))]
    columns.append(("# of Calls", 12, lambda row: str(row.count)))
    if shapes:
        shapes_width = min(max_shapes_column_width, max(len(str(row.input_shapes)) for row in rows) + 2)
        columns.append(("Input Shapes", shapes_width,
                        lambda row: _clip(str(row.input_shapes), shapes_width)))
    if stacks:
        columns.append(("Source Location", max_src_column_width,
                        lambda row: _clip(row.stack[0] if row.stack else "", max_src_column_width)))

    def line(cells) -> str:
        return "  ".join(cell.rjust(width) for cell, (_, width, _) in zip(cells, columns)) + "  "

    rule = "  ".join("-" * width for _, width, _ in columns) + "  "
    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line([title for title, _, _ in columns]), rule]
    out += [line([cell(row) for _, _, cell in columns]) for row in rows]
    out.append(rule)
    out.append(f"Self CPU time total: {format_time(self_cpu_total)}")
    if on_device:
        out.append(f"Self CUDA time total: {format_time(self_device_total)}")
    elif events.use_device is not None:
        out.append(NO_DEVICE_NOTE)
    return "\n".join(out) + "\n"
