"""Backends: where a job runs. Each one implements :class:`tfcloud.backends.base.Backend`.

A target (:mod:`tfcloud.targets`) names its backend's class as ``"module:Class"``; the module (and its heavy
imports) is loaded only when that target is used (:func:`tfcloud.targets.get_backend` builds it, as
``Class(target=<target value>, settings=<Settings or None>, **options)``).
"""
