"""The house's floors, read from the package tree and each module's own imports.

From the bottom up:
- ground, `portal/core/`: database, settings, clock, periods, text, schema runner, logs. Nothing web, nothing email.
- engine, `portal/outbox/`: stands on the ground only.
- web, `portal/web/`: extensions, access rules, forms, paging, the lean app, filters, access log and
  the web half of observability. Stands on the ground and the engine's faces.
- areas, every other package `portal/<area>/`: stand on the floors below, and use the engine and
  one another only through faces: the engine's are named in `portal.outbox.FACES`, an area's is its
  `__init__.py`.
- the top: the app factory (`portal/__init__.py`) and the modules beside it (`cli.py`, `context.py`,
  `email_families.py`, `seed.py`), which put the house together; nothing below imports them.

A new area, or a new module anywhere, is covered without editing this file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import portal.outbox

PORTAL = Path(portal.outbox.__file__).resolve().parent.parent
GROUND, ENGINE, WEB, TOP = "core", "outbox", "web", "top"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PORTAL.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PORTAL.rglob("*.py"))}
AREAS = sorted(
    path.name for path in PORTAL.iterdir() if (path / "__init__.py").exists() and path.name not in (GROUND, ENGINE, WEB)
)


def floor_of(module: str) -> str:
    """`core`, `outbox`, `web`, `top`, or the area's name."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] not in (GROUND, ENGINE, WEB, *AREAS):
        return TOP
    return parts[1]


def imported_modules(module: str) -> set[str]:
    """Every portal module `module` imports, at any depth of its code (TYPE_CHECKING and function
    bodies too): `from portal.x import y` is portal.x.y where y is a module, else portal.x."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "portal"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "portal":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
    return found - {module}


IMPORTS = {module: imported_modules(module) for module in MODULES}


def test_every_import_names_a_module_of_the_tree():
    unknown = {(module, target) for module, targets in IMPORTS.items() for target in targets if target not in MODULES}
    assert unknown == set()


def refusal(module: str, target: str) -> str | None:
    """Why `module` may not import `target`, or None."""
    here, there = floor_of(module), floor_of(target)
    if here == TOP:
        return None
    if there == TOP:
        return "only the top imports the top"
    if here == GROUND:
        return None if there == GROUND else "the ground imports nothing above it"
    if here == ENGINE:
        return None if there in (GROUND, ENGINE) else "the engine stands on the ground only"
    if there == ENGINE and target not in portal.outbox.FACES:
        return "above the engine, only its faces (portal.outbox.FACES)"
    if here == WEB:
        return None if there in (GROUND, ENGINE, WEB) else "the web floor imports no area"
    if there in AREAS and there != here and target != f"portal.{there}":
        return "another area only through its face, portal/<area>/__init__.py"
    return None


def test_every_import_points_down_a_floor_or_stays_inside_one_area():
    refused = sorted(
        f"{module} -> {target}: {why}"
        for module, targets in IMPORTS.items()
        for target in targets
        if (why := refusal(module, target))
    )
    assert refused == []


def test_no_import_circles_between_files():
    """Tarjan's strongly connected components over the file graph: each must be one file."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in IMPORTS[module] & MODULES.keys():
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert circles == []


def test_the_rules_refuse_what_they_promise_to():
    """The floors test's own rules, held against imports it must refuse (so it cannot pass by reading nothing)."""
    an_area, other_area = AREAS[0], AREAS[1]
    assert refusal("portal.core.db", "portal.outbox.rows")
    assert refusal("portal.core.clock", "portal.web.forms")
    assert refusal("portal.outbox.rows", "portal.web.extensions")
    assert refusal("portal.outbox.rows", f"portal.{an_area}")
    assert refusal("portal.web.extensions", "portal.context")
    assert refusal("portal.web.forms", f"portal.{an_area}")
    assert refusal(f"portal.{an_area}.routes", "portal.outbox.rows")
    assert refusal(f"portal.{an_area}.routes", f"portal.{other_area}.queries")
    assert refusal(f"portal.{an_area}.routes", "portal.cli")
    assert refusal(f"portal.{an_area}.routes", f"portal.{other_area}") is None
    assert refusal(f"portal.{an_area}.routes", "portal.outbox.reads") is None
    assert refusal("portal", f"portal.{an_area}.routes") is None
    assert {"invitations", "reports", "campaigns"} <= set(AREAS), "areas are read from the package tree"
    assert len(IMPORTS) == len(MODULES) > 100
