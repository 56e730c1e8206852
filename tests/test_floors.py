"""The house's floors, read from the package tree and each module's own imports.

From the bottom up:
- ground, `portal/core/`: database, settings, clock, periods, text, schema runner, logs. Nothing web, nothing email.
- engine, `portal/outbox/`: stands on the ground only. Inside it, floors by an email's life, each
  standing on those before it: `ground/` (statuses, the statement books, families, the provider's
  answers), `write/` (intents, publication, relay), `send/` (consumer, the one attempt path and its
  ways, claim, freeze, rate limit), `hear/` (receipts, lookups, reconciliation, suppressions),
  `operate/` (reads, history, actions, retention, personal data); its faces (`__init__.py`) and
  the worker's entry (`worker.py`) stand on top.
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
TOP_MODULES = {"portal", "portal.cli", "portal.context", "portal.email_families", "portal.seed"}
# Third-party libraries a floor must not load: the ground is nothing web and nothing email, and the
# engine runs in a worker that loads no web framework.
WEB_LIBRARIES = {"flask", "flask_babel", "flask_login", "flask_wtf", "flask_limiter", "wtforms", "werkzeug"}
FORBIDDEN_LIBRARIES = {
    GROUND: WEB_LIBRARIES | {"jinja2", "rq", "resend", "redis", "svix", "standardwebhooks"},
    ENGINE: WEB_LIBRARIES,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PORTAL.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PORTAL.rglob("*.py"))}
PACKAGES = {module for module, path in MODULES.items() if path.name == "__init__.py"}
AREAS = sorted(
    path.name for path in PORTAL.iterdir() if (path / "__init__.py").exists() and path.name not in (GROUND, ENGINE, WEB)
)


def floor_of(module: str) -> str:
    """`core`, `outbox`, `web`, `top`, or the area's name."""
    return TOP if module in TOP_MODULES else module.split(".")[1]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The module an `from ... import` names, relative imports resolved against `module`'s package."""
    if node.level == 0:
        return node.module or ""
    package = module if module in PACKAGES else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def imports_of(module: str) -> tuple[set[tuple[str, str | None]], set[str]]:
    """What `module` imports, at any depth of its code (TYPE_CHECKING and function bodies too):
    (portal module, name taken from it or None for the module itself), and third-party top-level names.
    `from portal.x import y` is the module portal.x.y where y is a module, else the name y of portal.x."""
    portal_imports, libraries = set(), set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "portal":
                    portal_imports.add((alias.name, None))
                else:
                    libraries.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source.split(".")[0] != "portal":
                libraries.add(source.split(".")[0])
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                portal_imports.add((submodule, None) if submodule in MODULES else (source, alias.name))
    return {(target, name) for target, name in portal_imports if target != module}, libraries


IMPORTS = {module: imports_of(module) for module in MODULES}


