"""Builds the client's wheel (PEP 427) with the standard library only: no build backend, no index.

    python3 clients/python/scripts/build_wheel.py [OUT_DIR]     # default: clients/python/dist

The package is pure Python, so its wheel is a zip of `human_task_client/` plus the `.dist-info`
metadata taken from pyproject.toml (name, version, summary, Python and dependency requirements,
the README as the long description). Building it this way needs nothing but Python 3.11, so a
machine without a package index can produce it; setuptools (`pip wheel ./clients/python`) builds
the same files where one is at hand. Prints the wheel's path.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import tomllib
import zipfile
from pathlib import Path

CLIENT = Path(__file__).resolve().parent.parent
# Fixed timestamps: the same sources give the same wheel, byte for byte.
EPOCH = (1980, 1, 1, 0, 0, 0)


def metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    lines.append("Description-Content-Type: text/markdown")
    readme = (CLIENT / project.get("readme", "README.md")).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(out_dir: Path) -> Path:
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist = project["name"].replace("-", "_")
    package = "human_task_client"
    info = f"{dist}-{project['version']}.dist-info"
    files: list[tuple[str, bytes]] = [
        (f"{package}/{path.name}", path.read_bytes())
        for path in sorted((CLIENT / package).iterdir())
        if path.is_file() and (path.suffix == ".py" or path.name == "py.typed")
    ]
    files.append((f"{info}/METADATA", metadata(project).encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: human-task-client build_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((f"{info}/top_level.txt", f"{package}\n".encode()))
    record = "\n".join([record_line(name, data) for name, data in files] + [f"{info}/RECORD,,", ""])
    files.append((f"{info}/RECORD", record.encode()))

    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{dist}-{project['version']}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            entry = zipfile.ZipInfo(name, EPOCH)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)
    return wheel


if __name__ == "__main__":
    print(build(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else CLIENT / "dist"))
