"""The paper store's string columns (`bot/search/files/columns.py`) against pyarrow, for
docs/decisions.md.

Run it in a throwaway venv with pyarrow, numpy and psutil, never the project's own:

    python3 -m venv /tmp/pa && /tmp/pa/bin/pip install pyarrow numpy psutil
    cd /work/main && /tmp/pa/bin/python -m benchmarks.decisions.columns_vs_pyarrow \
        [--papers 1000000] [--lookups 10000] [--work /tmp/colbench]

Writes N synthetic papers (10-character OpenReview-style ids; titles of a real title's word
count, words drawn from the real titles in ../shared/data/paperlists; seeded) three ways:

- project: ids.txt + ids_at.npy, titles.txt + titles_at.npy, id_order.npy + id_backward.npy,
  as `storewriter.StoreWriter` writes them (`line_starts`, `id_orders`);
- arrow: one Arrow IPC file (Feather v2, uncompressed, so it can be memory-mapped) with the
  columns id, title and the same sorted order (`pc.sort_indices`), opened with
  `pa.memory_map` + `pa.ipc.open_file(...).read_all()` (zero-copy);
- arrow-lz4: the same table as Feather's default (lz4-compressed) file: size only, since a
  compressed file is decompressed into memory when read.

Then, in a fresh process per layout: import time, RSS after the imports, open time, RSS after
opening, id lookups (p50/p99 over `--lookups` random present ids; arrow both by binary search
over the saved order, as the project does, and by `pc.index`, its built-in linear scan), and
RSS after the lookups. Prints pyarrow's and numpy's installed sizes too.
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "paperlists"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def columns_module():  # type: ignore[no-untyped-def]
    """The project's columns module, loaded from its file (stdlib + numpy only), so neither
    `bot.search`'s package imports nor the project's other dependencies are needed here:
    bot/search/files/columns.py, or bot/search/columns.py where the move has not happened."""
    import importlib.util

    for path in (ROOT / "bot/search/files/columns.py", ROOT / "bot/search/columns.py"):
        if path.is_file():
            spec = importlib.util.spec_from_file_location("paperbot_columns", path)
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            sys.modules["paperbot_columns"] = module
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            return module
    raise SystemExit("bot/search/files/columns.py not found")


def rss_mb() -> float:
    """Resident memory of this process (MB), anonymous + file-backed."""
    return sum(memory().values())


def memory() -> dict[str, float]:
    """RssAnon and RssFile of this process (MB): mapped file pages are the second, shared
    between processes on the same files and reclaimable; the first is what a process owns."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) / 1024
    return out