def face_names(module: str) -> set[str]:
    """The names a face offers: its `__all__`, read from the source."""
    for node in ast.parse(MODULES[module].read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


FACES = {*portal.outbox.FACES, *(f"portal.{area}" for area in AREAS)}


def test_every_import_names_a_module_of_the_tree():
    unknown = {
        (module, target) for module, (found, _) in IMPORTS.items() for target, _ in found if target not in MODULES
    }
    assert unknown == set()


def test_every_package_is_a_floor_an_area_or_the_top():
    """A folder under portal/ without __init__.py would be no area, and the rules would not see it."""
    folders = {path.parent for path in PORTAL.rglob("*.py") if "__pycache__" not in path.parts}
    assert {folder for folder in folders if not (folder / "__init__.py").exists()} == set()
    assert {module for module in MODULES if "." not in module.removeprefix("portal.")} - {
        *TOP_MODULES,
        *(f"portal.{name}" for name in (GROUND, ENGINE, WEB, *AREAS)),
    } == set()


def test_every_face_names_what_it_offers():
    """An engine face, and an area's __init__.py that imports anything, list what they offer in __all__."""
    offering = {face for face in FACES if face in portal.outbox.FACES or IMPORTS[face][0]}
    assert set(portal.outbox.FACES) <= MODULES.keys()
    assert {face for face in offering if not face_names(face)} == set()


def refusal(module: str, target: str, name: str | None = None) -> str | None:
    """Why `module` may not import `target` (or the name `name` from it), or None."""
    here, there = floor_of(module), floor_of(target)
    if here == TOP:
        return None
    if there == TOP:
        return "only the top imports the top"
    if here == GROUND:
        return None if there == GROUND else "the ground imports nothing above it"
    if here == ENGINE:
        return None if there in (GROUND, ENGINE) else "the engine stands on the ground only"
    crossing = (there == ENGINE) or (there in AREAS and there != here)
    if crossing and target not in FACES:
        return "the engine and other areas only through their faces (portal.outbox.FACES, portal/<area>/__init__.py)"
    if crossing and name is not None and name not in face_names(target):
        return f"{name} is not in {target}'s __all__"
    if here == WEB and there in AREAS:
        return "the web floor imports no area"
    return None


def test_every_import_points_down_a_floor_or_stays_inside_one_area():
    refused = sorted(
        f"{module} -> {target}{'.' + name if name else ''}: {why}"
        for module, (found, _) in IMPORTS.items()
        for target, name in found
        if (why := refusal(module, target, name))
    )
    assert refused == []


ENGINE_FLOORS = ("ground", "write", "send", "hear", "operate")


def engine_floor(module: str) -> int:
    """0 for the engine's ground ... 4 for operate; 5 for the top (its faces, the worker's entry)."""
    inner = module.removeprefix("portal.outbox").lstrip(".").split(".")[0]
    return ENGINE_FLOORS.index(inner) if inner in ENGINE_FLOORS else len(ENGINE_FLOORS)


def engine_refusal(module: str, target: str) -> str | None:
    """Why an engine module may not import an engine module (a floor above its own), or None."""
    if floor_of(module) != ENGINE or floor_of(target) != ENGINE:
        return None
    here, there = engine_floor(module), engine_floor(target)
    if there > here:
        names = (*ENGINE_FLOORS, "top")
        return f"{names[here]} stands below {names[there]}"
    return None


def test_the_engine_is_laid_out_by_an_emails_life_and_no_import_runs_back_up():
    refused = sorted(
        f"{module} -> {target}: {why}"
        for module, (found, _) in IMPORTS.items()
        for target, _ in found
        if (why := engine_refusal(module, target))
    )
    assert refused == []
    inner = {module.split(".")[2] for module in MODULES if floor_of(module) == ENGINE and module.count(".") > 2}
    assert inner == set(ENGINE_FLOORS), "every engine module but its faces and the worker's entry is on a floor"


def test_the_engine_floors_refuse_what_they_promise_to():
    assert engine_refusal("portal.outbox.ground.rows", "portal.outbox.send.attempt")
    assert engine_refusal("portal.outbox.send.attempt", "portal.outbox.operate.reads")
    assert engine_refusal("portal.outbox.send.batch", "portal.outbox.hear.receipts")
    assert engine_refusal("portal.outbox.operate.reads", "portal.outbox")
    assert engine_refusal("portal.outbox.send.batch", "portal.outbox.write.publish") is None
    assert engine_refusal("portal.outbox.send.attempt", "portal.outbox.send.batch") is None
    assert engine_refusal("portal.outbox", "portal.outbox.operate.reads") is None


def test_the_ground_and_the_engine_load_no_web_framework():
    loaded = {
        f"{module} imports {library}"
        for module, (_, libraries) in IMPORTS.items()
        for library in libraries & FORBIDDEN_LIBRARIES.get(floor_of(module), set())
    }
    assert loaded == set()


def test_no_import_circles_between_files():
    """Tarjan's strongly connected components over the file graph: each must be one file."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in {target for target, _ in IMPORTS[module][0]} & MODULES.keys():
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
    an_area, other_area = "invitations", "auth"
    assert refusal("portal.core.db", "portal.outbox.ground.rows")
    assert refusal("portal.core.clock", "portal.web.forms")
    assert refusal("portal.outbox.ground.rows", "portal.web.extensions")
    assert refusal("portal.outbox.ground.rows", f"portal.{an_area}")
    assert refusal("portal.web.extensions", "portal.context")
    assert refusal("portal.web.forms", f"portal.{an_area}")
    assert refusal(f"portal.{an_area}.routes", "portal.outbox.ground.rows")
    assert refusal(f"portal.{an_area}.routes", "portal.outbox.operate.reads", "no_such_name")
    assert refusal(f"portal.{an_area}.routes", f"portal.{other_area}.queries")
    assert refusal(f"portal.{an_area}.routes", f"portal.{other_area}", "no_such_name")
    assert refusal(f"portal.{an_area}.routes", "portal.cli")
    assert (
        refusal(f"portal.{an_area}.routes", f"portal.{other_area}", sorted(face_names(f"portal.{other_area}"))[0])
        is None
    )
    assert refusal(f"portal.{an_area}.routes", "portal.outbox.operate.reads") is None
    assert refusal(f"portal.{an_area}.routes", f"portal.{an_area}.queries") is None
    assert refusal("portal", f"portal.{an_area}.routes") is None
    relative = ast.parse("from ..outbox import rows\nfrom . import queries").body
    assert _absolute("portal.invitations.routes", relative[0]) == "portal.outbox"
    assert _absolute("portal.invitations.routes", relative[1]) == "portal.invitations"
    assert {"invitations", "reports", "report_emails", "campaigns"} <= set(AREAS), (
        "areas are read from the package tree"
    )
    assert len(IMPORTS) == len(MODULES) > 100
