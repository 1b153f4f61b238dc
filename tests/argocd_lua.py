"""Run an ArgoCD health check the way ArgoCD runs it, as far as Lua goes.

argo-cd v3.5.1 ``util/lua/lua.go`` (``runLuaWithResourceActionParameters``): gopher-lua, a
Lua 5.1, started with ``SkipOpenLibs: !UseOpenLibs``, then only the package, base and table
libraries and a safe ``os`` (``time``, ``date``: ``util/lua/oslib_safe.go``) are opened. So an
``argocd-cm`` health check without ``resource.customizations.useOpenLibs.<group>_<kind>:
"true"`` has no ``string`` library (no ``string.find``, no ``s:find``) and no ``math``.
``GetHealthScript`` runs ArgoCD's built-in scripts with the open libraries. The object
arrives as the global ``obj`` (JSON decoded into tables); the script returns a table whose
``status`` must be a health status (``isValidHealthStatusCode``).

``os.time()`` with no argument is ``time.Now().Unix()`` (``util/lua/oslib_safe.go``
``osTime``), in both modes: a check may bound a transient state by the age of a timestamp.
Tests pass ``now`` (seconds since the epoch) so that a verdict does not depend on the day
the suite runs.
"""

from __future__ import annotations

from typing import Any

import lupa.lua51 as lua51

LuaError = lua51.LuaError
"""What a failing script raises (ArgoCD: health Unknown)."""

HEALTH_STATUSES = ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown")

_SANDBOX = """\
string = nil
math = nil
io = nil
debug = nil
coroutine = nil
local safe_time, safe_date = os.time, os.date
os = {time = safe_time, date = safe_date}
getmetatable("").__index = nil
"""


def run_health(
    script: str, obj: dict[str, Any], *, open_libs: bool, now: int | None = None
) -> dict[str, str]:
    """``script``'s verdict on ``obj``: ``{"status", "message"}``. Without ``open_libs``
    the script runs without ``string``/``math`` (an ``argocd-cm`` check without its
    ``useOpenLibs`` key); a Lua error raises :data:`LuaError` (ArgoCD: health Unknown).
    ``now``: what ``os.time()`` returns (the real clock when None)."""
    lua = lua51.LuaRuntime(unpack_returned_tuples=True)

    def to_lua(value: Any) -> Any:
        if isinstance(value, dict):
            return lua.table_from({k: to_lua(v) for k, v in value.items()})
        if isinstance(value, list):
            return lua.table_from([to_lua(v) for v in value])
        return value

    if not open_libs:
        lua.execute(_SANDBOX)
    if now is not None:
        lua.execute(
            "local real = os.time\n"
            f"os.time = function(t) if t == nil then return {int(now)} end return real(t) end"
        )
    lua.globals().obj = to_lua(obj)
    result = lua.execute(script)
    status = str(result["status"])
    assert status in HEALTH_STATUSES, status
    return {"status": status, "message": str(result["message"] or "")}
