"""Lua shared by the health checks the bootstrap puts into ``argocd-cm``: the age of a
Kubernetes timestamp, so that a check can bound a state that a controller never leaves on
its own (a missing condition, a runtime that keeps restarting) instead of reading it as
Progressing for ever.

How ArgoCD runs them (argo-cd v3.5.1 ``util/lua/lua.go``, ``util/lua/oslib_safe.go``):
gopher-lua (Lua 5.1) with a safe ``os`` whose ``os.time()`` is ``time.Now().Unix()``;
``string`` only with the check's ``useOpenLibs`` key, so every check that parses a timestamp
is a :class:`~fleet.platform.component.HealthCheck` with ``open_libs=True``. ArgoCD computes
every resource's health again on each comparison of its Application (``controller/health.go``
``setApplicationHealth``, called from ``controller/state.go`` ``CompareAppState``: at least
every ``timeout.reconciliation``, 120 s by default) and on each step of a sync
(``gitops-engine/pkg/sync/sync_context.go``), so a bound is noticed within minutes of
passing without the object changing.

Kubernetes writes every ``metav1.Time`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ``
(kubernetes/apimachinery ``pkg/apis/meta/v1/time.go`` ``MarshalJSON``: ``UTC().Format(
time.RFC3339)``), which :data:`AGE_FUNCTION` reads without ``os.time{...}`` (which would
read the table in the controller's local time zone).
"""

from __future__ import annotations

AGE_FUNCTION = """\
-- Seconds since an RFC 3339 UTC timestamp (metav1.Time), nil when there is none.
local function fleet_age(ts)
  if type(ts) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, s = string.match(ts, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if y == nil then
    return nil
  end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  if mo <= 2 then
    y = y - 1
  end
  local era = (y - y % 400) / 400
  local yoe = y - era * 400
  local mp = (mo + 9) % 12
  local doy = (153 * mp + 2 - (153 * mp + 2) % 5) / 5 + d - 1
  local doe = yoe * 365 + (yoe - yoe % 4) / 4 - (yoe - yoe % 100) / 100 + doy
  local days = era * 146097 + doe - 719468
  local epoch = days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s)
  return os.time() - epoch
end
"""
"""``fleet_age(ts)``: days from the civil date (H. Hinnant's ``days_from_civil``) in integer
arithmetic, Lua 5.1's floored ``%`` standing in for ``math.floor``."""


def minutes(seconds: int) -> str:
    """``seconds`` as people read a bound in a health message (``30 minutes``)."""
    count = seconds // 60
    return f"{count} minute{'s' if count != 1 else ''}"
