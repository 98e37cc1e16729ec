#!/usr/bin/env python3
"""Generates human_task_client/models.py from the service's OpenAPI document.

    python3 clients/python/scripts/gen_models.py                      # from this repository's code
    python3 clients/python/scripts/gen_models.py http://localhost:8080/openapi.json   # a running service
    python3 clients/python/scripts/gen_models.py openapi.json         # a saved copy

Without an argument it runs `tsx scripts/openapi-json.ts` at the repository root, which builds the
app on a throwaway data directory and prints /openapi.json.

Every schema in components.schemas becomes a frozen dataclass (responses) or a TypedDict (request
bodies, the schemas named *Input), with `from_dict` that reads the JSON the service returns.
Fields this version of the client does not know land in `extra`, so a newer service never breaks
an older client. Re-run it whenever the API gains fields; never edit models.py by hand.
"""

from __future__ import annotations

import json
import keyword
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "human_task_client" / "models.py"
REPO = Path(__file__).resolve().parents[3]
SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def load(source: str | None) -> dict[str, Any]:
    if source is None:
        tsx = REPO / "node_modules" / ".bin" / "tsx"
        output = subprocess.run([str(tsx), "scripts/openapi-json.ts"], cwd=REPO, check=True, capture_output=True, timeout=300).stdout
        document: dict[str, Any] = json.loads(output)
    elif source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=30) as response:  # noqa: S310 (a URL the developer gives)
            document = json.load(response)
    else:
        document = json.loads(Path(source).read_text(encoding="utf-8"))
    return document


def pascal(*parts: str) -> str:
    return "".join(p[:1].upper() + p[1:] for part in parts for p in part.replace("-", "_").split("_"))


def attr(name: str) -> str:
    return f"{name}_" if keyword.iskeyword(name) else name


class Generator:
    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas
        self.blocks: list[str] = []
        self.done: set[str] = set()

    def type_of(self, schema: dict[str, Any], owner: str, field: str) -> tuple[str, str | None]:
        """(annotation, converter expression template with {v}) for one schema."""
        nullable = schema.get("nullable", False)
        annotation, convert = self._type(schema, owner, field)
        if nullable:
            annotation = f"{annotation} | None"
            if convert is not None:
                convert = f"(None if {{v}} is None else {convert})"
        return annotation, convert

    def _type(self, schema: dict[str, Any], owner: str, field: str) -> tuple[str, str | None]:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            self.model(name, self.schemas[name])
            return name, f"{name}.from_dict({{v}})"
        if "enum" in schema:
            return "Literal[" + ", ".join(json.dumps(e) for e in schema["enum"]) + "]", None
        kind = schema.get("type")
        if kind == "array":
            item, convert = self._type(schema.get("items", {}), owner, field + "_item")
            if convert is None:
                return f"list[{item}]", "list({v})"
            return f"list[{item}]", "[" + convert.replace("{v}", "x") + " for x in {v}]"
        if kind == "object" and "properties" in schema:
            name = pascal(owner, field)
            self.model(name, schema)
            return name, f"{name}.from_dict({{v}})"
        if kind == "object":
            return "dict[str, Any]", "dict({v})"
        return SCALARS.get(kind or "", "Any"), None

    def model(self, name: str, schema: dict[str, Any]) -> None:
        if name in self.done:
            return
        self.done.add(name)
        if name.endswith("Input"):
            self.typed_dict(name, schema)
        else:
            self.dataclass(name, schema)

    def typed_dict(self, name: str, schema: dict[str, Any]) -> None:
        # The functional form: a request field may be a Python keyword (MessageInput's "from").
        required = set(schema.get("required", []))
        lines = [f"{name} = TypedDict(", f"    {name!r},", "    {"]
        for prop, sub in schema.get("properties", {}).items():
            annotation, _ = self.type_of(sub, name, prop)
            annotation = f"Required[{annotation}]" if prop in required else annotation
            comment = f"  # {sub['description']}" if "description" in sub else ""
            lines.append(f"        {prop!r}: {annotation},{comment}")
        lines += ["    },", "    total=False,", ")", f'"""{doc(schema, name)}"""']
        self.blocks.append("\n".join(lines))

    def dataclass(self, name: str, schema: dict[str, Any]) -> None:
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        ordered = [p for p in props if p in required] + [p for p in props if p not in required]
        fields: list[str] = []
        reads: list[str] = []
        for prop in ordered:
            annotation, convert = self.type_of(props[prop], name, prop)
            python = attr(prop)
            if prop in required:
                fields.append(f"    {python}: {annotation}")
                value = f"data[{prop!r}]"
                reads.append(f"            {python}={convert.format(v=value) if convert else value},")
            else:
                fields.append(f"    {python}: {annotation} | None = None")
                value = f"data[{prop!r}]"
                expr = convert.format(v=value) if convert else value
                reads.append(f"            {python}={expr} if data.get({prop!r}) is not None else None,")
        keys = ", ".join(repr(p) for p in props)
        lines = [
            "@dataclass(frozen=True)",
            f"class {name}:",
            f'    """{doc(schema, name)}"""',
            "",
            *fields,
            "    extra: dict[str, Any] = field(default_factory=dict)",
            '    """Fields this version of the client does not know (a newer service), as received."""',
            "",
            "    @classmethod",
            f'    def from_dict(cls, data: Mapping[str, Any]) -> "{name}":',
            "        return cls(",
            *reads,
            f"            extra={{k: v for k, v in data.items() if k not in {{{keys}}}}},",
            "        )",
        ]
        self.blocks.append("\n".join(lines))


def doc(schema: dict[str, Any], name: str) -> str:
    return str(schema.get("description", name)).replace('"""', "'''")


def main() -> int:
    if len(sys.argv) > 2:
        sys.stderr.write(__doc__ or "")
        return 2
    document = load(sys.argv[1] if len(sys.argv) == 2 else None)
    schemas = document["components"]["schemas"]
    generator = Generator(schemas)
    for name in sorted(schemas):
        generator.model(name, schemas[name])
    info = document.get("info", {})
    header = f'''"""Models of the human-in-the-loop task service API {info.get("version", "")}.

GENERATED by scripts/gen_models.py from the service's OpenAPI document ({document.get("openapi", "")}). Do not edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict

__all__ = [{", ".join(repr(n) for n in sorted(generator.done))}]
'''
    OUT.write_text(header + "\n\n" + "\n\n\n".join(generator.blocks) + "\n", encoding="utf-8")
    sys.stdout.write(f"Wrote {OUT} ({len(generator.done)} models)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
