"""Monitoring derived from the plan: Prometheus rules that watch what the DR design assumes.

:mod:`imsdr.monitoring.headroom` turns the capacity plan's worst single failures into live guards
("if site-a failed now, sbc-coast would be at 108 %"); :mod:`imsdr.monitoring.render` writes the
rule files. Every figure comes from the run's :class:`imsdr.analysis.Analysis`, the same capacity
report ``capacity``, ``check`` and the runbooks show.
"""