def synth(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    titles = []
    for path in sorted(SHARED.glob("*.json")):
        titles += [p["title"] for p in json.loads(path.read_text(encoding="utf-8"))]
    lengths = [len(t.split()) for t in titles]
    words = [w for t in titles for w in t.split()]
    rnd = random.Random(seed)
    ids: set[str] = set()
    while len(ids) < n:
        ids.add("".join(rnd.choices(ALPHABET, k=10)))
    out_ids = list(ids)
    rnd.shuffle(out_ids)
    out_titles = [" ".join(rnd.choices(words, k=rnd.choice(lengths))) for _ in range(n)]
    return out_ids, out_titles


def write(work: Path, n: int) -> dict[str, int]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.feather as feather

    cols = columns_module()
    ids, titles = synth(n)
    project = work / "project"
    project.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for name, strings in (("ids", ids), ("titles", titles)):
        data = "\n".join(strings).encode("utf-8")
        (project / f"{name}.txt").write_bytes(data)
        np.save(project / f"{name}_at.npy", cols.line_starts(data, len(strings)))
    forward, backward = cols.id_orders(ids)
    np.save(project / "id_order.npy", forward)
    np.save(project / "id_backward.npy", backward)
    t_project = time.perf_counter() - t0

    t0 = time.perf_counter()
    id_array = pa.array(ids, type=pa.string())
    table = pa.table(
        {
            "id": id_array,
            "title": pa.array(titles, type=pa.string()),
            "id_order": pc.sort_indices(id_array).cast(pa.int32()),
        }
    )
    # One record batch, so reading it back needs no concatenation (which would copy).
    feather.write_feather(table, work / "arrow.arrow", compression="uncompressed", chunksize=n)
    t_arrow = time.perf_counter() - t0
    feather.write_feather(table, work / "arrow-lz4.arrow", chunksize=n)  # default codec: lz4
    (work / "probe.json").write_text(json.dumps(random.Random(1).sample(ids, min(n, 100_000))))

    def size(paths: list[Path]) -> int:
        return sum(p.stat().st_size for p in paths)

    no_backward = [p for p in project.iterdir() if p.name != "id_backward.npy"]
    return {
        "project_bytes": size(list(project.iterdir())),
        "project_bytes_no_backward": size(no_backward),
        "arrow_bytes": (work / "arrow.arrow").stat().st_size,
        "arrow_lz4_bytes": (work / "arrow-lz4.arrow").stat().st_size,
        "raw_utf8_bytes": sum(len(s.encode()) for s in ids) + sum(len(s.encode()) for s in titles),
        "project_write_s": t_project,
        "arrow_write_s": t_arrow,
    }


def child(kind: str, work: Path, lookups: int) -> None:
    """One layout in this fresh process; prints a JSON line of its figures."""
    r0 = rss_mb()
    t0 = time.perf_counter()
    if kind == "project":
        import numpy as np

        cols = columns_module()
    else:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.ipc
    t_import = time.perf_counter() - t0
    r_import = rss_mb()
    probes = json.loads((work / "probe.json").read_text())
    rnd = random.Random(2)
    wanted = [rnd.choice(probes) for _ in range(lookups)]
    r_base = rss_mb()  # after reading the probe ids, which both sides hold

    t0 = time.perf_counter()
    if kind == "project":
        folder = work / "project"
        found = {}
        for name in ("ids", "titles"):
            starts = np.load(folder / f"{name}_at.npy", mmap_mode="r", allow_pickle=False)
            found[name] = cols.StringColumn(cols.map_file(folder / f"{name}.txt"), starts)
        order, backward = (
            np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            for name in ("id_order", "id_backward")
        )
        lookup = cols.IdLookup(found["ids"], order, backward)
        titles = found["titles"]

        def find(pid: str) -> int | None:
            return lookup.find(pid)

        def title(i: int) -> str:
            return titles[i]
    else:
        source = pa.memory_map(str(work / "arrow.arrow"), "r")
        table = pa.ipc.open_file(source).read_all()
        # One record batch: chunk(0) is the mapped array itself (combine_chunks would copy).
        assert table.column("id").num_chunks == 1
        ids = table.column("id").chunk(0)
        order = table.column("id_order").chunk(0).to_numpy()  # int32, no nulls: zero-copy
        titles_a = table.column("title").chunk(0)

        if kind == "arrow":

            def find(pid: str) -> int | None:
                at = bisect.bisect_left(order, pid, key=lambda i: ids[int(i)].as_py())
                if at < len(ids) and ids[int(order[at])].as_py() == pid:
                    return int(order[at])
                return None
        else:  # arrow-scan: pyarrow's own lookup, a vectorised linear scan

            def find(pid: str) -> int | None:
                at = pc.index(ids, pid).as_py()
                return None if at < 0 else at

        def title(i: int) -> str:
            return titles_a[i].as_py()

    t_open = time.perf_counter() - t0
    r_open = rss_mb()
    m_open = memory()

    def timed() -> list[float]:
        times = []
        for pid in wanted:
            s = time.perf_counter()
            at = find(pid)
            _ = title(at)  # type: ignore[arg-type]
            times.append(time.perf_counter() - s)
            assert at is not None
        return sorted(times)

    times = timed()  # first pass: pages of the files come in as lookups touch them
    m_after = memory()
    warm = timed()  # the same ids again
    print(
        json.dumps(
            {
                "kind": kind,
                "rss_start_mb": r0,
                "import_s": t_import,
                "rss_after_import_mb": r_import,
                "open_s": t_open,
                "rss_after_open_mb": r_open,
                "open_added_mb": r_open - r_base,
                "lookup_p50_us": statistics.median(times) * 1e6,
                "lookup_p99_us": times[int(0.99 * (len(times) - 1))] * 1e6,
                "warm_p50_us": statistics.median(warm) * 1e6,
                "lookups": len(times),
                "rss_after_lookups_mb": rss_mb(),
                "anon_open_mb": m_open["RssAnon"],
                "file_open_mb": m_open["RssFile"],
                "anon_after_mb": m_after["RssAnon"],
                "file_after_mb": m_after["RssFile"],
            }
        )
    )


def import_ms(module: str, before: str = "") -> float:
    """Cumulative `-X importtime` of `module` in a fresh interpreter, best of 5 (ms)."""
    best = []
    for _ in range(5):
        code = (f"import {before}; " if before else "") + f"import {module}"
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
        ).stderr
        for line in err.splitlines():
            parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
            if len(parts) == 3 and parts[2] == module:
                best.append(int(parts[1]) / 1000)
    return min(best)


