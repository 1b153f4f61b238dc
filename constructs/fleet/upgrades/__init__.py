"""Kubernetes upgrades rolled through the fleet: rings, targets, the committed state of the
rollout, its plan and the promotion gate. Generic: each cloud's part is its
:class:`~fleet.clouds.upgrades.CloudTarget` (``clouds/<cloud>/rollout.py``)."""
