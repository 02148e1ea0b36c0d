"""Reading a trace file in a fresh child process: traces, skips, time and the child's own peak RSS.

Shared by the benchmarks that measure memory. The child reads ``/proc/self/status`` ``VmHWM``: on Linux
``ru_maxrss`` keeps the parent's RSS across exec, which would hide the reader's cost behind the
benchmark's own size. ``whole=True`` raises the streaming size past any file, so big JSON documents are
loaded whole as before streaming existed.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_CHILD = """
import resource, sys, time
from helix.traces import IntakeReport, iter_traces


def peak_kb():
    try:
        with open("/proc/self/status") as status:
            for row in status:
                if row.startswith("VmHWM:"):
                    return int(row.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if sys.argv[3] == "whole":
    from helix.traces import _stream
    _stream.STREAM_DOCUMENT_BYTES = 1 << 62
before = peak_kb()
report = IntakeReport()
start = time.perf_counter()
count = sum(1 for _ in iter_traces(sys.argv[1], format=sys.argv[2], report=report))
print(count, report.records_skipped, before, peak_kb(), time.perf_counter() - start)
"""


@dataclass(frozen=True)
class ChildRead:
    traces: int
    skipped: int
    imports_mb: float  # peak RSS after imports, before reading
    peak_mb: float
    seconds: float

    def line(self, label: str, size_mb: float) -> str:
        return (
            f"  {label:8s} {self.traces:6d} traces ({self.skipped} skipped) in {self.seconds:5.1f}s "
            f"({size_mb / self.seconds:5.1f} MB/s); peak RSS {self.peak_mb:6.0f} MB "
            f"(after imports {self.imports_mb:.0f} MB, reading cost {self.peak_mb - self.imports_mb:.0f} MB)"
        )


def read_in_child(path: Path, fmt: str, *, whole: bool = False) -> ChildRead:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), fmt, "whole" if whole else "streamed"],
        capture_output=True,
        text=True,
        check=True,
    )
    count, skipped, before_kb, after_kb, elapsed = out.stdout.split()
    return ChildRead(int(count), int(skipped), int(before_kb) / 1024, int(after_kb) / 1024, float(elapsed))