def tree_mb(module: str) -> float:
    """Installed size of `module`: its package folder plus the `<name>.libs` folder of shared
    libraries that its wheel brings beside it, where there is one."""
    import importlib

    folder = Path(importlib.import_module(module).__file__).parent  # type: ignore[arg-type]
    folders = [folder, folder.with_name(folder.name + ".libs")]
    return sum(p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=10_000)
    parser.add_argument("--scan-lookups", type=int, default=200)
    parser.add_argument("--work", type=Path, default=Path("/tmp/colbench"))
    parser.add_argument("--child", choices=("project", "arrow", "arrow-scan"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.work, args.lookups)
        return

    from importlib.metadata import version

    work = args.work / str(args.papers)
    sizes = write(work, args.papers)
    mb = 2**20
    print(f"{args.papers:,} papers; pyarrow {version('pyarrow')}, numpy {version('numpy')}")
    print(
        f"on disk: project {sizes['project_bytes'] / mb:.1f} MB "
        f"({sizes['project_bytes_no_backward'] / mb:.1f} MB without the id-suffix order, "
        f"which the Arrow file does not carry); Arrow IPC uncompressed "
        f"{sizes['arrow_bytes'] / mb:.1f} MB; "
        f"Arrow IPC lz4 {sizes['arrow_lz4_bytes'] / mb:.1f} MB; "
        f"the strings alone {sizes['raw_utf8_bytes'] / mb:.1f} MB"
    )
    print(
        f"write: project {sizes['project_write_s']:.2f} s (two Python sorts of the ids), "
        f"arrow {sizes['arrow_write_s']:.2f} s"
    )
    rows = []
    for kind, n in (
        ("project", args.lookups),
        ("arrow", args.lookups),
        ("arrow-scan", args.scan_lookups),
    ):
        runs = []
        for _ in range(3):  # three fresh processes; each figure is the median of the three
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.decisions.columns_vs_pyarrow",
                    "--child",
                    kind,
                    "--work",
                    str(work),
                    "--lookups",
                    str(n),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
        rows.append(
            {k: (statistics.median(r[k] for r in runs) if k != "kind" else kind) for k in runs[0]}
        )
    print()
    print("Fresh process per layout, median of 3 processes. RSS = RssAnon + RssFile.")
    print()
    print(
        "| layout | import (s) | RSS after import (MB) | open (ms) "
        "| RSS after open, anon + file (MB) | lookup + title p50 / p99, first pass (us) "
        "| p50, same ids again (us) | lookups | RSS after lookups, anon + file (MB) |"
    )
    print("|---|---:|---:|---:|---|---|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['import_s']:.3f} | {r['rss_after_import_mb']:.1f} | "
            f"{r['open_s'] * 1000:.2f} | {r['rss_after_open_mb']:.1f} = "
            f"{r['anon_open_mb']:.1f} + {r['file_open_mb']:.1f} | "
            f"{r['lookup_p50_us']:.1f} / {r['lookup_p99_us']:.1f} | {r['warm_p50_us']:.1f} | "
            f"{r['lookups']:.0f} | {r['anon_after_mb'] + r['file_after_mb']:.1f} = "
            f"{r['anon_after_mb']:.1f} + {r['file_after_mb']:.1f} |"
        )
    print()
    print(
        f"import numpy {import_ms('numpy'):.1f} ms; import pyarrow {import_ms('pyarrow'):.1f} ms "
        f"cold, {import_ms('pyarrow', 'numpy'):.1f} ms after numpy; "
        f"import pyarrow.compute after pyarrow {import_ms('pyarrow.compute', 'pyarrow'):.1f} ms "
        "(-X importtime cumulative, best of 5)"
    )
    print(
        f"installed: pyarrow {tree_mb('pyarrow'):.0f} MB, numpy {tree_mb('numpy'):.0f} MB "
        "(package folder + its .libs folder)"
    )


if __name__ == "__main__":
    main()
