"""Summarise a CSV file from the workspace with the standard library only."""

import csv
import os
import statistics
from collections import Counter


def _number(value):
    try:
        return float(value.replace(",", ""))
    except ValueError:
        return None


def run(payload):
    path = payload.get("path")
    if not isinstance(path, str) or not path:
        raise ValueError("path (a string) is required")
    full = os.path.realpath(os.path.join(os.getcwd(), path))
    if not full.startswith(os.path.realpath(os.getcwd()) + os.sep):
        raise ValueError("path must stay inside the workspace")
    max_values = int(payload.get("max_values") or 3)
    with open(full, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = {name: [] for name in reader.fieldnames or []}
        rows = 0
        for row in reader:
            rows += 1
            for name in columns:
                columns[name].append((row.get(name) or "").strip())
    report = {"file": path, "rows": rows, "columns": {}}
    for name, values in columns.items():
        present = [v for v in values if v != ""]
        numbers = [n for n in (_number(v) for v in present) if n is not None]
        col = {"missing": len(values) - len(present)}
        if present and len(numbers) == len(present):
            col.update(type="number", min=min(numbers), max=max(numbers),
                       mean=round(statistics.fmean(numbers), 4), median=statistics.median(numbers))
        else:
            col.update(type="text", distinct=len(set(present)),
                       top=[[v, c] for v, c in Counter(present).most_common(max_values)])
        report["columns"][name] = col
    return report
