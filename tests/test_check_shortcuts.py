"""The shortcuts that keep a national ``check`` fast answer exactly what the long way does:
a Diameter element's dimension is evaluated only in the scenarios that can change its flows,
a garbage-collector pause hands its objects to the oldest generation when it ends, and the CLI
leaves what is alive out of the interpreter's last collection and looks for no pydantic plugin."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from inventory_factory import province_data, topology_from_data, with_dras

from imsdr.analysis import Analysis, cyclic_gc_paused
from imsdr.capacity.dimensions import _parts_of, _touching
from imsdr.capacity.storm import StormIndex, subscribers_served


def test_an_untouched_diameter_element_serves_its_normal_subscribers(tmp_path: Path) -> None:
    """Every (element, scenario) that ``_touching`` leaves out serves, under that scenario's
    assignment, exactly (bit for bit) the subscribers it serves normally; the ones it lists
    include every scenario where the number differs."""
    topology = topology_from_data(with_dras(province_data()), tmp_path)
    analysis = Analysis(topology)
    eng = analysis.engine
    scenarios = [(f"site:{site}", eng.evaluate_sites((site,))) for site in sorted(topology.sites)]
    index = StormIndex(eng)
    touching = _touching(eng, index, scenarios)
    diameter = [eng.index[e.id] for t in ("hss", "slf", "dra") for e in topology.by_type.get(t, [])]
    assert diameter and analysis.capacity.dimensions
    differs = 0
    for x in diameter:
        normal = subscribers_served(eng, index, x, lambda i: eng.normal_assign[i][0])
        for k, (_label, outcome) in enumerate(scenarios):
            value = subscribers_served(eng, index, x, _parts_of(eng, outcome))
            if k not in touching.get(x, ()):
                assert value == normal
            differs += value != normal
    assert differs  # the province's site losses do move subscribers between HSSs/DRAs
    assert all(ks == sorted(ks) for ks in touching.values())  # first scenario first, as the loop ties


def test_a_pause_leaves_its_objects_in_the_oldest_generation() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with cyclic_gc_paused():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_count()[0] < 1000  # not left young for the next collection to walk
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert id(made) in oldest and all(id(m) in oldest for m in made)
        with cyclic_gc_paused(), cyclic_gc_paused():  # nested: only the outer one resumes
            pass
        assert gc.isenabled()
        kept = [[0]]
        gc.freeze()  # someone else's frozen objects stay frozen
        try:
            with cyclic_gc_paused():
                pass
            assert gc.get_freeze_count() >= 2 and id(kept) not in {id(o) for o in gc.get_objects(generation=2)}
        finally:
            gc.unfreeze()
    finally:
        if not was:
            gc.disable()


_RUN_MAIN = """
import gc, os, sys
sys.argv = ["imsdr", "rules", "--format", "json"]
from imsdr.cli.app import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write(f"{gc.get_freeze_count() > 0} {os.environ['PYDANTIC_DISABLE_PLUGINS']}")
"""


def test_the_cli_freezes_on_exit_and_skips_plugin_discovery() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", _RUN_MAIN], env=env, capture_output=True, text=True, check=True)
    assert done.stderr.endswith("True __all__")
    assert done.stdout.startswith("[") or done.stdout.startswith("{")  # the command itself ran
    mine = subprocess.run([sys.executable, "-c", _RUN_MAIN], env={**env, "PYDANTIC_DISABLE_PLUGINS": "logfire"},
                          capture_output=True, text=True, check=True)
    assert mine.stderr.endswith("True logfire")  # a user's own setting is kept
